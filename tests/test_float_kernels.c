/* test_float_kernels.c: Check suite: the CPU kernels on float32 samples and float results against the plain reference, bit for bit. */
/* Random floats with NaN, infinities, subnormals, signed zeros, huge, tiny and negative
 * values, on every instruction set, thread count, axis and strip split; integer samples
 * smoothed to float32; float64 integrals across strips; NaN stored canonical. */

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "gsmooth/gsmooth_plugin.h"
#include "parallel.h"
#include "reference.h"

static const uint32_t widths[] = {1, 2, 3, 7, 15, 16, 17, 33, 255, 2049, 2057, 4100};
static const uint32_t iters_list[] = {0, 1, 2, 3, 4, 5, 10, 79};

static const gs_cpu_isa *isas[8];
static int isa_count;

/* xorshift64*: fixed seed, so a failure reproduces. */
static uint64_t rng_state = 0x243F6A8885A308D3u;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

/* One float of a mix that reaches every IEEE case: mostly ordinary values of both signs,
 * some NaN (with payloads and signs: the kernels must store the canonical one), infinities,
 * subnormals, signed zeros, and values near FLT_MAX whose sums overflow. */
static float random_float(void)
{
    const uint64_t r = rng();
    const uint32_t bits = (uint32_t)(r >> 32);
    float v;
    switch (r % 24) {
    case 0: memcpy(&v, &(uint32_t){0x7f800001u | (bits & 0x803fffffu)}, 4); return v; /* NaN */
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: memcpy(&v, &(uint32_t){bits & 0x807fffffu}, 4); return v; /* subnormal */
    case 4: return (bits & 1) ? -0.0f : 0.0f;
    case 5: return (bits & 1 ? -1.0f : 1.0f) * 3.0e38f;
    case 6: return (bits & 1 ? -1.0f : 1.0f) * 1.2e-38f; /* near the smallest normal */
    default: return ((float)(int32_t)bits) / 65536.0f; /* ordinary, both signs */
    }
}

static void fill_floats(float *buf, size_t n)
{
    for (size_t i = 0; i < n; ++i) buf[i] = random_float();
}

static void fill_integers(void *buf, size_t n, uint32_t bits)
{
    for (size_t i = 0; i < n; ++i) {
        const uint32_t v = (uint32_t)(rng() >> 40);
        if (bits == 16) ((uint16_t *)buf)[i] = (uint16_t)v;
        else ((uint8_t *)buf)[i] = (uint8_t)v;
    }
}

/* The first differing float of two buffers, for a message; -1 when equal. */
static long first_difference(const void *a, const void *b, size_t n_words, size_t word)
{
    for (size_t i = 0; i < n_words; ++i)
        if (memcmp((const char *)a + i * word, (const char *)b + i * word, word) != 0) return (long)i;
    return -1;
}

/* Every NaN in the buffer is the canonical one. */
static int nans_canonical(const float *v, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        uint32_t u;
        memcpy(&u, v + i, 4);
        if (v[i] != v[i] && u != GS_CANONICAL_NAN_F32) return 0;
    }
    return 1;
}

/* Rows: float32 in -> float32 out, and 8/16-bit in -> float32 out (the unrounded passes). */
START_TEST(rows_match_reference)
{
    const uint32_t in_bits = _i % 3 == 0 ? 32 : _i % 3 == 1 ? 8 : 16;
    const uint32_t w = widths[(_i / 3) % (sizeof widths / sizeof *widths)];
    const uint32_t h = 3;
    const size_t n = (size_t)w * h, ib = in_bits / 8;
    void *in = malloc(n * ib);
    float *ref = malloc(n * 4), *out = malloc(n * 4), *scratch = malloc(2 * (size_t)w * 4);
    ck_assert(in && ref && out && scratch);
    if (in_bits == 32) fill_floats(in, n);
    else fill_integers(in, n, in_bits);
    for (size_t ki = 0; ki < sizeof iters_list / sizeof *iters_list; ++ki) {
        const uint32_t k = iters_list[ki];
        for (uint32_t r = 0; r < h; ++r)
            gs_ref_smooth_row_to((const char *)in + r * w * ib, in_bits, ref + (size_t)r * w, 32, w, k, scratch);
        ck_assert(nans_canonical(ref, n));
        for (unsigned t = 1; t <= 3; t += 2)
            for (int ii = 0; ii < isa_count; ++ii) {
                gs_cpu_workspace ws = {0};
                memset(out, 0xA5, n * 4);
                gs_rows s = {w, h, in_bits, 32, in, w * ib, out, (size_t)w * 4};
                ck_assert_int_eq(gs_cpu_smooth_strip(&s, k, t, isas[ii], &ws), 0);
                long d = first_difference(out, ref, n, 4);
                if (d >= 0)
                    ck_abort_msg("rows: width %u in %u bits K=%u threads %u %s: sample %ld is %a, "
                                 "the reference %a", w, in_bits, k, t, isas[ii]->name, d, out[d], ref[d]);
                gs_cpu_workspace_release(&ws);
            }
    }
    free(in), free(ref), free(out), free(scratch);
}
END_TEST

/* Columns and both axes, in strips with the halo a host gives, against the reference. */
START_TEST(windows_match_reference)
{
    static const uint32_t heights[] = {1, 2, 5, 23};
    static const uint32_t axes_list[] = {GS_REF_AXIS_Y, GS_REF_AXIS_X | GS_REF_AXIS_Y};
    static const uint32_t strips[] = {1, 4, 100};
    static const uint32_t win_iters[] = {0, 1, 3, 4, 10};
    const uint32_t in_bits = _i % 2 ? 32 : 8;
    const uint32_t w = widths[(_i / 2) % (sizeof widths / sizeof *widths)];
    if (w > 2057) return; /* the rows test covers the wide chunks */
    const size_t ib = in_bits / 8;
    for (size_t hi = 0; hi < sizeof heights / sizeof *heights; ++hi) {
        const uint32_t h = heights[hi];
        const size_t n = (size_t)w * h;
        void *in = malloc(n * ib);
        float *ref = malloc(n * 4), *out = malloc(n * 4);
        ck_assert(in && ref && out);
        if (in_bits == 32) fill_floats(in, n);
        else fill_integers(in, n, in_bits);
        for (size_t ki = 0; ki < sizeof win_iters / sizeof *win_iters; ++ki)
            for (size_t ai = 0; ai < 2; ++ai) {
                const uint32_t k = win_iters[ki], axes = axes_list[ai];
                ck_assert_int_eq(gs_ref_smooth_image_to(in, w * ib, in_bits, ref, (size_t)w * 4, 32, w,
                                                        h, k, axes), 0);
                for (size_t si = 0; si < sizeof strips / sizeof *strips; ++si)
                    for (int ii = 0; ii < isa_count; ++ii) {
                        gs_cpu_workspace ws = {0};
                        gs_cpu_window_space space = {0};
                        memset(out, 0xA5, n * 4);
                        for (uint32_t y0 = 0; y0 < h; y0 += strips[si]) {
                            const uint32_t rows = h - y0 < strips[si] ? h - y0 : strips[si];
                            const uint32_t above = y0 < k ? y0 : k;
                            const uint32_t below = h - y0 - rows < k ? h - y0 - rows : k;
                            gs_rows win = {w, rows, in_bits, 32,
                                           (const char *)in + (size_t)(y0 - above) * w * ib, w * ib,
                                           out + (size_t)y0 * w, (size_t)w * 4};
                            ck_assert_int_eq(gs_cpu_smooth_window(&win, above, below, axes, k, 2,
                                                                  isas[ii], &ws, &space), 0);
                        }
                        long d = first_difference(out, ref, n, 4);
                        if (d >= 0)
                            ck_abort_msg("window %ux%u in %u bits K=%u axes %u strip %u %s: sample "
                                         "%ld is %a, the reference %a", w, h, in_bits, k, axes,
                                         strips[si], isas[ii]->name, d, out[d], ref[d]);
                        gs_cpu_workspace_release(&ws);
                        gs_cpu_window_space_release(&space);
                    }
            }
        free(in), free(ref), free(out);
    }
}
END_TEST

/* Float64 integrals in uneven strips, the 2d carry starting at -0.0 as the host fills it. */
START_TEST(integrals_match_reference)
{
    const uint32_t w = widths[_i % (sizeof widths / sizeof *widths)], h = 9;
    const size_t n = (size_t)w * h;
    float *in = malloc(n * 4);
    double *ref = malloc(n * 8), *out = malloc(n * 8), *ref_cols = malloc((size_t)w * 8),
           *cols = malloc((size_t)w * 8);
    ck_assert(in && ref && out && ref_cols && cols);
    fill_floats(in, n);
    for (int mode = 0; mode < 2; ++mode) {
        for (uint32_t x = 0; x < w; ++x) ref_cols[x] = -0.0;
        for (uint32_t r = 0; r < h; ++r) {
            if (mode == 0) gs_ref_integral_row(in + (size_t)r * w, ref + (size_t)r * w, w, 32, 64);
            else gs_ref_integral_2d_row(in + (size_t)r * w, ref + (size_t)r * w, ref_cols, w, 32, 64);
        }
        for (unsigned t = 1; t <= 2; ++t)
            for (int ii = 0; ii < isa_count; ++ii) {
                memset(out, 0xA5, n * 8);
                for (uint32_t x = 0; x < w; ++x) cols[x] = -0.0;
                for (uint32_t y = 0; y < h;) {
                    const uint32_t rows = (y % 3) + 1 < h - y ? (y % 3) + 1 : h - y;
                    gs_rows s = {w, rows, 32, 64, in + (size_t)y * w, (size_t)w * 4,
                                 out + (size_t)y * w, (size_t)w * 8};
                    if (mode == 0) gs_cpu_integral_rows_strip(&s, t, isas[ii]);
                    else gs_cpu_integral_2d_strip(&s, cols, t, isas[ii]);
                    y += rows;
                }
                long d = first_difference(out, ref, n, 8);
                if (d >= 0)
                    ck_abort_msg("integral %s %ux%u threads %u %s: value %ld is %a, the reference %a",
                                 mode ? "2d" : "rows", w, h, t, isas[ii]->name, d, out[d], ref[d]);
                for (size_t i = 0; i < n; ++i) {
                    uint64_t u;
                    memcpy(&u, out + i, 8);
                    ck_assert(out[i] == out[i] || u == GS_CANONICAL_NAN_F64);
                }
            }
    }
    free(in), free(ref), free(out), free(ref_cols), free(cols);
}
END_TEST

/* Hand-computed: the values IEEE arithmetic gives, so the reference itself is checked. */
START_TEST(hand_computed)
{
    float scratch[16], out[4];
    /* a NaN spreads one sample a pass; +Inf beside -Inf makes NaN; Inf stays Inf */
    const float nan_row[4] = {1.0f, NAN, 1.0f, 1.0f};
    gs_ref_smooth_row_to(nan_row, 32, out, 32, 4, 1, scratch);
    ck_assert(isnan(out[0]) && isnan(out[1]) && isnan(out[2]) && out[3] == 1.0f);
    uint32_t u;
    memcpy(&u, &out[1], 4);
    ck_assert_uint_eq(u, GS_CANONICAL_NAN_F32);
    const float inf_row[3] = {INFINITY, 0.0f, -INFINITY};
    gs_ref_smooth_row_to(inf_row, 32, out, 32, 3, 1, scratch);
    ck_assert(out[0] == INFINITY && isnan(out[1]) && out[2] == -INFINITY);
    /* negative values and negative zero are kept, not clamped */
    const float neg[3] = {-3.0f, -0.0f, -0.0f};
    gs_ref_smooth_row_to(neg, 32, out, 32, 3, 1, scratch);
    ck_assert(out[0] == -1.5f && out[1] == -1.0f && out[2] == 0.0f && signbit(out[2]));
    /* the smallest subnormal, halved at a row end, rounds to even: zero */
    const float tiny[2] = {0x1p-149f, 0.0f};
    gs_ref_smooth_row_to(tiny, 32, out, 32, 2, 1, scratch);
    ck_assert(out[0] == 0.0f && out[1] == 0.0f);
    /* float64 rows from left to right: (2^53 + 1) + 1 rounds to even twice and stays 2^53,
     * where 2^53 + (1 + 1) would be 2^53 + 2: the order is the definition */
    const float big[3] = {0x1p53f, 1.0f, 1.0f};
    double sums[3];
    gs_ref_integral_row(big, sums, 3, 32, 64);
    ck_assert(sums[0] == 0x1p53 && sums[1] == 0x1p53 && sums[2] == 0x1p53);
    /* the first sum of a -0.0 row is -0.0 (the sum starts from -0.0) */
    const float nz[1] = {-0.0f};
    gs_ref_integral_row(nz, sums, 1, 32, 64);
    ck_assert(sums[0] == 0.0 && signbit(sums[0]));
}
END_TEST

/* The ABI's dtype rule for float: float64 integrals whatever the size. */
START_TEST(float_integral_bits)
{
    ck_assert_uint_eq(gs_integral_rows_bits(32, 1), 64);
    ck_assert_uint_eq(gs_integral_2d_bits(32, 1, 1), 64);
}
END_TEST

int main(void)
{
    gs_work_per_thread = 1; /* every thread count asked for, even on these small strips */
    for (const gs_cpu_isa *const *p = gs_cpu_isa_all; *p; ++p)
        if (gs_cpu_isa_by_name((*p)->name)) isas[isa_count++] = *p;
    Suite *s = suite_create("float kernels");
    TCase *tc = tcase_create("cpu-vs-reference");
    tcase_set_timeout(tc, 300);
    const int n_widths = (int)(sizeof widths / sizeof *widths);
    tcase_add_loop_test(tc, rows_match_reference, 0, 3 * n_widths);
    tcase_add_loop_test(tc, windows_match_reference, 0, 2 * n_widths);
    tcase_add_loop_test(tc, integrals_match_reference, 0, n_widths);
    tcase_add_test(tc, hand_computed);
    tcase_add_test(tc, float_integral_bits);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
