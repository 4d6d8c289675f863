/* test_deflate_fast.c: Check suite: the writer's level-1 deflate (literals and byte runs) inflates back with zlib. */
/* Every length across the sample, step and stored-block boundaries, contents from one byte
 * value to random bytes (stored), pieces concatenated into one stream, and the PNG writer's
 * level-1 stream on one thread and on three. */

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "deflate_fast.h"
#include "png_deflate.h"

/* Lengths across the coder's boundaries: its sample of every third byte in fours, its 4 KiB steps,
 * stored blocks' 65535 bytes, the writer's 256 KiB pieces. */
static const size_t lengths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 1023, 1024, 1025, 4095, 4096, 4097,
                                 8191, 65535, 65536, 65537, 262143, 262144};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef enum content {
    ONE_VALUE,    /* every byte 0 */
    SMOOTH_ROWS,  /* small differences, as Sub-filtered smoothed rows are: mostly near 0 */
    ALL_VALUES,   /* 0..255 in turn */
    RANDOM,       /* incompressible: stored */
    OUTSIDE_SAMPLE, /* 0 at every third byte, where the coder's sample looks, random bytes
                     * between: most values have the longest codes */
    RUNS,           /* runs of one byte, 1 to 600 long, between random stretches: runs start
                     * and end anywhere against the coder's 8-byte groups and 4 KiB steps */
    CONTENTS
} content;

/* A reproducible generator (xorshift32). */
static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
    return *s;
}

static unsigned char *make(content kind, size_t len, uint32_t seed)
{
    unsigned char *b = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(b);
    uint32_t s = seed | 1u;
    size_t run_left = 0;
    unsigned char run_byte = 0;
    for (size_t i = 0; i < len; i++) {
        const uint32_t r = next_random(&s);
        switch (kind) {
        case ONE_VALUE: b[i] = 0; break;
        /* two's-complement differences, geometric-ish around 0 */
        case SMOOTH_ROWS: b[i] = (unsigned char)((r & 1 ? 1 : -1) * (int)(__builtin_ctz(r | 0x100u) * ((r >> 9) & 3))); break;
        case ALL_VALUES: b[i] = (unsigned char)i; break;
        case RANDOM: b[i] = (unsigned char)(r >> 11); break;
        case OUTSIDE_SAMPLE: b[i] = i % 3 == 0 ? 0 : (unsigned char)(r >> 11); break;
        default:
            if (run_left == 0) { /* a run or a random stretch, in turn */
                run_left = 1 + (r >> 8) % 600;
                run_byte = (r >> 4) & 1 ? (unsigned char)(r >> 20) : 0;
                if ((r & 1) == 0) run_left = -run_left; /* random bytes: counted up to 0 */
            }
            if ((ptrdiff_t)run_left > 0) b[i] = run_byte, run_left--;
            else b[i] = (unsigned char)(r >> 13), run_left++;
            break;
        }
    }
    return b;
}

/* Raw-inflate `n` bytes; the output must come to exactly `want_len` bytes, the stream end
 * (final block) be met iff `final`, and every input byte be used. Returns the output. */
static unsigned char *inflate_raw(const unsigned char *in, size_t n, size_t want_len, int final)
{
    unsigned char *out = malloc(want_len + 1);
    ck_assert_ptr_nonnull(out);
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(inflateInit2(&z, -15), Z_OK);
    z.next_in = (unsigned char *)in, z.avail_in = (uInt)n;
    z.next_out = out, z.avail_out = (uInt)want_len + 1;
    const int r = inflate(&z, Z_SYNC_FLUSH);
    ck_assert_msg(r == (final ? Z_STREAM_END : Z_OK) || (!final && r == Z_BUF_ERROR && n == 0),
                  "inflate returned %d (%s)", r, z.msg ? z.msg : "");
    ck_assert_uint_eq(z.total_out, want_len);
    ck_assert_uint_eq(z.avail_in, 0);
    inflateEnd(&z);
    return out;
}

/* One piece of every content and length, final and not: it inflates back, within the bound,
 * and never larger than stored. */
START_TEST(piece_inflates_back)
{
    const content kind = (content)(_i % CONTENTS);
    const size_t len = lengths[_i / CONTENTS];
    unsigned char *in = make(kind, len, 7u + (uint32_t)_i);
    const size_t bound = gs_deflate_fast_bound(len);
    unsigned char *out = malloc(bound);
    ck_assert_ptr_nonnull(out);
    for (int last = 0; last <= 1; last++) {
        const size_t n = gs_deflate_fast(in, len, last, out);
        ck_assert_uint_le(n, bound);
        ck_assert_uint_le(n, len + 5 * (len / 65535 + 1));
        unsigned char *back = inflate_raw(out, n, len, last);
        ck_assert_msg(len == 0 || memcmp(back, in, len) == 0, "content %d, %zu bytes: bytes differ", kind, len);
        free(back);
        /* the same input, the same bytes */
        unsigned char *again = malloc(bound);
        ck_assert_ptr_nonnull(again);
        ck_assert_uint_eq(gs_deflate_fast(in, len, last, again), n);
        ck_assert_int_eq(memcmp(again, out, n), 0);
        free(again);
    }
    free(out);
    free(in);
}
END_TEST

/* Coding pays where bytes are skewed or repeat: smoothed rows of 256 KiB take well under
 * their size, runs between random stretches under 0.6, one value (runs only) under 1%; random bytes, and bytes the sample misleads on, are no larger
 * than stored blocks. */
START_TEST(skewed_bytes_shrink)
{
    const size_t len = 262144;
    const struct {
        content kind;
        double most;
    } cases[] = {{ONE_VALUE, 0.01}, {SMOOTH_ROWS, 0.5}, {RUNS, 0.6}, {OUTSIDE_SAMPLE, 1.0001}, {RANDOM, 1.0001}};
    unsigned char *out = malloc(gs_deflate_fast_bound(len));
    ck_assert_ptr_nonnull(out);
    for (int c = 0; c < COUNT(cases); c++) {
        unsigned char *in = make(cases[c].kind, len, 99);
        const size_t n = gs_deflate_fast(in, len, 1, out);
        printf("deflate_fast: content %d, %zu bytes -> %zu (%.4f)\n", cases[c].kind, len, n,
               (double)n / len);
        ck_assert_msg((double)n <= cases[c].most * len + 64, "content %d: %zu bytes", cases[c].kind, n);
        free(in);
    }
    free(out);
}
END_TEST

/* Pieces of many lengths and contents, only the last final, are one stream. */
START_TEST(pieces_concatenate)
{
    size_t total = 0, used = 0;
    for (int i = 0; i < COUNT(lengths); i++) total += lengths[i];
    unsigned char *whole = malloc(total), *stream = malloc(total * 2 + 1024 * COUNT(lengths));
    ck_assert_ptr_nonnull(whole);
    ck_assert_ptr_nonnull(stream);
    size_t at = 0;
    for (int i = 0; i < COUNT(lengths); i++) {
        const size_t len = lengths[i];
        unsigned char *in = make((content)(i % CONTENTS), len, 1000u + (uint32_t)i);
        memcpy(whole + at, in, len);
        at += len;
        used += gs_deflate_fast(in, len, i == COUNT(lengths) - 1, stream + used);
        free(in);
    }
    unsigned char *back = inflate_raw(stream, used, total, 1);
    ck_assert_int_eq(memcmp(back, whole, total), 0);
    free(back);
    free(stream);
    free(whole);
}
END_TEST

/* The writer's level-1 zlib stream of rows appended 3001 bytes at a time (pieces cut
 * mid-append), on one thread and on three: the same bytes, and zlib gives the rows back. */
START_TEST(writer_level1_stream)
{
    const size_t append = 3001, appends = 400, total = append * appends;
    unsigned char *rows = make(SMOOTH_ROWS, total, 5);
    gs_deflate_memory got[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
    const unsigned threads[2] = {1, 3};
    char err[256];
    for (int t = 0; t < 2; t++) {
        gs_deflate *d = NULL;
        ck_assert_int_eq(gs_deflate_open(1, threads[t], append, gs_deflate_to_memory, &got[t], &d, err, sizeof err), GS_OK);
        for (size_t a = 0; a < appends; a++) {
            memcpy(gs_deflate_reserve(d, append), rows + a * append, append);
            ck_assert_int_eq(gs_deflate_append(d, append, err, sizeof err), GS_OK);
        }
        ck_assert_int_eq(gs_deflate_finish(d, err, sizeof err), GS_OK);
        gs_deflate_close(d);
    }
    ck_assert_uint_eq(got[0].len, got[1].len);
    ck_assert_int_eq(memcmp(got[0].bytes, got[1].bytes, got[0].len), 0);
    unsigned char *back = malloc(total);
    ck_assert_ptr_nonnull(back);
    uLongf back_len = total;
    ck_assert_int_eq(uncompress(back, &back_len, got[0].bytes, got[0].len), Z_OK);
    ck_assert_uint_eq(back_len, total);
    ck_assert_int_eq(memcmp(back, rows, total), 0);
    ck_assert_uint_lt(got[0].len, total / 2);
    free(back);
    free(got[0].bytes);
    free(got[1].bytes);
    free(rows);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("deflate_fast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, piece_inflates_back, 0, CONTENTS * COUNT(lengths));
    tcase_add_test(tc, skewed_bytes_shrink);
    tcase_add_test(tc, pieces_concatenate);
    tcase_add_test(tc, writer_level1_stream);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
