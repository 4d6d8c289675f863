/* read_bmp.c: the reader for Windows and OS/2 bitmaps (BMP). */
/* Core/OS/2 v1, OS/2 v2 and info v3 to v5 headers; 1/2/4/8-bit palettes, RLE4 and RLE8,
 * 16/24/32-bit pixels with or without bit fields; top-down rows are streamed, bottom-up and
 * run-length images decoded whole. */

#include "bmp_tga_common.h"
#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * stb_image 2.27 kept a BMP's palette in an uninitialised stack array (an index past a
 * short palette gave earlier memory as pixels), sized an OS/2 v1 palette 4 entries short,
 * refused RLE, top-down files and 24-bit files with a palette, and widened 5/6-bit channels
 * by another rule than the field's reference. So BMP is read here. Pillow is the reference
 * (BmpImagePlugin.py, Unpack.c): every rule below that a file can tell apart says which
 * of Pillow's it follows.
 *
 * Pixels come out 8-bit gray: palettes through a gray table (one BT.601 luma per entry),
 * 16/24/32-bit pixels as 8-bit RGB through gs_row_to_gray. Memory: a top-down
 * uncompressed image streams one chunk of a row at a time; a bottom-up one (the usual kind)
 * or a run-length one is held whole, one byte a pixel, bounded by --max-pixels, because
 * its first row is the file's last (a pipe cannot seek).
 */

/* ---- the file's layout ---- */

#define BMP_FILE_HEADER_BYTES 14 /* "BM", file size, two reserved words, pixel offset */
#define BMP_PIXEL_OFFSET_AT 10   /* the pixel data's offset in the file header */
/* Header sizes (each header starts with its size, a 32-bit field). */
#define BMP_CORE_HEADER_BYTES 12 /* BITMAPCOREHEADER, the OS/2 v1 header: 16-bit sizes */
#define BMP_OS2V2_MIN_BYTES 16   /* an OS/2 v2 header stops anywhere from 16 to 64 bytes */
#define BMP_OS2V2_MAX_BYTES 64
#define BMP_INFO_HEADER_BYTES 40 /* BITMAPINFOHEADER (v3) */
#define BMP_V2_HEADER_BYTES 52   /* ... with the red, green and blue masks */
#define BMP_V3_HEADER_BYTES 56   /* ... and the alpha mask */
#define BMP_V4_HEADER_BYTES 108
#define BMP_V5_HEADER_BYTES 124
#define BMP_HEADER_MAX BMP_V5_HEADER_BYTES
/* Fields, as offsets from the info header's first byte. */
#define BMP_CORE_WIDTH_AT 4 /* OS/2 v1: unsigned 16-bit width, height, planes, bits */
#define BMP_CORE_HEIGHT_AT 6
#define BMP_CORE_BITS_AT 10
#define BMP_WIDTH_AT 4 /* the others: signed 32-bit width and height (negative: top-down) */
#define BMP_HEIGHT_AT 8
#define BMP_BITS_AT 14
#define BMP_COMPRESSION_AT 16
#define BMP_COLORS_USED_AT 32
#define BMP_MASKS_AT 40 /* red, green, blue, alpha masks in v2 and later headers */
#define BMP_MASK_BYTES 4

/* Compression values (BITMAPINFOHEADER's biCompression). OS/2 v2 gives 3 and 4 other
 * meanings: Huffman 1D and RLE24. */
#define BMP_RGB 0u
#define BMP_RLE8 1u
#define BMP_RLE4 2u
#define BMP_BITFIELDS 3u
#define BMP_JPEG 4u
#define BMP_PNG 5u
#define BMP_ALPHABITFIELDS 6u

/* Palette entries: blue, green, red, then a reserved byte except in OS/2 v1 headers. */
#define BMP_CORE_ENTRY_BYTES 3
#define BMP_ENTRY_BYTES 4
/* Pillow's bound on a palette's stated size ("Unsupported BMP Palette size"): a larger
 * count is no palette any writer made, so the header is refused as lying. */
#define BMP_COLORS_MAX 65536u
/* BI_RGB's layouts, as masks: 16-bit pixels are x1r5g5b5, 24/32-bit ones 8 bits each
 * (32-bit: the top byte unused). */
#define BMP_RGB555_RED 0x7C00u
#define BMP_RGB555_GREEN 0x03E0u
#define BMP_RGB555_BLUE 0x001Fu
#define BMP_RGB888_RED 0xFF0000u
#define BMP_RGB888_GREEN 0x00FF00u
#define BMP_RGB888_BLUE 0x0000FFu
/* Rows are padded to a multiple of 4 bytes. */
#define BMP_ROW_ALIGN_BITS 32u

/* Pixels decoded per step of a row: bounds the working memory whatever the width; a
 * multiple of 8, so a step of 1/2/4-bit pixels starts on a byte. */
#define BMP_CHUNK_PIXELS 4096u
_Static_assert(BMP_CHUNK_PIXELS % 8 == 0, "a chunk of packed pixels must end on a byte");
#define BMP_MAX_PIXEL_BYTES 4

/* Run-length escapes: a zero count, then one of these. */
#define BMP_RLE_END_OF_LINE 0
#define BMP_RLE_END_OF_BITMAP 1
#define BMP_RLE_DELTA 2
/* RLE4 packs two pixels a byte, the first in the high nibble. */
#define BMP_NIBBLE_BITS 4
#define BMP_NIBBLE_MASK 0x0Fu

enum { BMP_RED, BMP_GREEN, BMP_BLUE, BMP_ALPHA, BMP_CHANNELS };

typedef struct bmp_channel {
    uint32_t mask;    /* the channel's bits in a pixel; 0: the channel is absent */
    unsigned shift;   /* the mask's lowest set bit */
    unsigned bits;    /* the mask's width */
    uint8_t to8[256]; /* the channel widened to 8 bits, when bits <= 8 */
} bmp_channel;

typedef struct bmp_state {
    uint32_t width, height;
    unsigned bpp;                  /* bits per pixel: 1, 2, 4, 8, 16, 24 or 32 */
    uint32_t compression;          /* BMP_RGB, BMP_RLE8, BMP_RLE4 or (bit fields) BMP_BITFIELDS */
    int top_down;                  /* the file's first row is the top one */
    bmp_channel ch[BMP_ALPHA];     /* red, green, blue of 16/24/32-bit pixels */
    uint8_t gray[GS_PALETTE_8BIT_ENTRIES]; /* palette images: each index's gray */
    size_t pad;                    /* bytes after each row's pixels, to the 4-byte boundary */
    unsigned char raw[BMP_CHUNK_PIXELS * BMP_MAX_PIXEL_BYTES]; /* one chunk as stored */
    uint8_t rgb[BMP_CHUNK_PIXELS * 3]; /* the same chunk as 8-bit RGB */
    uint8_t *image; /* decoded whole: gray rows, top first (uncompressed), or palette
                       indices in the file's row order (run-length); NULL when streaming */
} bmp_state;

static gs_status read_failed(gs_source *src, char *err, size_t err_size)
{
    return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(src->read_errno));
}

/* ---- pixels ---- */

static uint32_t channel_value(const bmp_channel *c, uint32_t pixel)
{
    if (!c->mask) return 0;
    uint32_t v = (pixel & c->mask) >> c->shift;
    return c->bits <= 8 ? c->to8[v] : gs_channel_to_8(v, c->bits);
}

/* `n` pixels stored at `raw` (starting on a byte) to gray at `out`. */
static void decode_pixels(bmp_state *bmp, const unsigned char *raw, uint32_t n, uint8_t *out)
{
    const unsigned bpp = bmp->bpp;
    if (bpp <= 8) {
        const unsigned per_byte = 8 / bpp, top = 8 - bpp, index_mask = (1u << bpp) - 1;
        for (uint32_t x = 0; x < n; x++) {
            unsigned index = raw[x / per_byte] >> (top - bpp * (x % per_byte)) & index_mask;
            out[x] = bmp->gray[index];
        }
        return;
    }
    const unsigned bytes = bpp / 8;
    for (uint32_t x = 0; x < n; x++) {
        const unsigned char *p = raw + (size_t)x * bytes;
        uint32_t pixel = p[0] | (uint32_t)p[1] << 8;
        if (bytes > 2) pixel |= (uint32_t)p[2] << 16;
        if (bytes > 3) pixel |= (uint32_t)p[3] << 24;
        for (unsigned c = 0; c < BMP_ALPHA; c++) bmp->rgb[3 * x + c] = (uint8_t)channel_value(&bmp->ch[c], pixel);
    }
    gs_row_to_gray(out, bmp->rgb, n, 3, 8);
}

/* The next row of an uncompressed image, `index` in the file's order, to gray at `out`:
 * the padding before it is skipped, none after it is needed (Pillow reads a file that
 * lacks its last row's padding, and so does this). */
static gs_status read_row(bmp_state *bmp, gs_source *src, uint32_t index, uint8_t *out,
                          char *err, size_t err_size)
{
    if (index > 0 && bmp->pad && gs_source_skip(src, bmp->pad) != bmp->pad) goto short_read;
    for (uint32_t x = 0; x < bmp->width; x += BMP_CHUNK_PIXELS) {
        const uint32_t n = bmp->width - x < BMP_CHUNK_PIXELS ? bmp->width - x : BMP_CHUNK_PIXELS;
        const size_t bytes = ((size_t)n * bmp->bpp + 7) / 8;
        if (gs_source_read(src, bmp->raw, bytes) != bytes) goto short_read;
        decode_pixels(bmp, bmp->raw, n, out + x);
    }
    return GS_OK;

short_read:
    if (src->read_errno) return read_failed(src, err, err_size);
    return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated BMP: the pixel data ends in row %u of %u",
                   index + 1, bmp->height);
}

/* A bottom-up uncompressed image, whole: the file's first row is the image's last. */
static gs_status read_bottom_up(bmp_state *bmp, gs_source *src, char *err, size_t err_size)
{
    for (uint32_t i = 0; i < bmp->height; i++) {
        uint8_t *out = bmp->image + (size_t)(bmp->height - 1 - i) * bmp->width;
        gs_status rc = read_row(bmp, src, i, out, err, err_size);
        if (rc != GS_OK) return rc;
    }
    return GS_OK;
}

/*
 * Run-length data (RLE8, RLE4), into bmp->image as palette indices in the file's row
 * order, by Pillow's rules (BmpRleDecoder, as of Pillow 12.2), which differ from a strict
 * reading of the format only where files break it:
 *   - pixels the data never sets (skipped by a delta, left by an end of line or an end of
 *     bitmap) are index 0, the palette's first colour: Pillow fills them with zeros;
 *   - an encoded run past the end of its row is cut at the row's end; an absolute run is
 *     not (it goes on into the next row), and x then counts on past the width, so encoded
 *     runs write nothing until an end of line or a delta puts x back in the row;
 *   - an end of line pads to the end of the row the data has reached;
 *   - an absolute run ends on a 16-bit boundary of the file (its offset from the file's
 *     first byte, as Pillow's tell());
 *   - the data may end at the image's last pixel without an end of bitmap.
 * Data that ends before the image does, without an end of bitmap, is truncated. An end of
 * bitmap before the last row is the format's own way to leave the rest unset (Pillow 12.2
 * refuses it as "not enough image data"; the format allows it; no corpus file has it).
 */
static gs_status read_rle(bmp_state *bmp, gs_source *src, uint64_t data_at, char *err,
                          size_t err_size)
{
    gs_status rc = GS_OK;
    gs_rle_input *in = malloc(sizeof *in);
    if (!in) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    gs_rle_input_init(in, src);

    const int rle4 = bmp->compression == BMP_RLE4;
    const uint64_t width = bmp->width, total = width * bmp->height;
    uint8_t *const image = bmp->image;
    uint64_t pos = 0; /* next pixel, counted in the file's row order */
    uint64_t x = 0;   /* Pillow's column: may pass the width after an absolute run */
    unsigned char pair[2], run[UINT8_MAX];

    while (pos < total) {
        if (gs_rle_input_take(in, pair, 2) != 2) goto short_data;
        const unsigned count = pair[0], value = pair[1];
        if (count) { /* encoded: `count` pixels of one index (RLE4: two alternating) */
            uint64_t n = x + count > width ? (x < width ? width - x : 0) : count;
            if (n > total - pos) n = total - pos;
            for (uint64_t i = 0; i < n; i++)
                image[pos + i] = (uint8_t)(rle4 ? (i % 2 ? value & BMP_NIBBLE_MASK : value >> BMP_NIBBLE_BITS) : value);
            pos += n;
            x += n;
            continue;
        }
        if (value == BMP_RLE_END_OF_LINE) {
            if (pos % width) pos += width - pos % width;
            x = 0;
        } else if (value == BMP_RLE_END_OF_BITMAP) {
            break;
        } else if (value == BMP_RLE_DELTA) {
            unsigned char d[2]; /* right, up: up moves on in the file's row order */
            if (gs_rle_input_take(in, d, 2) != 2) goto short_data;
            const uint64_t step = d[0] + (uint64_t)d[1] * width;
            pos = step > total - pos ? total : pos + step;
            x = pos % width;
        } else { /* absolute: `value` indices follow, RLE4 two to a byte */
            const uint64_t n = value < total - pos ? value : total - pos;
            const size_t bytes = rle4 ? (size_t)(n + 1) / 2 : (size_t)n;
            if (gs_rle_input_take(in, run, bytes) != bytes) goto short_data;
            for (uint64_t i = 0; i < n; i++)
                image[pos + i] = (uint8_t)(rle4 ? (i % 2 ? run[i / 2] & BMP_NIBBLE_MASK : run[i / 2] >> BMP_NIBBLE_BITS) : run[i]);
            pos += n;
            if (pos == total) break;
            x += value;
            if ((data_at + in->taken) % 2) gs_rle_input_take(in, run, 1); /* may be the end */
        }
    }
    goto cleanup;

short_data:
    if (src->read_errno)
        rc = read_failed(src, err, err_size);
    else
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "truncated BMP: the run-length data ends at pixel %llu of %llu",
                     (unsigned long long)pos, (unsigned long long)total);
cleanup:
    free(in);
    return rc;
}

static gs_status bmp_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                               uint32_t rows, char *err, size_t err_size)
{
    bmp_state *bmp = reader->impl;
    const size_t width = bmp->width;
    for (uint32_t r = 0; r < rows; r++) {
        const uint32_t y = reader->next_row + r;
        uint8_t *out = dst + (size_t)r * stride;
        if (!bmp->image) { /* top-down, uncompressed: straight from the file */
            gs_status rc = read_row(bmp, &reader->src, y, out, err, err_size);
            if (rc != GS_OK) return rc;
        } else if (bmp->compression == BMP_RLE8 || bmp->compression == BMP_RLE4) {
            const uint8_t *index = bmp->image + (size_t)(bmp->top_down ? y : bmp->height - 1 - y) * width;
            for (size_t x = 0; x < width; x++) out[x] = bmp->gray[index[x]];
        } else {
            memcpy(out, bmp->image + (size_t)y * width, width);
        }
    }
    return GS_OK;
}

static void bmp_state_destroy(void *impl)
{
    bmp_state *bmp = impl;
    if (!bmp) return;
    free(bmp->image);
    free(bmp);
}

static const gs_reader_ops bmp_ops = {
    .read_rows = bmp_read_rows,
    .destroy = bmp_state_destroy,
};

/* ---- the header ---- */

/* A bit-field mask: contiguous (or 0) and within the pixel's bits. */
static gs_status set_channel(bmp_channel *c, uint32_t mask, unsigned bpp, const char *name,
                             char *err, size_t err_size)
{
    memset(c, 0, sizeof *c);
    if (!mask) return GS_OK;
    unsigned shift = 0;
    while (!(mask >> shift & 1)) shift++;
    const uint64_t field = mask >> shift;
    if ((field & (field + 1)) != 0 || (bpp < 32 && mask >> bpp))
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "invalid BMP: the %s mask 0x%08X is not one run of bits within %u-bit pixels",
                       name, mask, bpp);
    c->mask = mask;
    c->shift = shift;
    while (field >> c->bits) c->bits++;
    if (c->bits <= 8)
        for (uint32_t v = 0; v < (1u << c->bits); v++) c->to8[v] = (uint8_t)gs_channel_to_8(v, c->bits);
    return GS_OK;
}

/* A palette's gray table. Indices past the palette's end: Pillow (10.1 and later) gives
 * black, except that a palette which is the gray ramp 0, 1, 2, ... (any length but 2) is
 * no palette to it at all: it reads the indices as gray levels, so an index past such a
 * palette is its own level. Pillow 9 gave the ramp past every palette (its palettes
 * started as a ramp); the black of later versions is kept here. */
static void set_palette(bmp_state *bmp, const unsigned char *entries, unsigned count,
                        unsigned entry_bytes, int *colour)
{
    int ramp = count != 2;
    for (unsigned i = 0; i < count; i++) {
        const unsigned char *e = entries + (size_t)i * entry_bytes; /* blue, green, red */
        bmp->gray[i] = gs_palette_gray(e[2], e[1], e[0], colour);
        if (e[0] != i || e[1] != i || e[2] != i) ramp = 0;
    }
    for (unsigned i = count; i < GS_PALETTE_8BIT_ENTRIES; i++) bmp->gray[i] = ramp ? (uint8_t)i : 0;
}

gs_status gs_read_bmp_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    gs_source *src = &reader->src;
    bmp_state *bmp = NULL;
    unsigned char file_header[BMP_FILE_HEADER_BYTES];
    unsigned char h[BMP_HEADER_MAX + BMP_CHANNELS * BMP_MASK_BYTES] = {0};
    unsigned char *palette = NULL;

    if (gs_source_read(src, file_header, sizeof file_header) != sizeof file_header ||
        gs_source_read(src, h, BMP_MASK_BYTES) != BMP_MASK_BYTES) {
        rc = src->read_errno ? read_failed(src, err, err_size)
                             : gs_fail(err, err_size, GS_ERR_FORMAT, "truncated BMP: the file ends in its header");
        goto cleanup;
    }
    if (file_header[0] != 'B' || file_header[1] != 'M') {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "not a BMP file");
        goto cleanup;
    }
    const uint32_t offset = gs_load_le32(file_header + BMP_PIXEL_OFFSET_AT);
    const uint32_t header_bytes = gs_load_le32(h);
    const int core = header_bytes == BMP_CORE_HEADER_BYTES;
    const int os2v2 = header_bytes >= BMP_OS2V2_MIN_BYTES && header_bytes <= BMP_OS2V2_MAX_BYTES &&
                      header_bytes != BMP_INFO_HEADER_BYTES && header_bytes != BMP_V2_HEADER_BYTES &&
                      header_bytes != BMP_V3_HEADER_BYTES;
    if (!core && !(header_bytes >= BMP_OS2V2_MIN_BYTES && header_bytes <= BMP_OS2V2_MAX_BYTES) &&
        header_bytes != BMP_V4_HEADER_BYTES && header_bytes != BMP_V5_HEADER_BYTES) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "invalid BMP: a header of %u bytes is none of BMP's (12, 16 to 64, 108, 124)",
                     header_bytes);
        goto cleanup;
    }
    if (gs_source_read(src, h + BMP_MASK_BYTES, header_bytes - BMP_MASK_BYTES) != header_bytes - BMP_MASK_BYTES) {
        rc = src->read_errno ? read_failed(src, err, err_size)
                             : gs_fail(err, err_size, GS_ERR_FORMAT, "truncated BMP: the file ends in its header");
        goto cleanup;
    }
    uint64_t at = BMP_FILE_HEADER_BYTES + header_bytes; /* bytes read so far */

    int64_t width, height;
    unsigned bpp;
    uint32_t compression = BMP_RGB, colors = 0;
    if (core) {
        width = gs_load_le16(h + BMP_CORE_WIDTH_AT);
        height = gs_load_le16(h + BMP_CORE_HEIGHT_AT);
        bpp = gs_load_le16(h + BMP_CORE_BITS_AT);
    } else {
        width = (int32_t)gs_load_le32(h + BMP_WIDTH_AT);
        height = (int32_t)gs_load_le32(h + BMP_HEIGHT_AT);
        bpp = gs_load_le16(h + BMP_BITS_AT);
        compression = gs_load_le32(h + BMP_COMPRESSION_AT);
        colors = gs_load_le32(h + BMP_COLORS_USED_AT);
    }
    const int top_down = height < 0;
    if (top_down) height = -height;
    if (width <= 0 || height <= 0 || height > INT32_MAX) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid BMP header: %lldx%lld pixels",
                     (long long)width, (long long)(top_down ? -height : height));
        goto cleanup;
    }
    if (bpp != 1 && bpp != 2 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid BMP: %u bits per pixel", bpp);
        goto cleanup;
    }

    /* Compression, and the bit-field masks: after a 40-byte header (three, or four for
     * ALPHABITFIELDS), inside a larger one (alpha from 56 bytes on). */
    const int bitfields = !os2v2 && (compression == BMP_BITFIELDS || compression == BMP_ALPHABITFIELDS);
    const char *refused = NULL;
    if (os2v2 && compression == BMP_BITFIELDS) refused = "OS/2 Huffman 1D compression is not supported";
    else if (os2v2 && compression == BMP_JPEG) refused = "OS/2 RLE24 compression is not supported";
    else if (compression == BMP_JPEG) refused = "BMP with embedded JPEG data is not supported";
    else if (compression == BMP_PNG) refused = "BMP with embedded PNG data is not supported";
    else if (compression > BMP_ALPHABITFIELDS) refused = "invalid BMP: unknown compression";
    else if (compression == BMP_RLE8 && bpp != 8) refused = "invalid BMP: RLE8 needs 8 bits per pixel";
    else if (compression == BMP_RLE4 && bpp != 4) refused = "invalid BMP: RLE4 needs 4 bits per pixel";
    else if (bitfields && bpp < 16) refused = "invalid BMP: bit fields need 16, 24 or 32 bits per pixel";
    if (refused) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "%s (compression %u, %u bits per pixel)", refused,
                     compression, bpp);
        goto cleanup;
    }
    uint32_t masks[BMP_CHANNELS] = {0};
    if (bitfields) {
        unsigned have = header_bytes >= BMP_V3_HEADER_BYTES ? BMP_CHANNELS
                        : header_bytes >= BMP_V2_HEADER_BYTES ? BMP_ALPHA : 0; /* masks in the header */
        if (header_bytes == BMP_INFO_HEADER_BYTES) {
            have = compression == BMP_ALPHABITFIELDS ? BMP_CHANNELS : BMP_ALPHA;
            if (gs_source_read(src, h + BMP_MASKS_AT, have * BMP_MASK_BYTES) != have * BMP_MASK_BYTES) {
                rc = src->read_errno ? read_failed(src, err, err_size)
                                     : gs_fail(err, err_size, GS_ERR_FORMAT, "truncated BMP: the file ends in its bit-field masks");
                goto cleanup;
            }
            at += have * BMP_MASK_BYTES;
        }
        for (unsigned c = 0; c < have; c++) masks[c] = gs_load_le32(h + BMP_MASKS_AT + c * BMP_MASK_BYTES);
    }
    if (!(masks[BMP_RED] | masks[BMP_GREEN] | masks[BMP_BLUE])) { /* BI_RGB, or no masks given */
        const int five = bpp == 16;
        masks[BMP_RED] = five ? BMP_RGB555_RED : BMP_RGB888_RED;
        masks[BMP_GREEN] = five ? BMP_RGB555_GREEN : BMP_RGB888_GREEN;
        masks[BMP_BLUE] = five ? BMP_RGB555_BLUE : BMP_RGB888_BLUE;
    }

    rc = gs_check_pixels((uint32_t)width, (uint32_t)height, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    bmp = calloc(1, sizeof *bmp);
    if (!bmp) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    bmp->width = (uint32_t)width;
    bmp->height = (uint32_t)height;
    bmp->bpp = bpp;
    bmp->compression = bitfields ? BMP_BITFIELDS : compression;
    bmp->top_down = top_down;
    /* The alpha mask only decides the "alpha dropped" note: it is not checked. */
    static const char *const channel_names[] = {"red", "green", "blue"};
    for (unsigned c = 0; c < BMP_ALPHA && bpp > 8; c++) {
        rc = set_channel(&bmp->ch[c], masks[c], bpp, channel_names[c], err, err_size);
        if (rc != GS_OK) goto cleanup;
    }
    const uint64_t row_bits = (uint64_t)bmp->width * bpp;
    bmp->pad = (size_t)((row_bits + BMP_ROW_ALIGN_BITS - 1) / BMP_ROW_ALIGN_BITS * (BMP_ROW_ALIGN_BITS / 8) - (row_bits + 7) / 8);

    /* The palette follows the headers (and masks). Where the pixel data starts: the
     * header's offset, except that an offset pointing into the headers (0, or just past
     * the info header as some writers put it) means right after the palette, as Pillow
     * reads it. A palette whose size the header does not state (OS/2 v1 has no field; 0
     * elsewhere) has 2^bits entries or as many as fit before the pixel data, whichever is
     * fewer: OS/2 v1 files with short palettes are common. */
    int colour = bpp > 8;
    if (bpp <= 8) {
        const unsigned entry_bytes = core ? BMP_CORE_ENTRY_BYTES : BMP_ENTRY_BYTES;
        if (colors > BMP_COLORS_MAX) {
            rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid BMP: a palette of %u colours", colors);
            goto cleanup;
        }
        uint64_t count = colors ? colors : 1u << bpp;
        uint64_t data_at = offset > at ? offset : at + count * entry_bytes;
        if (offset > at && at + count * entry_bytes > offset) count = (offset - at) / entry_bytes;
        if (count == 0) {
            rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                         "invalid BMP: no room for a palette before the pixel data at byte %u", offset);
            goto cleanup;
        }
        const unsigned used = count < (1u << bpp) ? (unsigned)count : 1u << bpp;
        palette = malloc((size_t)used * entry_bytes);
        if (!palette) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        if (gs_source_read(src, palette, (size_t)used * entry_bytes) != (size_t)used * entry_bytes) {
            rc = src->read_errno ? read_failed(src, err, err_size)
                                 : gs_fail(err, err_size, GS_ERR_FORMAT, "truncated BMP: the file ends in its palette");
            goto cleanup;
        }
        at += (uint64_t)used * entry_bytes;
        set_palette(bmp, palette, used, entry_bytes, &colour);
        if (data_at > at) {
            if (gs_source_skip(src, data_at - at) != data_at - at) goto truncated_before_pixels;
            at = data_at;
        }
    } else if (offset > at) {
        if (gs_source_skip(src, offset - at) != offset - at) goto truncated_before_pixels;
        at = offset;
    }

    if (bmp->compression == BMP_RLE8 || bmp->compression == BMP_RLE4) {
        bmp->image = calloc((size_t)bmp->width * bmp->height, 1); /* unset pixels: index 0 */
        if (!bmp->image) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %ux%u image", bmp->width, bmp->height);
            goto cleanup;
        }
        rc = read_rle(bmp, src, at, err, err_size);
    } else if (!top_down) {
        bmp->image = malloc((size_t)bmp->width * bmp->height);
        if (!bmp->image) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %ux%u image", bmp->width, bmp->height);
            goto cleanup;
        }
        rc = read_bottom_up(bmp, src, err, err_size);
    }
    if (rc != GS_OK) goto cleanup;

    reader->info.width = bmp->width;
    reader->info.height = bmp->height;
    reader->info.bits = 8;
    reader->info.format = "BMP";
    reader->info.was_color = colour;
    reader->info.had_alpha = bpp > 8 && masks[BMP_ALPHA] != 0 && bitfields;
    reader->ops = &bmp_ops;
    reader->impl = bmp;
    bmp = NULL;
    goto cleanup;

truncated_before_pixels:
    rc = src->read_errno ? read_failed(src, err, err_size)
                         : gs_fail(err, err_size, GS_ERR_FORMAT, "truncated BMP: the file ends before its pixel data");
cleanup:
    free(palette);
    bmp_state_destroy(bmp);
    return rc;
}
