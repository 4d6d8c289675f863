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

#endif /* GS_COMPILER_LOOP_H */
