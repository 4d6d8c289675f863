/* launch_chain.cuh: K smoothing passes split into a chain of launches. */
#ifndef GS_CUDA_LAUNCH_CHAIN_CUH
#define GS_CUDA_LAUNCH_CHAIN_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "round_up.h"

namespace gs_cuda {

/* A launch's input or output kind: the sample depth in bits, or float32 between launches. */
constexpr uint32_t kKindFloat = 32;

/* Launches for K passes at most `max_per_launch` each. */
inline uint32_t launch_count(uint32_t iters, uint32_t max_per_launch)
{
    return iters == 0 ? 0u : (iters + max_per_launch - 1u) / max_per_launch;
}

/* Bytes of one float32 row in scratch, padded to GS_CUDA_ALIGN. */
inline size_t float_pitch(uint32_t width)
{
    return gs_round_up((size_t)width * sizeof(float), GS_CUDA_ALIGN);
}

/* Scratch for a chain: two float32 row sets when more than one launch is needed. */
inline size_t chain_scratch_bytes(uint32_t width, uint32_t rows, uint32_t iters,
                                  uint32_t max_per_launch)
{
    return launch_count(iters, max_per_launch) > 1 ? 2 * float_pitch(width) * (size_t)rows : 0;
}

/*
 * The one launch chain every variant shares. K = 0 copies (into float32, or from float32
 * samples, one launch of no passes). Otherwise the passes go out in launches of at most `max_per_launch`; the first
 * reads the samples, the last writes them (as samples of `bits`, or unrounded as float32
 * when last_kind is kKindFloat: the rows half of --axis xy), and those between ping-pong
 * two float32 row sets in d_scratch. `launch(in, in_pitch, in_kind, out, out_pitch,
 * out_kind, passes)` enqueues one launch.
 */
template <class LaunchOne>
cudaError_t run_chain(const void *d_src, size_t src_pitch, void *d_dst, size_t dst_pitch,
                      uint32_t width, uint32_t rows, uint32_t bits, uint32_t iters,
                      uint32_t max_per_launch, void *d_scratch, size_t scratch_bytes,
                      cudaStream_t stream, LaunchOne launch, uint32_t last_kind = 0)
{
    if (last_kind == 0) last_kind = bits;
    if (iters == 0) { /* a copy, or into floats one launch of no passes */
        /* float32 samples too take the launch: their NaN are stored canonical */
        if (last_kind != bits || bits == kKindFloat)
            return launch(d_src, src_pitch, bits, d_dst, dst_pitch, last_kind, 0u);
        return cudaMemcpy2DAsync(d_dst, dst_pitch, d_src, src_pitch, (size_t)width * (bits / 8),
                                 rows, cudaMemcpyDeviceToDevice, stream);
    }
    const uint32_t n = launch_count(iters, max_per_launch);
    if (n == 1) return launch(d_src, src_pitch, bits, d_dst, dst_pitch, last_kind, iters);
    const size_t fpitch = float_pitch(width);
    if (d_scratch == NULL || scratch_bytes < 2 * fpitch * (size_t)rows) return cudaErrorInvalidValue;
    char *ping[2] = {(char *)d_scratch, (char *)d_scratch + fpitch * (size_t)rows};
    const void *in = d_src;
    size_t in_pitch = src_pitch;
    uint32_t in_kind = bits, left = iters;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t passes = left < max_per_launch ? left : max_per_launch;
        const bool last = i + 1 == n;
        void *out = last ? d_dst : (void *)ping[i & 1];
        const size_t out_pitch = last ? dst_pitch : fpitch;
        const uint32_t out_kind = last ? last_kind : kKindFloat;
        cudaError_t err = launch(in, in_pitch, in_kind, out, out_pitch, out_kind, passes);
        if (err != cudaSuccess) return err;
        in = out;
        in_pitch = out_pitch;
        in_kind = out_kind;
        left -= passes;
    }
    return cudaSuccess;
}

} /* namespace gs_cuda */

#endif /* GS_CUDA_LAUNCH_CHAIN_CUH */
