/* registers_smooth.cu: the product's choices of the registers kernels. */
#include "registers.cuh"
#include "registers_kernels.cuh"

namespace {

/* Whether the plugin's default registers variant prefetches (kPrefetchMaxPasses). */
bool default_prefetches(uint32_t iters)
{
    return iters <= kPrefetchMaxPasses || iters > kRelayMaxPasses;
}

} /* namespace */

/* ---- the variant's entries ---- */

size_t gs_cuda::smooth_registers_scratch(uint32_t width, uint32_t rows, uint32_t iters)
{
    return chain_scratch_bytes(width, rows, iters, max_passes_per_launch(width));
}

cudaError_t gs_cuda::smooth_registers(const void *d_src, size_t src_pitch, void *d_dst,
                                      size_t dst_pitch, uint32_t width, uint32_t rows,
                                      uint32_t bits, uint32_t iters, void *d_scratch,
                                      size_t scratch_bytes, cudaStream_t stream)
{
    return smooth_with<ReciprocalFma>(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                                      d_scratch, scratch_bytes, default_prefetches(iters), true,
                                      stream);
}

cudaError_t gs_cuda::smooth_registers_to_float(const void *d_src, size_t src_pitch, float *d_dst,
                                               size_t dst_pitch, uint32_t width, uint32_t rows,
                                               uint32_t bits, uint32_t iters, void *d_scratch,
                                               size_t scratch_bytes, cudaStream_t stream)
{
    if (bits == kKindFloat) /* float32 samples: IEEE division, NaN stored canonical; none of
                               the integer samples' shortcuts (few passes, short division) */
        return smooth_with<IeeeDivide>(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits,
                                       iters, d_scratch, scratch_bytes, false, false, stream,
                                       kKindFloat);
    return smooth_with<ReciprocalFma>(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                                      d_scratch, scratch_bytes, default_prefetches(iters), true,
                                      stream, kKindFloat);
}
