/* fast_arith.cuh: the smoothing kernels' arithmetic policies and their magic constants. */
/*
 * The policies divide a pass's sum by 3 and round a result; the fast ones are proven equal
 * to IEEE on the device (gs_cuda_check_fast_arith).
 */
#ifndef GS_CUDA_FAST_ARITH_CUH
#define GS_CUDA_FAST_ARITH_CUH

#include <stdint.h>

#include "stencil_math.h"

namespace gs_cuda {

/* 2^23 as a float: adding it to an integer below 2^23 stores that integer in the mantissa. */
constexpr float kMagic23 = 8388608.0f;
constexpr uint32_t kMagic23Bits = 0x4B000000u;
/* 1.5 * 2^23: v + this rounds v (|v| < 2^22) to the nearest integer, ties to even, and
 * leaves it in the low mantissa bits. */
constexpr float kRoundMagic = 12582912.0f;

/* The one quiet NaN a float result is stored as (GS_CANONICAL_NAN_F32 of the plugin ABI):
 * spelled as bits, since device code's nanf makes another pattern. */
constexpr uint32_t kCanonicalNanBits = 0x7fc00000u;
__device__ __forceinline__ float canonical_f32(float v)
{
    return v != v ? __uint_as_float(kCanonicalNanBits) : v;
}

/*
 * Arithmetic policies: the division of a pass's sum (sum3, gs_mean3's order) and the
 * rounding of a result. IeeeDivide divides as gs_mean3 does and rounds by stencil_math.h;
 * ReciprocalFma gives the same bits in fewer instructions for the inputs that occur here
 * (every float in [0, 3 * 65535] for the division, [0, 65535] for rounding), proven
 * exhaustively by gs_cuda_check_fast_arith on the device (run by the GPU test suite):
 *  - division by 3: the compiler's own fast path for x / 3.0f (q = x * (1/3), r = x - 3q by
 *    FMA, q + r/3 by FMA) without its FCHK range test and the branch to the slow path,
 *    which never triggers for these operands;
 *  - quantize: v + 1.5 * 2^23 rounds to nearest-even like rintf, and leaves the integer in
 *    the low bits; no clamp, because a mean of values in [0, maxval] rounded correctly
 *    stays in [0, maxval] (sums and quotients of correctly rounded ops are monotone).
 * Both return the quantized integer in the low 8 or 16 bits of a 32-bit word.
 * ShortDivide (below) shortens the division further for the passes where that is exact.
 * stored(v) is a float result as it is written: float32 samples reach every float, NaN
 * included, so IeeeDivide (the policy of float samples) stores NaN canonical; the passes of
 * integer samples make no NaN, so ReciprocalFma stores v unchanged.
 */
struct IeeeDivide {
    /* IEEE division, round to nearest even, whatever -prec-div says: float samples reach
     * every float (negative, subnormal, huge, infinite, NaN), where no shorter sequence is
     * proven (docs/performance.md, "Float32 samples") */
    static __device__ __forceinline__ float div3(float s) { return __fdiv_rn(s, 3.0f); }
    static __device__ __forceinline__ uint32_t quantize(float v, float maxval)
    {
        return (uint32_t)gs_quantize(v, maxval);
    }
    static __device__ __forceinline__ float stored(float v) { return canonical_f32(v); }
};

struct ReciprocalFma {
    static __device__ __forceinline__ float div3(float s) { return gs_div3_fma(s); }
    static __device__ __forceinline__ uint32_t quantize(float v, float /*maxval*/)
    {
        return __float_as_uint(__fadd_rn(v, kRoundMagic));
    }
    static __device__ __forceinline__ float stored(float v) { return v; }
};

/* The two-instruction division (gs_div3_short), for passes 1 to GS_SHORT_DIV_PASSES of a
 * run that starts from integer samples, where every sum is 0 or above 2^-123 and its bits
 * equal IEEE s / 3 (stencil_math.h; gs_cuda_check_fast_arith proves it on the device). */
struct ShortDivide : ReciprocalFma {
    static __device__ __forceinline__ float div3(float s) { return gs_div3_short(s); }
};

/*
 * Pass 1 of a run from integer samples, its sums taken as integers. Each sample v is held as
 * the word kMagic23Bits | v (the float 2^23 + v); three such words added as unsigned integers
 * give kSum3MagicBits + s for their sum s < 2^23, and that word is the float
 * -(2^67 + s * 2^44). Adding 2^67 leaves -s * 2^44 exactly, and ShortDivide's two operations
 * with both constants scaled by -2^-44 give its bits for s (every product is the unscaled one
 * times a power of two, far from underflow and overflow; 0 gives +0). So one IADD3 and one
 * FADD take the place of the two float additions of the sum and the FADD per sample that
 * byte_to_float spends. gs_cuda_check_fast_arith proves it for every s in [0, 3 x 65535].
 */
constexpr uint32_t kSum3MagicBits = 3u * kMagic23Bits; /* 0xE1000000: the float -2^67 */
__device__ __forceinline__ float div3_of_magic_sum(uint32_t sum_of_three_words)
{
    const float neg_scaled = __fadd_rn(__uint_as_float(sum_of_three_words), 0x1p67f);
    return fmaf(neg_scaled, -GS_DIV3_HI * 0x1p-44f,
                __fmul_rn(neg_scaled, -GS_DIV3_LO * 0x1p-44f));
}

/* Four quantized 8-bit samples, each in the low byte of its word (quantize), as one word in
 * memory order, a first. */
__device__ __forceinline__ uint32_t pack_low_bytes(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    return __byte_perm(__byte_perm(a, b, 0x0040u), __byte_perm(c, d, 0x0040u), 0x5410u);
}

/* Two quantized 16-bit samples, each in the low half of its word, as one word, a first. */
__device__ __forceinline__ uint32_t pack_low_halves(uint32_t a, uint32_t b)
{
    return __byte_perm(a, b, 0x5410u);
}

} /* namespace gs_cuda */

#endif /* GS_CUDA_FAST_ARITH_CUH */
