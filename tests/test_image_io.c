/* test_image_io.c: Check suite for the image readers and writers. */
/* Round trips, colour conversion, limits, errors, atomic output. */

#include <check.h>
#include <png.h>
#include <zlib.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "background_sync.h"
#include "image_io.h"
#include "io_internal.h"
#include "scratch_dir.h"
#include "tiff_io.h"

#define ERR_SIZE 256
#define DEFAULT_MAX_PIXELS ((uint64_t)1 << 30) /* the CLI's default --max-pixels */

#define SCRATCH_SIZE 512
/* One directory per run, made by main and removed by main even when tests fail (a failed
 * test in fork mode never reaches its teardown); one subdirectory per test inside it. */
static char root[SCRATCH_SIZE];
static char scratch[SCRATCH_SIZE]; /* this test's directory, from mkdtemp */

/* ---- scratch directory ---- */

static void setup(void)
{
    ck_assert_int_eq(gs_test_make_dir(scratch, sizeof scratch, root, "test_"), 0);
}

static void teardown(void)
{
    gs_test_remove_tree(scratch);
}

/* scratch/name, in gs_test_path_in's ring of buffers. */
static const char *in_scratch(const char *name) { return gs_test_path_in(scratch, name); }

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static unsigned char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    ck_assert_int_ge(size, 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)size + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *len = (size_t)size;
    return buf;
}

/* ---- PNG files made with libpng directly, independent of the code under test ---- */

typedef struct png_spec {
    uint32_t width, height;
    int color_type, bit_depth, interlace;
    const unsigned char *rows; /* packed rows exactly as PNG stores them (16-bit big-endian) */
    const png_color *palette;
    int palette_len;
    const png_byte *trans; /* tRNS for palette images */
    int trans_len;
} png_spec;

static size_t spec_row_bytes(const png_spec *s)
{
    int channels = s->color_type == PNG_COLOR_TYPE_RGB         ? 3
                   : s->color_type == PNG_COLOR_TYPE_RGB_ALPHA  ? 4
                   : s->color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                                                                : 1;
    return ((size_t)s->width * (size_t)channels * (size_t)s->bit_depth + 7) / 8;
}

static void make_png(const char *path, const png_spec *s)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(png);
    png_infop info = png_create_info_struct(png);
    ck_assert_ptr_nonnull(info);
    if (setjmp(png_jmpbuf(png))) ck_abort_msg("libpng failed to write the test image");
    png_init_io(png, f);
    png_set_IHDR(png, info, s->width, s->height, s->bit_depth, s->color_type, s->interlace,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (s->palette) png_set_PLTE(png, info, s->palette, s->palette_len);
    if (s->trans) png_set_tRNS(png, info, s->trans, s->trans_len, NULL);
    png_write_info(png, info);
    size_t rb = spec_row_bytes(s);
    int passes = png_set_interlace_handling(png);
    for (int p = 0; p < passes; p++)
        for (uint32_t y = 0; y < s->height; y++) png_write_row(png, s->rows + y * rb);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- the API under test, wrapped ---- */

/* Read the whole image, in chunks of `chunk` rows with a padded stride; returns packed rows. */
static void *read_image(const char *path, gs_image_info *info, uint32_t chunk)
{
    char err[ERR_SIZE] = "";
    gs_reader *reader = NULL;
    gs_status rc = gs_reader_open(path, DEFAULT_MAX_PIXELS, &reader, info, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "open %s: %s", path, err);
    size_t row = (size_t)info->width * (info->bits / 8);
    size_t stride = row + 6; /* padded, to catch a reader that ignores the stride */
    unsigned char *tmp = malloc(stride * chunk);
    unsigned char *out = malloc(row * info->height);
    ck_assert_ptr_nonnull(tmp);
    ck_assert_ptr_nonnull(out);
    for (uint32_t y = 0; y < info->height; y += chunk) {
        uint32_t n = info->height - y < chunk ? info->height - y : chunk;
        rc = gs_reader_read_rows(reader, tmp, stride, n, err, sizeof err);
        ck_assert_msg(rc == GS_OK, "read %s rows %u+%u: %s", path, y, n, err);
        for (uint32_t r = 0; r < n; r++) memcpy(out + (y + r) * row, tmp + r * stride, row);
    }
    free(tmp);
    gs_reader_close(reader);
    return out;
}

/* Write packed rows through the API in chunks of 5 rows with a padded stride. */
static void write_image(const char *path, gs_out_format fmt, uint32_t w, uint32_t h, uint32_t bits,
                        const void *data)
{
    char err[ERR_SIZE] = "";
    gs_writer *writer = NULL;
    gs_status rc = gs_writer_open(path, fmt, w, h, bits, NULL, &writer, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "open %s for writing: %s", path, err);
    size_t row = (size_t)w * (bits / 8), stride = row + 10;
    const uint32_t chunk = 5;
    unsigned char *tmp = malloc(stride * chunk);
    ck_assert_ptr_nonnull(tmp);
    for (uint32_t y = 0; y < h; y += chunk) {
        uint32_t n = h - y < chunk ? h - y : chunk;
        for (uint32_t r = 0; r < n; r++) memcpy(tmp + r * stride, (const unsigned char *)data + (y + r) * row, row);
        rc = gs_writer_write_rows(writer, tmp, stride, n, err, sizeof err);
        ck_assert_msg(rc == GS_OK, "write %s: %s", path, err);
    }
    free(tmp);
    rc = gs_writer_commit(writer, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "commit %s: %s", path, err);
}

static gs_status open_status(const char *path, uint64_t max_pixels, char *err)
{
    gs_reader *reader = (gs_reader *)&reader; /* must be reset to NULL on failure */
    gs_image_info info;
    gs_status rc = gs_reader_open(path, max_pixels, &reader, &info, err, ERR_SIZE);
    if (rc != GS_OK) ck_assert_ptr_null(reader);
    gs_reader_close(reader);
    return rc;
}

/* A test pattern that reaches both ends of the range. */
static void fill_pattern(void *data, uint32_t w, uint32_t h, uint32_t bits)
{
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t v = x * 2741u + y * 977u + x * y * 31u;
            if (bits == 8) ((uint8_t *)data)[y * w + x] = (uint8_t)v;
            else ((uint16_t *)data)[y * w + x] = (uint16_t)v;
        }
    if (bits == 8) { ((uint8_t *)data)[0] = 0; ((uint8_t *)data)[1] = UINT8_MAX; }
    else { ((uint16_t *)data)[0] = 0; ((uint16_t *)data)[1] = UINT16_MAX; }
}

/* ---- tests ---- */

START_TEST(test_roundtrip_png_pgm)
{
    const uint32_t w = 37, h = 23;
    const struct { gs_out_format fmt; const char *name; const char *format; } cases[] = {
        {GS_OUT_PNG, "rt.png", "PNG"},
        {GS_OUT_PGM, "rt.pgm", "PGM"},
        {GS_OUT_TIF, "rt.tif", "TIFF"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (uint32_t bits = 8; bits <= 16; bits += 8) {
            void *data = malloc((size_t)w * h * 2);
            ck_assert_ptr_nonnull(data);
            fill_pattern(data, w, h, bits);
            const char *path = in_scratch(cases[c].name);
            write_image(path, cases[c].fmt, w, h, bits, data);

            gs_image_info info;
            void *back = read_image(path, &info, 4);
            ck_assert_uint_eq(info.width, w);
            ck_assert_uint_eq(info.height, h);
            ck_assert_uint_eq(info.bits, bits);
            ck_assert_str_eq(info.format, cases[c].format);
            ck_assert_int_eq(info.was_color, 0);
            ck_assert_int_eq(info.had_alpha, 0);
            ck_assert_mem_eq(back, data, (size_t)w * h * (bits / 8));
            free(back);
            free(data);
        }
    }
}
END_TEST

/* Classic TIFF holds 32-bit offsets: the writer goes BigTIFF when deflate's worst case
 * (stored blocks, under 0.1% more) and the strip tables could reach 4 GiB. */
START_TEST(test_tiff_bigtiff_rule)
{
    ck_assert_int_eq(gs_tiff_needs_bigtiff(8192, 8192, 8, 32), 0);        /* 64 MiB */
    ck_assert_int_eq(gs_tiff_needs_bigtiff(32768, 32768, 8, 8), 0);       /* 1 GiB */
    ck_assert_int_eq(gs_tiff_needs_bigtiff(32768, 32768, 32, 2), 1);      /* 4 GiB of u32 */
    ck_assert_int_eq(gs_tiff_needs_bigtiff(65536, 65535, 8, 4), 1);       /* 4 GiB - 64 KiB raw */
    ck_assert_int_eq(gs_tiff_needs_bigtiff(65536, 60000, 8, 4), 0);       /* 3.66 GiB raw */
    ck_assert_int_eq(gs_tiff_needs_bigtiff(UINT32_MAX, UINT32_MAX, 64, 1), 1); /* no overflow */
}
END_TEST

START_TEST(test_pgm_file_layout)
{
    /* The bytes on disk: header with maxval 65535, then big-endian samples. */
    const uint16_t px[3] = {0x0102, 0xFFFE, 0x0000};
    const char *path = in_scratch("layout.pgm");
    write_image(path, GS_OUT_PGM, 3, 1, 16, px);
    size_t len;
    unsigned char *buf = read_bytes(path, &len);
    const char header[] = "P5\n3 1\n65535\n";
    ck_assert_uint_eq(len, strlen(header) + 6);
    ck_assert_mem_eq(buf, header, strlen(header));
    const unsigned char samples[6] = {0x01, 0x02, 0xFF, 0xFE, 0x00, 0x00};
    ck_assert_mem_eq(buf + strlen(header), samples, 6);
    free(buf);
}
END_TEST

START_TEST(test_png_color_bt601_8bit)
{
    /* RGB, then the same pixels with alpha: the luma values are worked out by hand from
     * Y = (19595 R + 38470 G + 7471 B + 32768) >> 16. */
    static const unsigned char rgb[][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255},
                                           {12, 200, 77}, {128, 128, 128}, {1, 2, 3}};
    static const uint8_t expect[] = {76, 150, 29, 255, 130, 128, 2};
    const uint32_t n = 7;
    unsigned char rows[7 * 4];
    for (int alpha = 0; alpha <= 1; alpha++) {
        unsigned ch = alpha ? 4 : 3;
        for (uint32_t i = 0; i < n; i++) {
            memcpy(rows + i * ch, rgb[i], 3);
            if (alpha) rows[i * ch + 3] = (unsigned char)(i * 40);
        }
        png_spec s = {n, 1, alpha ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB, 8,
                      PNG_INTERLACE_NONE, rows, NULL, 0, NULL, 0};
        const char *path = in_scratch(alpha ? "rgba8.png" : "rgb8.png");
        make_png(path, &s);
        gs_image_info info;
        uint8_t *gray = read_image(path, &info, 1);
        ck_assert_uint_eq(info.bits, 8);
        ck_assert_int_eq(info.was_color, 1);
        ck_assert_int_eq(info.had_alpha, alpha);
        for (uint32_t i = 0; i < n; i++)
            ck_assert_msg(gray[i] == expect[i], "pixel %u: got %u, want %u", i, gray[i], expect[i]);
        free(gray);
    }
}
END_TEST

START_TEST(test_png_color_bt601_16bit)
{
    static const uint16_t rgb[][3] = {{65535, 0, 0}, {0, 65535, 0}, {0, 0, 65535},
                                      {65535, 65535, 65535}, {1000, 40000, 65000},
                                      {54321, 12345, 999}, {65535, 65535, 0}};
    static const uint16_t expect[] = {19595, 38469, 7471, 65535, 31189, 23602, 58064};
    const uint32_t n = 7;
    unsigned char rows[7 * 6];
    for (uint32_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            rows[i * 6 + c * 2] = (unsigned char)(rgb[i][c] >> 8); /* PNG is big-endian */
            rows[i * 6 + c * 2 + 1] = (unsigned char)(rgb[i][c] & 0xFF);
        }
    png_spec s = {n, 1, PNG_COLOR_TYPE_RGB, 16, PNG_INTERLACE_NONE, rows, NULL, 0, NULL, 0};
    const char *path = in_scratch("rgb16.png");
    make_png(path, &s);
    gs_image_info info;
    uint16_t *gray = read_image(path, &info, 1);
    ck_assert_uint_eq(info.bits, 16);
    ck_assert_int_eq(info.was_color, 1);
    ck_assert_int_eq(info.had_alpha, 0);
    for (uint32_t i = 0; i < n; i++)
        ck_assert_msg(gray[i] == expect[i], "pixel %u: got %u, want %u", i, gray[i], expect[i]);
    free(gray);
}
END_TEST

START_TEST(test_png_palette)
{
    static const png_color pal[4] = {{10, 20, 30}, {200, 100, 50}, {0, 0, 0}, {255, 255, 0}};
    static const uint8_t expect_pal[4] = {18, 124, 0, 226};
    /* 8-bit indices, then the same picture at 2 bits per index with a tRNS chunk. */
    static const unsigned char idx8[2 * 4] = {0, 1, 2, 3, 3, 2, 1, 0};
    static const unsigned char idx2[2] = {0x1B /* 0 1 2 3 */, 0xE4 /* 3 2 1 0 */};
    static const png_byte trans[1] = {0};
    for (int packed = 0; packed <= 1; packed++) {
        png_spec s = {4, 2, PNG_COLOR_TYPE_PALETTE, packed ? 2 : 8, PNG_INTERLACE_NONE,
                      packed ? idx2 : idx8, pal, 4, packed ? trans : NULL, packed ? 1 : 0};
        const char *path = in_scratch("pal.png");
        make_png(path, &s);
        gs_image_info info;
        uint8_t *gray = read_image(path, &info, 2);
        ck_assert_uint_eq(info.bits, 8);
        ck_assert_int_eq(info.was_color, 1);
        ck_assert_int_eq(info.had_alpha, packed); /* tRNS only in the packed one */
        for (int i = 0; i < 8; i++)
            ck_assert_msg(gray[i] == expect_pal[idx8[i]], "packed=%d pixel %d: got %u, want %u",
                          packed, i, gray[i], expect_pal[idx8[i]]);
        free(gray);
    }
}
END_TEST

START_TEST(test_png_low_bit_gray)
{
    /* 1-bit: 10 pixels 1010011101 -> 0/255; 2-bit: 0 1 2 3 -> 0 85 170 255;
     * 4-bit: 0 1 8 15 -> 0 17 136 255. */
    static const unsigned char one[2] = {0xA7, 0x40};
    static const uint8_t one_expect[10] = {255, 0, 255, 0, 0, 255, 255, 255, 0, 255};
    static const unsigned char two[1] = {0x1B};
    static const uint8_t two_expect[4] = {0, 85, 170, 255};
    static const unsigned char four[2] = {0x01, 0x8F};
    static const uint8_t four_expect[4] = {0, 17, 136, 255};
    const struct { int depth; uint32_t w; const unsigned char *rows; const uint8_t *expect; } cases[] = {
        {1, 10, one, one_expect}, {2, 4, two, two_expect}, {4, 4, four, four_expect}};
    for (int c = 0; c < 3; c++) {
        png_spec s = {cases[c].w, 1, PNG_COLOR_TYPE_GRAY, cases[c].depth, PNG_INTERLACE_NONE,
                      cases[c].rows, NULL, 0, NULL, 0};
        const char *path = in_scratch("low.png");
        make_png(path, &s);
        gs_image_info info;
        uint8_t *gray = read_image(path, &info, 1);
        ck_assert_uint_eq(info.bits, 8);
        ck_assert_uint_eq(info.width, cases[c].w);
        ck_assert_int_eq(info.was_color, 0);
        ck_assert_mem_eq(gray, cases[c].expect, cases[c].w);
        free(gray);
    }
}
END_TEST

START_TEST(test_png_interlaced_twin)
{
    /* Gray 8-bit and RGB 16-bit, odd sizes so every Adam7 pass has ragged edges. */
    const struct { int color_type, depth, channels; uint32_t w, h; } cases[] = {
        {PNG_COLOR_TYPE_GRAY, 8, 1, 13, 11}, {PNG_COLOR_TYPE_RGB, 16, 3, 9, 7}};
    for (int c = 0; c < 2; c++) {
        size_t rb = (size_t)cases[c].w * cases[c].channels * (cases[c].depth / 8);
        unsigned char *rows = malloc(rb * cases[c].h);
        ck_assert_ptr_nonnull(rows);
        uint32_t seed = 12345;
        for (size_t i = 0; i < rb * cases[c].h; i++) {
            seed = seed * 1103515245u + 12345u;
            rows[i] = (unsigned char)(seed >> 24);
        }
        png_spec s = {cases[c].w, cases[c].h, cases[c].color_type, cases[c].depth,
                      PNG_INTERLACE_NONE, rows, NULL, 0, NULL, 0};
        make_png(in_scratch("plain.png"), &s);
        s.interlace = PNG_INTERLACE_ADAM7;
        make_png(in_scratch("adam7.png"), &s);

        size_t plain_len, adam_len;
        unsigned char *plain_file = read_bytes(in_scratch("plain.png"), &plain_len);
        unsigned char *adam_file = read_bytes(in_scratch("adam7.png"), &adam_len);
        ck_assert_int_eq(plain_file[28], 0); /* IHDR interlace byte: the twins really differ */
        ck_assert_int_eq(adam_file[28], 1);
        free(plain_file);
        free(adam_file);

        gs_image_info a, b;
        void *pa = read_image(in_scratch("plain.png"), &a, 3);
        void *pb = read_image(in_scratch("adam7.png"), &b, 3);
        ck_assert_uint_eq(a.width, b.width);
        ck_assert_uint_eq(a.height, b.height);
        ck_assert_uint_eq(a.bits, (uint32_t)cases[c].depth);
        ck_assert_uint_eq(b.bits, (uint32_t)cases[c].depth);
        size_t bytes = (size_t)a.width * a.height * (a.bits / 8);
        ck_assert_mem_eq(pa, pb, bytes);
        if (cases[c].channels == 1) ck_assert_mem_eq(pa, rows, bytes); /* gray: the input itself */
        free(pa);
        free(pb);
        free(rows);
    }
}
END_TEST

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Signature + IHDR (with a correct CRC) + IEND: a header that claims w x h. */
static size_t craft_png_header(unsigned char *buf, uint32_t w, uint32_t h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    memcpy(buf, sig, 8);
    put_be32(buf + 8, 13);
    memcpy(buf + 12, "IHDR", 4);
    put_be32(buf + 16, w);
    put_be32(buf + 20, h);
    buf[24] = 8; /* bit depth */
    buf[25] = 0; /* gray */
    buf[26] = 0;
    buf[27] = 0;
    buf[28] = 0;
    put_be32(buf + 29, (uint32_t)crc32(0, buf + 12, 17));
    put_be32(buf + 33, 0);
    memcpy(buf + 37, "IEND", 4);
    put_be32(buf + 41, (uint32_t)crc32(0, buf + 37, 4));
    return 45;
}

START_TEST(test_png_max_pixels)
{
    unsigned char buf[64];
    char err[ERR_SIZE] = "";
    const char *path = in_scratch("huge.png");

    write_bytes(path, buf, craft_png_header(buf, 100000, 100000));
    ck_assert_int_eq(open_status(path, DEFAULT_MAX_PIXELS, err), GS_ERR_TOO_LARGE);
    ck_assert_msg(strstr(err, "100000x100000") != NULL, "message: %s", err);

    /* One side over the limit on its own (libpng's user limit territory). */
    write_bytes(path, buf, craft_png_header(buf, 5000, 1));
    ck_assert_int_eq(open_status(path, 4999, err), GS_ERR_TOO_LARGE);

    /* A real image refused by a small limit, and accepted at exactly its size. */
    static const unsigned char rows[4 * 4] = {0};
    png_spec s = {4, 4, PNG_COLOR_TYPE_GRAY, 8, PNG_INTERLACE_NONE, rows, NULL, 0, NULL, 0};
    make_png(path, &s);
    ck_assert_int_eq(open_status(path, 15, err), GS_ERR_TOO_LARGE);
    ck_assert_int_eq(open_status(path, 16, err), GS_OK);
}
END_TEST

/* Append a chunk (length, type, data, CRC) at buf + at; returns the new end. */
static size_t put_chunk(unsigned char *buf, size_t at, const char *type, const void *data, uint32_t len)
{
    put_be32(buf + at, len);
    memcpy(buf + at + 4, type, 4);
    if (len) memcpy(buf + at + 8, data, len);
    put_be32(buf + at + 8 + len, (uint32_t)crc32(0, buf + at + 4, 4 + len));
    return at + 12 + len;
}

/* A 16x3 palette PNG written here, not by libpng: a PLTE of 3 entries and indices 0..15
 * in each row, so 13 of 16 pixels a row index past the palette. Both PNG readers expand
 * those to black, as libpng's zero-filled palette does; the entries give their luma. */
START_TEST(test_png_palette_index_past_plte)
{
    enum { W = 16, H = 3 };
    static const unsigned char plte[9] = {255, 255, 255, 10, 200, 30, 0, 0, 255};
    unsigned char raw[H * (W + 1)], z[256], buf[512];
    for (int y = 0; y < H; y++) {
        raw[y * (W + 1)] = 0; /* filter None */
        for (int x = 0; x < W; x++) raw[y * (W + 1) + 1 + x] = (unsigned char)((x + y) % W);
    }
    uLongf zlen = sizeof z;
    ck_assert_int_eq(compress(z, &zlen, raw, sizeof raw), Z_OK);
    unsigned char ihdr[13];
    put_be32(ihdr, W);
    put_be32(ihdr + 4, H);
    ihdr[8] = 8, ihdr[9] = 3, ihdr[10] = ihdr[11] = ihdr[12] = 0; /* 8-bit palette */
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    memcpy(buf, sig, sizeof sig);
    size_t n = put_chunk(buf, sizeof sig, "IHDR", ihdr, sizeof ihdr);
    n = put_chunk(buf, n, "PLTE", plte, sizeof plte);
    n = put_chunk(buf, n, "IDAT", z, (uint32_t)zlen);
    n = put_chunk(buf, n, "IEND", NULL, 0);
    const char *path = in_scratch("past_plte.png");
    write_bytes(path, buf, n);
    const uint8_t entry_gray[3] = {255, (uint8_t)((19595u * 10 + 38470u * 200 + 7471u * 30 + 32768) >> 16),
                                   (uint8_t)((7471u * 255 + 32768) >> 16)};
    static const char *const decoders[] = {"fast", "libpng"};
    for (size_t d = 0; d < sizeof decoders / sizeof decoders[0]; d++) {
        setenv("GSMOOTH_PNG_DECODER", decoders[d], 1);
        gs_reader *reader = NULL;
        gs_image_info info;
        char err[ERR_SIZE] = "";
        ck_assert_msg(gs_reader_open(path, DEFAULT_MAX_PIXELS, &reader, &info, err, sizeof err) == GS_OK,
                      "%s: %s", decoders[d], err);
        uint8_t got[H][W];
        ck_assert_int_eq(gs_reader_read_rows(reader, got, W, H, err, sizeof err), GS_OK);
        gs_reader_close(reader);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const int index = (x + y) % W;
                const uint8_t want = index < 3 ? entry_gray[index] : 0;
                ck_assert_msg(got[y][x] == want, "%s: pixel (%d, %d), index %d: %u, want %u",
                              decoders[d], x, y, index, got[y][x], want);
            }
    }
    unsetenv("GSMOOTH_PNG_DECODER");
}
END_TEST

/* Headers whose width x height wraps to a small number in 32 bits (65536 x 65536 is 2^32,
 * 0 in 32 bits; 65536 x 65537 is 65536): refused with the true count, by the PNG readers
 * (fast and libpng) and the PGM reader, so a 32-bit product anywhere on the way fails here. */
START_TEST(test_max_pixels_product_wraps_32_bits)
{
    unsigned char buf[64];
    char err[ERR_SIZE] = "";
    const char *path = in_scratch("wraps.png");
    static const char *const decoders[] = {"fast", "libpng"};
    for (size_t d = 0; d < sizeof decoders / sizeof decoders[0]; d++) {
        setenv("GSMOOTH_PNG_DECODER", decoders[d], 1);
        write_bytes(path, buf, craft_png_header(buf, 65536, 65536));
        ck_assert_int_eq(open_status(path, DEFAULT_MAX_PIXELS, err), GS_ERR_TOO_LARGE);
        ck_assert_msg(strstr(err, "4294967296") != NULL, "%s: message: %s", decoders[d], err);
        write_bytes(path, buf, craft_png_header(buf, 65536, 65537));
        ck_assert_int_eq(open_status(path, DEFAULT_MAX_PIXELS, err), GS_ERR_TOO_LARGE);
        ck_assert_msg(strstr(err, "4295032832") != NULL, "%s: message: %s", decoders[d], err);
    }
    unsetenv("GSMOOTH_PNG_DECODER");
    static const char pgm[] = "P5\n65537 65536\n255\n";
    path = in_scratch("wraps.pgm");
    write_bytes(path, pgm, sizeof pgm - 1);
    ck_assert_int_eq(open_status(path, DEFAULT_MAX_PIXELS, err), GS_ERR_TOO_LARGE);
    ck_assert_msg(strstr(err, "4295032832") != NULL, "PGM: message: %s", err);
}
END_TEST

START_TEST(test_png_truncated_and_corrupt)
{
    const uint32_t w = 64, h = 64;
    unsigned char *rows = malloc(w * h);
    ck_assert_ptr_nonnull(rows);
    uint32_t seed = 99;
    for (size_t i = 0; i < w * h; i++) { /* noise: IDAT stays about as large as the pixels */
        seed = seed * 1664525u + 1013904223u;
        rows[i] = (unsigned char)(seed >> 24);
    }
    png_spec s = {w, h, PNG_COLOR_TYPE_GRAY, 8, PNG_INTERLACE_NONE, rows, NULL, 0, NULL, 0};
    make_png(in_scratch("whole.png"), &s);
    size_t len;
    unsigned char *file = read_bytes(in_scratch("whole.png"), &len);
    ck_assert_uint_gt(len, 2000);

    /* Cut in the middle of IDAT: the header opens, the rows fail. */
    const char *path = in_scratch("cut.png");
    write_bytes(path, file, len / 2);
    char err[ERR_SIZE] = "";
    gs_image_info info;
    gs_reader *reader = NULL;
    ck_assert_int_eq(gs_reader_open(path, DEFAULT_MAX_PIXELS, &reader, &info, err, sizeof err), GS_OK);
    unsigned char *dst = malloc(w * h);
    ck_assert_ptr_nonnull(dst);
    gs_status rc = gs_reader_read_rows(reader, dst, w, h, err, sizeof err);
    ck_assert_int_eq(rc, GS_ERR_FORMAT);
    ck_assert_msg(strstr(err, "truncated") != NULL, "message: %s", err);
    /* After a failure the reader stays failed rather than touching libpng's state again. */
    ck_assert_int_eq(gs_reader_read_rows(reader, dst, w, 1, err, sizeof err), GS_ERR_FORMAT);
    gs_reader_close(reader);

    /* Cut inside IHDR: refused at open. */
    write_bytes(path, file, 20);
    ck_assert_int_eq(open_status(path, DEFAULT_MAX_PIXELS, err), GS_ERR_FORMAT);

    /* A flipped bit in the image data: zlib's check or IDAT's CRC, whichever libpng meets
     * first, rejects it. */
    file[len / 2] ^= 0x10;
    write_bytes(path, file, len);
    reader = NULL;
    rc = gs_reader_open(path, DEFAULT_MAX_PIXELS, &reader, &info, err, sizeof err);
    if (rc == GS_OK) rc = gs_reader_read_rows(reader, dst, w, h, err, sizeof err);
    ck_assert_int_eq(rc, GS_ERR_FORMAT);
    ck_assert_msg(strncmp(err, "invalid PNG: IDAT", 17) == 0, "message: %s", err);
    gs_reader_close(reader);

    free(dst);
    free(file);
    free(rows);
}
END_TEST

START_TEST(test_refuses_non_images)
{
    char err[ERR_SIZE] = "";

    write_bytes(in_scratch("empty.png"), "", 0);
    ck_assert_int_eq(open_status(in_scratch("empty.png"), DEFAULT_MAX_PIXELS, err), GS_ERR_FORMAT);
    ck_assert_msg(strstr(err, "empty") != NULL, "message: %s", err);

    const char text[] = "hello, this is a text file and not a picture\n";
    write_bytes(in_scratch("notes.png"), text, sizeof text - 1); /* the name must not matter */
    ck_assert_int_eq(open_status(in_scratch("notes.png"), DEFAULT_MAX_PIXELS, err), GS_ERR_FORMAT);
    ck_assert_msg(strstr(err, "not an image") != NULL, "message: %s", err);

    ck_assert_int_eq(open_status(in_scratch("missing.png"), DEFAULT_MAX_PIXELS, err), GS_ERR_IO);
    ck_assert_msg(strstr(err, strerror(ENOENT)) != NULL, "message: %s", err);

    ck_assert_int_eq(mkdir(in_scratch("adir"), 0755), 0);
    ck_assert_int_eq(open_status(in_scratch("adir"), DEFAULT_MAX_PIXELS, err), GS_ERR_IO);
    ck_assert_msg(strstr(err, "directory") != NULL, "message: %s", err);

    const char pam[] = "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\n\x00\xff";
    write_bytes(in_scratch("a.pam"), pam, sizeof pam - 1);
    ck_assert_int_eq(open_status(in_scratch("a.pam"), DEFAULT_MAX_PIXELS, err), GS_ERR_FORMAT);
    ck_assert_msg(strstr(err, "P7") != NULL, "message: %s", err);
}
END_TEST

START_TEST(test_pnm_reader)
{
    char err[ERR_SIZE] = "";
    gs_image_info info;

    /* 16-bit with a comment and maxval 1023: scaled to 0..65535. */
    const unsigned char p16[] = "P5\n# made by hand\n4 1\n1023\n\x00\x00\x00\x01\x02\x00\x03\xFF";
    write_bytes(in_scratch("a.pgm"), p16, sizeof p16 - 1);
    uint16_t *g16 = read_image(in_scratch("a.pgm"), &info, 1);
    ck_assert_uint_eq(info.bits, 16);
    ck_assert_str_eq(info.format, "PGM");
    const uint16_t e16[4] = {0, 64, 32800, 65535};
    ck_assert_mem_eq(g16, e16, sizeof e16);
    free(g16);

    /* 8-bit maxval 15 scales like 4-bit PNG gray. */
    const unsigned char p8[] = "P5 4 1 15\n\x00\x01\x08\x0F";
    write_bytes(in_scratch("b.pgm"), p8, sizeof p8 - 1);
    uint8_t *g8 = read_image(in_scratch("b.pgm"), &info, 1);
    ck_assert_uint_eq(info.bits, 8);
    const uint8_t e8[4] = {0, 17, 136, 255};
    ck_assert_mem_eq(g8, e8, sizeof e8);
    free(g8);

    /* P6 colour goes through the same BT.601 luma. */
    const unsigned char p6[] = "P6\n2 1\n255\n\xC8\x64\x32\x0C\xC8\x4D";
    write_bytes(in_scratch("c.ppm"), p6, sizeof p6 - 1);
    g8 = read_image(in_scratch("c.ppm"), &info, 1);
    ck_assert_str_eq(info.format, "PPM");
    ck_assert_int_eq(info.was_color, 1);
    const uint8_t e6[2] = {124, 130};
    ck_assert_mem_eq(g8, e6, sizeof e6);
    free(g8);

    /* Truncated raster: the header opens, the second row fails. */
    const unsigned char cut[] = "P5\n3 2\n255\n\x01\x02\x03\x04";
    write_bytes(in_scratch("d.pgm"), cut, sizeof cut - 1);
    gs_reader *reader = NULL;
    ck_assert_int_eq(gs_reader_open(in_scratch("d.pgm"), DEFAULT_MAX_PIXELS, &reader, &info, err, sizeof err), GS_OK);
    uint8_t row[3];
    ck_assert_int_eq(gs_reader_read_rows(reader, row, 3, 1, err, sizeof err), GS_OK);
    ck_assert_int_eq(gs_reader_read_rows(reader, row, 3, 1, err, sizeof err), GS_ERR_FORMAT);
    ck_assert_msg(strstr(err, "truncated") != NULL, "message: %s", err);
    gs_reader_close(reader);

    /* Plain PGM: maxval 1023 scaled as P5's is, comments between samples and right after
     * a number, a sample over maxval clamped to it, no newline at the end. */
    const char p2[] = "P2 # plain\n4 1 1023#c\n0 1# one\n 512\n\n99999";
    write_bytes(in_scratch("p2.pgm"), p2, sizeof p2 - 1);
    g16 = read_image(in_scratch("p2.pgm"), &info, 1);
    ck_assert_uint_eq(info.bits, 16);
    ck_assert_str_eq(info.format, "PGM");
    const uint16_t e2[4] = {0, 64, 32800, 65535};
    ck_assert_mem_eq(g16, e2, sizeof e2);
    free(g16);

    /* Plain PPM, maxval 15, through the same luma as P6. */
    const char p3[] = "P3\n2 1\n15\n15 0 0  0 0 15\n";
    write_bytes(in_scratch("p3.ppm"), p3, sizeof p3 - 1);
    g8 = read_image(in_scratch("p3.ppm"), &info, 1);
    ck_assert_str_eq(info.format, "PPM");
    ck_assert_int_eq(info.was_color, 1);
    const uint8_t e3[2] = {76, 29}; /* red, blue */
    ck_assert_mem_eq(g8, e3, sizeof e3);
    free(g8);

    /* Bitmaps: 1 is black (0), 0 is white (255). Plain digits need no space between them;
     * binary rows are padded to a byte (the padding bits are set here, and ignored). */
    const char p1[] = "P1\n3 2\n0 1\n0\n110";
    write_bytes(in_scratch("p1.pbm"), p1, sizeof p1 - 1);
    g8 = read_image(in_scratch("p1.pbm"), &info, 1);
    ck_assert_str_eq(info.format, "PBM");
    ck_assert_uint_eq(info.bits, 8);
    const uint8_t e1[6] = {255, 0, 255, 0, 0, 255};
    ck_assert_mem_eq(g8, e1, sizeof e1);
    free(g8);
    const unsigned char p4[] = "P4\n# 10 wide\n10 2\n\xA5\xFF\x0F\xC0";
    write_bytes(in_scratch("p4.pbm"), p4, sizeof p4 - 1);
    g8 = read_image(in_scratch("p4.pbm"), &info, 1);
    const uint8_t e4[20] = {0, 255, 0, 255, 255, 0, 255, 0, 0, 0,
                            255, 255, 255, 255, 0, 0, 0, 0, 0, 0};
    ck_assert_mem_eq(g8, e4, sizeof e4);
    free(g8);

    /* Plain rasters that end early or hold something else than samples. */
    const char *const bad_plain[] = {"P2\n2 2\n255\n1 2 3", "P2\n2 1\n255\n1 x", "P2\n2 1\n255\n1 2x",
                                     "P1\n2 1\n0 2", "P3\n1 1\n255\n1 2"};
    for (size_t i = 0; i < sizeof bad_plain / sizeof bad_plain[0]; i++) {
        write_bytes(in_scratch("bad.pgm"), bad_plain[i], strlen(bad_plain[i]));
        gs_reader *r = NULL;
        ck_assert_int_eq(gs_reader_open(in_scratch("bad.pgm"), DEFAULT_MAX_PIXELS, &r, &info, err, sizeof err), GS_OK);
        uint16_t rows[4];
        ck_assert_int_eq(gs_reader_read_rows(r, rows, sizeof rows, info.height, err, sizeof err), GS_ERR_FORMAT);
        ck_assert_msg(strstr(err, i == 0 || i == 4 ? "truncated" : "invalid plain") != NULL, "%s: %s",
                      bad_plain[i], err);
        gs_reader_close(r);
    }

    /* Header over max_pixels. */
    const unsigned char big[] = "P5\n70000 70000\n255\n";
    write_bytes(in_scratch("e.pgm"), big, sizeof big - 1);
    ck_assert_int_eq(open_status(in_scratch("e.pgm"), DEFAULT_MAX_PIXELS, err), GS_ERR_TOO_LARGE);
}
END_TEST

START_TEST(test_stb_formats_roundtrip)
{
    const uint32_t w = 21, h = 13;
    uint8_t *data = malloc(w * h);
    ck_assert_ptr_nonnull(data);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) data[y * w + x] = (uint8_t)(x * 10 + y * 3); /* smooth */
    const struct { gs_out_format fmt; const char *name, *format; int tolerance; } cases[] = {
        {GS_OUT_BMP, "s.bmp", "BMP", 0}, {GS_OUT_TGA, "s.tga", "TGA", 0},
        {GS_OUT_JPG, "s.jpg", "JPEG", 4}};
    for (int c = 0; c < 3; c++) {
        const char *path = in_scratch(cases[c].name);
        write_image(path, cases[c].fmt, w, h, 8, data);
        gs_image_info info;
        uint8_t *back = read_image(path, &info, 5);
        ck_assert_str_eq(info.format, cases[c].format);
        ck_assert_uint_eq(info.width, w);
        ck_assert_uint_eq(info.height, h);
        ck_assert_uint_eq(info.bits, 8);
        int worst = 0;
        for (uint32_t i = 0; i < w * h; i++) {
            int d = abs((int)back[i] - (int)data[i]);
            if (d > worst) worst = d;
        }
        ck_assert_msg(worst <= cases[c].tolerance, "%s: max error %d", cases[c].format, worst);
        free(back);
    }
    free(data);
}
END_TEST

START_TEST(test_gif_alpha_only_when_used)
{
    /* A 2x1 GIF89a, palette {red, blue}, pixels 0 1 (LZW by hand: clear, 0, 1, end at 3 bits
     * each), with and without a graphic control extension making index 1 transparent.
     * Alpha counts as dropped only when a pixel is the transparent index. */
    static const unsigned char head[] = {'G', 'I', 'F', '8', '9', 'a', 2, 0, 1, 0, 0x80, 0, 0,
                                         255, 0, 0, 0, 0, 255};
    static const unsigned char gce[] = {0x21, 0xF9, 0x04, 0x01, 0, 0, 1, 0};
    static const unsigned char body[] = {0x2C, 0, 0, 0, 0, 2, 0, 1, 0, 0,
                                         0x02, 0x02, 0x44, 0x0A, 0x00, 0x3B};
    for (int transparent = 0; transparent <= 1; transparent++) {
        unsigned char file[sizeof head + sizeof gce + sizeof body];
        size_t len = 0;
        memcpy(file, head, sizeof head);
        len += sizeof head;
        if (transparent) {
            memcpy(file + len, gce, sizeof gce);
            len += sizeof gce;
        }
        memcpy(file + len, body, sizeof body);
        len += sizeof body;
        const char *path = in_scratch("t.gif");
        write_bytes(path, file, len);
        gs_image_info info;
        uint8_t *gray = read_image(path, &info, 1);
        ck_assert_str_eq(info.format, "GIF");
        ck_assert_int_eq(info.was_color, 1);
        ck_assert_int_eq(info.had_alpha, transparent);
        ck_assert_uint_eq(gray[0], 76); /* red */
        if (!transparent) ck_assert_uint_eq(gray[1], 29); /* blue */
        free(gray);
    }
}
END_TEST

/* ---- GIFs made by hand: literal LZW codes only, independent of the code under test ---- */

#define GIF_TEST_MAX 4096          /* bytes of the largest hand-made GIF */
#define GIF_LZW_CLEAR 256u         /* minimum code size 8: clear 256, end 257, 9-bit codes */
#define GIF_LZW_END 257u
#define GIF_LZW_BITS 9u
#define GIF_LZW_RUN 250u           /* literals between clears: the table stays below 512 */

typedef struct gif_frame {
    uint16_t x, y, w, h;
    int interlace;                 /* rows stored in the four passes' order */
    const unsigned char *lct;      /* local table of 2^lct_bits RGB entries, or NULL */
    unsigned lct_bits;
    int transparent;               /* transparent index, or -1 */
    const unsigned char *idx;      /* h x w indices, top row first */
} gif_frame;

typedef struct gif_bits {
    unsigned char *block;          /* the sub-block being filled (its length byte) */
    unsigned char *end;            /* next byte to write */
    uint32_t acc, nacc;            /* bits waiting, LSB first */
} gif_bits;

static void gif_put_byte(gif_bits *b, unsigned char c)
{
    if (*b->block == 255) { /* a full sub-block: start the next */
        b->block = b->end++;
        *b->block = 0;
    }
    *b->end++ = c;
    ++*b->block;
}

static void gif_put_code(gif_bits *b, uint32_t code)
{
    b->acc |= code << b->nacc;
    for (b->nacc += GIF_LZW_BITS; b->nacc >= 8; b->nacc -= 8, b->acc >>= 8)
        gif_put_byte(b, (unsigned char)b->acc);
}

/* The frame's rows in the file's order: the passes (rows 0, 8, ...; 4, 12, ...; 2, 6, ...;
 * 1, 3, ...) when interlaced. */
static uint32_t gif_file_row(const gif_frame *f, uint32_t n)
{
    if (!f->interlace) return n;
    static const uint32_t start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
    for (int p = 0; p < 4; p++)
        for (uint32_t y = start[p]; y < f->h; y += step[p])
            if (n-- == 0) return y;
    return 0;
}

/* A GIF89a of `frames` on a sw x sh screen with an optional global table. */
static size_t make_gif(unsigned char *buf, uint16_t sw, uint16_t sh, const unsigned char *gct,
                       unsigned gct_bits, const gif_frame *frames, int nframes)
{
    unsigned char *p = buf;
    memcpy(p, "GIF89a", 6), p += 6;
    *p++ = (unsigned char)sw, *p++ = (unsigned char)(sw >> 8);
    *p++ = (unsigned char)sh, *p++ = (unsigned char)(sh >> 8);
    *p++ = gct ? (unsigned char)(0x80 | (gct_bits - 1)) : 0, *p++ = 0, *p++ = 0;
    if (gct) memcpy(p, gct, 3u << gct_bits), p += 3u << gct_bits;
    for (int i = 0; i < nframes; i++) {
        const gif_frame *f = &frames[i];
        if (f->transparent >= 0) {
            const unsigned char gce[8] = {0x21, 0xF9, 4, 1, 0, 0, (unsigned char)f->transparent, 0};
            memcpy(p, gce, sizeof gce), p += sizeof gce;
        }
        *p++ = ',';
        const uint16_t d[4] = {f->x, f->y, f->w, f->h};
        for (int k = 0; k < 4; k++) *p++ = (unsigned char)d[k], *p++ = (unsigned char)(d[k] >> 8);
        *p++ = (unsigned char)((f->interlace ? 0x40 : 0) | (f->lct ? 0x80 | (f->lct_bits - 1) : 0));
        if (f->lct) memcpy(p, f->lct, 3u << f->lct_bits), p += 3u << f->lct_bits;
        *p++ = 8; /* minimum code size */
        gif_bits b = {p, p + 1, 0, 0};
        *p = 0;
        gif_put_code(&b, GIF_LZW_CLEAR);
        for (uint32_t n = 0, run = 0; n < f->h; n++) {
            const unsigned char *row = f->idx + (size_t)gif_file_row(f, n) * f->w;
            for (uint32_t x = 0; x < f->w; x++, run++) {
                if (run == GIF_LZW_RUN) gif_put_code(&b, GIF_LZW_CLEAR), run = 0;
                gif_put_code(&b, row[x]);
            }
        }
        gif_put_code(&b, GIF_LZW_END);
        if (b.nacc) gif_put_byte(&b, (unsigned char)b.acc);
        p = b.end;
        *p++ = 0; /* the data's terminator */
    }
    *p++ = ';';
    ck_assert_uint_le((size_t)(p - buf), GIF_TEST_MAX);
    return (size_t)(p - buf);
}

/* BT.601 in libjpeg's fixed point, written out here apart from the code under test. */
static uint8_t rgb_gray(const unsigned char *rgb)
{
    return (uint8_t)((19595u * rgb[0] + 38470u * rgb[1] + 7471u * rgb[2] + 32768u) >> 16);
}

/* The first frame placed on the screen, transparency, local and global tables, no table,
 * indices past a short table, interlacing, a frame past the screen, the frame count,
 * truncation and the pixel limit. */
START_TEST(test_gif_frames)
{
    static unsigned char gct[3 * 16], lct[3 * 16], idx[40 * 11];
    for (int i = 0; i < 16; i++) {
        gct[3 * i] = (unsigned char)(i * 16), gct[3 * i + 1] = (unsigned char)(255 - i * 7);
        gct[3 * i + 2] = (unsigned char)(i * i);
        lct[3 * i] = (unsigned char)(i * 5), lct[3 * i + 1] = (unsigned char)(i * 3);
        lct[3 * i + 2] = (unsigned char)(250 - i);
    }
    unsigned char file[GIF_TEST_MAX];
    gs_image_info info;
    const char *path = in_scratch("f.gif");

    /* Interlaced, 40 x 11, row y holding y * 20 + x, no table: gray = index, and the rows
     * come back in picture order. */
    for (uint32_t y = 0; y < 11; y++)
        for (uint32_t x = 0; x < 40; x++) idx[y * 40 + x] = (unsigned char)(y * 20 + x);
    gif_frame f = {0, 0, 40, 11, 1, NULL, 0, -1, idx};
    write_bytes(path, file, make_gif(file, 40, 11, NULL, 0, &f, 1));
    uint8_t *g = read_image(path, &info, 3);
    ck_assert_uint_eq(info.width, 40);
    ck_assert_uint_eq(info.height, 11);
    ck_assert_mem_eq(g, idx, sizeof idx);
    ck_assert_int_eq(info.was_color, 0);
    ck_assert_uint_eq(info.pages, 1);
    free(g);

    /* A 5 x 3 frame at (2, 1) on a 9 x 6 screen, indices < 16, global table: outside the
     * frame index 0's colour; with index 7 transparent, index 7's (alpha: the fill is it). */
    for (int i = 0; i < 15; i++) idx[i] = (unsigned char)(i + 1);
    for (int transparent = -1; transparent <= 7; transparent += 8) {
        f = (gif_frame){2, 1, 5, 3, 0, NULL, 0, transparent, idx};
        write_bytes(path, file, make_gif(file, 9, 6, gct, 4, &f, 1));
        g = read_image(path, &info, 4);
        ck_assert_uint_eq(info.width, 9);
        ck_assert_uint_eq(info.height, 6);
        ck_assert_int_eq(info.was_color, 1);
        ck_assert_int_eq(info.had_alpha, transparent >= 0);
        const uint8_t fill = rgb_gray(gct + 3 * (transparent >= 0 ? transparent : 0));
        for (uint32_t y = 0; y < 6; y++)
            for (uint32_t x = 0; x < 9; x++) {
                const int in = x >= 2 && x < 7 && y >= 1 && y < 4;
                const uint8_t want = in ? rgb_gray(gct + 3 * idx[(y - 1) * 5 + (x - 2)]) : fill;
                ck_assert_msg(g[y * 9 + x] == want, "transparent %d, (%u, %u): %u, want %u",
                              transparent, x, y, g[y * 9 + x], want);
            }
        free(g);
    }

    /* The local table beats the global one; an index past a 2-entry table is its own gray;
     * a frame reaching past the screen grows it; a second frame is counted. */
    idx[0] = 1, idx[1] = 200, idx[2] = 0, idx[3] = 2;
    gif_frame two[2] = {{1, 1, 2, 2, 0, lct, 1, -1, idx}, {0, 0, 1, 1, 0, NULL, 0, -1, idx}};
    write_bytes(path, file, make_gif(file, 2, 2, gct, 4, two, 2));
    g = read_image(path, &info, 1);
    ck_assert_uint_eq(info.width, 3);
    ck_assert_uint_eq(info.height, 3);
    ck_assert_uint_eq(info.pages, 2);
    const uint8_t l0 = rgb_gray(lct), l1 = rgb_gray(lct + 3);
    const uint8_t want3[9] = {l0, l0, l0, l0, l1, 200, l0, l0, 2};
    ck_assert_mem_eq(g, want3, sizeof want3);
    free(g);

    /* The same file without its trailer and its data's terminator is whole; cut inside the
     * pixel data it is truncated; over the pixel limit of the grown screen it is refused. */
    size_t n = make_gif(file, 2, 2, gct, 4, two, 1);
    write_bytes(path, file, n - 2);
    g = read_image(path, &info, 1);
    ck_assert_mem_eq(g, want3, sizeof want3);
    free(g);
    char err[ERR_SIZE] = "";
    write_bytes(path, file, n - 4);
    ck_assert_int_eq(open_status(path, DEFAULT_MAX_PIXELS, err), GS_ERR_FORMAT);
    ck_assert_msg(strstr(err, "truncated GIF") != NULL, "message: %s", err);
    write_bytes(path, file, n);
    ck_assert_int_eq(open_status(path, 8, err), GS_ERR_TOO_LARGE);
    ck_assert_int_eq(open_status(path, 9, err), GS_OK);
}
END_TEST

START_TEST(test_stdin_input)
{
    /* Standard input is read into memory: PNG goes through libpng's read callback on it,
     * BMP through stb_image's memory API, PGM through the Netpbm parser. */
    const uint32_t w = 5, h = 3;
    uint8_t data[15];
    fill_pattern(data, w, h, 8);
    const struct { gs_out_format fmt; const char *name, *format; } cases[] = {
        {GS_OUT_PNG, "in.png", "PNG"}, {GS_OUT_BMP, "in.bmp", "BMP"}, {GS_OUT_PGM, "in.pgm", "PGM"}};
    for (int c = 0; c < 3; c++) {
        const char *path = in_scratch(cases[c].name);
        write_image(path, cases[c].fmt, w, h, 8, data);

        int saved = dup(STDIN_FILENO);
        ck_assert_int_ge(saved, 0);
        int fd = open(path, O_RDONLY);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(dup2(fd, STDIN_FILENO), 0);
        close(fd);
        gs_image_info info;
        char err[ERR_SIZE] = "";
        gs_reader *reader = NULL;
        gs_status rc = gs_reader_open("-", DEFAULT_MAX_PIXELS, &reader, &info, err, sizeof err);
        ck_assert_int_ge(dup2(saved, STDIN_FILENO), 0);
        close(saved);
        ck_assert_msg(rc == GS_OK, "stdin %s: %s", cases[c].format, err);
        ck_assert_str_eq(info.format, cases[c].format);
        uint8_t back[15];
        ck_assert_int_eq(gs_reader_read_rows(reader, back, w, h, err, sizeof err), GS_OK);
        ck_assert_mem_eq(back, data, sizeof data);
        /* Asking past the last row is refused. */
        ck_assert_int_eq(gs_reader_read_rows(reader, back, w, 1, err, sizeof err), GS_ERR_USAGE);
        gs_reader_close(reader);
    }
}
END_TEST

START_TEST(test_stdout_output)
{
    const uint32_t w = 6, h = 4;
    uint16_t data[24];
    fill_pattern(data, w, h, 16);
    const char *path = in_scratch("stdout.png");
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    ck_assert_int_ge(saved, 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
    close(fd);
    char err[ERR_SIZE] = "";
    gs_writer *writer = NULL;
    gs_status rc = gs_writer_open("-", GS_OUT_PNG, w, h, 16, NULL, &writer, err, sizeof err);
    if (rc == GS_OK) rc = gs_writer_write_rows(writer, data, w * 2, h, err, sizeof err);
    if (rc == GS_OK) rc = gs_writer_commit(writer, err, sizeof err);
    else gs_writer_abort(writer);
    fflush(stdout);
    ck_assert_int_ge(dup2(saved, STDOUT_FILENO), 0);
    close(saved);
    ck_assert_msg(rc == GS_OK, "stdout: %s", err);
    ck_assert_int_eq(count_entries(scratch), 1); /* no temporary file for a stream */

    gs_image_info info;
    uint16_t *back = read_image(path, &info, 2);
    ck_assert_uint_eq(info.bits, 16);
    ck_assert_mem_eq(back, data, sizeof data);
    free(back);
}
END_TEST

START_TEST(test_row_count_and_stride_checks)
{
    char err[ERR_SIZE] = "";
    uint16_t px[4 * 3] = {0};
    const char *path = in_scratch("s.png");
    gs_writer *writer = NULL;
    ck_assert_int_eq(gs_writer_open(path, GS_OUT_PNG, 4, 3, 16, NULL, &writer, err, sizeof err), GS_OK);
    /* A stride shorter than a row (4 samples = 8 bytes) would overlap rows. */
    ck_assert_int_eq(gs_writer_write_rows(writer, px, 7, 2, err, sizeof err), GS_ERR_USAGE);
    ck_assert_int_eq(gs_writer_write_rows(writer, px, 8, 3, err, sizeof err), GS_OK);
    ck_assert_int_eq(gs_writer_write_rows(writer, px, 8, 1, err, sizeof err), GS_ERR_USAGE);
    ck_assert_int_eq(gs_writer_commit(writer, err, sizeof err), GS_OK);

    gs_image_info info;
    gs_reader *reader = NULL;
    ck_assert_int_eq(gs_reader_open(path, DEFAULT_MAX_PIXELS, &reader, &info, err, sizeof err), GS_OK);
    ck_assert_int_eq(gs_reader_read_rows(reader, px, 7, 2, err, sizeof err), GS_ERR_USAGE);
    ck_assert_int_eq(gs_reader_read_rows(reader, px, 8, 4, err, sizeof err), GS_ERR_USAGE);
    gs_reader_close(reader);
}
END_TEST

START_TEST(test_out_format_from_path)
{
    char err[ERR_SIZE] = "";
    gs_out_format f = GS_OUT_NPY;
    const struct { const char *path; gs_out_format want; } ok[] = {
        {"-", GS_OUT_PNG}, {"a.png", GS_OUT_PNG}, {"dir.d/B.PNG", GS_OUT_PNG},
        {"x.pgm", GS_OUT_PGM}, {"x.Bmp", GS_OUT_BMP}, {"x.tga", GS_OUT_TGA},
        {"x.jpg", GS_OUT_JPG}, {"x.jpeg", GS_OUT_JPG}, {"x.JPEG", GS_OUT_JPG},
        {"out/sums.npy", GS_OUT_NPY}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        f = (gs_out_format)-1;
        ck_assert_msg(gs_out_format_from_path(ok[i].path, &f, err, sizeof err) == GS_OK, "%s: %s", ok[i].path, err);
        ck_assert_msg(f == ok[i].want, "%s: got %d", ok[i].path, (int)f);
    }
    ck_assert_int_eq(gs_out_format_from_path("x.xyz", &f, err, sizeof err), GS_ERR_USAGE);
    ck_assert_msg(strstr(err, ".xyz") && strstr(err, ".png") && strstr(err, ".npy"), "message: %s", err);
    ck_assert_int_eq(gs_out_format_from_path("noext", &f, err, sizeof err), GS_ERR_USAGE);
    ck_assert_int_eq(gs_out_format_from_path("a.png/noext", &f, err, sizeof err), GS_ERR_USAGE);
    ck_assert_int_eq(gs_out_format_from_path("dir/.png", &f, err, sizeof err), GS_ERR_USAGE);

    ck_assert_str_eq(gs_out_format_name(GS_OUT_PNG), "PNG");
    ck_assert_str_eq(gs_out_format_name(GS_OUT_JPG), "JPEG");
    ck_assert_str_eq(gs_out_format_name(GS_OUT_NPY), "NPY");
    ck_assert_str_eq(gs_out_format_name((gs_out_format)99), "unknown");
}
END_TEST

START_TEST(test_writer_abort_leaves_nothing)
{
    char err[ERR_SIZE] = "";
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", in_scratch("out")); /* in_scratch's buffers get reused */
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    const struct { gs_out_format fmt; const char *name; uint32_t bits; } cases[] = {
        {GS_OUT_PNG, "out/a.png", 16}, {GS_OUT_PGM, "out/a.pgm", 8}, {GS_OUT_BMP, "out/a.bmp", 8},
        {GS_OUT_TGA, "out/a.tga", 8}, {GS_OUT_JPG, "out/a.jpg", 8}, {GS_OUT_NPY, "out/a.npy", 32},
        {GS_OUT_TIF, "out/a.tif", 64}};
    uint64_t row[32] = {0}; /* room for 3 rows of 8 samples at a 64-byte stride */
    const size_t stride = 64;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_writer *writer = NULL;
        ck_assert_int_eq(gs_writer_open(in_scratch(cases[i].name), cases[i].fmt, 8, 4, cases[i].bits, NULL,
                                        &writer, err, sizeof err), GS_OK);
        ck_assert_int_eq(count_entries(dir), 1); /* the temporary file exists meanwhile */
        ck_assert_int_eq(gs_writer_write_rows(writer, row, stride, 2, err, sizeof err), GS_OK);
        gs_writer_abort(writer);
        ck_assert_msg(count_entries(dir) == 0, "%s left a file", cases[i].name);
    }

    /* A commit that fails (rows missing) also leaves nothing, and an existing output
     * stays as it was. */
    const char *keep = in_scratch("out/keep.png");
    write_bytes(keep, "old", 3);
    gs_writer *writer = NULL;
    ck_assert_int_eq(gs_writer_open(keep, GS_OUT_PNG, 8, 4, 8, NULL, &writer, err, sizeof err), GS_OK);
    ck_assert_int_eq(gs_writer_write_rows(writer, row, stride, 3, err, sizeof err), GS_OK);
    ck_assert_int_ne(gs_writer_commit(writer, err, sizeof err), GS_OK);
    ck_assert_int_eq(count_entries(dir), 1);
    size_t len;
    unsigned char *content = read_bytes(keep, &len);
    ck_assert_uint_eq(len, 3);
    ck_assert_mem_eq(content, "old", 3);
    free(content);

    gs_writer_abort(NULL); /* documented no-op */
}
END_TEST

START_TEST(test_writer_bad_targets)
{
    char err[ERR_SIZE] = "";
    gs_writer *writer = (gs_writer *)&writer;
    ck_assert_int_eq(gs_writer_open(in_scratch("nope/sub/out.png"), GS_OUT_PNG, 4, 4, 8, NULL, &writer, err, sizeof err),
                     GS_ERR_IO);
    ck_assert_ptr_null(writer);
    ck_assert_msg(strstr(err, strerror(ENOENT)) != NULL, "message: %s", err);

    ck_assert_int_eq(mkdir(in_scratch("d.png"), 0755), 0);
    ck_assert_int_eq(gs_writer_open(in_scratch("d.png"), GS_OUT_PNG, 4, 4, 8, NULL, &writer, err, sizeof err), GS_ERR_IO);
    ck_assert_ptr_null(writer);

    if (geteuid() != 0) { /* root writes anywhere */
        ck_assert_int_eq(mkdir(in_scratch("ro"), 0555), 0);
        ck_assert_int_eq(gs_writer_open(in_scratch("ro/out.png"), GS_OUT_PNG, 4, 4, 8, NULL, &writer, err, sizeof err),
                         GS_ERR_IO);
        ck_assert_msg(strstr(err, strerror(EACCES)) != NULL, "message: %s", err);
    }
    ck_assert_int_eq(count_entries(scratch), geteuid() != 0 ? 2 : 1);
}
END_TEST

START_TEST(test_writer_refuses_16bit_for_8bit_formats)
{
    char err[ERR_SIZE] = "";
    const struct { gs_out_format fmt; const char *name; } cases[] = {
        {GS_OUT_JPG, "a.jpg"}, {GS_OUT_BMP, "a.bmp"}, {GS_OUT_TGA, "a.tga"}};
    for (int i = 0; i < 3; i++) {
        gs_writer *writer = (gs_writer *)&writer;
        ck_assert_int_eq(gs_writer_open(in_scratch(cases[i].name), cases[i].fmt, 4, 4, 16, NULL, &writer,
                                        err, sizeof err), GS_ERR_FORMAT);
        ck_assert_ptr_null(writer);
        ck_assert_msg(strstr(err, "--depth 8") != NULL, "message: %s", err);
    }
    ck_assert_int_eq(count_entries(scratch), 0);
}
END_TEST

START_TEST(test_npy_header)
{
    const uint32_t h = 3, w = 5;
    const struct { uint32_t bits; const char *descr; } cases[] = {{32, "<u4"}, {64, "<u8"}, {8, "|u1"}, {16, "<u2"}};
    for (int c = 0; c < 4; c++) {
        unsigned bytes = cases[c].bits / 8;
        unsigned char data[3 * 5 * 8];
        for (uint32_t i = 0; i < h * w; i++) {
            uint64_t v = 0x0102030405060708ull * (i + 1);
            switch (bytes) {
            case 1: data[i] = (uint8_t)v; break;
            case 2: ((uint16_t *)data)[i] = (uint16_t)v; break;
            case 4: ((uint32_t *)data)[i] = (uint32_t)v; break;
            default: ((uint64_t *)data)[i] = v; break;
            }
        }
        const char *path = in_scratch("sums.npy");
        write_image(path, GS_OUT_NPY, w, h, cases[c].bits, data);
        size_t len;
        unsigned char *f = read_bytes(path, &len);
        ck_assert_mem_eq(f, "\x93NUMPY", 6);
        ck_assert_int_eq(f[6], 1);
        ck_assert_int_eq(f[7], 0);
        size_t hlen = f[8] | (size_t)f[9] << 8;
        size_t total = 10 + hlen;
        ck_assert_uint_eq(total % 64, 0);
        ck_assert_uint_eq(len, total + (size_t)h * w * bytes);
        char want[128];
        int n = snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': (3, 5), }",
                         cases[c].descr);
        ck_assert_mem_eq(f + 10, want, (size_t)n);
        for (size_t i = 10 + (size_t)n; i < total - 1; i++) ck_assert_int_eq(f[i], ' ');
        ck_assert_int_eq(f[total - 1], '\n');
        /* Data little-endian, row-major. */
        for (uint32_t i = 0; i < h * w; i++) {
            uint64_t v = 0x0102030405060708ull * (i + 1), got = 0;
            for (unsigned b = 0; b < bytes; b++) got |= (uint64_t)f[total + i * bytes + b] << (8 * b);
            uint64_t mask = bytes == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * bytes)) - 1;
            ck_assert_uint_eq(got, v & mask);
        }
        free(f);
    }
}
END_TEST

START_TEST(test_output_permissions)
{
    mode_t old = umask(027);
    uint8_t px[4] = {1, 2, 3, 4};
    const char *path = in_scratch("perm.pgm");
    write_image(path, GS_OUT_PGM, 2, 2, 8, px);
    umask(old);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0640);
}
END_TEST

START_TEST(test_png_wider_than_libpng_default)
{
    /* libpng refuses widths over 10^6 unless the limits are raised, on read and write. */
    const uint32_t w = 1000001;
    uint8_t *row = malloc(w);
    ck_assert_ptr_nonnull(row);
    for (uint32_t x = 0; x < w; x++) row[x] = (uint8_t)(x * 7);
    const char *path = in_scratch("wide.png");
    write_image(path, GS_OUT_PNG, w, 1, 8, row);
    gs_image_info info;
    uint8_t *back = read_image(path, &info, 1);
    ck_assert_uint_eq(info.width, w);
    ck_assert_mem_eq(back, row, w);
    free(back);
    free(row);
}
END_TEST

/* ---- background fdatasync of a growing output ---- */

/* A pipe cannot be synced (EINVAL): that error comes back from end, once, and a second end
 * has nothing to report; asks while a sync runs do not block or pile up. */
START_TEST(test_background_sync_reports_its_error)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    gs_background_sync *s = NULL;
    for (int i = 0; i < 5; i++) gs_background_sync_ask(&s, fds[1]);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(gs_background_sync_end(&s), EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(gs_background_sync_end(&s), 0);
    close(fds[0]);
    close(fds[1]);

    FILE *f = fopen(in_scratch("synced"), "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs("bytes", f) >= 0, 1);
    ck_assert_int_eq(fflush(f), 0);
    gs_background_sync_ask(&s, fileno(f));
    gs_background_sync_ask(&s, fileno(f));
    ck_assert_int_eq(gs_background_sync_end(&s), 0);
    fclose(f);
}
END_TEST

/* An output past the background step (32 MiB) is synced as it grows, and still commits
 * whole; a small one leaves its sync to commit alone. */
START_TEST(test_out_file_syncs_large_outputs_as_they_grow)
{
    enum { CHUNK = 1 << 20 };
    unsigned char *chunk = malloc(CHUNK);
    ck_assert_ptr_nonnull(chunk);
    char err[ERR_SIZE];
    for (int big = 0; big <= 1; big++) {
        const int chunks = big ? 40 : 4;
        const char *path = in_scratch(big ? "big.bin" : "small.bin");
        gs_out_file f;
        ck_assert_int_eq(gs_out_file_open(&f, path, err, sizeof err), GS_OK);
        for (int i = 0; i < chunks; i++) {
            memset(chunk, i, CHUNK);
            ck_assert_int_eq(gs_out_file_put(&f, chunk, CHUNK, err, sizeof err), GS_OK);
        }
        if (big)
            ck_assert_msg(f.durable != NULL, "no background sync after %d MiB", chunks);
        else
            ck_assert_ptr_null(f.durable);
        ck_assert_int_eq(gs_out_file_commit(&f, err, sizeof err), GS_OK);
        ck_assert_ptr_null(f.durable);
        gs_out_file_discard(&f);

        FILE *in = fopen(path, "rb");
        ck_assert_ptr_nonnull(in);
        for (int i = 0; i < chunks; i++) {
            ck_assert_uint_eq(fread(chunk, 1, CHUNK, in), CHUNK);
            ck_assert_msg(chunk[0] == (unsigned char)i && chunk[CHUNK - 1] == (unsigned char)i,
                          "MiB %d of the committed file", i);
        }
        ck_assert_int_eq(fgetc(in), EOF);
        fclose(in);
    }
    free(chunk);
}
END_TEST

static Suite *image_io_suite(void)
{
    Suite *s = suite_create("image_io");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_roundtrip_png_pgm);
    tcase_add_test(tc, test_pgm_file_layout);
    tcase_add_test(tc, test_tiff_bigtiff_rule);
    tcase_add_test(tc, test_png_color_bt601_8bit);
    tcase_add_test(tc, test_png_color_bt601_16bit);
    tcase_add_test(tc, test_png_palette);
    tcase_add_test(tc, test_png_low_bit_gray);
    tcase_add_test(tc, test_png_interlaced_twin);
    tcase_add_test(tc, test_png_max_pixels);
    tcase_add_test(tc, test_max_pixels_product_wraps_32_bits);
    tcase_add_test(tc, test_png_palette_index_past_plte);
    tcase_add_test(tc, test_png_truncated_and_corrupt);
    tcase_add_test(tc, test_refuses_non_images);
    tcase_add_test(tc, test_pnm_reader);
    tcase_add_test(tc, test_stb_formats_roundtrip);
    tcase_add_test(tc, test_gif_alpha_only_when_used);
    tcase_add_test(tc, test_gif_frames);
    tcase_add_test(tc, test_stdin_input);
    tcase_add_test(tc, test_stdout_output);
    tcase_add_test(tc, test_row_count_and_stride_checks);
    tcase_add_test(tc, test_out_format_from_path);
    tcase_add_test(tc, test_writer_abort_leaves_nothing);
    tcase_add_test(tc, test_writer_bad_targets);
    tcase_add_test(tc, test_writer_refuses_16bit_for_8bit_formats);
    tcase_add_test(tc, test_npy_header);
    tcase_add_test(tc, test_output_permissions);
    tcase_add_test(tc, test_png_wider_than_libpng_default);
    tcase_add_test(tc, test_background_sync_reports_its_error);
    tcase_add_test(tc, test_out_file_syncs_large_outputs_as_they_grow);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (gs_test_make_dir(root, sizeof root, NULL, "gs_image_io_") != 0) {
        perror("test_image_io: cannot create a scratch directory");
        return EXIT_FAILURE;
    }
    SRunner *runner = srunner_create(image_io_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    /* files left behind fail the run: a suite cleans up after itself */
    const int left = gs_test_remove_tree(root) != 0;
    return failed == 0 && !left ? EXIT_SUCCESS : EXIT_FAILURE;
}
