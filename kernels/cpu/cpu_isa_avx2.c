/* cpu_isa_avx2.c: the row primitives for AVX2 + FMA (8 floats a vector). */
/* Compiled with -mavx2 -mfma. */

#include <immintrin.h>

#include "cpu_isa.h"
#include "int_sums.h"

#define GS_ISA_NAME "avx2"
#define GS_ISA_TABLE gs_cpu_isa_avx2
#define VEC_WIDTH 8
typedef __m256 vec;

static inline vec v_set1(float x) { return _mm256_set1_ps(x); }
static inline vec v_loadu(const float *p) { return _mm256_loadu_ps(p); }
static inline void v_storeu(float *p, vec v) { _mm256_storeu_ps(p, v); }
static inline vec v_add(vec a, vec b) { return _mm256_add_ps(a, b); }
static inline vec v_mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
static inline vec v_fmadd(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
static inline vec v_fnmadd(vec a, vec b, vec c) { return _mm256_fnmadd_ps(a, b, c); }
static inline vec v_div(vec a, vec b) { return _mm256_div_ps(a, b); }
static inline vec v_canonical_nan(vec v)
{
    return _mm256_blendv_ps(v, _mm256_set1_ps(__builtin_nanf("")), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}
static inline vec v_min(vec a, vec b) { return _mm256_min_ps(a, b); }
static inline vec v_max(vec a, vec b) { return _mm256_max_ps(a, b); }
static inline vec v_round_even(vec v)
{
    return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vec v_load_u8(const uint8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}
static inline vec v_load_u16(const uint16_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)));
}
/* Integral floats in range convert exactly; packus narrows without wrapping. */
static inline __m128i to_u16x8(vec v)
{
    __m256i i = _mm256_cvtps_epi32(v);
    return _mm_packus_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
}
static inline void v_store_u16(uint16_t *p, vec v) { _mm_storeu_si128((__m128i *)p, to_u16x8(v)); }
static inline void v_store_u8(uint8_t *p, vec v)
{
    __m128i w = to_u16x8(v);
    _mm_storel_epi64((__m128i *)p, _mm_packus_epi16(w, w));
}

/* The prefix of 8 samples at src, plus the running total broadcast in carry. */
static inline __m256i prefix8(const uint8_t *src, __m256i carry)
{
    __m256i x = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)src));
    x = _mm256_add_epi32(x, _mm256_slli_si256(x, 4));
    x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));
    __m256i low_total = _mm256_shuffle_epi32(_mm256_permute2x128_si256(x, x, 0x08), 0xFF);
    return _mm256_add_epi32(_mm256_add_epi32(x, low_total), carry);
}

/*
 * Row prefix sum, 8 samples a step: a log-step scan inside each 128-bit half, the low
 * half's total added to the high half, then the running total of the row so far. With
 * `stream`, the first samples go one by one until the output is 32-byte aligned, and from
 * there the steps write their results past the caches, so the lines the row overwrites
 * whole are not read first (4 bytes written a sample against 1 read).
 */
void gs_prefix_u8_u32_avx2(const uint8_t *src, uint32_t *dst, long n, int stream)
{
    const __m256i last = _mm256_set1_epi32(7);
    uint32_t sum = 0;
    long i = 0;
    if (stream && (uintptr_t)dst % 4 == 0)
        for (; i < n && (uintptr_t)(dst + i) % 32 != 0; ++i) dst[i] = sum += src[i];
    __m256i carry = _mm256_set1_epi32((int)sum);
    /* Two loops, not one choosing its store inside: that form was measured slower
     * (bench/cpu_bench.c's integral rows). */
    if (stream && (uintptr_t)(dst + i) % 32 == 0) {
        for (; i + 8 <= n; i += 8) {
            const __m256i x = prefix8(src + i, carry);
            _mm256_stream_si256((__m256i *)(dst + i), x);
            carry = _mm256_permutevar8x32_epi32(x, last);
        }
        _mm_sfence(); /* the streamed lines are out before anyone reads the row */
    } else {
        for (; i + 8 <= n; i += 8) {
            const __m256i x = prefix8(src + i, carry);
            _mm256_storeu_si256((__m256i *)(dst + i), x);
            carry = _mm256_permutevar8x32_epi32(x, last);
        }
    }
    sum = (uint32_t)_mm256_cvtsi256_si32(carry);
    for (; i < n; ++i) dst[i] = sum += src[i];
}

/* The window's weights in pairs (the low byte multiplies the first sample of a pair, as
 * vpmaddubsw takes them; last: the pair (0, w[2K])) and its rounding's constants. */
typedef struct window_vecs {
    __m256i pair[GS_INT_SUMS_MAX_PASSES + 1], last, half, magic;
    __m128i shift;
} window_vecs;

static inline window_vecs window_vecs_for(unsigned k)
{
    window_vecs v;
    uint8_t w[GS_INT_WINDOW_TAPS];
    gs_int_window_weights(k, w);
    for (unsigned p = 0; p <= k; ++p) v.pair[p] = _mm256_set1_epi16((short)(w[2 * p] | w[2 * p + 1] << 8));
    v.last = _mm256_set1_epi16((short)(w[2 * k] << 8));
    v.half = _mm256_set1_epi16((short)(GS_INT_SUMS_DIVISOR(k) / 2));
    v.magic = _mm256_set1_epi16((short)gs_int_round_magic(k));
    v.shift = _mm_cvtsi32_si128((int)gs_int_round_shift(k));
    return v;
}

/* round(sum / 3^K) in each 16-bit lane (gs_int_round_magic). */
static inline __m256i round_sums(__m256i sums, const window_vecs *v)
{
    return _mm256_srl_epi16(_mm256_mulhi_epu16(_mm256_add_epi16(sums, v->half), v->magic), v->shift);
}

/* The next 32-sample step after x of a row of n >= 32: the last one ends at n, overlapping
 * the one before; -1 when done. */
static inline long next_step(long x, long n)
{
    x += 32;
    return x + 32 <= n ? x : x < n ? n - 32 : -1;
}

/*
 * gs_int_window_u8 (int_sums.h), 32 outputs a step, no widening: vpmaddubsw multiplies
 * bytes by the window's weights and adds neighbouring pairs into 16-bit lanes, so the sums
 * of the 16 even outputs of a step come from the K + 1 loads at x - K + 2p (pair p of
 * weights, w[2K + 1] = 0), and those of the 16 odd ones from the K loads at x - K + 1 + 2p
 * plus the last even load with the pair (0, w[2K]), which reads no byte past x + 31 + K.
 * Each sum is rounded by a multiply-high (gs_int_round_magic), and the even and odd bytes
 * interleave as the low and high bytes of the lanes. The last step overlaps the one
 * before it when n is not a multiple of 32 (the same bytes written twice); shorter rows
 * take the portable body. Measured faster than three passes of 16-bit sums
 * (bench/cpu_bench.c, smoothing at K <= 4).
 */
static inline void int_window_avx2(const uint8_t *src, uint8_t *dst, long n, const unsigned k)
{
    const window_vecs v = window_vecs_for(k);
    for (long x = 0; x >= 0; x = next_step(x, n)) {
        const uint8_t *s = src + x - (long)k;
        __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256(), top = even;
#pragma GCC unroll 8
        for (unsigned p = 0; p <= k; ++p) {
            top = _mm256_loadu_si256((const __m256i *)(s + 2 * p));
            even = _mm256_add_epi16(even, _mm256_maddubs_epi16(top, v.pair[p]));
            if (p < k)
                odd = _mm256_add_epi16(
                    odd, _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i *)(s + 2 * p + 1)), v.pair[p]));
        }
        odd = _mm256_add_epi16(odd, _mm256_maddubs_epi16(top, v.last));
        even = round_sums(even, &v);
        odd = round_sums(odd, &v);
        _mm256_storeu_si256((__m256i *)(dst + x), _mm256_or_si256(even, _mm256_slli_epi16(odd, 8)));
    }
}

void gs_int_window_u8_avx2(const uint8_t *src, uint8_t *dst, long n, unsigned k)
{
    if (n < 32) {
        gs_int_window_u8(src, dst, n, k);
        return;
    }
#define GS_ROW_WINDOW(K) int_window_avx2(src, dst, n, K)
    GS_INT_WITH_PASSES(k, GS_ROW_WINDOW);
#undef GS_ROW_WINDOW
}

/*
 * gs_int_window_rows_u8 (int_sums.h), 32 columns a step: the rows pair up (row 2p with row
 * 2p + 1, the last with zeros), each pair's bytes interleave (vpunpck[lh]bw, within each
 * 128-bit half) so vpmaddubsw weighs and adds them into 16-bit lanes, and after the
 * rounding vpackuswb undoes the interleave's order. Steps, the overlapping last one and
 * the portable body below 32 columns as the row window above.
 */
static inline void int_window_rows_avx2(const uint8_t *const *rows, uint8_t *dst, long n, const unsigned k)
{
    const window_vecs v = window_vecs_for(k);
    const __m256i zero = _mm256_setzero_si256();
    for (long x = 0; x >= 0; x = next_step(x, n)) {
        __m256i lo = zero, hi = zero;
#pragma GCC unroll 8
        for (unsigned p = 0; p <= k; ++p) {
            const __m256i a = _mm256_loadu_si256((const __m256i *)(rows[2 * p] + x));
            const __m256i b = p < k ? _mm256_loadu_si256((const __m256i *)(rows[2 * p + 1] + x)) : zero;
            lo = _mm256_add_epi16(lo, _mm256_maddubs_epi16(_mm256_unpacklo_epi8(a, b), v.pair[p]));
            hi = _mm256_add_epi16(hi, _mm256_maddubs_epi16(_mm256_unpackhi_epi8(a, b), v.pair[p]));
        }
        lo = round_sums(lo, &v);
        hi = round_sums(hi, &v);
        _mm256_storeu_si256((__m256i *)(dst + x), _mm256_packus_epi16(lo, hi));
    }
}

void gs_int_window_rows_u8_avx2(const uint8_t *const *rows, uint8_t *dst, long n, unsigned k)
{
    if (n < 32) {
        gs_int_window_rows_u8(rows, dst, n, k);
        return;
    }
#define GS_COLUMN_WINDOW(K) int_window_rows_avx2(rows, dst, n, K)
    GS_INT_WITH_PASSES(k, GS_COLUMN_WINDOW);
#undef GS_COLUMN_WINDOW
}

#define GS_ISA_PREFIX_U8_U32 gs_prefix_u8_u32_avx2
#define GS_ISA_INT_WINDOW_U8 gs_int_window_u8_avx2
#define GS_ISA_INT_WINDOW_ROWS_U8 gs_int_window_rows_u8_avx2
#include "cpu_isa_body.inc"
