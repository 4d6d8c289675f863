/* sample_io.cuh: sample types' ranges and the one float-to-sample store, shared by the CUDA smoothing kernels. */
#ifndef GS_CUDA_SAMPLE_IO_CUH
#define GS_CUDA_SAMPLE_IO_CUH

#include <stdint.h>

#include "stencil_math.h"

/* The largest value of each sample type, as the float that quantisation clamps to. */
template <typename T> struct Sample;
template <> struct Sample<uint8_t> {
    static constexpr float maxval = 255.0f;
};
template <> struct Sample<uint16_t> {
    static constexpr float maxval = 65535.0f;
};

/* A pass's result stored as a sample (rounded and clamped) or, between launches, as float. */
template <typename T> __device__ __forceinline__ void store_sample(T *p, float v)
{
    *p = (T)gs_quantize(v, Sample<T>::maxval);
}
template <> __device__ __forceinline__ void store_sample<float>(float *p, float v) { *p = v; }

#endif /* GS_CUDA_SAMPLE_IO_CUH */
