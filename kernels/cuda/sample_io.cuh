/* sample_io.cuh: sample types' ranges and the one float-to-sample store. */
#ifndef GS_CUDA_SAMPLE_IO_CUH
#define GS_CUDA_SAMPLE_IO_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "launch_chain.cuh"
#include "stencil_math.h"

/* The largest value of each sample type, as the float that quantisation clamps to. */
template <typename T> struct Sample;
template <> struct Sample<uint8_t> {
    static constexpr float maxval = 255.0f;
};
template <> struct Sample<uint16_t> {
    static constexpr float maxval = 65535.0f;
};

/* A pass's 3-point sum in gs_mean3's order, never contracted; the kernels divide it by their
 * arithmetic policy's div3 (fast_arith.cuh). */
__device__ __forceinline__ float sum3(float l, float c, float r)
{
    return __fadd_rn(__fadd_rn(l, c), r);
}

/* A pass's result stored as a sample (rounded and clamped) or, between launches, as float. */
template <typename T> __device__ __forceinline__ void store_sample(T *p, float v)
{
    *p = (T)gs_quantize(v, Sample<T>::maxval);
}
template <> __device__ __forceinline__ void store_sample<float>(float *p, float v) { *p = v; }

/*
 * The one map from a launch's (in, out) kinds (bits, or gs_cuda::kKindFloat) to sample types: calls
 * launch(Tin{}, Tout{}) for the seven pairs a chain of launches uses (8 or 16 bits in and
 * out of one launch; u8/u16 -> float first, float -> float between, float -> u8/u16 last).
 */
template <class Launch>
cudaError_t gs_cuda_dispatch_kinds(uint32_t in_kind, uint32_t out_kind, Launch &&launch)
{
    const uint32_t F = gs_cuda::kKindFloat;
    if (in_kind == 8 && out_kind == 8) return launch(uint8_t{}, uint8_t{});
    if (in_kind == 16 && out_kind == 16) return launch(uint16_t{}, uint16_t{});
    if (in_kind == 8 && out_kind == F) return launch(uint8_t{}, float{});
    if (in_kind == 16 && out_kind == F) return launch(uint16_t{}, float{});
    if (in_kind == F && out_kind == F) return launch(float{}, float{});
    if (in_kind == F && out_kind == 8) return launch(float{}, uint8_t{});
    if (in_kind == F && out_kind == 16) return launch(float{}, uint16_t{});
    return cudaErrorInvalidValue;
}

#endif /* GS_CUDA_SAMPLE_IO_CUH */
