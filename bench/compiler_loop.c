/* compiler_loop.c: "the compiler's own loop", cpu_bench's plain-loop anchor. */
/* The plain exact row smoothing and prefix sum written as anyone would, OpenMP over rows,
 * compiled alone with -O3 -march=native -ffp-contract=off. */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "compiler_loop.h"

/* Built twice (CMakeLists.txt): as is, and with GS_COMPILER_LOOP_AVX2 and -mno-avx512f. */
#ifdef GS_COMPILER_LOOP_AVX2
#define CL_NAME(f) f##_avx2
#else
#define CL_NAME(f) f
#endif

int CL_NAME(compiler_loop_smooth)(const uint8_t *in, uint8_t *out, int width, int height, int iters,
                         int threads)
{
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        float *a = malloc((size_t)width * sizeof *a), *b = malloc((size_t)width * sizeof *b);
        failed = !a || !b;
#pragma omp for schedule(static)
        for (int y = 0; y < height; ++y) {
            if (failed) continue;
            const uint8_t *src = in + (size_t)y * width;
            uint8_t *dst = out + (size_t)y * width;
            float *p = a, *q = b;
            for (int x = 0; x < width; ++x) p[x] = src[x];
            for (int k = 0; k < iters && width > 1; ++k) {
                q[0] = (p[0] + p[1]) * 0.5f;
                for (int x = 1; x < width - 1; ++x) q[x] = ((p[x - 1] + p[x]) + p[x + 1]) / 3.0f;
                q[width - 1] = (p[width - 2] + p[width - 1]) * 0.5f;
                float *t = p;
                p = q, q = t;
            }
            for (int x = 0; x < width; ++x) {
                float v = rintf(p[x]);
                dst[x] = (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
            }
        }
        free(a), free(b);
    }
    return failed ? -1 : 0;
}

void CL_NAME(compiler_loop_integral_rows)(const uint8_t *in, uint32_t *out, int width, int height,
                                          int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < height; ++y) {
        const uint8_t *src = in + (size_t)y * width;
        uint32_t *dst = out + (size_t)y * width, sum = 0;
        for (int x = 0; x < width; ++x) dst[x] = sum += src[x];
    }
}
