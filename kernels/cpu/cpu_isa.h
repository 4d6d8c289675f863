/* cpu_isa.h: the per-instruction-set row primitives and their run-time selection. */
/* Scalar, AVX2 and AVX-512. */

#ifndef GS_CPU_ISA_H
#define GS_CPU_ISA_H

#include <stdint.h>

/* Row primitives one instruction set provides. Every variant gives identical bytes. */
typedef struct gs_cpu_isa {
    const char *name;                                           /* "scalar", "avx2", "avx512" */
    void (*load_u8)(const uint8_t *src, float *dst, long n);    /* samples to float */
    void (*load_u16)(const uint16_t *src, float *dst, long n);
    void (*store_u8)(const float *src, uint8_t *dst, long n);   /* rint, clamp, narrow */
    void (*store_u16)(const float *src, uint16_t *dst, long n);
    void (*store_f32)(const float *src, float *dst, long n);    /* NaN to the canonical one */
    /* Interior pass: b[i] = ((a[i-1] + a[i]) + a[i+1]) / 3 for i in [0, n); a[-1] and a[n]
     * must be readable. */
    void (*mean3)(const float *a, float *b, long n);
    /* mean3 with the two-instruction division (stencil_math.h, gs_div3_short): the same
     * bits while every sum is 0 or at least 2^-123, i.e. in passes 1 to GS_SHORT_DIV_PASSES
     * of a run that starts from integers. */
    void (*mean3_short)(const float *a, float *b, long n);
    /* The same mean over three separate rows (a pass down columns): out[i] =
     * ((l[i] + c[i]) + r[i]) / 3; and the two-term mean at a column end: (l[i] + r[i]) / 2. */
    void (*mean3_of)(const float *l, const float *c, const float *r, float *out, long n);
    void (*mean2_of)(const float *l, const float *r, float *out, long n);
    /* mean3 and mean3_of with IEEE division, for float samples, whose sums may be any
     * float (the fma sequences are proven only on the sums integer samples make). */
    void (*mean3_ieee)(const float *a, float *b, long n);
    void (*mean3_of_ieee)(const float *l, const float *c, const float *r, float *out, long n);
    /* K <= GS_INT_SUMS_MAX_PASSES passes over 8-bit samples at least K from the row or
     * column ends as exact integer sums (int_sums.h; the same bytes as the float passes),
     * one weighted window and its rounding at once. Along a row: dst[i] for i in [0, n)
     * from src[i - K .. i + K], which must be readable. Down columns: dst[i] from
     * rows[0..2K][i], the window rows t - K .. t + K. */
    void (*int_window_u8)(const uint8_t *src, uint8_t *dst, long n, unsigned k);
    void (*int_window_rows_u8)(const uint8_t *const *rows, uint8_t *dst, long n, unsigned k);
    /* Inclusive prefix sum of one row of 8-bit samples into 32-bit sums (the common
     * integral case; the others use plain loops). stream: nobody reads the row soon, so
     * the vector versions may write it past the caches (no read for ownership). */
    void (*prefix_u8_u32)(const uint8_t *src, uint32_t *dst, long n, int stream);
} gs_cpu_isa;

/* The best variant this CPU runs; GSMOOTH_CPU_ISA=scalar|avx2|avx512 caps it (for tests
 * and benchmarks). Never NULL. */
const gs_cpu_isa *gs_cpu_isa_best(void);

/* A variant by name, or NULL when unknown or when this CPU cannot run it. */
const gs_cpu_isa *gs_cpu_isa_by_name(const char *name);

/* Variants compiled in, best first, NULL-terminated (some may not run on this CPU). */
extern const gs_cpu_isa *const gs_cpu_isa_all[];

/* The AVX2 prefix sum and integer windows, shared by the AVX-512 table (every AVX-512 CPU
 * runs AVX2; the AVX-512 file is built for AVX-512F, which has no byte multiply). */
void gs_prefix_u8_u32_avx2(const uint8_t *src, uint32_t *dst, long n, int stream);
void gs_int_window_u8_avx2(const uint8_t *src, uint8_t *dst, long n, unsigned k);
void gs_int_window_rows_u8_avx2(const uint8_t *const *rows, uint8_t *dst, long n, unsigned k);

/* Per-ISA tables, defined in their own files (compiled with their target flags). */
extern const gs_cpu_isa gs_cpu_isa_scalar;
extern const gs_cpu_isa gs_cpu_isa_avx2;
extern const gs_cpu_isa gs_cpu_isa_avx512;

#endif /* GS_CPU_ISA_H */
