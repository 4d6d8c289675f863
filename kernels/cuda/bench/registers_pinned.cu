/* registers_pinned.cu: the registers kernels with one choice pinned, for the bench. */
#include "bench_smooth.cuh"
#include "registers_kernels.cuh"

cudaError_t gs_cuda::smooth_registers_pinned(gs_cuda_bench_variant variant, const void *d_src,
                                             size_t src_pitch, void *d_dst, size_t dst_pitch,
                                             uint32_t width, uint32_t rows, uint32_t bits,
                                             uint32_t iters, void *d_scratch,
                                             size_t scratch_bytes, cudaStream_t stream)
{
    switch (variant) {
    case GS_CUDA_BENCH_REGISTERS_IEEE_DIVIDE:
        return smooth_with<IeeeDivide>(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits,
                                       iters, d_scratch, scratch_bytes, false, false, stream);
    case GS_CUDA_BENCH_REGISTERS_DIRECT_LOADS:
        return smooth_with<ReciprocalFma>(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits,
                                          iters, d_scratch, scratch_bytes, false, false, stream);
    case GS_CUDA_BENCH_REGISTERS_BULK_COPY:
        return smooth_with<ReciprocalFma>(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits,
                                          iters, d_scratch, scratch_bytes, true, false, stream);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t gs_cuda::smooth_registers_f32_groups(const void *d_src, size_t src_pitch, float *d_dst,
                                                 size_t dst_pitch, uint32_t width, uint32_t rows,
                                                 uint32_t iters, void *d_scratch,
                                                 size_t scratch_bytes, cudaStream_t stream)
{
    /* prefetch = true makes plan keep the multi-warp groups; float32 input never takes the
     * prefetching kernel itself (launch_typed) */
    return smooth_with<IeeeDivide>(d_src, src_pitch, d_dst, dst_pitch, width, rows, kKindFloat,
                                   iters, d_scratch, scratch_bytes, true, false, stream,
                                   kKindFloat);
}
