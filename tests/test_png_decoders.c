/* test_png_decoders.c: Check suite: the fast PNG reader (ISA-L) against libpng. */
/* The same header and pixels on PNGs libpng writes with every filter, level and type; the
 * same accept or refuse and the same pixels on the damaged corpus and on PNGs other
 * encoders wrote; and libpng alone for what the fast path does not take. */

#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_io.h"
#include "io_internal.h"

static const char *damaged_dir, *fixtures_dir;
static char scratch[256];

/* One decode through gsmooth's reader with the PNG decoder chosen by GSMOOTH_PNG_DECODER. */
typedef struct decoded {
    gs_status rc;        /* how it ended */
    char err[GS_ERR_SIZE];
    gs_image_info info;  /* the header, when opened */
    unsigned char *pixels;
    size_t bytes;
} decoded;

static void decode(const char *path, const char *decoder, decoded *d)
{
    memset(d, 0, sizeof *d);
    setenv("GSMOOTH_PNG_DECODER", decoder, 1);
    gs_reader *r = NULL;
    d->rc = gs_reader_open(path, UINT64_C(1) << 30, &r, &d->info, d->err, sizeof d->err);
    if (d->rc != GS_OK) return;
    size_t stride = (size_t)d->info.width * (d->info.bits / 8);
    d->bytes = stride * d->info.height;
    d->pixels = malloc(d->bytes ? d->bytes : 1);
    ck_assert_ptr_nonnull(d->pixels);
    /* In strips of 3 rows, so batches and strips never line up. */
    for (uint32_t y = 0; y < d->info.height && d->rc == GS_OK; y += 3) {
        uint32_t n = d->info.height - y < 3 ? d->info.height - y : 3;
        d->rc = gs_reader_read_rows(r, d->pixels + (size_t)y * stride, stride, n, d->err, sizeof d->err);
    }
    gs_reader_close(r);
    unsetenv("GSMOOTH_PNG_DECODER");
}

/* libpng and the fast path agree on `path`: both refuse, or both give the same header and
 * pixels. Returns 1 when both accepted. */
static int assert_same_decode(const char *path)
{
    decoded a, b;
    decode(path, "libpng", &a);
    decode(path, "fast", &b);
    ck_assert_msg((a.rc == GS_OK) == (b.rc == GS_OK), "%s: libpng %s, fast path %s", path,
                  a.rc == GS_OK ? "accepts" : a.err, b.rc == GS_OK ? "accepts" : b.err);
    int both = a.rc == GS_OK;
    if (both) {
        ck_assert_msg(a.info.width == b.info.width && a.info.height == b.info.height &&
                          a.info.bits == b.info.bits && a.info.was_color == b.info.was_color &&
                          a.info.had_alpha == b.info.had_alpha,
                      "%s: headers differ", path);
        ck_assert_msg(a.bytes == b.bytes && memcmp(a.pixels, b.pixels, a.bytes) == 0,
                      "%s: pixels differ", path);
    }
    free(a.pixels);
    free(b.pixels);
    return both;
}

/* ---- PNGs written by libpng, every filter, level and type ---- */

typedef struct png_kind {
    const char *name;
    int color_type, bit_depth, channels, trns;
} png_kind;

static const png_kind kinds[] = {
    {"gray8", PNG_COLOR_TYPE_GRAY, 8, 1, 0},       {"gray16", PNG_COLOR_TYPE_GRAY, 16, 1, 0},
    {"gray8_trns", PNG_COLOR_TYPE_GRAY, 8, 1, 1},  {"ga8", PNG_COLOR_TYPE_GRAY_ALPHA, 8, 2, 0},
    {"ga16", PNG_COLOR_TYPE_GRAY_ALPHA, 16, 2, 0}, {"rgb8", PNG_COLOR_TYPE_RGB, 8, 3, 0},
    {"rgb16", PNG_COLOR_TYPE_RGB, 16, 3, 0},       {"rgb8_trns", PNG_COLOR_TYPE_RGB, 8, 3, 1},
    {"rgba8", PNG_COLOR_TYPE_RGBA, 8, 4, 0},       {"rgba16", PNG_COLOR_TYPE_RGBA, 16, 4, 0},
    {"palette8", PNG_COLOR_TYPE_PALETTE, 8, 1, 0}, {"palette8_trns", PNG_COLOR_TYPE_PALETTE, 8, 1, 1},
};
static const int filters[] = {PNG_FILTER_NONE, PNG_FILTER_SUB, PNG_FILTER_UP, PNG_FILTER_AVG,
                              PNG_FILTER_PAETH, PNG_ALL_FILTERS};
static const int levels[] = {0, 1, 6, 9};
static const uint32_t sizes[][2] = {{37, 23}, {1, 1}, {1025, 5}, {3, 70}};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

/* Write a PNG with libpng: smooth gradients with noise (so every filter wins somewhere),
 * small IDAT chunks (so the data spans several), a palette of 200 entries (libpng writes
 * no index past the palette; tests/png has a file that does). */
static void write_png(const char *path, const png_kind *k, int filter, int level, uint32_t w,
                      uint32_t h)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    ck_assert(png && info);
    ck_assert_int_eq(setjmp(png_jmpbuf(png)), 0);
    png_init_io(png, f);
    png_set_IHDR(png, info, w, h, k->bit_depth, k->color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filter);
    png_set_compression_level(png, level);
    png_set_compression_buffer_size(png, 1024);
    png_color palette[200];
    for (int i = 0; i < 200; i++)
        palette[i].red = (png_byte)rng(), palette[i].green = (png_byte)rng(), palette[i].blue = (png_byte)rng();
    if (k->color_type == PNG_COLOR_TYPE_PALETTE) png_set_PLTE(png, info, palette, 200);
    png_byte trns_alpha[10] = {0, 50, 100, 255, 7, 9, 11, 13, 200, 250};
    png_color_16 trns_color = {0, 30, 40, 50, 60};
    if (k->trns) png_set_tRNS(png, info, trns_alpha, 10, &trns_color);
    png_write_info(png, info);
    const size_t bps = (size_t)k->bit_depth / 8;
    png_bytep row = malloc((size_t)w * k->channels * bps);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < k->channels; c++) {
                uint32_t v = (x * 7 + y * 3 + (uint32_t)c * 50 + rng() % 9) & 0xFFFF;
                if (k->color_type == PNG_COLOR_TYPE_PALETTE) v = (x + y * 2 + rng() % 3) % 200;
                size_t at = ((size_t)x * k->channels + (size_t)c) * bps;
                if (bps == 2) row[at] = (png_byte)(v * 257 >> 8), row[at + 1] = (png_byte)(v * 131);
                else row[at] = (png_byte)v;
            }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    fclose(f);
}

START_TEST(libpng_written_every_filter_level_and_type)
{
    const png_kind *k = &kinds[_i];
    int files = 0;
    for (int f = 0; f < COUNT(filters); f++)
        for (int l = 0; l < COUNT(levels); l++)
            for (int s = 0; s < COUNT(sizes); s++) {
                char path[512];
                snprintf(path, sizeof path, "%s/%s_f%d_l%d_s%d.png", scratch, k->name, f, l, s);
                write_png(path, k, filters[f], levels[l], sizes[s][0], sizes[s][1]);
                char head[GS_IO_HEAD_SIZE];
                FILE *in = fopen(path, "rb");
                size_t n = fread(head, 1, sizeof head, in);
                fclose(in);
                ck_assert_msg(gs_png_isal_takes((unsigned char *)head, n), "%s: not for the fast path", path);
                ck_assert_msg(assert_same_decode(path), "%s: refused by both", path);
                unlink(path);
                ++files;
            }
    ck_assert_int_eq(files, COUNT(filters) * COUNT(levels) * COUNT(sizes));
}
END_TEST

/* What the fast path leaves to libpng: interlaced images and 1, 2, 4-bit samples. */
START_TEST(the_rest_goes_to_libpng)
{
    unsigned char head[32] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    head[24] = 8, head[25] = PNG_COLOR_TYPE_GRAY;
    ck_assert(gs_png_isal_takes(head, sizeof head));
    head[28] = 1; /* Adam7 */
    ck_assert(!gs_png_isal_takes(head, sizeof head));
    head[28] = 0;
    for (int depth = 1; depth <= 4; depth *= 2) {
        head[24] = (unsigned char)depth;
        ck_assert(!gs_png_isal_takes(head, sizeof head));
        head[25] = PNG_COLOR_TYPE_PALETTE;
        ck_assert(!gs_png_isal_takes(head, sizeof head));
        head[25] = PNG_COLOR_TYPE_GRAY;
    }
    ck_assert(!gs_png_isal_takes(head, 28)); /* too short to tell */
}
END_TEST

/* Every PNG of a directory: the same accept or refuse, and the same pixels. */
static void compare_directory(const char *dir, int *files, int *accepted)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    ck_assert_msg(n >= 0, "cannot read %s", dir);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name);
        if (len > 4 && strcmp(name + len - 4, ".png") == 0) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, name);
            *accepted += assert_same_decode(path);
            ++*files;
        }
        free(names[i]);
    }
    free(names);
}

START_TEST(damaged_corpus_same_verdicts)
{
    int files = 0, accepted = 0;
    compare_directory(damaged_dir, &files, &accepted);
    ck_assert_int_gt(files, 100);
    printf("damaged corpus: %d PNG files, %d accepted by both, the rest refused by both\n", files,
           accepted);
}
END_TEST

START_TEST(other_encoders_same_pixels)
{
    int files = 0, accepted = 0;
    compare_directory(fixtures_dir, &files, &accepted);
    ck_assert_int_gt(files, 5);
    ck_assert_int_eq(accepted, files);
    printf("PNGs of other encoders: %d files, same pixels\n", files);
}
END_TEST

static void setup(void)
{
    snprintf(scratch, sizeof scratch, "/tmp/gsmooth-pngdec-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void teardown(void) { rmdir(scratch); }

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DAMAGED_DIR FIXTURES_DIR\n", argv[0]);
        return 2;
    }
    damaged_dir = argv[1], fixtures_dir = argv[2];
    Suite *s = suite_create("png_decoders");
    TCase *tc = tcase_create("png_decoders");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, libpng_written_every_filter_level_and_type, 0, COUNT(kinds));
    tcase_add_test(tc, the_rest_goes_to_libpng);
    tcase_add_test(tc, damaged_corpus_same_verdicts);
    tcase_add_test(tc, other_encoders_same_pixels);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
