/* test_kernels.c: Check suite: the threaded CPU kernels against the plain reference. */
/* Tiled, threaded kernels on random data, plus hand-computed cases. */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "int_sums.h"
#include "parallel.h"
#include "gsmooth/gsmooth_plugin.h" /* the integral dtype rule */
#include "reference.h"
#include "stencil_math.h"
#include "wave_segments.h" /* the CUDA column walks' segment rows: plain C */

/* 5 to 10 and 2057: the shortest rows that take integer sums at K = 2 to 4 (kernels/cpu/
 * int_sums.h), and a second chunk that holds only the last K + 5 samples */
static const uint32_t widths[] = {1, 2, 3, 5, 7, 9, 10, 255, 256, 257, 2057, 4097, 8193, 20011};
static const uint32_t iters_list[] = {0, 1, 2, 3, 4, 10, 101};
static const unsigned thread_counts[] = {1, 2, 3};

/* Instruction-set variants this CPU runs; every one must give the reference's bytes. */
static const gs_cpu_isa *isas[8];
static int isa_count;

/* xorshift64*: a fixed-seed generator, so a failure reproduces. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

/* Random samples with some structure: runs, extremes and noise, so rounding ties and
 * clamping both happen. */
static void fill_random(void *buf, size_t count, uint32_t bits)
{
    uint32_t max = bits == 16 ? 65535u : 255u;
    for (size_t i = 0; i < count; ++i) {
        uint64_t r = rng();
        uint32_t v = (r & 7) == 0 ? max : (r & 7) == 1 ? 0 : (uint32_t)(r >> 32) % (max + 1);
        if (bits == 16) ((uint16_t *)buf)[i] = (uint16_t)v;
        else ((uint8_t *)buf)[i] = (uint8_t)v;
    }
}

static gs_rows make_strip(const void *src, void *dst, uint32_t w, uint32_t h, uint32_t ib,
                          uint32_t ob)
{
    gs_rows s = {w, h, ib, ob, src, (size_t)w * ib / 8, dst, (size_t)w * ob / 8};
    return s;
}

START_TEST(smooth_matches_reference)
{
    uint32_t bits = _i % 2 ? 16 : 8;
    uint32_t w = widths[(_i / 2) % (sizeof widths / sizeof *widths)];
    size_t bytes = bits / 8;
    uint32_t heights[] = {1, 3};
    for (size_t hi = 0; hi < 2; ++hi) {
        uint32_t h = heights[hi];
        uint8_t *in = malloc((size_t)w * h * bytes), *ref = malloc((size_t)w * h * bytes),
                *out = malloc((size_t)w * h * bytes);
        float *scratch = malloc(2 * (size_t)w * sizeof(float));
        ck_assert_ptr_nonnull(in);
        fill_random(in, (size_t)w * h, bits);
        for (size_t ki = 0; ki < sizeof iters_list / sizeof *iters_list; ++ki) {
            uint32_t k = iters_list[ki];
            for (uint32_t r = 0; r < h; ++r)
                gs_ref_smooth_row(in + r * w * bytes, ref + r * w * bytes, w, bits, k, scratch);
            for (size_t ti = 0; ti < sizeof thread_counts / sizeof *thread_counts; ++ti)
                for (int ii = 0; ii < isa_count; ++ii) {
                    gs_cpu_workspace ws = {0};
                    memset(out, 0xA5, (size_t)w * h * bytes); /* poison: every byte must be written */
                    gs_rows s = make_strip(in, out, w, h, bits, bits);
                    ck_assert_int_eq(gs_cpu_smooth_strip(&s, k, thread_counts[ti], isas[ii], &ws), 0);
                    if (memcmp(out, ref, (size_t)w * h * bytes) != 0)
                        ck_abort_msg("smooth mismatch: width %u height %u bits %u iters %u "
                                     "threads %u isa %s", w, h, bits, k, thread_counts[ti],
                                     isas[ii]->name);
                    gs_cpu_workspace_release(&ws);
                }
        }
        free(in), free(ref), free(out), free(scratch);
    }
}
END_TEST

/*
 * A lone 1 (or 65535) among zeros, smoothed for many passes: its tail shrinks about 3x a
 * pass, so from pass 79 some sums fall below 2^-123, where a shortened division (a
 * multiply-add by two parts of 1/3) rounds differently. Rounded samples cannot show that
 * (such values round to 0), so the floats before rounding are compared, bit for bit, with
 * the reference's, on every instruction set and thread count, K = 78 to 300.
 */
START_TEST(lone_one_among_zeros_many_passes)
{
    static const uint32_t ks[] = {78, 79, 80, 90, 120, 300};
    const uint32_t w = 3 * GS_CPU_CHUNK + 77; /* several work items: the tail crosses a cut */
    for (uint32_t bits = 8; bits <= 16; bits += 8) {
        const size_t bytes = bits / 8;
        uint8_t *in = calloc(w, bytes);
        float *scratch = malloc(2 * (size_t)w * sizeof(float)), *got = malloc(w * sizeof(float));
        const uint32_t at = GS_CPU_CHUNK - 40;
        if (bits == 8) in[at] = 1;
        else ((uint16_t *)in)[at] = 65535;
        for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ++ki) {
            const float *want = gs_ref_smooth_row_float(in, w, bits, ks[ki], scratch);
            int tiny = 0; /* the test reaches the range it is for */
            for (uint32_t x = 0; x < w; ++x) tiny |= want[x] > 0.0f && want[x] < 0x1p-123f;
            ck_assert_msg(tiny || ks[ki] < 90, "K=%u: no value below 2^-123", ks[ki]);
            for (unsigned t = 1; t <= 2; ++t)
                for (int ii = 0; ii < isa_count; ++ii) {
                    gs_cpu_workspace ws = {0};
                    memset(got, 0xA5, w * sizeof(float));
                    gs_rows s = make_strip(in, NULL, w, 1, bits, bits);
                    ck_assert_int_eq(gs_cpu_smooth_rows_to_float(&s, ks[ki], got, w, t, isas[ii], &ws), 0);
                    for (uint32_t x = 0; x < w; ++x)
                        if (memcmp(&got[x], &want[x], sizeof(float)) != 0)
                            ck_abort_msg("%u-bit K=%u threads %u isa %s: x=%u gave %a, want %a", bits,
                                         ks[ki], t, isas[ii]->name, x, got[x], want[x]);
                    gs_cpu_workspace_release(&ws);
                }
        }
        free(in), free(scratch), free(got);
    }
}
END_TEST

/*
 * Every SIMD variant divides by 3 with a multiply and two fmas. Prove it gives the bits of
 * IEEE division for every float a sum can take (0 to 3 x 65535): samples s sit at every
 * third position with zeros between, so each output is exactly one s / 3.
 */
/* Every float s from 0 to 3 x 65535 through `mean3` (samples at every third position with
 * zeros between, so each output is exactly one s / 3): the bits of IEEE s / 3 wherever s is
 * 0 or above `inexact_up_to`; the misses at or below it are counted. */
static uint64_t check_division(const gs_cpu_isa *isa, void (*mean3)(const float *, float *, long),
                               float inexact_up_to)
{
    const long batch = 3 * 65536;
    float *a = calloc(batch + 2, sizeof(float)), *b = malloc(batch * sizeof(float));
    float top = 3.0f * 65535.0f;
    uint32_t top_bits, bits = 0;
    memcpy(&top_bits, &top, 4);
    uint64_t checked = 0, missed = 0;
    while (bits <= top_bits) {
        long n = 0;
        for (; n < batch / 3 && bits <= top_bits; ++n, ++bits) memcpy(&a[1 + 3 * n], &bits, 4);
        mean3(a + 1, b, 3 * n);
        for (long j = 0; j < n; ++j) {
            float s = a[1 + 3 * j], want = s / 3.0f;
            if (memcmp(&b[3 * j], &want, 4) == 0) continue;
            if (s != 0.0f && s <= inexact_up_to) ++missed;
            else ck_abort_msg("%s: %a / 3 gave %a, want %a", isa->name, s, b[3 * j], want);
        }
        checked += (uint64_t)n;
    }
    ck_assert_uint_eq(checked, (uint64_t)top_bits + 1);
    free(a), free(b);
    return missed;
}

START_TEST(div3_exact_over_reachable_range)
{
    ck_assert_uint_eq(check_division(isas[_i], isas[_i]->mean3, 0.0f), 0);
}
END_TEST

/* The two-instruction division of the SIMD variants (passes 1 to GS_SHORT_DIV_PASSES): exact
 * above 2^-123, and not at or below it (so the pass limit is needed). */
START_TEST(div3_short_exact_above_2_pow_minus_123)
{
    const uint64_t missed = check_division(isas[_i], isas[_i]->mean3_short, 0x1p-123f);
    printf("%s: the two-instruction division differs for %llu floats up to 2^-123\n",
           isas[_i]->name, (unsigned long long)missed);
    ck_assert_uint_gt(missed, 0);
}
END_TEST

/*
 * Both backends take K <= 4 passes over 8-bit samples away from the row ends as exact
 * integer sums N and round N / 3^K (kernels/cpu/int_sums.h, kernels/cuda/packed_passes.cuh;
 * the argument is in stencil_math.h). That gives the contract's bytes when rintf of the
 * float passes is round(N / 3^K). Checked here for every three samples (K = 1) and every
 * three pass-1 sums (K = 2: more than rows can give), with the error bound the argument for
 * K = 3 and 4 builds on (each pass lands within 3 x 2^-17 of the exact mean of its inputs),
 * and for K = 3 and 4 on random windows of 2K + 1 samples (runs, extremes, noise). The
 * kernels themselves are checked against the reference by smooth_matches_reference and
 * the CUDA suite.
 */
START_TEST(integer_sums_round_like_float_passes)
{
    uint64_t wrong = 0;
    double worst1 = 0.0, worst2 = 0.0;
    for (uint32_t a = 0; a < 256; ++a)
        for (uint32_t b = 0; b < 256; ++b)
            for (uint32_t c = 0; c < 256; ++c) {
                const uint32_t n = a + b + c;
                const float y = gs_mean3((float)a, (float)b, (float)c);
                wrong += rintf(y) != (float)((2 * n + 3) / 6); /* round(n / 3): no ties */
                const double err = fabs((double)y - n / 3.0);
                worst1 = err > worst1 ? err : worst1;
            }
    static float pass1[3 * 255 + 1]; /* a pass-1 value from its integer sum */
    for (uint32_t s = 0; s <= 3 * 255; ++s) pass1[s] = gs_mean3((float)s, 0.0f, 0.0f);
    for (uint32_t sa = 0; sa <= 3 * 255; ++sa)
        for (uint32_t sb = 0; sb <= 3 * 255; ++sb)
            for (uint32_t sc = 0; sc <= 3 * 255; ++sc) {
                const uint32_t n = sa + sb + sc;
                const float y = gs_mean3(pass1[sa], pass1[sb], pass1[sc]);
                wrong += rintf(y) != (float)((2 * n + 9) / 18); /* round(n / 9) */
                const double err = fabs((double)y - n / 9.0);
                worst2 = err > worst2 ? err : worst2;
            }
    double worst_more[2] = {0.0, 0.0}; /* K = 3, 4 */
    for (uint32_t k = 3; k <= 4; ++k)
        for (uint32_t trial = 0; trial < 500000; ++trial) {
            uint8_t x[9];
            fill_random(x, 2 * k + 1, 8);
            float v[9];
            uint32_t w[9] = {0}, n = 0;
            for (uint32_t i = 0; i < 2 * k + 1; ++i) v[i] = x[i], w[i] = x[i];
            for (uint32_t p = 1; p <= k; ++p) /* pass p keeps elements p .. 2k - p */
                for (uint32_t i = p; i <= 2 * k - p; ++i) v[i - p] = gs_mean3(v[i - p], v[i - p + 1], v[i - p + 2]);
            for (uint32_t p = 1; p <= k; ++p)
                for (uint32_t i = 0; i + 2 < 2 * k + 3 - 2 * p; ++i) w[i] = w[i] + w[i + 1] + w[i + 2];
            n = w[0];
            const uint32_t d = k == 3 ? 27 : 81;
            wrong += rintf(v[0]) != (float)((2 * n + d) / (2 * d));
            const double err = fabs((double)v[0] - (double)n / d);
            worst_more[k - 3] = err > worst_more[k - 3] ? err : worst_more[k - 3];
        }
    printf("integer sums: %llu differ; worst error %a after 1 pass, %a after 2, %a after 3 and "
           "%a after 4 (random windows)\n",
           (unsigned long long)wrong, worst1, worst2, worst_more[0], worst_more[1]);
    ck_assert_uint_eq(wrong, 0);
    ck_assert(worst1 <= 3 * 0x1p-17 && worst2 <= 2 * 3 * 0x1p-17);
    ck_assert(worst_more[0] <= 3 * 3 * 0x1p-17 && worst_more[1] <= 4 * 3 * 0x1p-17);
}
END_TEST

/* The integer window's parts (int_sums.h): its weights are the K-pass coefficients (sum 3^K,
 * symmetric, and one pass more is one convolution with 1 1 1, written here as the sums of
 * three neighbours), and the multiply-high rounding gives floor(x / 3^K) for every x a sum
 * plus the half can reach. */
START_TEST(integer_window_rounding_is_exact)
{
    uint64_t wrong = 0;
    for (unsigned k = 1; k <= GS_INT_SUMS_MAX_PASSES; ++k) {
        uint8_t w[GS_INT_WINDOW_TAPS], prev[GS_INT_WINDOW_TAPS];
        gs_int_window_weights(k, w);
        gs_int_window_weights(k - 1, prev);
        unsigned total = 0;
        for (unsigned j = 0; j < GS_INT_WINDOW_TAPS; ++j) {
            total += w[j];
            const unsigned from_prev = (j >= 2 ? prev[j - 2] : 0u) + (j >= 1 ? prev[j - 1] : 0u) + prev[j];
            if (w[j] != (j <= 2 * k ? from_prev : 0u) || (j <= 2 * k && w[j] != w[2 * k - j]))
                ck_abort_msg("K=%u: weight %u is %u", k, j, w[j]);
        }
        const uint32_t d = GS_INT_SUMS_DIVISOR(k);
        ck_assert_uint_eq(total, d);
        const uint32_t m = gs_int_round_magic(k), sh = 16 + gs_int_round_shift(k);
        for (uint32_t x = 0; x <= 255 * d + d / 2; ++x) wrong += (x * m) >> sh != x / d;
    }
    ck_assert_uint_eq(wrong, 0);
}
END_TEST

/*
 * --axis xy as one integer window (stencil_math.h, GS_INT_SUMS_XY_MAX_PASSES; the CUDA
 * backend's fused xy kernel): gs_int_xy_round gives round(N / 3^(2K)) for every sum N a
 * window can form, and at every pixel at least K from the image's four edges the
 * reference's K row passes then K column passes, rounded once, equal round(N / 3^(2K)) of
 * the window weighted by products of the one-axis weights, on random images with runs,
 * extremes and noise. A smooth field is checked too: its sums come nearest the half-integers.
 */
START_TEST(integer_xy_window_matches_reference)
{
    uint64_t wrong = 0, checked = 0;
    for (unsigned k = 1; k <= GS_INT_SUMS_XY_MAX_PASSES; ++k) {
        const uint32_t d = GS_INT_SUMS_DIVISOR(k) * GS_INT_SUMS_DIVISOR(k);
        const float inverse = 1.0f / (float)d;
        for (uint32_t n = 0; n <= 255 * d; ++n) wrong += gs_int_xy_round(n, inverse) != (2 * n + d) / (2 * d);
    }
    ck_assert_msg(wrong == 0, "gs_int_xy_round: %llu sums rounded wrong", (unsigned long long)wrong);
    enum { W = 23, H = 19 };
    static uint8_t in[W * H], out[W * H];
    for (unsigned k = 1; k <= GS_INT_SUMS_XY_MAX_PASSES; ++k) {
        uint8_t w[GS_INT_WINDOW_TAPS];
        gs_int_window_weights(k, w);
        const uint32_t d = GS_INT_SUMS_DIVISOR(k) * GS_INT_SUMS_DIVISOR(k);
        for (unsigned trial = 0; trial < 3000; ++trial) {
            if (trial % 3 == 2)
                for (uint32_t i = 0; i < W * H; ++i) /* a smooth field, one step a few pixels */
                    in[i] = (uint8_t)((i % W) * 7 + (i / W) * 5 + trial);
            else
                fill_random(in, sizeof in, 8);
            ck_assert_int_eq(gs_ref_smooth_image(in, W, out, W, W, H, 8, k, GS_REF_AXIS_X | GS_REF_AXIS_Y), 0);
            for (uint32_t y = k; y + k < H; ++y)
                for (uint32_t x = k; x + k < W; ++x) {
                    uint32_t n = 0;
                    for (uint32_t j = 0; j <= 2 * k; ++j)
                        for (uint32_t i = 0; i <= 2 * k; ++i)
                            n += (uint32_t)w[j] * w[i] * in[(y - k + j) * W + x - k + i];
                    wrong += out[y * W + x] != gs_int_xy_round(n, 1.0f / (float)d);
                    ++checked;
                }
        }
    }
    printf("integer xy windows: %llu of %llu pixels differ from the reference\n",
           (unsigned long long)wrong, (unsigned long long)checked);
    ck_assert_uint_eq(wrong, 0);
}
END_TEST

/* K integer passes the pass-at-a-time way (int_sums.h: widen, add3 K times, round) over m
 * samples: n = m - 2K results in ref. */
static void int_passes_ref(const uint8_t *src, long m, unsigned k, uint8_t *ref)
{
    uint16_t *a = malloc((size_t)m * 2), *b = malloc((size_t)m * 2);
    ck_assert(a && b);
    gs_int_widen_u8(src, a, m);
    for (long p = 1; p <= (long)k; ++p) { /* b[j] from a[j-1..j+1], positions p .. m-1-p */
        gs_int_add3(a + p - 1, a + p, a + p + 1, b + p, m - 2 * p);
        uint16_t *t = a;
        a = b, b = t;
    }
    gs_int_round_u8(a + k, ref, m - 2 * (long)k, k);
    free(a), free(b);
}

/* Each instruction set's integer windows against the same K passes taken a pass at a
 * time: along a row and down columns (2K + 1 rows, column i's samples run through the
 * passes as a short row), over 0-100 samples and 127, 128, 129, 2044, 2048, 2061 (the
 * vector steps, the overlapping last step, the portable body below 32), random and
 * all-255 (the largest sums). Every source holds exactly its samples, so a read past them
 * shows under the sanitizers; a guard byte follows each output. */
START_TEST(integer_window_matches_passes)
{
    const gs_cpu_isa *isa = isas[_i];
    static const long longer[] = {127, 128, 129, 2044, 2048, 2061};
    for (unsigned k = 1; k <= GS_INT_SUMS_MAX_PASSES; ++k)
        for (long t = 0; t <= 100 + (long)(sizeof longer / sizeof *longer); ++t) {
            const long n = t <= 100 ? t : longer[t - 101], m = n + 2 * (long)k;
            for (int full = 0; full <= 1; ++full) {
                uint8_t *src = malloc((size_t)m), *out = malloc((size_t)n + 1), *ref = malloc((size_t)n + 1);
                const uint8_t *rows[2 * GS_INT_SUMS_MAX_PASSES + 1];
                ck_assert(src && out && ref);
                if (full) memset(src, 255, (size_t)m);
                else fill_random(src, (size_t)m, 8);
                int_passes_ref(src, m, k, ref);
                memset(out, 0xA5, (size_t)n + 1);
                isa->int_window_u8(src + k, out, n, k);
                if (memcmp(out, ref, (size_t)n) != 0 || out[n] != 0xA5)
                    ck_abort_msg("%s: row window differs: K=%u, n=%ld, %s", isa->name, k, n,
                                 full ? "all 255" : "random");
                for (unsigned j = 0; j <= 2 * k; ++j) { /* rows of their own, exactly n long */
                    uint8_t *r = malloc((size_t)n + (n == 0));
                    ck_assert_ptr_nonnull(r);
                    if (full) memset(r, 255, (size_t)n);
                    else fill_random(r, (size_t)n, 8);
                    rows[j] = r;
                }
                for (long i = 0; i < n; ++i) {
                    uint8_t column[2 * GS_INT_SUMS_MAX_PASSES + 1];
                    for (unsigned j = 0; j <= 2 * k; ++j) column[j] = rows[j][i];
                    int_passes_ref(column, 2 * (long)k + 1, k, ref + i);
                }
                memset(out, 0xA5, (size_t)n + 1);
                isa->int_window_rows_u8(rows, out, n, k);
                if (memcmp(out, ref, (size_t)n) != 0 || out[n] != 0xA5)
                    ck_abort_msg("%s: column window differs: K=%u, n=%ld, %s", isa->name, k, n,
                                 full ? "all 255" : "random");
                for (unsigned j = 0; j <= 2 * k; ++j) free((void *)rows[j]);
                free(src), free(out), free(ref);
            }
        }
}
END_TEST

/* Values worked out by hand from the arithmetic include/gsmooth/gsmooth_plugin.h states, independent of any code here. */
START_TEST(smooth_hand_computed)
{
    float scratch[16];
    /* [0 3 6], one pass: (0+3)/2 = 1.5 -> 2 (ties to even), 9/3 = 3, 9/2 = 4.5 -> 4. */
    uint8_t in[3] = {0, 3, 6}, out[3];
    gs_ref_smooth_row(in, out, 3, 8, 1, scratch);
    ck_assert_uint_eq(out[0], 2);
    ck_assert_uint_eq(out[1], 3);
    ck_assert_uint_eq(out[2], 4);
    /* One pixel wide: n = 1, the value never changes. */
    uint16_t one = 40000, one_out = 0;
    gs_ref_smooth_row(&one, &one_out, 1, 16, 7, scratch);
    ck_assert_uint_eq(one_out, 40000);
    /* [255 0], two passes: 127.5, 127.5 -> then 127.5 again -> 128 (ties to even). */
    uint8_t two[2] = {255, 0}, two_out[2];
    gs_ref_smooth_row(two, two_out, 2, 8, 2, scratch);
    ck_assert_uint_eq(two_out[0], 128);
    ck_assert_uint_eq(two_out[1], 128);
    /* K = 0 returns the input unchanged. */
    uint8_t same[4] = {9, 200, 1, 77}, same_out[4];
    gs_ref_smooth_row(same, same_out, 4, 8, 0, scratch);
    ck_assert_mem_eq(same, same_out, 4);
}
END_TEST

static void check_integrals(uint32_t w, uint32_t h, uint32_t bits, int all_max)
{
    size_t n = (size_t)w * h, ib = bits / 8;
    uint8_t *in = malloc(n * ib);
    if (all_max) memset(in, 0xFF, n * ib);
    else fill_random(in, n, bits);
    uint32_t row_bits = gs_integral_rows_bits(bits, w);
    uint32_t sat_bits = gs_integral_2d_bits(bits, w, h);
    uint32_t obs[] = {row_bits, sat_bits};
    for (int mode = 0; mode < 2; ++mode) {
        uint32_t ob = obs[mode];
        size_t obytes = ob / 8;
        uint8_t *ref = calloc(n, obytes), *out = malloc(n * obytes);
        uint8_t *ref_cols = calloc(w, obytes), *cols = calloc(w, obytes);
        for (uint32_t r = 0; r < h; ++r) {
            if (mode == 0)
                gs_ref_integral_row(in + r * w * ib, ref + r * w * obytes, w, bits, ob);
            else
                gs_ref_integral_2d_row(in + r * w * ib, ref + r * w * obytes, ref_cols, w, bits, ob);
        }
        for (unsigned t = 1; t <= 2; ++t)
        for (int ii = 0; ii < isa_count; ++ii) {
            memset(out, 0xA5, n * obytes);
            memset(cols, 0, w * obytes);
            /* Uneven strips, so the 2d carry crosses strip boundaries. */
            for (uint32_t y = 0; y < h;) {
                uint32_t rows = (y % 3) + 1 < h - y ? (y % 3) + 1 : h - y;
                gs_rows s = make_strip(in + (size_t)y * w * ib, out + (size_t)y * w * obytes, w,
                                        rows, bits, ob);
                if (mode == 0) gs_cpu_integral_rows_strip(&s, t, isas[ii]);
                else gs_cpu_integral_2d_strip(&s, cols, t, isas[ii]);
                y += rows;
            }
            if (memcmp(out, ref, n * obytes) != 0)
                ck_abort_msg("integral %s mismatch: %ux%u bits %u out %u threads %u isa %s",
                             mode ? "2d" : "rows", w, h, bits, ob, t, isas[ii]->name);
        }
        if (all_max && mode == 0) {
            /* The last sum of a max-valued row is width x max, exactly. */
            uint64_t last = ob == 64 ? ((uint64_t *)ref)[w - 1] : ((uint32_t *)ref)[w - 1];
            ck_assert_uint_eq(last, (uint64_t)w * (bits == 16 ? 65535u : 255u));
        }
        free(ref), free(out), free(ref_cols), free(cols);
    }
    free(in);
}

/* The image reference's columns are its rows, transposed: smoothing down the columns
 * equals smoothing the rows of the transposed image (the row reference, independent of
 * gs_ref_smooth_image's column code). */
START_TEST(reference_columns_are_transposed_rows)
{
    const uint32_t w = 37, h = 23, k = 4;
    uint8_t in[23 * 37], out[23 * 37], t_in[37 * 23], t_out[37 * 23];
    float scratch[2 * 23];
    fill_random(in, sizeof in, 8);
    ck_assert_int_eq(gs_ref_smooth_image(in, w, out, w, w, h, 8, k, GS_REF_AXIS_Y), 0);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) t_in[x * h + y] = in[y * w + x];
    for (uint32_t x = 0; x < w; ++x) gs_ref_smooth_row(t_in + x * h, t_out + x * h, h, 8, k, scratch);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            ck_assert_msg(out[y * w + x] == t_out[x * h + y], "column reference differs at %u,%u", x, y);
    /* And a hand-computed column: 0, 3, 6 once -> 1.5, 3, 4.5 -> 2 (ties to even), 3, 4. */
    uint8_t col[3] = {0, 3, 6}, col_out[3];
    ck_assert_int_eq(gs_ref_smooth_image(col, 1, col_out, 1, 1, 3, 8, 1, GS_REF_AXIS_Y), 0);
    ck_assert_uint_eq(col_out[0], 2);
    ck_assert_uint_eq(col_out[1], 3);
    ck_assert_uint_eq(col_out[2], 4);
}
END_TEST

/* Each worker's scratch starts on its own page and no two share a cache line: heap
 * neighbours did, and two threads writing the two ends of one line every pass slowed the
 * smoothing at two threads (bench/cpu_bench.c's 1 -> 2 thread ratio shows it). */
START_TEST(workspace_buffers_share_no_line)
{
    gs_cpu_workspace ws = {0};
    static const size_t sizes[] = {1, 17, 1024, 4097};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
        ck_assert_int_eq(gs_cpu_workspace_reserve(&ws, 4, sizes[i] * (i + 1)), 0);
        for (unsigned w = 0; w < ws.workers; ++w) {
            const uintptr_t lo = (uintptr_t)ws.buffers[w];
            const uintptr_t hi = lo + ws.floats_each * sizeof(float);
            ck_assert_msg(lo % 4096 == 0, "worker %u's buffer at %#lx is not page-aligned", w,
                          (unsigned long)lo);
            for (unsigned v = 0; v < ws.workers; ++v) {
                const uintptr_t vlo = (uintptr_t)ws.buffers[v];
                if (v != w)
                    ck_assert_msg(vlo / 64 > (hi - 1) / 64 || (vlo + ws.floats_each * 4 - 1) / 64 < lo / 64,
                                  "workers %u and %u share a cache line", w, v);
            }
        }
    }
    gs_cpu_workspace_release(&ws);
}
END_TEST

/* One image through gs_cpu_smooth_window in strips of `strip` rows, each with the halo a
 * host gives (min(iters, rows available) on each side); 0 when it equals `ref`. */
static int window_streamed_differs(const uint8_t *in, const uint8_t *ref, uint8_t *out, uint32_t w,
                                   uint32_t h, uint32_t bits, uint32_t k, uint32_t axes,
                                   uint32_t strip, unsigned threads, const gs_cpu_isa *isa)
{
    const size_t stride = (size_t)w * (bits / 8);
    gs_cpu_workspace ws = {0};
    gs_cpu_window_space space = {0};
    memset(out, 0xA5, stride * h); /* poison: every byte must be written */
    for (uint32_t y0 = 0; y0 < h; y0 += strip) {
        uint32_t rows = h - y0 < strip ? h - y0 : strip;
        uint32_t above = y0 < k ? y0 : k;
        uint32_t below = h - y0 - rows < k ? h - y0 - rows : k;
        gs_rows win = {w, rows, bits, bits, in + (y0 - above) * stride, stride,
                       out + (size_t)y0 * stride, stride};
        ck_assert_int_eq(gs_cpu_smooth_window(&win, above, below, axes, k, threads, isa, &ws, &space), 0);
    }
    gs_cpu_workspace_release(&ws);
    gs_cpu_window_space_release(&space);
    return memcmp(out, ref, stride * h) != 0;
}

/* A window's own ends are its columns' ends, whatever its halos: every split of windows of
 * up to 12 rows into above + rows written + below (halos shorter and longer than K), 8-bit
 * columns at K = 1 to 4, where the rows at least K from the window's ends take integer sums
 * and the others the float levels (cpu_window.c), against the reference on the window. */
START_TEST(window_halos_match_reference)
{
    const gs_cpu_isa *isa = isas[_i];
    const uint32_t w = 37; /* a block of 32 columns and one of 5 */
    uint8_t in[12 * 37], ref[12 * 37], out[13 * 37]; /* out: one guard row */
    fill_random(in, sizeof in, 8);
    gs_cpu_workspace ws = {0};
    gs_cpu_window_space space = {0};
    for (uint32_t k = 1; k <= 4; ++k)
        for (uint32_t total = 1; total <= 12; ++total) {
            ck_assert_int_eq(gs_ref_smooth_image(in, w, ref, w, w, total, 8, k, GS_REF_AXIS_Y), 0);
            for (uint32_t above = 0; above < total; ++above)
                for (uint32_t rows = 1; above + rows <= total; ++rows)
                    for (unsigned threads = 1; threads <= 2; ++threads) {
                        const uint32_t below = total - above - rows;
                        memset(out, 0xA5, sizeof out);
                        gs_rows win = {w, rows, 8, 8, in, w, out, w};
                        ck_assert_int_eq(gs_cpu_smooth_window(&win, above, below, GS_REF_AXIS_Y, k,
                                                              threads, isa, &ws, &space), 0);
                        ck_assert_msg(memcmp(out, ref + (size_t)above * w, (size_t)rows * w) == 0,
                                      "%s: K=%u window %u+%u+%u differs", isa->name, k, above,
                                      rows, below);
                        for (uint32_t x = 0; x < w; ++x) /* nothing past the rows written */
                            ck_assert_uint_eq(out[(size_t)rows * w + x], 0xA5);
                    }
        }
    gs_cpu_workspace_release(&ws);
    gs_cpu_window_space_release(&space);
}
END_TEST

START_TEST(window_matches_reference)
{
    static const uint32_t win_widths[] = {1, 2, 3, 17, 255, 4100};
    static const uint32_t heights[] = {1, 2, 3, 7, 40};
    static const uint32_t win_iters[] = {0, 1, 2, 3, 4, 10};
    static const uint32_t strips[] = {1, 3, 16, 1000};
    static const uint32_t axes_list[] = {GS_REF_AXIS_Y, GS_REF_AXIS_X | GS_REF_AXIS_Y, GS_REF_AXIS_X};
    uint32_t bits = _i % 2 ? 16 : 8;
    uint32_t w = win_widths[(_i / 2) % (sizeof win_widths / sizeof *win_widths)];
    const size_t bytes = bits / 8;
    for (size_t hi = 0; hi < sizeof heights / sizeof *heights; ++hi) {
        uint32_t h = heights[hi];
        uint8_t *in = malloc((size_t)w * h * bytes), *ref = malloc((size_t)w * h * bytes),
                *out = malloc((size_t)w * h * bytes);
        ck_assert(in && ref && out);
        fill_random(in, (size_t)w * h, bits);
        for (size_t ki = 0; ki < sizeof win_iters / sizeof *win_iters; ++ki)
            for (size_t ai = 0; ai < sizeof axes_list / sizeof *axes_list; ++ai) {
                uint32_t k = win_iters[ki], axes = axes_list[ai];
                ck_assert_int_eq(gs_ref_smooth_image(in, w * bytes, ref, w * bytes, w, h, bits, k, axes), 0);
                for (size_t si = 0; si < sizeof strips / sizeof *strips; ++si)
                    for (int ii = 0; ii < isa_count; ++ii)
                        for (unsigned threads = 1; threads <= 3; threads += 2)
                            if (window_streamed_differs(in, ref, out, w, h, bits, k, axes, strips[si],
                                                        threads, isas[ii]))
                                ck_abort_msg("window mismatch: %ux%u bits %u iters %u axes %u "
                                             "strip %u threads %u isa %s", w, h, bits, k, axes,
                                             strips[si], threads, isas[ii]->name);
            }
        free(in), free(ref), free(out);
    }
}
END_TEST

START_TEST(integrals_match_reference)
{
    uint32_t bits = _i % 2 ? 16 : 8;
    uint32_t w = widths[(_i / 2) % (sizeof widths / sizeof *widths)];
    check_integrals(w, 1, bits, 0);
    check_integrals(w, 7, bits, 0);
    check_integrals(w, 5, bits, 1);
}
END_TEST

/* Integral rows of a strip large enough to be written past the caches (GS_CPU_STREAM_BYTES),
 * as one strip: a width of 4099 puts the rows' starts at every 4-byte offset of a 32-byte
 * line, so the streamed part starts after 0 to 7 samples, and ends before a tail. */
START_TEST(integral_rows_streamed_match_reference)
{
    const uint32_t w = 4099, h = 1100;
    const size_t n = (size_t)w * h;
    ck_assert_uint_eq(gs_integral_rows_bits(8, w), 32);
    ck_assert_uint_ge(n * 4, GS_CPU_STREAM_BYTES);
    uint8_t *in = malloc(n);
    uint32_t *ref = malloc(n * 4), *out = malloc(n * 4);
    ck_assert(in && ref && out);
    fill_random(in, n, 8);
    for (uint32_t r = 0; r < h; ++r) gs_ref_integral_row(in + (size_t)r * w, ref + (size_t)r * w, w, 8, 32);
    for (unsigned t = 1; t <= 2; ++t)
        for (int ii = 0; ii < isa_count; ++ii) {
            memset(out, 0xA5, n * 4);
            gs_rows s = make_strip(in, out, w, h, 8, 32);
            gs_cpu_integral_rows_strip(&s, t, isas[ii]);
            size_t at = 0;
            while (at < n && out[at] == ref[at]) ++at;
            ck_assert_msg(at == n, "streamed integral rows: %ux%u threads %u isa %s: row %zu, x %zu gives %u, want %u",
                          w, h, t, isas[ii]->name, at / w, at % w, out[at], ref[at]);
        }
    free(in), free(ref), free(out);
}
END_TEST

START_TEST(integral_dtype_rule)
{
    ck_assert_uint_eq(gs_integral_rows_bits(8, 4096), 32);
    ck_assert_uint_eq(gs_integral_rows_bits(16, 1), 64);
    ck_assert_uint_eq(gs_integral_rows_bits(8, 16843010u), 64); /* 255 x w = 2^32 + 254 */
    ck_assert_uint_eq(gs_integral_rows_bits(8, 16843009u), 32); /* 255 x w = 2^32 - 1 */
    ck_assert_uint_eq(gs_integral_2d_bits(8, 4096, 4096), 32);  /* 255 x 2^24 < 2^32 */
    ck_assert_uint_eq(gs_integral_2d_bits(8, 8192, 8192), 64);
    ck_assert_uint_eq(gs_integral_2d_bits(16, 256, 256), 32);   /* 65535 x 65536 < 2^32 */
    ck_assert_uint_eq(gs_integral_2d_bits(16, 257, 256), 64);
}
END_TEST

/* A 2d integral whose total needs 64 bits: rows of the maximum value, many of them. */
START_TEST(integral_2d_wide_totals)
{
    check_integrals(70000, 300, 8, 1); /* 255 x 2.1e7 > 2^32: uint64 chosen */
}
END_TEST

/* A small image runs on the calling thread alone; work earns threads up to those asked. */
START_TEST(threads_earned_by_work)
{
    const uint64_t saved = gs_work_per_thread;
    gs_work_per_thread = GS_WORK_PER_THREAD;
    ck_assert_uint_eq(gs_threads_for(8, 0), 1);
    ck_assert_uint_eq(gs_threads_for(8, 4 * 4 * 3), 1);
    ck_assert_uint_eq(gs_threads_for(8, 2 * (uint64_t)GS_WORK_PER_THREAD - 1), 1);
    ck_assert_uint_eq(gs_threads_for(8, 2 * (uint64_t)GS_WORK_PER_THREAD), 2);
    ck_assert_uint_eq(gs_threads_for(8, UINT64_MAX), 8);
    ck_assert_uint_eq(gs_threads_for(0, UINT64_MAX), 1);
    gs_work_per_thread = saved;
}
END_TEST

/* The column walks' segments fill whole waves of resident blocks: every output row in a
 * segment, no segment under the minimum, and, where the rows allow, the segments' count
 * within a few of a whole number of waves (a last wave nearly full, not a third). */
START_TEST(wave_segments_fill_whole_waves)
{
    /* a 16384-row window, 32 blocks across, 12 x 132 resident: 1.3 waves of 256-row
     * segments become one wave */
    ck_assert_uint_eq(gs_wave_segment_rows(16384, 32, 12 * 132, 256), 335);
    /* wider than a wave, or no device answer: the default */
    ck_assert_uint_eq(gs_wave_segment_rows(16384, 5000, 1584, 256), 256);
    ck_assert_uint_eq(gs_wave_segment_rows(100, 1, 1584, 256), GS_MIN_WAVE_SEGMENT_ROWS);
    const uint32_t heights[] = {1, 31, 32, 33, 255, 256, 257, 1000, 4093, 16384, 16378, 65536, 100000};
    const uint32_t across[] = {1, 7, 32, 35, 130, 1000};
    const uint64_t residents[] = {132, 1320, 1584, 2112, 8448};
    for (size_t h = 0; h < sizeof heights / sizeof *heights; ++h)
        for (size_t a = 0; a < sizeof across / sizeof *across; ++a)
            for (size_t r = 0; r < sizeof residents / sizeof *residents; ++r) {
                const uint32_t rows = heights[h], bx = across[a];
                const uint32_t seg = gs_wave_segment_rows(rows, bx, residents[r], 256);
                ck_assert_uint_ge(seg, GS_MIN_WAVE_SEGMENT_ROWS);
                const uint64_t per_wave = residents[r] / bx;
                if (per_wave == 0) continue;
                const uint64_t segs = (rows + seg - 1) / seg;
                const uint64_t waves = (segs + per_wave - 1) / per_wave;
                /* 256-row segments would take at least this many waves */
                ck_assert_uint_le(waves, ((rows + 255) / 256 + per_wave - 1) / per_wave);
                /* enough rows for full segments: the last wave at least 7/8 full */
                if ((uint64_t)rows >= waves * per_wave * 64)
                    ck_assert_uint_ge(8 * segs, 8 * waves * per_wave - waves * per_wave);
            }
}
END_TEST

int main(void)
{
    /* Every thread count asked for, even on the small images here: their seams between
     * workers are what the thread counts test. */
    gs_work_per_thread = 1;
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("cpu-vs-reference");
    tcase_set_timeout(tc, 120);
    int cases = (int)(2 * sizeof widths / sizeof *widths);
    for (const gs_cpu_isa *const *p = gs_cpu_isa_all; *p; ++p)
        if (gs_cpu_isa_by_name((*p)->name)) isas[isa_count++] = *p;
    printf("instruction sets tested on this CPU:");
    for (int i = 0; i < isa_count; ++i) printf(" %s", isas[i]->name);
    printf("\n");
    tcase_add_loop_test(tc, smooth_matches_reference, 0, cases);
    TCase *exact = tcase_create("div3-exhaustive");
    tcase_set_timeout(exact, 300);
    /* The scalar variant divides for real; only the SIMD variants need the proof. */
    tcase_add_loop_test(exact, div3_exact_over_reachable_range, 0, isa_count - 1);
    tcase_add_loop_test(exact, div3_short_exact_above_2_pow_minus_123, 0, isa_count - 1);
    tcase_add_test(exact, integer_sums_round_like_float_passes);
    tcase_add_test(exact, integer_window_rounding_is_exact);
    tcase_add_test(exact, integer_xy_window_matches_reference);
    suite_add_tcase(s, exact);
    tcase_add_test(tc, lone_one_among_zeros_many_passes);
    tcase_add_test(tc, smooth_hand_computed);
    tcase_add_test(tc, reference_columns_are_transposed_rows);
    tcase_add_loop_test(tc, window_matches_reference, 0, 12);
    tcase_add_loop_test(tc, window_halos_match_reference, 0, isa_count);
    tcase_add_loop_test(tc, integer_window_matches_passes, 0, isa_count);
    tcase_add_loop_test(tc, integrals_match_reference, 0, cases);
    tcase_add_test(tc, integral_dtype_rule);
    tcase_add_test(tc, integral_rows_streamed_match_reference);
    tcase_add_test(tc, workspace_buffers_share_no_line);
    tcase_add_test(tc, integral_2d_wide_totals);
    tcase_add_test(tc, threads_earned_by_work);
    tcase_add_test(tc, wave_segments_fill_whole_waves);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
