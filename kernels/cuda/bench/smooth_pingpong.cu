/* smooth_pingpong.cu: the ping-pong variant, the bench's global-memory baseline. */
/*
 * One launch per pass, one thread per pixel, float32 rows ping-ponged through global memory.
 */
#include "launch_common.cuh"
#include "sample_io.cuh"
#include "bench_smooth.cuh"
#include "launch_chain.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <stdint.h>

using namespace gs_cuda;

namespace {

constexpr int kPingpongThreads = 256;  /* threads per block along a row */
static_assert(kPingpongThreads % gs_cuda::kWarp == 0, "whole warps");

/* ---- kernels ---- */

/* One pass: every pixel reads its neighbours from the previous pass in global memory. */
template <typename Tin, typename Tout>
__global__ void __launch_bounds__(kPingpongThreads)
    smooth_pingpong_kernel(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                        uint32_t width, uint32_t rows)
{
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    for (uint32_t y = blockIdx.y; y < rows; y += gridDim.y) {
        const Tin *a = (const Tin *)(src + (size_t)y * src_pitch);
        float m;
        if (width == 1)
            m = (float)a[0];
        else if (x == 0)
            m = gs_mean2((float)a[0], (float)a[1]);
        else if (x == width - 1)
            m = gs_mean2((float)a[x - 1], (float)a[x]);
        else
            m = gs_mean3((float)a[x - 1], (float)a[x], (float)a[x + 1]);
        store_sample((Tout *)(dst + (size_t)y * dst_pitch) + x, m);
    }
}

/* ---- host side ---- */

template <typename Tin, typename Tout>
cudaError_t launch_typed(const void *in, size_t ip, void *out, size_t op, uint32_t width,
                         uint32_t rows, cudaStream_t stream)
{
    const dim3 grid = segment_grid((width + kPingpongThreads - 1) / kPingpongThreads, rows); /* rows loop beyond */
    smooth_pingpong_kernel<Tin, Tout><<<grid, kPingpongThreads, 0, stream>>>(
        (const char *)in, ip, (char *)out, op, width, rows);
    return cudaGetLastError();
}

cudaError_t launch_one(const void *in, size_t ip, uint32_t ik, void *out, size_t op,
                       uint32_t ok, uint32_t width, uint32_t rows, cudaStream_t stream)
{
    return gs_cuda_dispatch_kinds(ik, ok, [&](auto tin, auto tout) {
        return launch_typed<decltype(tin), decltype(tout)>(in, ip, out, op, width, rows, stream);
    });
}

} /* namespace */

/* ---- the variant's entry ---- */

size_t gs_cuda::smooth_pingpong_scratch(uint32_t width, uint32_t rows, uint32_t iters)
{
    return chain_scratch_bytes(width, rows, iters, 1);
}

cudaError_t gs_cuda::smooth_pingpong(const void *d_src, size_t src_pitch, void *d_dst,
                                     size_t dst_pitch, uint32_t width, uint32_t rows,
                                     uint32_t bits, uint32_t iters, void *d_scratch,
                                     size_t scratch_bytes, cudaStream_t stream)
{
    auto one = [=](const void *in, size_t ip, uint32_t ik, void *out, size_t op, uint32_t ok,
                   uint32_t /*passes: always 1*/) {
        return launch_one(in, ip, ik, out, op, ok, width, rows, stream);
    };
    return run_chain(d_src, src_pitch, d_dst, dst_pitch, width, rows, bits, iters, 1, d_scratch,
                     scratch_bytes, stream, one);
}
