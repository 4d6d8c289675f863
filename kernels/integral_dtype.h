/* integral_dtype.h: the rule that picks the integral output's sample width from the header alone. */
#ifndef GS_INTEGRAL_DTYPE_H
#define GS_INTEGRAL_DTYPE_H

#include <stdint.h>

/* Largest value a sample of `in_bits` bits can hold. */
static inline uint64_t gs_sample_max(uint32_t in_bits) { return in_bits == 16 ? 65535u : 255u; }

/* Bits needed to hold every sum of `count` samples of `in_bits` bits: 32 while the largest
 * possible sum is below 2^32, else 64. */
static inline uint32_t gs_integral_bits_for_count(uint32_t in_bits, uint64_t count)
{
    uint64_t max = gs_sample_max(in_bits);
    if (count > UINT64_MAX / max) return 64u; /* the product itself would overflow */
    return max * count <= UINT32_MAX ? 32u : 64u;
}

/* Integral rows: uint32 for 8-bit input and uint64 for 16-bit input (DESIGN.md); an 8-bit
 * row so wide that 255 x width reaches 2^32 also gets uint64 rather than overflowing. */
static inline uint32_t gs_integral_rows_bits(uint32_t in_bits, uint32_t width)
{
    return in_bits == 16 ? 64u : gs_integral_bits_for_count(in_bits, width);
}

/* Summed-area table: uint32 when max x width x height is below 2^32, else uint64. */
static inline uint32_t gs_integral_2d_bits(uint32_t in_bits, uint32_t width, uint32_t height)
{
    return gs_integral_bits_for_count(in_bits, (uint64_t)width * height);
}

#endif /* GS_INTEGRAL_DTYPE_H */
