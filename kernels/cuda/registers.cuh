/* registers.cuh: the registers smoothing variant's host entries, for smooth.cu and the bench. */
#ifndef GS_CUDA_REGISTERS_CUH
#define GS_CUDA_REGISTERS_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

namespace gs_cuda {

/* The product's smoothing (arguments as gs_cuda_smooth's, checked there) and its scratch. */
cudaError_t smooth_registers(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                             uint32_t width, uint32_t rows, uint32_t bits, uint32_t iters,
                             void *d_scratch, size_t scratch_bytes, cudaStream_t stream);
size_t smooth_registers_scratch(uint32_t width, uint32_t rows, uint32_t iters);

/* The registers variant's launch for at most kFewPassesMax passes from integer samples
 * (registers_few_passes.cu): in_kind 8 or 16, out_kind the same or kKindFloat. few_passes_fit
 * says whether a launch of this shape can take it (not one-pixel rows with passes: they
 * take none, smooth_with). */
constexpr uint32_t kFewPassesMax = 4;
bool few_passes_fit(uint32_t width, uint32_t rows, uint32_t passes);
cudaError_t smooth_few_passes(const void *in, size_t in_pitch, uint32_t in_kind, void *out,
                              size_t out_pitch, uint32_t out_kind, uint32_t passes,
                              uint32_t width, uint32_t rows, cudaStream_t stream);

/* The registers variant's passes with float32 results (gs_cuda_smooth_rows_float), from
 * samples of `bits` 8, 16 or 32 (float32). */
cudaError_t smooth_registers_to_float(const void *d_src, size_t src_pitch, float *d_dst,
                                      size_t dst_pitch, uint32_t width, uint32_t rows,
                                      uint32_t bits, uint32_t iters, void *d_scratch,
                                      size_t scratch_bytes, cudaStream_t stream);

} /* namespace gs_cuda */

#endif /* GS_CUDA_REGISTERS_CUH */
