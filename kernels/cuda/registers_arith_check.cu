/* registers_arith_check.cu: the device proof of the registers kernels' fast arithmetic. */
#include "cuda_kernels.h"
#include "fast_arith.cuh"
#include "packed_passes.cuh"
#include "stencil_math.h"

#include <cuda_runtime.h>
#include <stdint.h>

using namespace gs_cuda;

namespace {

/* Whether round_packed_lane<K> misses round(n / 3^K) (no ties: 3^K is odd), for n in its range
 * [0, 255 x 3^K]. */
template <int K> __device__ bool packed_rounding_wrong(uint32_t n)
{
    constexpr uint32_t pow3 = kPackedPow3<K>;
    return n <= 255u * pow3 &&
           round_packed_lane<K>(kMagic23Bits | n) != kMagic23Bits + (2u * n + pow3) / (2u * pow3);
}

/* Exhaustive comparison of ReciprocalFma, ShortDivide, div3_of_magic_sum and the integer
 * sums' rounding (round_packed_lane) with the shared formulas (see their comments):
 * d_counts[0] counts differences where they must agree, d_counts[1] the short division's
 * differences at or below 2^-123, which the pass limit keeps away. */
__global__ void check_fast_arith_kernel(unsigned long long *d_counts)
{
    const uint32_t div_hi = __float_as_uint(3.0f * 65535.0f);
    const uint32_t short_lo = __float_as_uint(0x1p-123f);
    const uint32_t q_hi = __float_as_uint(65535.0f), q8_hi = __float_as_uint(255.0f);
    unsigned long long bad = 0, short_below = 0;
    for (uint64_t u = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; u <= div_hi;
         u += (uint64_t)gridDim.x * blockDim.x) {
        const float s = __uint_as_float((uint32_t)u);
        const uint32_t exact = __float_as_uint(gs_mean3(s, 0.0f, 0.0f));
        if (__float_as_uint(ReciprocalFma::div3(s)) != exact) ++bad;
        if (__float_as_uint(ShortDivide::div3(s)) != exact) {
            if (u == 0 || u > short_lo)
                ++bad;
            else
                ++short_below;
        }
        if (u <= q_hi &&
            (ReciprocalFma::quantize(s, 65535.0f) & 0xffffu) != IeeeDivide::quantize(s, 65535.0f))
            ++bad;
        if (u <= q8_hi &&
            (ReciprocalFma::quantize(s, 255.0f) & 0xffu) != IeeeDivide::quantize(s, 255.0f))
            ++bad;
        /* pass 1's integer sums (div3_of_magic_sum): u as the sum itself */
        if (u <= 3u * 65535u &&
            __float_as_uint(div3_of_magic_sum(kSum3MagicBits + (uint32_t)u)) !=
                __float_as_uint(gs_mean3((float)u, 0.0f, 0.0f)))
            ++bad;
        /* the integer sums' rounding: u as N */
        bad += packed_rounding_wrong<1>((uint32_t)u) + packed_rounding_wrong<2>((uint32_t)u) +
               packed_rounding_wrong<3>((uint32_t)u) + packed_rounding_wrong<4>((uint32_t)u);
    }
    if (bad) atomicAdd(&d_counts[0], bad);
    if (short_below) atomicAdd(&d_counts[1], short_below);
}

} /* namespace */

extern "C" cudaError_t gs_cuda_check_fast_arith(unsigned long long *d_counts, cudaStream_t stream)
{
    if (d_counts == NULL) return cudaErrorInvalidValue;
    /* 1024 blocks x 256 threads stride over the ~1.2e9 inputs: enough to fill any GPU. */
    check_fast_arith_kernel<<<1024, 256, 0, stream>>>(d_counts);
    return cudaGetLastError();
}
