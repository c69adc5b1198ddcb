/* What the native kernels share (cpu_kernels.c, ffn_kernels.c): the SIMD vector of LANES floats
 * and the OpenMP loop over work items. */
#ifndef WORKBENCH_KERNELS_COMMON_H
#define WORKBENCH_KERNELS_COMMON_H

#include <stdint.h>
#include <stdlib.h>

#define LANES 8

typedef float vec __attribute__((vector_size(LANES * sizeof(float))));

/* Run item(ctx, i, scratch) for i in [start, stop) on the OpenMP threads (torch's libgomp when
 * built with -fopenmp; one thread otherwise), each thread with its own 64-byte aligned scratch of
 * `vecs` vecs. Items write disjoint outputs. Returns 1 if a scratch buffer could not be had. */
typedef void (*item_fn)(const void *ctx, int64_t i, vec *scratch);

static inline int parallel_items(item_fn item, const void *ctx, int64_t start, int64_t stop,
                                 int64_t vecs) {
    int err = 0;
#pragma omp parallel reduction(| : err)
    {
        vec *buf = (vec *)aligned_alloc(64, ((size_t)vecs * sizeof(vec) + 63) / 64 * 64);
        err |= !buf;
#pragma omp for schedule(static)
        for (int64_t i = start; i < stop; i++)
            if (buf) item(ctx, i, buf);
        free(buf);
    }
    return err;
}

#endif
