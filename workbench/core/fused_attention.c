/* Fused softmax attention core for K stacked models of mixed rank (CPU, float32).
 *
 * Model k has H_k = P / r_k heads of rank r_k; coordinate p of the width-P projections belongs
 * to head h(p) = p / r_k. For every (model k, sample b) and query t:
 *
 *   s[n][h] = scale_k * sum_{p in head h} q[t][p] kk[n][p],   S_t = softmax over n of s,
 *   o[t][p] = sum_n S_t[n][h(p)] v[n][p].
 *
 * The backward pass recomputes S_t (only q, k, v are kept between the passes) and uses
 * dP[n][h] = sum_{p in h} do[t][p] v[n][p], D[h] = sum_n S dP, dS = scale S (dP - D):
 *
 *   dv[n][p] += S[n][h(p)] do[t][p],  dk[n][p] += dS[n][h(p)] q[t][p],
 *   dq[t][p]  = sum_n dS[n][h(p)] kk[n][p].
 *
 * Samples are processed LANES at a time (one block of one model), transposed into local
 * buffers with the sample innermost, so every inner loop has the constant length LANES and
 * vectorises whatever the rank, head count or length. Blocks touch only their own rows: ranges
 * of blocks run on separate threads. Inputs are addressed by element strides (model, sample,
 * token) with a contiguous last axis; outputs are contiguous.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LANES 8

typedef struct {
    const float *ptr;
    int64_t sk, sb, st;
} view_t;

/* exp(x) for x <= 0 to float precision: 2^m e^f with |f| <= ln2 / 2, Taylor to degree 8. */
static inline float exp_nonpos(float x) {
    x = x > -87.0f ? x : -87.0f;
    /* round to nearest by the 1.5 * 2^23 shift: branch-free, so the callers' loops vectorise */
    float m = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float f = (x - m * 0.693145751953125f) - m * 1.42860682030941723212e-6f;
    float p = 1.0f / 40320.0f;
    p = p * f + 1.0f / 5040.0f;
    p = p * f + 1.0f / 720.0f;
    p = p * f + 1.0f / 120.0f;
    p = p * f + 1.0f / 24.0f;
    p = p * f + 1.0f / 6.0f;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    int32_t bits = ((int32_t)m + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* dst[(row P + p) LANES + l] = row `row` of sample b0 + l (zero for lanes >= used). */
static void load(view_t a, int64_t k, int64_t b0, int64_t used, int64_t rows, int64_t P,
                 float *restrict dst) {
    memset(dst, 0, (size_t)(rows * P * LANES) * sizeof(float));
    for (int64_t l = 0; l < used; l++) {
        const float *src = a.ptr + k * a.sk + (b0 + l) * a.sb;
        for (int64_t row = 0; row < rows; row++)
            for (int64_t p = 0; p < P; p++) dst[(row * P + p) * LANES + l] = src[row * a.st + p];
    }
}

/* The inverse of load into a contiguous (rows, P) block per sample starting at out. */
static void store(const float *restrict src, int64_t used, int64_t rows, int64_t P,
                  float *restrict out) {
    for (int64_t l = 0; l < used; l++) {
        float *dst = out + l * rows * P;
        for (int64_t row = 0; row < rows; row++)
            for (int64_t p = 0; p < P; p++) dst[row * P + p] = src[(row * P + p) * LANES + l];
    }
}

/* S[(n H + h) LANES + l]: the attention probabilities of query row Qt ([P][LANES]). */
static void probs(const float *restrict Qt, const float *restrict Kb, int64_t N, int64_t P,
                  int64_t r, float sc, float *restrict S, float *restrict mx) {
    int64_t H = P / r;
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++) {
            float acc[LANES] = {0};
            for (int64_t i = 0; i < r; i++) {
                const float *qp = Qt + (h * r + i) * LANES, *kp = Kb + (n * P + h * r + i) * LANES;
                for (int l = 0; l < LANES; l++) acc[l] += qp[l] * kp[l];
            }
            for (int l = 0; l < LANES; l++) S[(n * H + h) * LANES + l] = sc * acc[l];
        }
    for (int64_t h = 0; h < H; h++) {
        float *m = mx + h * LANES;
        for (int l = 0; l < LANES; l++) m[l] = S[h * LANES + l];
        for (int64_t n = 1; n < N; n++)
            for (int l = 0; l < LANES; l++) {
                float s = S[(n * H + h) * LANES + l];
                m[l] = s > m[l] ? s : m[l];
            }
        float sum[LANES] = {0};
        for (int64_t n = 0; n < N; n++)
            for (int l = 0; l < LANES; l++) {
                float e = exp_nonpos(S[(n * H + h) * LANES + l] - m[l]);
                S[(n * H + h) * LANES + l] = e;
                sum[l] += e;
            }
        for (int l = 0; l < LANES; l++) sum[l] = 1.0f / sum[l];
        for (int64_t n = 0; n < N; n++)
            for (int l = 0; l < LANES; l++) S[(n * H + h) * LANES + l] *= sum[l];
    }
}

static float *scratch(int64_t T, int64_t N, int64_t P, int64_t *parts) {
    parts[0] = T * P * LANES;     /* Q, dQ, O, dO */
    parts[1] = N * P * LANES;     /* K, V, dK, dV, S, dP */
    return (float *)malloc((size_t)(4 * parts[0] + 6 * parts[1] + P * LANES) * sizeof(float));
}

/* Outputs o (K, B, T, P) contiguous for blocks [start, stop) of ceil(B / LANES) per model. */
int fused_attention_forward(int64_t B, int64_t T, int64_t N, int64_t P, const int64_t *ranks,
                            const float *scales, view_t q, view_t k, view_t v, float *o,
                            int64_t start, int64_t stop) {
    int64_t sz[2], nb = (B + LANES - 1) / LANES;
    float *buf = scratch(T, N, P, sz);
    if (!buf) return 1;
    float *Q = buf, *O = Q + sz[0], *Kb = O + sz[0], *V = Kb + sz[1], *S = V + sz[1],
          *mx = S + sz[1];
    for (int64_t blk = start; blk < stop; blk++) {
        int64_t kk = blk / nb, b0 = (blk % nb) * LANES, used = B - b0 < LANES ? B - b0 : LANES;
        int64_t r = ranks[kk], H = P / r;
        load(q, kk, b0, used, T, P, Q);
        load(k, kk, b0, used, N, P, Kb);
        load(v, kk, b0, used, N, P, V);
        for (int64_t t = 0; t < T; t++) {
            probs(Q + t * P * LANES, Kb, N, P, r, scales[kk], S, mx);
            for (int64_t h = 0; h < H; h++)
                for (int64_t i = 0; i < r; i++) {
                    int64_t p = h * r + i;
                    float acc[LANES] = {0};
                    for (int64_t n = 0; n < N; n++) {
                        const float *sp = S + (n * H + h) * LANES, *vp = V + (n * P + p) * LANES;
                        for (int l = 0; l < LANES; l++) acc[l] += sp[l] * vp[l];
                    }
                    memcpy(O + (t * P + p) * LANES, acc, sizeof acc);
                }
        }
        store(O, used, T, P, o + (kk * B + b0) * T * P);
    }
    free(buf);
    return 0;
}

/* Gradients dq (K, B, T, P), dk and dv (K, B, N, P), contiguous, for blocks [start, stop). */
int fused_attention_backward(int64_t B, int64_t T, int64_t N, int64_t P, const int64_t *ranks,
                             const float *scales, view_t q, view_t k, view_t v, view_t dout,
                             float *dq, float *dk, float *dv, int64_t start, int64_t stop) {
    int64_t sz[2], nb = (B + LANES - 1) / LANES;
    float *buf = scratch(T, N, P, sz);
    if (!buf) return 1;
    float *Q = buf, *dQ = Q + sz[0], *dO = dQ + sz[0], *Kb = dO + sz[0] + sz[0],
          *V = Kb + sz[1], *dK = V + sz[1], *dV = dK + sz[1], *S = dV + sz[1],
          *dP = S + sz[1], *D = dP + sz[1];
    for (int64_t blk = start; blk < stop; blk++) {
        int64_t kk = blk / nb, b0 = (blk % nb) * LANES, used = B - b0 < LANES ? B - b0 : LANES;
        int64_t r = ranks[kk], H = P / r;
        float sc = scales[kk];
        load(q, kk, b0, used, T, P, Q);
        load(dout, kk, b0, used, T, P, dO);
        load(k, kk, b0, used, N, P, Kb);
        load(v, kk, b0, used, N, P, V);
        memset(dK, 0, (size_t)(2 * sz[1]) * sizeof(float)); /* dK and dV */
        for (int64_t t = 0; t < T; t++) {
            const float *Qt = Q + t * P * LANES, *dOt = dO + t * P * LANES;
            float *dQt = dQ + t * P * LANES;
            probs(Qt, Kb, N, P, r, sc, S, D);
            for (int64_t h = 0; h < H; h++) {
                float dd[LANES] = {0};
                for (int64_t n = 0; n < N; n++) {
                    float acc[LANES] = {0};
                    for (int64_t i = 0; i < r; i++) {
                        const float *gp = dOt + (h * r + i) * LANES,
                                    *vp = V + (n * P + h * r + i) * LANES;
                        for (int l = 0; l < LANES; l++) acc[l] += gp[l] * vp[l];
                    }
                    const float *sp = S + (n * H + h) * LANES;
                    for (int l = 0; l < LANES; l++) dd[l] += sp[l] * acc[l];
                    memcpy(dP + (n * H + h) * LANES, acc, sizeof acc);
                }
                for (int64_t n = 0; n < N; n++) {
                    const float *sp = S + (n * H + h) * LANES;
                    float *gp = dP + (n * H + h) * LANES;
                    for (int l = 0; l < LANES; l++) gp[l] = sc * sp[l] * (gp[l] - dd[l]);
                }
            }
            for (int64_t h = 0; h < H; h++)
                for (int64_t i = 0; i < r; i++) {
                    int64_t p = h * r + i;
                    const float *qp = Qt + p * LANES, *gop = dOt + p * LANES;
                    float acc[LANES] = {0};
                    for (int64_t n = 0; n < N; n++) {
                        const float *sp = S + (n * H + h) * LANES, *gp = dP + (n * H + h) * LANES,
                                    *kp = Kb + (n * P + p) * LANES;
                        float *dkp = dK + (n * P + p) * LANES, *dvp = dV + (n * P + p) * LANES;
                        for (int l = 0; l < LANES; l++) {
                            acc[l] += gp[l] * kp[l];
                            dkp[l] += gp[l] * qp[l];
                            dvp[l] += sp[l] * gop[l];
                        }
                    }
                    memcpy(dQt + p * LANES, acc, sizeof acc);
                }
        }
        store(dQ, used, T, P, dq + (kk * B + b0) * T * P);
        store(dK, used, N, P, dk + (kk * B + b0) * N * P);
        store(dV, used, N, P, dv + (kk * B + b0) * N * P);
    }
    free(buf);
    return 0;
}
