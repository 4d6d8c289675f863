/* test_png_unfilter.c: Check suite for the PNG unfilter's variants against its reference. */
/* Every variant this CPU runs (each forced through gs_png_unfilter_by_name) against the
 * plain C loop, byte for byte on random data: every filter and mix of filters, every pixel
 * size, rows of 1 to 70 bytes (across each vector's and the wavefront's edges) and a few
 * thousand, batches of 1 to 35 rows (across groups of 16). Bytes around the rows (filter
 * bytes, gaps, guards) must come back untouched. */

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "png_unfilter.h"

static const char *const variant_names[] = {"scalar", "sse2", "avx2"};
#define VARIANTS (sizeof variant_names / sizeof variant_names[0])
static const unsigned pixel_sizes[] = {1, 2, 3, 4, 6, 8};
#define PIXEL_SIZES (sizeof pixel_sizes / sizeof pixel_sizes[0])
/* Row counts: one row, a few, each side of one and two wavefront groups. */
static const uint32_t row_counts[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 35};
#define ROW_COUNTS (sizeof row_counts / sizeof row_counts[0])
/* Row lengths past 70 bytes: a few thousand, on and off every vector multiple. */
static const size_t long_rows[] = {2048, 2049, 4095, 4104};
#define LONG_ROWS (sizeof long_rows / sizeof long_rows[0])
#define SHORT_ROW_MAX 70
#define GUARD 64             /* bytes checked before and after a batch */
#define GUARD_BYTE 0xA5
/* Filter patterns: one type for every row (0..4), each row's own at random, and runs of
 * Paeth rows broken by one row of each other type. */
enum { PATTERN_RANDOM = GS_PNG_FILTER_TYPES, PATTERN_RUNS, PATTERNS };

static uint64_t rng_state;
static unsigned rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state >> 11);
}

static unsigned char filter_of(int pattern, uint32_t r)
{
    if (pattern < GS_PNG_FILTER_TYPES) return (unsigned char)pattern;
    if (pattern == PATTERN_RANDOM) return (unsigned char)(rnd() % GS_PNG_FILTER_TYPES);
    return (unsigned char)(r % 7 == 6 ? r / 7 % 4 : GS_PNG_FILTER_PAETH);
}

/* A batch of `count` rows of n bytes, `stride` apart (stride >= n + 1), with guards, the
 * row above, and the same batch unfiltered by the reference. Returns the number of
 * differing bytes (0 when the variant matches), printing the first. */
static size_t compare_one(const gs_png_unfilter_isa *isa, unsigned bpp, size_t n, uint32_t count,
                          size_t stride, int pattern, int zero_up)
{
    const size_t body = stride * count, total = body + 2 * GUARD;
    unsigned char *got = malloc(total), *want = malloc(total), *up = malloc(n ? n : 1);
    ck_assert(got && want && up);
    for (size_t i = 0; i < total; i++) got[i] = (unsigned char)rnd();
    memset(got, GUARD_BYTE, GUARD);
    memset(got + GUARD + body, GUARD_BYTE, GUARD);
    for (size_t i = 0; i < n; i++) up[i] = zero_up ? 0 : (unsigned char)rnd();
    unsigned char *rows = got + GUARD;
    for (uint32_t r = 0; r < count; r++) rows[(size_t)r * stride] = filter_of(pattern, r);
    memcpy(want, got, total);

    /* the reference: each row against the finished row above it */
    for (uint32_t r = 0; r < count; r++) {
        unsigned char *x = want + GUARD + (size_t)r * stride;
        gs_png_unfilter_isa_scalar.row(x[0], x + 1, r ? x + 1 - stride : up, n, bpp);
    }
    ck_assert_int_eq(gs_png_unfilter_batch(isa, rows, stride, count, up, n, bpp), 0);
    size_t differ = 0;
    for (size_t i = 0; i < total; i++)
        if (got[i] != want[i] && differ++ == 0) {
            const long at = (long)i - GUARD;
            fprintf(stderr, "%s: bpp %u, %zu bytes, %u rows, stride %zu, pattern %d: byte %ld "
                    "(row %ld, column %ld) is %u, not %u\n", isa->name, bpp, n, count, stride,
                    pattern, at, at / (long)stride, at % (long)stride - 1, got[i], want[i]);
        }
    free(got);
    free(want);
    free(up);
    return differ;
}

/* One variant (the loop index) over every size, count, pattern and layout. */
START_TEST(variant_matches_reference)
{
    const gs_png_unfilter_isa *isa = gs_png_unfilter_by_name(variant_names[_i]);
    if (!isa) {
        fprintf(stderr, "png_unfilter: this CPU does not run %s: skipped\n", variant_names[_i]);
        return;
    }
    rng_state = 0x9E3779B97F4A7C15u + (uint64_t)_i;
    size_t cases = 0, failed = 0;
    for (size_t p = 0; p < PIXEL_SIZES; p++) {
        const unsigned bpp = pixel_sizes[p];
        size_t lengths[SHORT_ROW_MAX + LONG_ROWS];
        size_t nl = 0;
        for (size_t w = 1; w * bpp <= SHORT_ROW_MAX; w++) lengths[nl++] = w * bpp;
        for (size_t k = 0; k < LONG_ROWS; k++) lengths[nl++] = long_rows[k] / bpp * bpp;
        for (size_t l = 0; l < nl; l++)
            for (size_t c = 0; c < ROW_COUNTS; c++)
                for (int pattern = 0; pattern < PATTERNS; pattern++) {
                    const size_t n = lengths[l];
                    const uint32_t count = row_counts[c];
                    /* long rows: fewer counts, the work is in the length */
                    if (n > SHORT_ROW_MAX && count != 17 && count != 33 && count != 2) continue;
                    /* the reader's layout (filter byte, row, next filter byte), and rows
                     * with a gap after them whose bytes must stay */
                    const size_t stride = (cases & 1) ? n + 1 + 1 + rnd() % 40 : n + 1;
                    failed += compare_one(isa, bpp, n, count, stride, pattern, (int)(cases % 5 == 0)) != 0;
                    cases++;
                }
    }
    ck_assert_msg(failed == 0, "%s: %zu of %zu batches differ from the reference", isa->name,
                  failed, cases);
}
END_TEST

/* A filter byte past Paeth fails the batch before any row changes, in every variant. */
START_TEST(bad_filter_byte_changes_nothing)
{
    const gs_png_unfilter_isa *isa = gs_png_unfilter_by_name(variant_names[_i]);
    if (!isa) return;
    enum { N = 40, ROWS = 20, STRIDE = N + 1 };
    unsigned char batch[STRIDE * ROWS], before[STRIDE * ROWS], up[N];
    rng_state = 12345;
    for (size_t i = 0; i < sizeof batch; i++) batch[i] = (unsigned char)rnd();
    for (int r = 0; r < ROWS; r++) batch[r * STRIDE] = GS_PNG_FILTER_PAETH;
    batch[17 * STRIDE] = GS_PNG_FILTER_TYPES;
    memset(up, 7, sizeof up);
    memcpy(before, batch, sizeof batch);
    ck_assert_int_eq(gs_png_unfilter_batch(isa, batch, STRIDE, ROWS, up, N, 1), -1);
    ck_assert_mem_eq(batch, before, sizeof batch);
}
END_TEST

/* GSMOOTH_PNG_UNFILTER caps the choice: each name gives that variant where the CPU runs it,
 * and scalar where it names nothing known. */
START_TEST(environment_forces_a_variant)
{
    for (size_t v = 0; v < VARIANTS; v++) {
        const gs_png_unfilter_isa *isa = gs_png_unfilter_by_name(variant_names[v]);
        setenv("GSMOOTH_PNG_UNFILTER", variant_names[v], 1);
        if (isa) ck_assert_ptr_eq(gs_png_unfilter_best(), isa);
    }
    setenv("GSMOOTH_PNG_UNFILTER", "no-such-variant", 1);
    ck_assert_ptr_eq(gs_png_unfilter_best(), &gs_png_unfilter_isa_scalar);
    unsetenv("GSMOOTH_PNG_UNFILTER");
    ck_assert_ptr_nonnull(gs_png_unfilter_by_name("scalar"));
    ck_assert_ptr_null(gs_png_unfilter_by_name("no-such-variant"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("png_unfilter");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, variant_matches_reference, 0, VARIANTS);
    tcase_add_loop_test(tc, bad_filter_byte_changes_nothing, 0, VARIANTS);
    tcase_add_test(tc, environment_forces_a_variant);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
