/* libpng_write.c: writes one PNG with libpng from raw samples. */
/* The conformance test's libpng writer; the IDAT size is set through
 * png_set_compression_buffer_size. */

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libpng's own floor for its compression buffer (png_set_compression_buffer_size refuses
 * less: deflate could loop on a sync flush), so the smallest IDAT it writes. */
#define LIBPNG_MIN_IDAT 6
/* Palette entries and tRNS values are a fixed function of the index: the pixels are what
 * the comparison checks, any palette will do. */
#define PALETTE_RED_STEP 37
#define PALETTE_GREEN_STEP 101
#define PALETTE_BLUE_STEP 211
#define TRNS_ALPHA_STEP 53

static const char usage[] =
    "usage: libpng_write RAW OUT WIDTH HEIGHT COLOR DEPTH IDAT LEVEL FILTER ENTRIES TRNS\n"
    "  RAW: the samples, rows top to bottom, 16-bit ones big-endian; COLOR: PNG colour type\n"
    "  (0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA); IDAT: bytes an IDAT holds (0: the\n"
    "  whole stream in one, else at least 6, libpng's floor); LEVEL: zlib 0..9; FILTER: 0..4\n"
    "  one filter, 5 libpng's choice per row; ENTRIES: palette entries; TRNS: 1 adds a tRNS.\n";

static unsigned channels_of(int color)
{
    switch (color) {
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3;
    case PNG_COLOR_TYPE_RGBA: return 4;
    default: return 1;
    }
}

/* libpng's filter flags for 0..4, or every filter for 5. */
static int filter_flags(int filter)
{
    static const int one[] = {PNG_FILTER_NONE, PNG_FILTER_SUB, PNG_FILTER_UP, PNG_FILTER_AVG,
                              PNG_FILTER_PAETH};
    return filter >= 0 && filter < 5 ? one[filter] : PNG_ALL_FILTERS;
}

/* The header, rows and end through libpng (its longjmp lands here: nothing local changes
 * after setjmp); 0, or -1 with libpng's message printed. */
static int write_body(png_structp png, png_infop info, FILE *f, const unsigned char *raw,
                      png_uint_32 width, png_uint_32 height, int color, int depth, size_t idat,
                      int level, int filter, int entries, int trns)
{
    png_color palette[PNG_MAX_PALETTE_LENGTH];
    png_byte alpha[PNG_MAX_PALETTE_LENGTH];
    for (int i = 0; i < PNG_MAX_PALETTE_LENGTH; i++) {
        palette[i].red = (png_byte)(i * PALETTE_RED_STEP);
        palette[i].green = (png_byte)(i * PALETTE_GREEN_STEP);
        palette[i].blue = (png_byte)(i * PALETTE_BLUE_STEP);
        alpha[i] = (png_byte)(i * TRNS_ALPHA_STEP);
    }
    png_color_16 key = {0, 1, 2, 3, 4};
    const size_t row_bytes = (size_t)width * channels_of(color) * (size_t)(depth / 8);
    /* One IDAT for the whole stream: a buffer larger than anything deflate makes of it. */
    const size_t whole = row_bytes * height + height + (row_bytes * height >> 8) + 1024;
    if (setjmp(png_jmpbuf(png))) return -1;
    png_init_io(png, f);
    png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_set_IHDR(png, info, width, height, depth, color, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filter_flags(filter));
    png_set_compression_level(png, level);
    png_set_compression_buffer_size(png, idat ? idat : whole);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_PLTE(png, info, palette, entries);
    if (trns) png_set_tRNS(png, info, alpha, color == PNG_COLOR_TYPE_PALETTE ? entries : 0, &key);
    png_write_info(png, info);
    for (png_uint_32 y = 0; y < height; y++) png_write_row(png, raw + (size_t)y * row_bytes);
    png_write_end(png, NULL);
    return 0;
}

/* Write `raw` as a PNG at `path`; 0, or -1 with a message on stderr. */
static int write_png(const char *path, const unsigned char *raw, png_uint_32 width,
                     png_uint_32 height, int color, int depth, size_t idat, int level, int filter,
                     int entries, int trns)
{
    int rc = -1;
    png_structp png = NULL;
    png_infop info = NULL;
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return -1;
    }
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (png) info = png_create_info_struct(png);
    if (png && info)
        rc = write_body(png, info, f, raw, width, height, color, depth, idat, level, filter,
                        entries, trns);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0) rc = -1;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 12) {
        fputs(usage, stderr);
        return 2;
    }
    const png_uint_32 width = (png_uint_32)strtoul(argv[3], NULL, 10);
    const png_uint_32 height = (png_uint_32)strtoul(argv[4], NULL, 10);
    const int color = atoi(argv[5]), depth = atoi(argv[6]);
    const size_t idat = strtoul(argv[7], NULL, 10);
    const int level = atoi(argv[8]), filter = atoi(argv[9]), entries = atoi(argv[10]);
    const int trns = atoi(argv[11]);
    if (width == 0 || height == 0 || (depth != 8 && depth != 16) || (idat && idat < LIBPNG_MIN_IDAT) ||
        level < 0 || level > 9 || filter < 0 || filter > 5 || entries < 1 ||
        entries > PNG_MAX_PALETTE_LENGTH) {
        fputs(usage, stderr);
        return 2;
    }
    const size_t bytes = (size_t)width * height * channels_of(color) * (size_t)(depth / 8);
    unsigned char *raw = malloc(bytes);
    FILE *in = fopen(argv[1], "rb");
    int ok = raw && in && fread(raw, 1, bytes, in) == bytes;
    if (in) fclose(in);
    if (!ok) {
        fprintf(stderr, "libpng_write: cannot read %zu bytes of samples from %s\n", bytes, argv[1]);
        free(raw);
        return 1;
    }
    int rc = write_png(argv[2], raw, width, height, color, depth, idat, level, filter, entries, trns);
    free(raw);
    return rc == 0 ? 0 : 1;
}
