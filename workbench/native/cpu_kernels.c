/* Native CPU kernels (float32) for K stacked models: the fused softmax attention core of mixed
 * rank (below) and a LayerNorm with per-model affine (at the end).
 *
 * Attention.
 *
 * Model k has H_k = P / r_k heads of rank r_k; coordinate p of the width-P projections belongs
 * to head h(p) = p / r_k. For every (model k, sample b) and query t:
 *
 *   s[n][h] = scale_k * sum_{p in head h} q[t][p] kk[n][p],   S_t = softmax over n of s,
 *   o[t][p] = sum_n S_t[n][h(p)] v[n][p].
 *
 * The backward pass recomputes S_t (only q, k, v are kept between the passes) and uses
 * G[n][h] = sum_{p in h} do[t][p] v[n][p], D[h] = sum_n S G, E = scale S (G - D):
 *
 *   dv[n][p] += S[n][h(p)] do[t][p],  dk[n][p] += E[n][h(p)] q[t][p],
 *   dq[t][p]  = sum_n E[n][h(p)] kk[n][p].
 *
 * (docs/derivations/fused_attention.md.) Samples are processed LANES at a time (one block of
 * one model), transposed into local buffers of `vec` (one value per sample of the block), so
 * every operation below is one SIMD operation whatever the rank, head count or length. Blocks
 * touch only their own rows: ranges of blocks run on separate threads. Inputs are addressed by
 * element strides (model, sample, token) with a contiguous last axis; outputs are contiguous.
 */
#include <math.h>
#include <string.h>

#include "kernels_common.h"

typedef int32_t ivec __attribute__((vector_size(LANES * sizeof(int32_t))));

/* A (model, sample, token, feature) tensor with a contiguous feature axis. Outputs use the same
 * struct. */
typedef struct {
    const float *ptr;
    int64_t sk, sb, st;
} view_t;

static inline vec vmax(vec a, vec b) {
    ivec gt = a > b;
    return (vec)((gt & (ivec)a) | (~gt & (ivec)b));
}

/* exp(x) for x <= 0 to float precision: 2^m e^f with |f| <= ln2 / 2, Taylor to degree 8. */
static inline vec vexp_nonpos(vec x) {
    x = vmax(x, (vec){0} - 87.0f);
    /* round to nearest by the 1.5 * 2^23 shift */
    vec m = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    vec f = (x - m * 0.693145751953125f) - m * 1.42860682030941723212e-6f;
    vec p = f * (1.0f / 40320.0f) + 1.0f / 5040.0f;
    p = p * f + 1.0f / 720.0f;
    p = p * f + 1.0f / 120.0f;
    p = p * f + 1.0f / 24.0f;
    p = p * f + 1.0f / 6.0f;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    ivec bits = (__builtin_convertvector(m, ivec) + 127) << 23;
    return p * (vec)bits;
}

#ifdef __AVX__
#include <immintrin.h>
/* In-register transpose of the 8 x 8 block r[0..7] (rows become columns). */
static inline void transpose8(__m256 *r) {
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20); r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20); r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31); r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31); r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}
#define FAST_TRANSPOSE (LANES == 8)
#else
#define FAST_TRANSPOSE 0
#endif

/* dst[row P + p][l] = row `row` of sample b0 + l (zero for lanes >= used). */
static void load(view_t a, int64_t k, int64_t b0, int64_t used, int64_t rows, int64_t P,
                 vec *restrict dst) {
    float *d = (float *)dst;
    const float *base = a.ptr + k * a.sk + b0 * a.sb;
#if FAST_TRANSPOSE
    if (used == LANES && P % 8 == 0) {
        for (int64_t row = 0; row < rows; row++)
            for (int64_t p = 0; p < P; p += 8) {
                __m256 r[8];
                for (int l = 0; l < 8; l++)
                    r[l] = _mm256_loadu_ps(base + l * a.sb + row * a.st + p);
                transpose8(r);
                for (int j = 0; j < 8; j++) _mm256_store_ps(d + (row * P + p + j) * LANES, r[j]);
            }
        return;
    }
#endif
    if (used < LANES) memset(dst, 0, (size_t)(rows * P) * sizeof(vec));
    for (int64_t l = 0; l < used; l++) {
        const float *src = base + l * a.sb;
        for (int64_t row = 0; row < rows; row++)
            for (int64_t p = 0; p < P; p++) d[(row * P + p) * LANES + l] = src[row * a.st + p];
    }
}

/* The inverse of load: sample l of the block at out + l sb, its rows st apart. */
static void store(const vec *restrict src, int64_t used, int64_t rows, int64_t P,
                  float *restrict out, int64_t sb, int64_t st) {
    const float *s = (const float *)src;
#if FAST_TRANSPOSE
    if (used == LANES && P % 8 == 0) {
        for (int64_t row = 0; row < rows; row++)
            for (int64_t p = 0; p < P; p += 8) {
                __m256 r[8];
                for (int j = 0; j < 8; j++) r[j] = _mm256_load_ps(s + (row * P + p + j) * LANES);
                transpose8(r);
                for (int l = 0; l < 8; l++) _mm256_storeu_ps(out + l * sb + row * st + p, r[l]);
            }
        return;
    }
#endif
    for (int64_t l = 0; l < used; l++) {
        float *dst = out + l * sb;
        for (int64_t row = 0; row < rows; row++)
            for (int64_t p = 0; p < P; p++) dst[row * st + p] = s[(row * P + p) * LANES + l];
    }
}

/* S[n H + h]: the attention probabilities of the query row Qt (P vecs). */
#define INLINE static inline __attribute__((always_inline))

INLINE void probs(const vec *restrict Qt, const vec *restrict Kb, int64_t N, int64_t P,
                  int64_t r, float sc, vec *restrict S) {
    int64_t H = P / r;
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++) {
            vec acc = Qt[h * r] * Kb[n * P + h * r];
            for (int64_t i = 1; i < r; i++) acc += Qt[h * r + i] * Kb[n * P + h * r + i];
            S[n * H + h] = acc * sc;
        }
    for (int64_t h = 0; h < H; h++) {
        vec m = S[h], sum = {0};
        for (int64_t n = 1; n < N; n++) m = vmax(m, S[n * H + h]);
        for (int64_t n = 0; n < N; n++) {
            vec e = vexp_nonpos(S[n * H + h] - m);
            S[n * H + h] = e;
            sum += e;
        }
        vec inv = 1.0f / sum;
        for (int64_t n = 0; n < N; n++) S[n * H + h] *= inv;
    }
}

/* Query row t: S (N H) and the output row Ot (P) from Qt, the keys Kb and values V. */
INLINE void attend_row(const vec *restrict Qt, const vec *restrict Kb, const vec *restrict V,
                       int64_t N, int64_t P, int64_t r, float sc, vec *restrict S,
                       vec *restrict Ot) {
    int64_t H = P / r;
    probs(Qt, Kb, N, P, r, sc, S);
    for (int64_t h = 0; h < H; h++)
        for (int64_t i = 0; i < r; i++) {
            int64_t p = h * r + i;
            vec acc = S[h] * V[p];
            for (int64_t n = 1; n < N; n++) acc += S[n * H + h] * V[n * P + p];
            Ot[p] = acc;
        }
}

/* Backward of query row t given S (from probs) and dOt: writes dQt, adds into dK and dV.
 * G (N H) and D (H) are scratch. */
INLINE void attend_row_backward(const vec *restrict Qt, const vec *restrict dOt,
                                const vec *restrict Kb, const vec *restrict V, int64_t N,
                                int64_t P, int64_t r, float sc, const vec *restrict S,
                                vec *restrict G, vec *restrict D, vec *restrict dQt,
                                vec *restrict dK, vec *restrict dV) {
    int64_t H = P / r;
    for (int64_t h = 0; h < H; h++) D[h] = (vec){0};
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++) {
            vec acc = dOt[h * r] * V[n * P + h * r];
            for (int64_t i = 1; i < r; i++) acc += dOt[h * r + i] * V[n * P + h * r + i];
            G[n * H + h] = acc;
            D[h] += S[n * H + h] * acc;
        }
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++)
            G[n * H + h] = sc * S[n * H + h] * (G[n * H + h] - D[h]); /* E */
    for (int64_t p = 0; p < P; p++) dQt[p] = (vec){0};
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++) {
            vec e = G[n * H + h], sv = S[n * H + h];
            for (int64_t i = 0; i < r; i++) {
                int64_t p = h * r + i;
                dQt[p] += e * Kb[n * P + p];
                dK[n * P + p] += e * Qt[p];
                dV[n * P + p] += sv * dOt[p];
            }
        }
}

/* BODY(rank) with the rank a compile-time constant for ranks 1, 2, 4 and 8 (the inner loops
 * over a head's coordinates unrolled), the run-time value otherwise; same arithmetic either way. */
#define RANK_CASES(r, BODY)                                                                    \
    switch (r) {                                                                               \
    case 1: BODY(1); break;                                                                    \
    case 2: BODY(2); break;                                                                    \
    case 4: BODY(4); break;                                                                    \
    case 8: BODY(8); break;                                                                    \
    default: BODY(r);                                                                          \
    }

typedef struct {
    int64_t B, T, N, P;
    const int64_t *ranks;
    const float *scales;
    view_t q, k, v, dout, o, dq, dk, dv;
} attn_t;

/* Where sample b0 of model k starts in an output view. */
static inline float *out_at(view_t a, int64_t k, int64_t b0) {
    return (float *)a.ptr + k * a.sk + b0 * a.sb;
}

/* Block i = (model, LANES samples): its rows in a sample-innermost layout, the sample of
 * each lane, how many lanes are used. */
static void block_of(const attn_t *a, int64_t i, int64_t *kk, int64_t *b0, int64_t *used) {
    int64_t nb = (a->B + LANES - 1) / LANES;
    *kk = i / nb;
    *b0 = (i % nb) * LANES;
    *used = a->B - *b0 < LANES ? a->B - *b0 : LANES;
}

static void attn_forward_item(const void *ctx, int64_t i, vec *buf) {
    const attn_t *a = ctx;
    int64_t T = a->T, N = a->N, P = a->P, kk, b0, used;
    block_of(a, i, &kk, &b0, &used);
    vec *Q = buf, *O = Q + T * P, *Kb = O + T * P, *V = Kb + N * P, *S = V + N * P;
    load(a->q, kk, b0, used, T, P, Q);
    load(a->k, kk, b0, used, N, P, Kb);
    load(a->v, kk, b0, used, N, P, V);
    int64_t r = a->ranks[kk];
    float sc = a->scales[kk];
#define FORWARD_ROWS(R)                                                                        \
    for (int64_t t = 0; t < T; t++) attend_row(Q + t * P, Kb, V, N, P, R, sc, S, O + t * P)
    RANK_CASES(r, FORWARD_ROWS);
    store(O, used, T, P, out_at(a->o, kk, b0), a->o.sb, a->o.st);
}

static void attn_backward_item(const void *ctx, int64_t i, vec *buf) {
    const attn_t *a = ctx;
    int64_t T = a->T, N = a->N, P = a->P, kk, b0, used;
    block_of(a, i, &kk, &b0, &used);
    int64_t r = a->ranks[kk];
    float sc = a->scales[kk];
    vec *Q = buf, *dQ = Q + T * P, *dO = dQ + T * P, *Kb = dO + T * P, *V = Kb + N * P,
        *dK = V + N * P, *dV = dK + N * P, *S = dV + N * P, *G = S + N * P, *D = G + N * P;
    load(a->q, kk, b0, used, T, P, Q);
    load(a->dout, kk, b0, used, T, P, dO);
    load(a->k, kk, b0, used, N, P, Kb);
    load(a->v, kk, b0, used, N, P, V);
    memset(dK, 0, (size_t)(2 * N * P) * sizeof(vec)); /* dK and dV */
#define BACKWARD_ROWS(R)                                                                       \
    for (int64_t t = 0; t < T; t++) {                                                          \
        probs(Q + t * P, Kb, N, P, R, sc, S);                                                  \
        attend_row_backward(Q + t * P, dO + t * P, Kb, V, N, P, R, sc, S, G, D, dQ + t * P,    \
                            dK, dV);                                                           \
    }
    RANK_CASES(r, BACKWARD_ROWS);
    store(dQ, used, T, P, out_at(a->dq, kk, b0), a->dq.sb, a->dq.st);
    store(dK, used, N, P, out_at(a->dk, kk, b0), a->dk.sb, a->dk.st);
    store(dV, used, N, P, out_at(a->dv, kk, b0), a->dv.sb, a->dv.st);
}

/* Outputs o (K, B, T, P) for blocks [start, stop) of ceil(B / LANES) per model. */
int fused_attention_forward(int64_t B, int64_t T, int64_t N, int64_t P, const int64_t *ranks,
                            const float *scales, view_t q, view_t k, view_t v, view_t o,
                            int64_t start, int64_t stop) {
    attn_t a = {B, T, N, P, ranks, scales, q, k, v, q, o, o, o, o};
    return parallel_items(attn_forward_item, &a, start, stop, 2 * T * P + 3 * N * P);
}

/* Gradients dq (K, B, T, P), dk and dv (K, B, N, P) for blocks [start, stop). */
int fused_attention_backward(int64_t B, int64_t T, int64_t N, int64_t P, const int64_t *ranks,
                             const float *scales, view_t q, view_t k, view_t v, view_t dout,
                             view_t dq, view_t dk, view_t dv, int64_t start, int64_t stop) {
    attn_t a = {B, T, N, P, ranks, scales, q, k, v, dout, dq, dq, dk, dv};
    return parallel_items(attn_backward_item, &a, start, stop, 3 * T * P + 6 * N * P + P);
}

/* ---- LayerNorm over the last axis with per-model affine (verifiers.models.StackedLayerNorm) --
 *
 * x (K, M, d) contiguous; row m of model k: mu, rstd = 1 / sqrt(var + eps), xhat = (x - mu) rstd,
 * y = xhat w_k + b_k. Backward with g = dy w_k:
 *   dx = rstd (g - mean(g) - xhat mean(g xhat)),  dw_k = sum_rows dy xhat,  db_k = sum_rows dy.
 * Rows go LANES at a time (one vec per feature), sums over features run in feature order, so a
 * row's result does not depend on its block. Weight gradients: one partial sum per chunk of
 * LN_CHUNK blocks (fixed, whatever the thread count), summed by the caller. */
#define LN_CHUNK 64

static void ln_block(const float *x, int64_t M, int64_t d, int64_t k, int64_t r0, int64_t used,
                     vec *restrict X) {
    view_t a = {x, M * d, d, 0};
    load(a, k, r0, used, 1, d, X);
}

static void ln_stats(const vec *restrict X, int64_t d, float eps, vec *mu, vec *rstd) {
    vec s = {0}, v = {0};
    for (int64_t j = 0; j < d; j++) s += X[j];
    *mu = s / (float)d;
    for (int64_t j = 0; j < d; j++) v += (X[j] - *mu) * (X[j] - *mu);
    v = v / (float)d + eps;
    vec r;
    for (int l = 0; l < LANES; l++) r[l] = 1.0f / sqrtf(v[l]);
    *rstd = r;
}

typedef struct {
    int64_t M, d;
    const float *x, *w, *b, *dy, *mean_in, *rstd_in;
    float eps, *y, *mean, *rstd, *dx, *dwp, *dbp;
} ln_t;

static void ln_forward_item(const void *ctx, int64_t item, vec *X) {
    const ln_t *a = ctx;
    int64_t M = a->M, d = a->d, nb = (M + LANES - 1) / LANES;
    int64_t nc = (nb + LN_CHUNK - 1) / LN_CHUNK, k = item / nc, c = item % nc;
    const float *wk = a->w + k * d, *bk = a->b + k * d;
    for (int64_t blk = c * LN_CHUNK; blk < nb && blk < (c + 1) * LN_CHUNK; blk++) {
        int64_t r0 = blk * LANES, used = M - r0 < LANES ? M - r0 : LANES;
        vec mu, rs;
        ln_block(a->x, M, d, k, r0, used, X);
        ln_stats(X, d, a->eps, &mu, &rs);
        for (int64_t j = 0; j < d; j++) X[j] = (X[j] - mu) * rs * wk[j] + bk[j];
        store(X, used, 1, d, a->y + (k * M + r0) * d, d, 0);
        for (int64_t l = 0; l < used; l++) {
            a->mean[k * M + r0 + l] = mu[l];
            a->rstd[k * M + r0 + l] = rs[l];
        }
    }
}

static void ln_backward_item(const void *ctx, int64_t item, vec *X) {
    const ln_t *a = ctx;
    int64_t M = a->M, d = a->d, nb = (M + LANES - 1) / LANES;
    int64_t nc = (nb + LN_CHUNK - 1) / LN_CHUNK, k = item / nc, c = item % nc;
    const float *wk = a->w + k * d;
    vec *G = X + d, *AW = G + d, *AB = AW + d;
    for (int64_t j = 0; j < d; j++) AW[j] = AB[j] = (vec){0};
    for (int64_t blk = c * LN_CHUNK; blk < nb && blk < (c + 1) * LN_CHUNK; blk++) {
        int64_t r0 = blk * LANES, used = M - r0 < LANES ? M - r0 : LANES;
        vec mu = {0}, rs = {0}, c1 = {0}, c2 = {0};
        for (int64_t l = 0; l < used; l++) {
            mu[l] = a->mean_in[k * M + r0 + l];
            rs[l] = a->rstd_in[k * M + r0 + l];
        }
        ln_block(a->x, M, d, k, r0, used, X);
        ln_block(a->dy, M, d, k, r0, used, G);
        for (int64_t j = 0; j < d; j++) {
            X[j] = (X[j] - mu) * rs; /* xhat */
            AW[j] += G[j] * X[j];
            AB[j] += G[j];
            G[j] = G[j] * wk[j];
            c1 += G[j] * X[j];
            c2 += G[j];
        }
        c1 = c1 / (float)d;
        c2 = c2 / (float)d;
        for (int64_t j = 0; j < d; j++) G[j] = rs * (G[j] - c2 - X[j] * c1);
        store(G, used, 1, d, a->dx + (k * M + r0) * d, d, 0);
    }
    for (int64_t j = 0; j < d; j++) {
        float sw = 0.0f, sb = 0.0f;
        for (int l = 0; l < LANES; l++) {
            sw += AW[j][l];
            sb += AB[j][l];
        }
        a->dwp[(k * nc + c) * d + j] = sw;
        a->dbp[(k * nc + c) * d + j] = sb;
    }
}

/* y (K, M, d), mean and rstd (K, M); work items: chunks of LN_CHUNK row blocks. */
int layernorm_forward(int64_t M, int64_t d, const float *x, const float *w, const float *b,
                      float eps, float *y, float *mean, float *rstd, int64_t start,
                      int64_t stop) {
    ln_t a = {M, d, x, w, b, NULL, NULL, NULL, eps, y, mean, rstd, NULL, NULL, NULL};
    return parallel_items(ln_forward_item, &a, start, stop, d);
}

/* dx (K, M, d); dwp and dbp (K, chunks, d) partial sums of dw and db. */
int layernorm_backward(int64_t M, int64_t d, const float *x, const float *w, const float *mean,
                       const float *rstd, const float *dy, float *dx, float *dwp, float *dbp,
                       int64_t start, int64_t stop) {
    ln_t a = {M, d, x, w, NULL, dy, mean, rstd, 0.0f, NULL, NULL, NULL, dx, dwp, dbp};
    return parallel_items(ln_backward_item, &a, start, stop, 4 * d);
}
