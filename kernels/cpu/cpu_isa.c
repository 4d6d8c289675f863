/* cpu_isa.c: the portable scalar row primitives and run-time choice of the best instruction set. */
#include "cpu_isa.h"

#include <stdlib.h>
#include <string.h>

#include "int_sums.h"
#include "stencil_math.h"

static void scalar_load_u8(const uint8_t *src, float *dst, long n)
{
    for (long i = 0; i < n; ++i) dst[i] = (float)src[i];
}

static void scalar_load_u16(const uint16_t *src, float *dst, long n)
{
    for (long i = 0; i < n; ++i) dst[i] = (float)src[i];
}

static void scalar_store_u8(const float *src, uint8_t *dst, long n)
{
    for (long i = 0; i < n; ++i) dst[i] = (uint8_t)gs_quantize(src[i], 255.0f);
}

static void scalar_store_u16(const float *src, uint16_t *dst, long n)
{
    for (long i = 0; i < n; ++i) dst[i] = (uint16_t)gs_quantize(src[i], 65535.0f);
}

static void scalar_store_f32(const float *src, float *dst, long n)
{
    for (long i = 0; i < n; ++i) dst[i] = gs_canonical_f32(src[i]);
}

static void scalar_mean3_of(const float *l, const float *c, const float *r, float *out, long n)
{
    for (long i = 0; i < n; ++i) out[i] = gs_mean3(l[i], c[i], r[i]);
}

static void scalar_mean3(const float *a, float *b, long n) { scalar_mean3_of(a - 1, a, a + 1, b, n); }

static void scalar_mean2_of(const float *l, const float *r, float *out, long n)
{
    for (long i = 0; i < n; ++i) out[i] = gs_mean2(l[i], r[i]);
}

static void scalar_prefix_u8_u32(const uint8_t *src, uint32_t *dst, long n, int stream)
{
    (void)stream;
    uint32_t sum = 0;
    for (long i = 0; i < n; ++i) dst[i] = sum += src[i];
}

const gs_cpu_isa gs_cpu_isa_scalar = {
    .name = "scalar",
    .load_u8 = scalar_load_u8,
    .load_u16 = scalar_load_u16,
    .store_u8 = scalar_store_u8,
    .store_u16 = scalar_store_u16,
    .store_f32 = scalar_store_f32,
    .mean3 = scalar_mean3,
    .mean3_short = scalar_mean3, /* the exact division: the same bits everywhere */
    .mean3_of = scalar_mean3_of,
    .mean3_ieee = scalar_mean3, /* scalar passes divide exactly */
    .mean3_of_ieee = scalar_mean3_of,
    .mean2_of = scalar_mean2_of,
    .int_window_u8 = gs_int_window_u8, /* int_sums.h, compiled with this file's flags */
    .int_window_rows_u8 = gs_int_window_rows_u8,
    .prefix_u8_u32 = scalar_prefix_u8_u32,
};

const gs_cpu_isa *const gs_cpu_isa_all[] = {&gs_cpu_isa_avx512, &gs_cpu_isa_avx2,
                                            &gs_cpu_isa_scalar, NULL};

static int cpu_runs(const gs_cpu_isa *isa)
{
    __builtin_cpu_init();
    if (isa == &gs_cpu_isa_avx512) return __builtin_cpu_supports("avx512f");
    if (isa == &gs_cpu_isa_avx2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return 1;
}

const gs_cpu_isa *gs_cpu_isa_by_name(const char *name)
{
    for (const gs_cpu_isa *const *p = gs_cpu_isa_all; *p; ++p)
        if (strcmp((*p)->name, name) == 0) return cpu_runs(*p) ? *p : NULL;
    return NULL;
}

const gs_cpu_isa *gs_cpu_isa_best(void)
{
    /* A cap from the environment starts the search at that variant. */
    const char *cap = getenv("GSMOOTH_CPU_ISA");
    int capped = cap && *cap;
    for (const gs_cpu_isa *const *p = gs_cpu_isa_all; *p; ++p) {
        if (capped && strcmp((*p)->name, cap) != 0) continue;
        capped = 0;
        if (cpu_runs(*p)) return *p;
    }
    return &gs_cpu_isa_scalar;
}
