/* reference.h: the plain C "gold" implementation of every gsmooth operation, one row at a time. */
#ifndef GS_REFERENCE_H
#define GS_REFERENCE_H

#include <stdint.h>

/* Smooth one row of `width` samples of `bits` bits (8 or 16) `iters` times, in -> out
 * (may alias). `scratch` holds 2 * width floats. */
void gs_ref_smooth_row(const void *in, void *out, uint32_t width, uint32_t bits,
                       uint32_t iters, float *scratch);

/* Inclusive prefix sum of one row: in (in_bits 8/16) -> out (out_bits 32/64). */
void gs_ref_integral_row(const void *in, void *out, uint32_t width, uint32_t in_bits,
                         uint32_t out_bits);

/* One row of the summed-area table: out[x] = column_sums[x] + prefix(in)[x], and
 * column_sums becomes out. column_sums and out have out_bits bits. */
void gs_ref_integral_2d_row(const void *in, void *out, void *column_sums, uint32_t width,
                            uint32_t in_bits, uint32_t out_bits);

#endif /* GS_REFERENCE_H */
