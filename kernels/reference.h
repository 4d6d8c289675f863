/* reference.h: the plain C "gold" implementation of every gsmooth operation, one row at a time. */
#ifndef GS_REFERENCE_H
#define GS_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Smooth one row of `width` samples of `bits` bits (8 or 16; 32: float32) `iters` times,
 * in -> out (may alias), at the same depth. `scratch` holds 2 * width floats. */
void gs_ref_smooth_row(const void *in, void *out, uint32_t width, uint32_t bits,
                       uint32_t iters, float *scratch);

/* The same into `out_bits` samples: in_bits, or 32 for float32 (the unrounded passes,
 * every NaN stored as the canonical one). */
void gs_ref_smooth_row_to(const void *in, uint32_t in_bits, void *out, uint32_t out_bits,
                          uint32_t width, uint32_t iters, float *scratch);

/* The same passes left unrounded: the row's float32 values after `iters` passes, in one
 * half of `scratch` (2 * width floats). Every backend's floats equal these bit for bit. */
const float *gs_ref_smooth_row_float(const void *in, uint32_t width, uint32_t bits, uint32_t iters,
                                     float *scratch);

/* Axes for gs_ref_smooth_image (the ABI's GS_AXIS_* values). */
#define GS_REF_AXIS_X 1u
#define GS_REF_AXIS_Y 2u

/* Smooth a whole image (rows of `width` samples, `bits` 8 or 16) along `axes`: `iters`
 * passes along each row (X), then `iters` down each column (Y) on those floats, rounded
 * once. in and out may be the same buffer. 0, or -1 when out of memory. */
int gs_ref_smooth_image(const void *in, size_t in_stride, void *out, size_t out_stride,
                        uint32_t width, uint32_t height, uint32_t bits, uint32_t iters,
                        uint32_t axes);

/* The same from `in_bits` samples (8, 16, 32 float) into `out_bits` ones (in_bits, or 32:
 * float32, unrounded). */
int gs_ref_smooth_image_to(const void *in, size_t in_stride, uint32_t in_bits, void *out,
                           size_t out_stride, uint32_t out_bits, uint32_t width,
                           uint32_t height, uint32_t iters, uint32_t axes);

/* Inclusive prefix sum of one row: in (in_bits 8/16) -> out (out_bits 32/64); float32 in
 * (in_bits 32) -> float64 out (out_bits 64), summed left to right. */
void gs_ref_integral_row(const void *in, void *out, uint32_t width, uint32_t in_bits,
                         uint32_t out_bits);

/* One row of the summed-area table: out[x] = column_sums[x] + prefix(in)[x], and
 * column_sums becomes out. column_sums and out have out_bits bits (float64 for float32
 * in; the first row's column_sums then hold -0.0). */
void gs_ref_integral_2d_row(const void *in, void *out, void *column_sums, uint32_t width,
                            uint32_t in_bits, uint32_t out_bits);

#ifdef __cplusplus
}
#endif

#endif /* GS_REFERENCE_H */
