/* Native CPU kernel (float32) for the encoder's feed-forward block of K stacked models
 * (verifiers.chunked_ffn; docs/derivations/fused_ffn.md):
 *
 *   h = relu(x W1 + b1),  y = h W2 + b2,        x (M, d), W1 (d, f), W2 (f, e) per model;
 *   dh = (dy W2^T) [h > 0],  dx = dh W1^T,  dW1 = x^T dh,  db1 = sum_rows dh,
 *   dW2 = h^T dy,  db2 = sum_rows dy.
 *
 * A work item is one chunk of FFN_CHUNK rows of one model; it goes through its rows FFN_BLOCK at
 * a time, so a block's hidden layer (FFN_BLOCK x f) stays in cache, and the backward pass
 * recomputes it from x (only x is kept between the passes). Each item writes only its own rows
 * and its own partial weight gradients (summed over chunks by the caller), and every sum runs in
 * a fixed order, so results depend neither on the thread count nor on the other models stacked.
 * All tensors are contiguous: x (K, M, d), W1 (K, d, f), b1 (K, f), W2 (K, f, e), b2 (K, e).
 */
#include <string.h>

#include "kernels_common.h"

#define FFN_CHUNK 1024 /* rows per work item (and per partial weight-gradient sum) */
#define FFN_BLOCK 32   /* rows whose hidden layer is held at once */

typedef float vecu __attribute__((vector_size(LANES * sizeof(float)), aligned(4)));

/* C[i][j] (+)= sum_p A[i sar + p sac] B[p ldb + j] on the R x (8 V) tile at C (R <= 4, V <= 2);
 * the sum over p runs in order, starting from C's value when acc is set, else from bias[j] (a row
 * added to every row; 0 when bias is NULL). */
static inline __attribute__((always_inline)) void tile(int R, int V, int64_t kk,
                                                       const float *A, int64_t sar, int64_t sac,
                                                       const float *B, int64_t ldb, float *C,
                                                       int64_t ldc, int acc,
                                                       const float *bias) {
    vec c[4][2];
    for (int r = 0; r < R; r++)
        for (int v = 0; v < V; v++)
            c[r][v] = acc    ? (vec) * (const vecu *)(C + r * ldc + 8 * v)
                      : bias ? (vec) * (const vecu *)(bias + 8 * v)
                             : (vec){0};
    for (int64_t p = 0; p < kk; p++) {
        vec b[2];
        for (int v = 0; v < V; v++) b[v] = *(const vecu *)(B + p * ldb + 8 * v);
        for (int r = 0; r < R; r++) {
            float a = A[r * sar + p * sac];
            for (int v = 0; v < V; v++) c[r][v] += a * b[v];
        }
    }
    for (int r = 0; r < R; r++)
        for (int v = 0; v < V; v++) *(vecu *)(C + r * ldc + 8 * v) = c[r][v];
}

#define TILE(R, V)                                                                             \
    tile(R, V, kk, A + i * sar, sar, sac, B + j, ldb, C + i * ldc + j, ldc, acc,                \
         bias ? bias + j : NULL)

/* C (m x n, row stride ldc) = or += A (m x kk, strides sar, sac) B (kk x n, row stride ldb);
 * with acc unset, bias (n, or NULL) is added to every row. */
static void gemm(int64_t m, int64_t n, int64_t kk, const float *A, int64_t sar, int64_t sac,
                 const float *B, int64_t ldb, float *C, int64_t ldc, int acc, const float *bias) {
    for (int64_t i = 0; i < m; i += 4) {
        int R = m - i < 4 ? (int)(m - i) : 4;
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) switch (R) {
            case 4: TILE(4, 2); break;
            case 3: TILE(3, 2); break;
            case 2: TILE(2, 2); break;
            default: TILE(1, 2);
            }
        for (; j + 8 <= n; j += 8) switch (R) {
            case 4: TILE(4, 1); break;
            case 3: TILE(3, 1); break;
            case 2: TILE(2, 1); break;
            default: TILE(1, 1);
            }
        for (; j < n; j++)
            for (int r = 0; r < R; r++) {
                float s = acc ? C[(i + r) * ldc + j] : bias ? bias[j] : 0.0f;
                for (int64_t p = 0; p < kk; p++) s += A[(i + r) * sar + p * sac] * B[p * ldb + j];
                C[(i + r) * ldc + j] = s;
            }
    }
}

typedef struct {
    int64_t M, d, f, e;
    const float *x, *W1, *b1, *W2, *b2, *dy;
    float *y, *dx, *dW1, *db1, *dW2, *db2;
} ffn_t;

static int64_t ffn_chunks(int64_t M) { return (M + FFN_CHUNK - 1) / FFN_CHUNK; }

/* h = relu(x W1 + b1) for the n rows at x (FFN_BLOCK x f scratch H). */
static void hidden(const ffn_t *a, int64_t k, const float *x, int64_t n, float *H) {
    int64_t d = a->d, f = a->f;
    gemm(n, f, d, x, d, 1, a->W1 + k * d * f, f, H, f, 0, a->b1 + k * f);
    for (int64_t i = 0; i < n * f; i++) H[i] = H[i] > 0.0f ? H[i] : 0.0f;
}

static void ffn_forward_item(const void *ctx, int64_t item, vec *scratch) {
    const ffn_t *a = ctx;
    int64_t M = a->M, d = a->d, f = a->f, e = a->e, nc = ffn_chunks(M);
    int64_t k = item / nc, lo = item % nc * FFN_CHUNK, hi = lo + FFN_CHUNK < M ? lo + FFN_CHUNK : M;
    float *H = (float *)scratch;
    for (int64_t r0 = lo; r0 < hi; r0 += FFN_BLOCK) {
        int64_t n = hi - r0 < FFN_BLOCK ? hi - r0 : FFN_BLOCK;
        float *y = a->y + (k * M + r0) * e;
        hidden(a, k, a->x + (k * M + r0) * d, n, H);
        gemm(n, e, f, H, f, 1, a->W2 + k * f * e, e, y, e, 0, a->b2 + k * e);
    }
}

static void ffn_backward_item(const void *ctx, int64_t item, vec *scratch) {
    const ffn_t *a = ctx;
    int64_t M = a->M, d = a->d, f = a->f, e = a->e, nc = ffn_chunks(M);
    int64_t k = item / nc, lo = item % nc * FFN_CHUNK, hi = lo + FFN_CHUNK < M ? lo + FFN_CHUNK : M;
    float *H = (float *)scratch, *dH = H + FFN_BLOCK * f, *W2T = dH + FFN_BLOCK * f;
    float *W1T = W2T + e * f;
    const float *W1 = a->W1 + k * d * f, *W2 = a->W2 + k * f * e;
    float *dW1 = a->dW1 + item * d * f, *db1 = a->db1 + item * f;
    float *dW2 = a->dW2 + item * f * e, *db2 = a->db2 + item * e;
    for (int64_t j = 0; j < f; j++) {
        for (int64_t o = 0; o < e; o++) W2T[o * f + j] = W2[j * e + o];
        for (int64_t i = 0; i < d; i++) W1T[j * d + i] = W1[i * f + j];
    }
    memset(dW1, 0, (size_t)(d * f) * sizeof(float));
    memset(db1, 0, (size_t)f * sizeof(float));
    memset(dW2, 0, (size_t)(f * e) * sizeof(float));
    memset(db2, 0, (size_t)e * sizeof(float));
    for (int64_t r0 = lo; r0 < hi; r0 += FFN_BLOCK) {
        int64_t n = hi - r0 < FFN_BLOCK ? hi - r0 : FFN_BLOCK;
        const float *x = a->x + (k * M + r0) * d, *dy = a->dy + (k * M + r0) * e;
        hidden(a, k, x, n, H);
        gemm(f, e, n, H, 1, f, dy, e, dW2, e, 1, NULL); /* dW2 += h^T dy */
        gemm(n, f, e, dy, e, 1, W2T, f, dH, f, 0, NULL); /* dh = dy W2^T */
        for (int64_t i = 0; i < n * f; i++) dH[i] = H[i] > 0.0f ? dH[i] : 0.0f;
        for (int64_t r = 0; r < n; r++) {
            for (int64_t j = 0; j < f; j++) db1[j] += dH[r * f + j];
            for (int64_t o = 0; o < e; o++) db2[o] += dy[r * e + o];
        }
        gemm(d, f, n, x, 1, d, dH, f, dW1, f, 1, NULL); /* dW1 += x^T dh */
        gemm(n, d, f, dH, f, 1, W1T, d, a->dx + (k * M + r0) * d, d, 0, NULL); /* dx = dh W1^T */
    }
}

/* y (K, M, e); work items: K times ceil(M / FFN_CHUNK) chunks. */
int ffn_forward(int64_t M, int64_t d, int64_t f, int64_t e, const float *x, const float *W1,
                const float *b1, const float *W2, const float *b2, float *y, int64_t start,
                int64_t stop) {
    ffn_t a = {M, d, f, e, x, W1, b1, W2, b2, NULL, y, NULL, NULL, NULL, NULL, NULL};
    return parallel_items(ffn_forward_item, &a, start, stop, (FFN_BLOCK * f + LANES) / LANES);
}

/* dx (K, M, d); partial sums per (model, chunk): dW1 (K, C, d, f), db1 (K, C, f),
 * dW2 (K, C, f, e), db2 (K, C, e). */
int ffn_backward(int64_t M, int64_t d, int64_t f, int64_t e, const float *x, const float *W1,
                 const float *b1, const float *W2, const float *dy, float *dx, float *dW1,
                 float *db1, float *dW2, float *db2, int64_t start, int64_t stop) {
    ffn_t a = {M, d, f, e, x, W1, b1, W2, NULL, dy, NULL, dx, dW1, db1, dW2, db2};
    int64_t floats = 2 * FFN_BLOCK * f + e * f + f * d;
    return parallel_items(ffn_backward_item, &a, start, stop, (floats + LANES) / LANES);
}

/* ---- One affine map per model, y = x W + b (the projections and read-outs of the stacks) ----
 *
 * x rows at x + k sxk + m din (sxk = 0: one input shared by every model); W (K, din, dout), or
 * (K, dout, din) when wt is set (nn.Linear's layout, read transposed); b (K, dout) or NULL.
 * Backward: dx = dy W^T (skipped when dx is NULL), dW = x^T dy and db = sum_rows dy as partial
 * sums per (model, chunk of FFN_CHUNK rows), in W's own layout. */
typedef struct {
    int64_t M, din, dout, sxk, wt;
    const float *x, *W, *b, *dy;
    float *y, *dx, *dW, *db;
} lin_t;

/* Model k's W as (din, dout) rows, into scratch when it is stored transposed. */
static const float *lin_weight(const lin_t *a, int64_t k, float *scratch) {
    int64_t din = a->din, dout = a->dout;
    const float *W = a->W + k * din * dout;
    if (!a->wt) return W;
    for (int64_t o = 0; o < dout; o++)
        for (int64_t i = 0; i < din; i++) scratch[i * dout + o] = W[o * din + i];
    return scratch;
}

static void lin_forward_item(const void *ctx, int64_t item, vec *scratch) {
    const lin_t *a = ctx;
    int64_t M = a->M, din = a->din, dout = a->dout, nc = ffn_chunks(M);
    int64_t k = item / nc, lo = item % nc * FFN_CHUNK, hi = lo + FFN_CHUNK < M ? lo + FFN_CHUNK : M;
    const float *W = lin_weight(a, k, (float *)scratch);
    float *y = a->y + (k * M + lo) * dout;
    gemm(hi - lo, dout, din, a->x + k * a->sxk + lo * din, din, 1, W, dout, y, dout, 0,
         a->b ? a->b + k * dout : NULL);
}

static void lin_backward_item(const void *ctx, int64_t item, vec *scratch) {
    const lin_t *a = ctx;
    int64_t M = a->M, din = a->din, dout = a->dout, nc = ffn_chunks(M);
    int64_t k = item / nc, lo = item % nc * FFN_CHUNK, hi = lo + FFN_CHUNK < M ? lo + FFN_CHUNK : M;
    const float *x = a->x + k * a->sxk + lo * din, *dy = a->dy + (k * M + lo) * dout;
    const float *W = a->W + k * din * dout;
    float *dW = a->dW + item * din * dout, *db = a->db + item * dout, *WT = (float *)scratch;
    if (a->wt) /* dW (dout, din) = dy^T x */
        gemm(dout, din, hi - lo, dy, 1, dout, x, din, dW, din, 0, NULL);
    else /* dW (din, dout) = x^T dy */
        gemm(din, dout, hi - lo, x, 1, din, dy, dout, dW, dout, 0, NULL);
    memset(db, 0, (size_t)dout * sizeof(float));
    for (int64_t r = 0; r < hi - lo; r++)
        for (int64_t o = 0; o < dout; o++) db[o] += dy[r * dout + o];
    if (!a->dx) return;
    if (!a->wt) /* W^T as (dout, din) rows */
        for (int64_t i = 0; i < din; i++)
            for (int64_t o = 0; o < dout; o++) WT[o * din + i] = W[i * dout + o];
    gemm(hi - lo, din, dout, dy, dout, 1, a->wt ? W : WT, din, a->dx + (k * M + lo) * din, din,
         0, NULL);
}

/* y (K, M, dout); work items: K times ceil(M / FFN_CHUNK) chunks. */
int linear_forward(int64_t M, int64_t din, int64_t dout, int64_t sxk, int64_t wt,
                   const float *x, const float *W, const float *b, float *y, int64_t start,
                   int64_t stop) {
    lin_t a = {M, din, dout, sxk, wt, x, W, b, NULL, y, NULL, NULL, NULL};
    return parallel_items(lin_forward_item, &a, start, stop, (din * dout + LANES) / LANES);
}

/* dx (K, M, din) or NULL; partial sums per (model, chunk): dW (K, C, W's layout), db (K, C,
 * dout). */
int linear_backward(int64_t M, int64_t din, int64_t dout, int64_t sxk, int64_t wt,
                    const float *x, const float *W, const float *dy, float *dx, float *dW,
                    float *db, int64_t start, int64_t stop) {
    lin_t a = {M, din, dout, sxk, wt, x, W, NULL, dy, NULL, dx, dW, db};
    return parallel_items(lin_backward_item, &a, start, stop, (din * dout + LANES) / LANES);
}
