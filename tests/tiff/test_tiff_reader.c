/* test_tiff_reader.c: Check suite for the TIFF reader's blocks. */
/* TIFFs written here by libtiff (packed 1/2/4-bit gray, palettes, 16-bit planes, tiles,
 * subsampled YCbCr) are read any number of rows at a time with a loose stride, from a file
 * and from memory, and must equal one read of the whole image and, for YCbCr, libtiff's own
 * whole-image RGBA read. */

#include <check.h>
#include <tiffio.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_internal.h"

#define ERR_SIZE 256
#define MAX_PIXELS ((uint64_t)1 << 30) /* the CLI's default --max-pixels */
/* Extra bytes after each row the reader fills: rows must land at the stride, not packed. */
#define STRIDE_SLACK 14u
/* Bytes that must stay untouched after each row. */
#define SLACK_BYTE 0xA5u
/* How many rows each read asks for: odd counts across every block edge, and all but one. */
static const uint32_t row_counts[] = {1, 2, 3, 7, 16, 17};

typedef struct layout {
    const char *name;
    uint32_t width, height;
    uint16_t bits, spp, photometric, planar;
    uint32_t rows_per_strip; /* 0: tiles */
    uint32_t tile_w, tile_h;
    uint16_t sub_h, sub_v;   /* YCbCr subsampling */
} layout;

/* Sizes with no multiple of a byte's samples, a tile, a strip or a subsampling block. */
static const layout layouts[] = {
    {"gray1 tiles", 37, 29, 1, 1, PHOTOMETRIC_MINISBLACK, PLANARCONFIG_CONTIG, 0, 16, 16, 1, 1},
    {"gray2 MinIsWhite strips", 37, 29, 2, 1, PHOTOMETRIC_MINISWHITE, PLANARCONFIG_CONTIG, 7, 0, 0, 1, 1},
    {"gray4 strips", 37, 29, 4, 1, PHOTOMETRIC_MINISBLACK, PLANARCONFIG_CONTIG, 5, 0, 0, 1, 1},
    {"gray4 tiles", 37, 29, 4, 1, PHOTOMETRIC_MINISBLACK, PLANARCONFIG_CONTIG, 0, 32, 16, 1, 1},
    {"palette4 strips", 37, 29, 4, 1, PHOTOMETRIC_PALETTE, PLANARCONFIG_CONTIG, 6, 0, 0, 1, 1},
    {"palette8 tiles", 37, 29, 8, 1, PHOTOMETRIC_PALETTE, PLANARCONFIG_CONTIG, 0, 16, 32, 1, 1},
    {"palette16 strips", 37, 29, 16, 1, PHOTOMETRIC_PALETTE, PLANARCONFIG_CONTIG, 4, 0, 0, 1, 1},
    {"palette8+alpha strips", 37, 29, 8, 2, PHOTOMETRIC_PALETTE, PLANARCONFIG_CONTIG, 9, 0, 0, 1, 1},
    {"gray16 MinIsWhite tiles", 37, 29, 16, 1, PHOTOMETRIC_MINISWHITE, PLANARCONFIG_CONTIG, 0, 16, 16, 1, 1},
    {"rgb16 planes strips", 37, 29, 16, 3, PHOTOMETRIC_RGB, PLANARCONFIG_SEPARATE, 4, 0, 0, 1, 1},
    {"rgb8 planes tiles", 37, 29, 8, 3, PHOTOMETRIC_RGB, PLANARCONFIG_SEPARATE, 0, 16, 16, 1, 1},
    {"ycbcr 2x2 strips", 37, 29, 8, 3, PHOTOMETRIC_YCBCR, PLANARCONFIG_CONTIG, 4, 0, 0, 2, 2},
    {"ycbcr 4x2 strips", 37, 29, 8, 3, PHOTOMETRIC_YCBCR, PLANARCONFIG_CONTIG, 6, 0, 0, 4, 2},
    {"ycbcr 4x4 strips", 37, 29, 8, 3, PHOTOMETRIC_YCBCR, PLANARCONFIG_CONTIG, 8, 0, 0, 4, 4},
    {"ycbcr 2x1 tiles", 37, 29, 8, 3, PHOTOMETRIC_YCBCR, PLANARCONFIG_CONTIG, 0, 16, 16, 2, 1},
    {"ycbcr 2x2 tiles", 37, 29, 8, 3, PHOTOMETRIC_YCBCR, PLANARCONFIG_CONTIG, 0, 32, 16, 2, 2},
};
#define LAYOUTS (sizeof layouts / sizeof layouts[0])

/* xorshift32: the same bytes every run. */
static uint32_t next_random(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return *state = x;
}

static void fill_random(unsigned char *p, size_t n, uint32_t *state)
{
    for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)next_random(state);
}

/* Write `l` uncompressed to `path` with libtiff: every strip or tile random bytes (any bytes
 * are valid samples, indices or YCbCr blocks), a random colour map for palettes. */
static void write_layout(const layout *l, const char *path)
{
    uint32_t state = 0x9E3779B9u ^ l->width ^ (uint32_t)l->bits << 8 ^ (uint32_t)l->photometric << 16;
    TIFF *tif = TIFFOpen(path, "w");
    ck_assert_ptr_nonnull(tif);
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, l->width);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, l->height);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, l->bits);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, l->spp);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, l->photometric);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, l->planar);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
    if (l->spp == 2) {
        const uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    if (l->photometric == PHOTOMETRIC_YCBCR) TIFFSetField(tif, TIFFTAG_YCBCRSUBSAMPLING, l->sub_h, l->sub_v);
    uint16_t *cmap = NULL;
    if (l->photometric == PHOTOMETRIC_PALETTE) {
        const size_t n = (size_t)1 << l->bits;
        cmap = malloc(3 * n * sizeof *cmap);
        ck_assert_ptr_nonnull(cmap);
        fill_random((unsigned char *)cmap, 3 * n * sizeof *cmap, &state);
        TIFFSetField(tif, TIFFTAG_COLORMAP, cmap, cmap + n, cmap + 2 * n);
    }
    if (l->rows_per_strip) {
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, l->rows_per_strip);
    } else {
        TIFFSetField(tif, TIFFTAG_TILEWIDTH, l->tile_w);
        TIFFSetField(tif, TIFFTAG_TILELENGTH, l->tile_h);
    }
    const int tiled = l->rows_per_strip == 0;
    const uint32_t pieces = tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
    const tmsize_t size = tiled ? TIFFTileSize(tif) : TIFFStripSize(tif);
    ck_assert_int_gt(size, 0);
    unsigned char *buf = malloc((size_t)size);
    ck_assert_ptr_nonnull(buf);
    const uint32_t strips_a_plane = tiled ? 0 : (l->height + l->rows_per_strip - 1) / l->rows_per_strip;
    for (uint32_t i = 0; i < pieces; ++i) {
        fill_random(buf, (size_t)size, &state);
        if (tiled) {
            ck_assert_int_eq(TIFFWriteEncodedTile(tif, i, buf, size), size);
            continue;
        }
        const uint32_t s = i % strips_a_plane, rows = l->height - s * l->rows_per_strip;
        const tmsize_t n = TIFFVStripSize(tif, rows < l->rows_per_strip ? rows : l->rows_per_strip);
        ck_assert_int_eq(TIFFWriteEncodedStrip(tif, i, buf, n), n);
    }
    TIFFClose(tif);
    free(buf);
    free(cmap);
}

/* The whole file in memory, and a reader over it as fuzz/fuzz_decode.c makes one. */
static gs_reader *open_memory(const char *path, unsigned char **data)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    rewind(f);
    *data = malloc((size_t)size);
    ck_assert_ptr_nonnull(*data);
    ck_assert_uint_eq(fread(*data, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    gs_reader *reader = calloc(1, sizeof *reader);
    ck_assert_ptr_nonnull(reader);
    gs_source_from_memory(&reader->src, *data, (size_t)size);
    reader->head_len = (size_t)size < sizeof reader->head ? (size_t)size : sizeof reader->head;
    memcpy(reader->head, *data, reader->head_len);
    char err[ERR_SIZE];
    const gs_status rc = gs_read_tiff_open(reader, MAX_PIXELS, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "%s", err);
    return reader;
}

/* All rows of `reader`, `count` at a time, at a stride with slack that must stay as it was;
 * returned packed (row after row). */
static unsigned char *read_all(gs_reader *reader, const gs_image_info *info, uint32_t count, const char *what)
{
    const size_t row = (size_t)info->width * (info->bits / 8), stride = row + STRIDE_SLACK;
    unsigned char *rows = malloc(stride * count), *all = malloc(row * info->height);
    ck_assert(rows && all);
    char err[ERR_SIZE];
    for (uint32_t y = 0; y < info->height; y += count) {
        const uint32_t n = info->height - y < count ? info->height - y : count;
        memset(rows, SLACK_BYTE, stride * count);
        const gs_status rc = gs_reader_read_rows(reader, rows, stride, n, err, sizeof err);
        ck_assert_msg(rc == GS_OK, "%s, rows %u..%u: %s", what, y, y + n - 1, err);
        for (uint32_t i = 0; i < n; ++i) {
            memcpy(all + (size_t)(y + i) * row, rows + i * stride, row);
            for (size_t k = row; k < stride; ++k)
                ck_assert_msg(rows[i * stride + k] == SLACK_BYTE, "%s: byte %zu past row %u written", what,
                              k - row, y + i);
        }
    }
    free(rows);
    return all;
}

/* Every layout, read 1, 2, 3, 7, 16, 17 and height - 1 rows at a time, from the file and
 * from memory, gives the rows of one whole read. */
START_TEST(test_rows_any_count)
{
    const layout *l = &layouts[_i];
    char path[] = "/tmp/gsmooth-tiff-reader-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_layout(l, path);

    gs_reader *reader = NULL;
    gs_image_info info;
    char err[ERR_SIZE];
    gs_status rc = gs_reader_open(path, MAX_PIXELS, &reader, &info, err, sizeof err);
    ck_assert_msg(rc == GS_OK, "%s: %s", l->name, err);
    ck_assert_uint_eq(info.width, l->width);
    ck_assert_uint_eq(info.height, l->height);
    ck_assert_uint_eq(info.bits, l->photometric == PHOTOMETRIC_YCBCR || l->bits < 16 ? 8u : 16u);
    const size_t bytes = (size_t)info.width * (info.bits / 8) * info.height;
    unsigned char *whole = read_all(reader, &info, info.height, l->name);
    gs_reader_close(reader);

    const size_t counts = sizeof row_counts / sizeof row_counts[0];
    for (size_t c = 0; c <= counts; ++c) {
        const uint32_t count = c < counts ? row_counts[c] : info.height - 1;
        for (int memory = 0; memory < 2; ++memory) {
            unsigned char *data = NULL;
            if (memory) {
                reader = open_memory(path, &data);
            } else {
                rc = gs_reader_open(path, MAX_PIXELS, &reader, &info, err, sizeof err);
                ck_assert_msg(rc == GS_OK, "%s: %s", l->name, err);
            }
            unsigned char *got = read_all(reader, &info, count, l->name);
            ck_assert_msg(memcmp(got, whole, bytes) == 0, "%s: %u rows a read from %s differ from one whole read",
                          l->name, count, memory ? "memory" : "the file");
            free(got);
            gs_reader_close(reader);
            free(data);
        }
    }
    free(whole);
    unlink(path);
}
END_TEST

/* YCbCr (subsampled, strips and tiles) read a block at a time through the RGBA interface
 * equals libtiff's own read of the whole image (TIFFReadRGBAImageOriented, top row first,
 * the file memory-mapped), through the BT.601 luma. */
START_TEST(test_ycbcr_equals_whole_rgba)
{
    const layout *l = &layouts[_i];
    if (l->photometric != PHOTOMETRIC_YCBCR) return;
    char path[] = "/tmp/gsmooth-tiff-reader-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_layout(l, path);

    TIFF *tif = TIFFOpen(path, "r");
    ck_assert_ptr_nonnull(tif);
    uint32_t *raster = malloc((size_t)l->width * l->height * sizeof *raster);
    ck_assert_ptr_nonnull(raster);
    ck_assert(TIFFReadRGBAImageOriented(tif, l->width, l->height, raster, ORIENTATION_TOPLEFT, 1));
    TIFFClose(tif);

    gs_reader *reader = NULL;
    gs_image_info info;
    char err[ERR_SIZE];
    ck_assert_msg(gs_reader_open(path, MAX_PIXELS, &reader, &info, err, sizeof err) == GS_OK, "%s", err);
    unsigned char *got = read_all(reader, &info, 3, l->name);
    for (uint32_t y = 0; y < l->height; ++y)
        for (uint32_t x = 0; x < l->width; ++x) {
            const uint32_t p = raster[(size_t)y * l->width + x];
            const uint32_t want = gs_luma(TIFFGetR(p), TIFFGetG(p), TIFFGetB(p));
            ck_assert_msg(got[(size_t)y * l->width + x] == want, "%s: row %u column %u: %u, libtiff's %u",
                          l->name, y, x, got[(size_t)y * l->width + x], want);
        }
    free(got);
    free(raster);
    gs_reader_close(reader);
    unlink(path);
}
END_TEST

static void quiet(const char *module, const char *fmt, va_list ap)
{
    (void)module, (void)fmt, (void)ap; /* libtiff's global handlers: the writer's warnings */
}

int main(void)
{
    TIFFSetWarningHandler(quiet);
    Suite *s = suite_create("tiff_reader");
    TCase *tc = tcase_create("blocks");
    tcase_add_loop_test(tc, test_rows_any_count, 0, (int)LAYOUTS);
    tcase_add_loop_test(tc, test_ycbcr_equals_whole_rgba, 0, (int)LAYOUTS);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
