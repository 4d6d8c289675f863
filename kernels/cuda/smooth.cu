/* smooth.cu: the one smoothing entry point: checks the arguments and runs the registers kernels. */
#include "cuda_kernels.h"
#include "launch_common.cuh"
#include "launch_chain.cuh"
#include "registers.cuh"

using namespace gs_cuda;

extern "C" size_t gs_cuda_smooth_scratch_bytes(uint32_t width, uint32_t rows, uint32_t iters)
{
    return smooth_registers_scratch(width, rows, iters);
}

extern "C" cudaError_t gs_cuda_smooth(const void *d_src, size_t src_pitch, void *d_dst,
                                      size_t dst_pitch, uint32_t width, uint32_t rows,
                                      uint32_t bits, uint32_t iters, void *d_scratch,
                                      size_t scratch_bytes, cudaStream_t stream)
{
    if (!smooth_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters))
        return cudaErrorInvalidValue;
    return smooth_registers(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                            d_scratch, scratch_bytes, stream);
}

extern "C" cudaError_t gs_cuda_smooth_rows_float(const void *d_src, size_t src_pitch, float *d_dst,
                                                 size_t dst_pitch, uint32_t width, uint32_t rows,
                                                 uint32_t bits, uint32_t iters, void *d_scratch,
                                                 size_t scratch_bytes, cudaStream_t stream)
{
    if ((bits != 8 && bits != 16 && bits != kKindFloat) ||
        !shape_args_ok(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, 32) ||
        iters > GS_MAX_ITERS)
        return cudaErrorInvalidValue;
    return smooth_registers_to_float(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters,
                                     d_scratch, scratch_bytes, stream);
}
