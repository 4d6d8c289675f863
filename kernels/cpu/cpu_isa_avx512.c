/* cpu_isa_avx512.c: the row primitives for AVX-512F (16 floats a vector). */
/* Compiled with -mavx512f. */

#include <immintrin.h>

#include "cpu_isa.h"

#define GS_ISA_NAME "avx512"
#define GS_ISA_TABLE gs_cpu_isa_avx512
#define VEC_WIDTH 16
typedef __m512 vec;

static inline vec v_set1(float x) { return _mm512_set1_ps(x); }
static inline vec v_loadu(const float *p) { return _mm512_loadu_ps(p); }
static inline void v_storeu(float *p, vec v) { _mm512_storeu_ps(p, v); }
static inline vec v_add(vec a, vec b) { return _mm512_add_ps(a, b); }
static inline vec v_mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
static inline vec v_fmadd(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
static inline vec v_fnmadd(vec a, vec b, vec c) { return _mm512_fnmadd_ps(a, b, c); }
static inline vec v_div(vec a, vec b) { return _mm512_div_ps(a, b); }
static inline vec v_canonical_nan(vec v)
{
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_ps(__builtin_nanf("")));
}
static inline vec v_min(vec a, vec b) { return _mm512_min_ps(a, b); }
static inline vec v_max(vec a, vec b) { return _mm512_max_ps(a, b); }
static inline vec v_round_even(vec v)
{
    return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vec v_load_u8(const uint8_t *p)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)));
}
static inline vec v_load_u16(const uint16_t *p)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)));
}
/* vpmovusd* narrow with unsigned saturation; values are already in range. */
static inline void v_store_u8(uint8_t *p, vec v)
{
    _mm_storeu_si128((__m128i *)p, _mm512_cvtusepi32_epi8(_mm512_cvtps_epu32(v)));
}
static inline void v_store_u16(uint16_t *p, vec v)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtusepi32_epi16(_mm512_cvtps_epu32(v)));
}

#define GS_ISA_PREFIX_U8_U32 gs_prefix_u8_u32_avx2
#define GS_ISA_INT_WINDOW_U8 gs_int_window_u8_avx2
#define GS_ISA_INT_WINDOW_ROWS_U8 gs_int_window_rows_u8_avx2
#include "cpu_isa_body.inc"
