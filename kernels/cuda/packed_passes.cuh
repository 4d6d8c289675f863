/* packed_passes.cuh: a few passes over u8 pixels as exact integer sums, two a word. */
/*
 * Up to kPackedMaxPasses passes over a thread's 32 u8 pixels, for segments no row end
 * reaches, and the one rounding that gives the float passes' bytes from them (also for
 * smooth_columns.cu's packed columns).
 */
#ifndef GS_CUDA_PACKED_PASSES_CUH
#define GS_CUDA_PACKED_PASSES_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "fast_arith.cuh"
#include "stencil_math.h"

namespace gs_cuda {

/*
 * Why integer sums give the contract's bytes (8-bit samples, K <= GS_INT_SUMS_MAX_PASSES,
 * every pixel at least K from both row ends): stencil_math.h. gs_cuda_check_fast_arith
 * checks round_packed_lane for every N.
 *
 * Layout. Word j of the 16 + 2K a thread holds carries pixel j of its segment in its low 16
 * bits and pixel j + 16 in its high 16 bits (j from -K: the halo), so a pixel's neighbours
 * are the words either side and a pass is one IADD3 for two pixels. N < 3^4 x 256 < 2^16:
 * the halves never carry into each other.
 */
constexpr int kPackedMaxPasses = (int)GS_INT_SUMS_MAX_PASSES;
constexpr int kPackedWords = 16;         /* words of a 32-pixel segment, two pixels each */
constexpr int kPackedByteWords = 8 + 2;  /* a segment's 8 words of bytes and one each side */

/* 3^K, the divisor after K passes. */
template <int K> constexpr uint32_t kPackedPow3 = GS_INT_SUMS_DIVISOR(K);

/* round(N / 3^K) for N <= 255 x 3^K from the word kMagic23Bits | N (the float 2^23 + N):
 * one FFMA with c = m / 2^23, m = round(2^23 / 3^K), adds m + N x c, takes the m back, and
 * rounds 2^23 + N x c to an integer. N x c is within N / 2^24 <= 1.3e-3 of N / 3^K, which is
 * at least 1/162 from every half-integer: the result is 2^23 + round(N / 3^K), whose low
 * byte is the sample. */
template <int K> __device__ __forceinline__ uint32_t round_packed_lane(uint32_t magic_n)
{
    static_assert(1 <= K && K <= kPackedMaxPasses, "N < 2^16: at most 4 passes");
    constexpr uint32_t m = ((1u << 24) / kPackedPow3<K> + 1u) / 2u; /* round(2^23 / 3^K) */
    return __float_as_uint(
        fmaf(__uint_as_float(magic_n), (float)m * 0x1p-23f, (float)((1u << 23) - m)));
}

/* Bytes 0 and 2 of a word (even_bytes) or 1 and 3 (odd_bytes), each zero-extended to a
 * 16-bit half: two samples of a packed word. */
__device__ __forceinline__ uint32_t even_bytes(uint32_t word) { return __byte_perm(word, 0u, 0x4240u); }
__device__ __forceinline__ uint32_t odd_bytes(uint32_t word) { return __byte_perm(word, 0u, 0x4341u); }

/* round_packed_lane of a packed word's low or high half (its sum N made kMagic23Bits | N). */
template <int K> __device__ __forceinline__ uint32_t round_low_half(uint32_t w)
{
    return round_packed_lane<K>(__byte_perm(w, kMagic23Bits, 0x7610u));
}
template <int K> __device__ __forceinline__ uint32_t round_high_half(uint32_t w)
{
    return round_packed_lane<K>(__byte_perm(w, kMagic23Bits, 0x7632u));
}

/* The pair words of a segment from its bytes: b[0] = pixels -4..-1, b[1..8] the segment,
 * b[9] = pixels 32..35. w[j + K] = pixel j | pixel j + 16 << 16, j in [-K, 16 + K). */
template <int K>
__device__ __forceinline__ void pair_words(const uint32_t (&b)[kPackedByteWords],
                                           uint32_t (&w)[kPackedWords + 2 * K])
{
    /* byte k of word i of b as pixel (4i + k - 4): the low half of word j takes byte
     * (j + 4) % 4 of word (j + 4) / 4, the high half the same byte four words on */
    uint32_t even[kPackedByteWords], odd[kPackedByteWords]; /* bytes 0, 2 and 1, 3, zero-extended */
#pragma unroll
    for (int i = 0; i < kPackedByteWords; ++i) {
        even[i] = even_bytes(b[i]);
        odd[i] = odd_bytes(b[i]);
    }
#pragma unroll
    for (int j = -K; j < kPackedWords + K; ++j) {
        const int i = (j + 4) / 4, k = (j + 4) % 4, h = 2 * (k / 2);
        const uint32_t z = k % 2 == 0 ? even[i] : odd[i];
        /* bytes: z's byte h, a zero (z's byte h + 1), byte k of b[i + 4], a zero */
        const uint32_t sel = (uint32_t)h | (uint32_t)(h + 1) << 4 | (uint32_t)(4 + k) << 8 |
                             (uint32_t)(h + 1) << 12;
        w[j + K] = __byte_perm(z, b[i + 4], sel);
    }
}

/* K passes in place: pass p sums the words within K - p of the segment's. */
template <int K>
__device__ __forceinline__ void packed_passes(uint32_t (&w)[kPackedWords + 2 * K])
{
#pragma unroll
    for (int p = 1; p <= K; ++p) {
        uint32_t left = w[p - 1]; /* the old word left of the one being summed */
#pragma unroll
        for (int i = p; i < kPackedWords + 2 * K - p; ++i) {
            const uint32_t sum = left + w[i] + w[i + 1];
            left = w[i];
            w[i] = sum;
        }
    }
}

/* The segment's 32 samples in memory order, 4 to a word, from the words after K passes. */
template <int K>
__device__ __forceinline__ void round_packed(const uint32_t (&w)[kPackedWords + 2 * K],
                                             uint32_t (&out)[kPackedWords / 2])
{
    uint32_t lo[kPackedWords], hi[kPackedWords];
#pragma unroll
    for (int j = 0; j < kPackedWords; ++j) {
        lo[j] = round_low_half<K>(w[j + K]);
        hi[j] = round_high_half<K>(w[j + K]);
    }
#pragma unroll
    for (int q = 0; q < kPackedWords / 4; ++q) {
        out[q] = pack_low_bytes(lo[4 * q], lo[4 * q + 1], lo[4 * q + 2], lo[4 * q + 3]);
        out[q + 4] = pack_low_bytes(hi[4 * q], hi[4 * q + 1], hi[4 * q + 2], hi[4 * q + 3]);
    }
}

/*
 * The words of rows y .. y + N - 1 of a walk down a column, fetch(row) each, rows from w1 on
 * 0 (smooth_columns.cu's packed columns, smooth_xy.cu's interior). A batch wholly above w1
 * (all but the last one or two of a walk) loads without a test a row, so its N loads all
 * issue before the first is used.
 */
template <int N, class Fetch>
__device__ __forceinline__ void load_batch_words(uint32_t (&in)[N], const char *src, size_t pitch,
                                                 uint32_t y, uint32_t w1, Fetch fetch)
{
    const char *row = src + (size_t)y * pitch;
    if (y + N <= w1) {
#pragma unroll
        for (int u = 0; u < N; ++u, row += pitch) in[u] = fetch(row);
    } else {
#pragma unroll
        for (int u = 0; u < N; ++u, row += pitch) in[u] = y + u < w1 ? fetch(row) : 0u;
    }
}

} /* namespace gs_cuda */

#endif /* GS_CUDA_PACKED_PASSES_CUH */
