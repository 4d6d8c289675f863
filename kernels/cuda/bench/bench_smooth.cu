/* bench_smooth.cu: the bench's smoothing entry over every variant. */
#include "bench_smooth.cuh"
#include "cuda_kernels.h"
#include "launch_common.cuh"
#include "registers.cuh"

using namespace gs_cuda;

size_t gs_cuda_bench_smooth_scratch_bytes(gs_cuda_bench_variant variant, uint32_t width,
                                          uint32_t rows, uint32_t iters)
{
    switch (variant) {
    case GS_CUDA_BENCH_PINGPONG: return smooth_pingpong_scratch(width, rows, iters);
    case GS_CUDA_BENCH_SHARED_TILES: return smooth_shared_tiles_scratch(width, rows, iters);
    case GS_CUDA_BENCH_REGISTERS_IEEE_DIVIDE:
    case GS_CUDA_BENCH_REGISTERS_DIRECT_LOADS:
    case GS_CUDA_BENCH_REGISTERS_BULK_COPY: return smooth_registers_scratch(width, rows, iters);
    case GS_CUDA_BENCH_PRODUCT: return gs_cuda_smooth_scratch_bytes(width, rows, iters);
    case GS_CUDA_BENCH_VARIANT_COUNT: break;
    }
    return 0;
}

cudaError_t gs_cuda_bench_smooth(gs_cuda_bench_variant variant, const void *d_src,
                                 size_t src_pitch, void *d_dst, size_t dst_pitch, uint32_t width,
                                 uint32_t rows, uint32_t bits, uint32_t iters, void *d_scratch,
                                 size_t scratch_bytes, cudaStream_t stream)
{
    if (!smooth_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters))
        return cudaErrorInvalidValue;
    switch (variant) {
    case GS_CUDA_BENCH_PINGPONG:
        return smooth_pingpong(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                               d_scratch, scratch_bytes, stream);
    case GS_CUDA_BENCH_SHARED_TILES:
        return smooth_shared_tiles(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                                   d_scratch, scratch_bytes, stream);
    case GS_CUDA_BENCH_REGISTERS_IEEE_DIVIDE:
    case GS_CUDA_BENCH_REGISTERS_DIRECT_LOADS:
    case GS_CUDA_BENCH_REGISTERS_BULK_COPY:
        return smooth_registers_pinned(variant, d_src, src_pitch, d_dst, dst_pitch, width, rows,
                                       bits, iters, d_scratch, scratch_bytes, stream);
    case GS_CUDA_BENCH_PRODUCT:
        return gs_cuda_smooth(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                              d_scratch, scratch_bytes, stream);
    case GS_CUDA_BENCH_VARIANT_COUNT: break;
    }
    return cudaErrorInvalidValue;
}
