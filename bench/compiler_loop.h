/* compiler_loop.h: the anchor loops cpu_bench sets beside gsmooth's kernels (compiler_loop.c). */
#ifndef GS_COMPILER_LOOP_H
#define GS_COMPILER_LOOP_H

#include <stdint.h>

/* `iters` passes of the exact 3-point mean along each row of a width x height u8 image,
 * rounded; 0, or -1 when out of memory. */
int compiler_loop_smooth(const uint8_t *in, uint8_t *out, int width, int height, int iters,
                         int threads);

/* Inclusive prefix sums along each row, u8 -> u32. */
void compiler_loop_integral_rows(const uint8_t *in, uint32_t *out, int width, int height, int threads);

/* The same two loops compiled without AVX-512 (-march=native -mno-avx512f): what the
 * compiler gives on an AVX2-only machine, the anchor when gsmooth runs its AVX2 path
 * (GSMOOTH_CPU_ISA=avx2). */
int compiler_loop_smooth_avx2(const uint8_t *in, uint8_t *out, int width, int height, int iters,
                              int threads);
void compiler_loop_integral_rows_avx2(const uint8_t *in, uint32_t *out, int width, int height,
                                      int threads);

#endif /* GS_COMPILER_LOOP_H */
