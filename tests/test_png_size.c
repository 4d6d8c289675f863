/* test_png_size.c: Check suite: the PNG writer's pieces compress as well as one stream. */
/* Each deflate piece is primed with the previous piece's last 32 KiB: gsmooth's PNG at
 * level 6 is held against zlib's level 6 over the same filtered rows, on images whose rows
 * repeat 20 and 30 KiB back. */

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "image_io.h"

/*
 * The writer cuts its stream into pieces deflated apart (io/png_deflate.c) and primes each
 * with the last 32 KiB before it, deflate's whole window, so that matches reaching back over
 * a piece's start are still found. Primed with less, every piece's first bytes are literals
 * again: the pixels stay right and only the size shows it (16 KiB instead of 32 doubled a
 * file with matches 20 KiB back). Rows of random bytes repeating every DISTANCE bytes can
 * only be compressed by matches exactly that far back: one zlib stream over the same rows is
 * the size to meet.
 */

/* Row stride of the test images: 1023 samples and the filter byte. */
#define WIDTH 1023
/* Filtered bytes: 8 pieces of 256 KiB, so each distance crosses seven piece starts. */
#define HEIGHT 2048
/* The zlib level the comparison runs at: the writer's "small" preset, zlib's own default. */
#define LEVEL 6
/* gsmooth's IDAT data may be this much over one stream's: each piece ends in a sync flush
 * and starts a fresh block with tables of its own (measured well inside the margin at both
 * distances); primed with 16 KiB instead of 32, the pieces made far larger files. */
#define SIZE_MARGIN 1.05
/* Deflate's window (RFC 1951): the distances tested lie inside it, clear of zlib's
 * MAX_DIST (window less 262 bytes of look-ahead). */
#define DEFLATE_WINDOW (32u << 10)
static const uint32_t distances[] = {20u << 10, 30u << 10};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static char scratch[256];

/* The IDAT data of the PNG at `path`, concatenated (the zlib stream), in a malloc'd
 * buffer of *len bytes. */
static unsigned char *idat_data(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned char sig[8], head[8];
    ck_assert_int_eq(fread(sig, 1, sizeof sig, f), sizeof sig);
    unsigned char *out = NULL;
    *len = 0;
    while (fread(head, 1, sizeof head, f) == sizeof head) {
        const uint32_t n = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
        if (memcmp(head + 4, "IDAT", 4) == 0) {
            out = realloc(out, *len + n + 1);
            ck_assert_ptr_nonnull(out);
            ck_assert_int_eq(fread(out + *len, 1, n, f), n);
            *len += n;
        } else {
            ck_assert_int_eq(fseek(f, (long)n, SEEK_CUR), 0);
        }
        ck_assert_int_eq(fseek(f, 4, SEEK_CUR), 0); /* the CRC */
    }
    fclose(f);
    ck_assert_uint_gt(*len, 0);
    return out;
}

START_TEST(level6_pieces_compress_as_one_stream)
{
    const uint32_t distance = distances[_i];
    ck_assert_uint_lt(distance, DEFLATE_WINDOW);
    char err[GS_ERR_SIZE], path[512];
    snprintf(path, sizeof path, "%s/repeat_%u.png", scratch, distance);

    /* Random rows, repeating every `distance` bytes of the stream (rows of WIDTH + 1). */
    const uint32_t period_rows = distance / (WIDTH + 1);
    ck_assert_uint_eq(period_rows * (WIDTH + 1), distance);
    unsigned char *pixels = malloc((size_t)WIDTH * HEIGHT);
    ck_assert_ptr_nonnull(pixels);
    uint32_t state = 2463534242u;
    for (size_t i = 0; i < (size_t)WIDTH * period_rows; i++) {
        state ^= state << 13, state ^= state >> 17, state ^= state << 5; /* xorshift32 */
        pixels[i] = (unsigned char)state;
    }
    for (size_t i = (size_t)WIDTH * period_rows; i < (size_t)WIDTH * HEIGHT; i++)
        pixels[i] = pixels[i - (size_t)WIDTH * period_rows];

    const gs_encode_settings encode = gs_encode_settings_make(LEVEL, 0);
    gs_writer *w = NULL;
    ck_assert_msg(gs_writer_open(path, GS_OUT_PNG, WIDTH, HEIGHT, 8, &encode, &w, err, sizeof err) == GS_OK, "%s", err);
    ck_assert_msg(gs_writer_write_rows(w, pixels, WIDTH, HEIGHT, err, sizeof err) == GS_OK, "%s", err);
    ck_assert_msg(gs_writer_commit(w, err, sizeof err) == GS_OK, "%s", err);
    free(pixels);

    /* The filtered rows gsmooth wrote, and one zlib stream of them at the same level. */
    size_t written = 0;
    unsigned char *stream = idat_data(path, &written);
    uLongf filtered_len = (uLongf)(WIDTH + 1) * HEIGHT;
    unsigned char *filtered = malloc(filtered_len);
    ck_assert_ptr_nonnull(filtered);
    ck_assert_int_eq(uncompress(filtered, &filtered_len, stream, (uLong)written), Z_OK);
    ck_assert_uint_eq(filtered_len, (uLongf)(WIDTH + 1) * HEIGHT);
    uLongf one_len = compressBound(filtered_len);
    unsigned char *one = malloc(one_len);
    ck_assert_ptr_nonnull(one);
    ck_assert_int_eq(compress2(one, &one_len, filtered, filtered_len, LEVEL), Z_OK);

    printf("png_size: rows repeating %u bytes back, level %d: gsmooth %zu bytes of IDAT data, "
           "one zlib stream %lu (%.4fx)\n",
           distance, LEVEL, written, (unsigned long)one_len, (double)written / (double)one_len);
    ck_assert_msg((double)written <= SIZE_MARGIN * (double)one_len,
                  "matches %u bytes back: gsmooth wrote %zu bytes, one zlib stream %lu (over %.2fx)",
                  distance, written, (unsigned long)one_len, SIZE_MARGIN);
    free(one);
    free(filtered);
    free(stream);
    unlink(path);
}
END_TEST

static void setup(void)
{
    snprintf(scratch, sizeof scratch, "/tmp/gsmooth-pngsize-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void teardown(void) { rmdir(scratch); }

int main(void)
{
    Suite *s = suite_create("png_size");
    TCase *tc = tcase_create("png_size");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, level6_pieces_compress_as_one_stream, 0, COUNT(distances));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
