/* read_tga.c: the reader for Truevision TGA. */
/* Colour-mapped, true-colour and gray images (types 1, 2, 3), raw or run-length (9, 10,
 * 11), 8/15/16/24/32-bit (and Pillow's raw 1-bit gray), every origin; top-down rows are
 * streamed, bottom-up images decoded whole. */

#include "bmp_tga_common.h"
#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * stb_image 2.27 mirrored images whose origin is on the right. TGA is an 18-byte header,
 * an optional ID, an optional colour map and the pixels, so it is read here, with Pillow
 * (TgaImagePlugin.py, TgaRleDecode.c, Unpack.c) as the reference for what a file can tell
 * apart. TGA has no signature: reader.c tries it last, and a header that fails the checks
 * below is "not an image" rather than a bad TGA.
 *
 * Pixels come out 8-bit gray: colour maps through a gray table (one BT.601 luma per entry),
 * colour pixels as 8-bit RGB through gs_row_to_gray, alpha dropped. A top-down image (origin
 * at the top, either side) streams a chunk of a row at a time, run-length packets carried
 * from row to row; a bottom-up one (the usual kind) is held whole, one byte a pixel,
 * bounded by --max-pixels, because its first row is the file's last (a pipe cannot seek).
 */

#define TGA_HEADER_BYTES 18
/* Header fields, as offsets from the file's first byte. */
#define TGA_ID_LENGTH_AT 0
#define TGA_MAP_TYPE_AT 1
#define TGA_IMAGE_TYPE_AT 2
#define TGA_MAP_FIRST_AT 3
#define TGA_MAP_LENGTH_AT 5
#define TGA_MAP_DEPTH_AT 7
#define TGA_WIDTH_AT 12
#define TGA_HEIGHT_AT 14
#define TGA_DEPTH_AT 16
#define TGA_DESCRIPTOR_AT 17

/* Image types; the run-length ones are the same plus this bit. */
#define TGA_MAPPED 1u
#define TGA_TRUE_COLOUR 2u
#define TGA_GRAY 3u
#define TGA_RLE_BIT 8u

/* Image descriptor: attribute (alpha) bits, the origin, and the obsolete interleaving. */
#define TGA_ATTRIBUTE_BITS 0x0Fu
#define TGA_RIGHT_TO_LEFT 0x10u
#define TGA_TOP_DOWN 0x20u
#define TGA_INTERLEAVE 0xC0u

/* Run-length packets: a header byte, its high bit for a run of one pixel, else raw pixels;
 * the low 7 bits are the pixel count less one. */
#define TGA_PACKET_RUN 0x80u
#define TGA_PACKET_COUNT 0x7Fu

/* 15/16-bit pixels and map entries: x1r5g5b5, little-endian. */
#define TGA_FIVE_BITS 5
#define TGA_FIVE_MASK 0x1Fu

/* Pixels decoded per step of a row: bounds the working memory whatever the width; a
 * multiple of 8, so a step of 1-bit pixels starts on a byte. */
#define TGA_CHUNK_PIXELS 4096u
_Static_assert(TGA_CHUNK_PIXELS % 8 == 0, "a chunk of 1-bit pixels must end on a byte");
/* Pillow writes 1-bit gray as type 3 of depth 1, rows of bits (the first pixel the high
 * bit) padded to a byte, and reads it back as black and white; no other writer does, and
 * the format defines no run-length form of it. */
#define TGA_BILEVEL_DEPTH 1
#define TGA_MAX_PIXEL_BYTES 4
/* Entries a 16-bit index reaches. */
#define TGA_INDEX16_ENTRIES 65536u

typedef struct tga_state {
    uint32_t width, height;
    unsigned type;         /* TGA_MAPPED, TGA_TRUE_COLOUR or TGA_GRAY */
    unsigned pixel_bytes;  /* 1..4; 0 for 1-bit gray */
    int rle;               /* run-length packets */
    int top_down;          /* the file's first row is the top one */
    int right_to_left;     /* each row's first pixel is its rightmost */
    uint8_t *gray;         /* colour-mapped: each index's gray (256 or 65536 entries) */
    unsigned packet_left;  /* pixels left in the current packet */
    int packet_run;        /* ... which repeats packet_pixel */
    unsigned char packet_pixel[TGA_MAX_PIXEL_BYTES];
    gs_rle_input *in;      /* the run-length data's read-ahead (rle only) */
    unsigned char raw[TGA_CHUNK_PIXELS * TGA_MAX_PIXEL_BYTES]; /* a chunk as stored */
    uint8_t rgb[TGA_CHUNK_PIXELS * 4]; /* the same chunk as 8-bit samples */
    uint8_t *image;        /* decoded whole: gray rows, top first; NULL when streaming */
} tga_state;

static gs_status read_failed(gs_source *src, char *err, size_t err_size)
{
    return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(src->read_errno));
}

/* A 15/16-bit colour's channels widened to 8 bits. */
static void five_bit_rgb(uint32_t v, uint8_t *rgb)
{
    rgb[0] = (uint8_t)gs_channel_to_8(v >> (2 * TGA_FIVE_BITS) & TGA_FIVE_MASK, TGA_FIVE_BITS);
    rgb[1] = (uint8_t)gs_channel_to_8(v >> TGA_FIVE_BITS & TGA_FIVE_MASK, TGA_FIVE_BITS);
    rgb[2] = (uint8_t)gs_channel_to_8(v & TGA_FIVE_MASK, TGA_FIVE_BITS);
}

/* `n` pixels of the file into t->raw: raw bytes, or run-length packets, which may run on
 * from one row into the next. Returns how many came (fewer: the data ended). */
static uint32_t take_pixels(tga_state *t, gs_source *src, uint32_t n)
{
    const unsigned pb = t->pixel_bytes;
    if (!t->rle) return (uint32_t)(gs_source_read(src, t->raw, (size_t)n * pb) / pb);
    uint32_t done = 0;
    while (done < n) {
        if (t->packet_left == 0) {
            unsigned char head;
            if (gs_rle_input_take(t->in, &head, 1) != 1) break;
            t->packet_left = (head & TGA_PACKET_COUNT) + 1u;
            t->packet_run = (head & TGA_PACKET_RUN) != 0;
            if (t->packet_run && gs_rle_input_take(t->in, t->packet_pixel, pb) != pb) {
                t->packet_left = 0;
                break;
            }
        }
        uint32_t k = n - done < t->packet_left ? n - done : t->packet_left;
        unsigned char *out = t->raw + (size_t)done * pb;
        if (t->packet_run) {
            for (uint32_t i = 0; i < k; i++) memcpy(out + (size_t)i * pb, t->packet_pixel, pb);
        } else {
            size_t got = gs_rle_input_take(t->in, out, (size_t)k * pb);
            if (got < (size_t)k * pb) return done + (uint32_t)(got / pb);
        }
        t->packet_left -= k;
        done += k;
    }
    return done;
}

/* `n` pixels in t->raw to gray at `out`. */
static void decode_pixels(tga_state *t, uint32_t n, uint8_t *out)
{
    const unsigned char *p = t->raw;
    switch (t->type) {
    case TGA_MAPPED:
        for (uint32_t x = 0; x < n; x++)
            out[x] = t->gray[t->pixel_bytes == 1 ? p[x] : gs_load_le16(p + 2 * (size_t)x)];
        return;
    case TGA_GRAY: /* 8-bit gray, 16-bit gray then alpha, or 1-bit (the first pixel the high bit) */
        if (t->pixel_bytes == 0)
            for (uint32_t x = 0; x < n; x++) out[x] = p[x / 8] >> (7 - x % 8) & 1 ? UINT8_MAX : 0;
        else
            gs_row_to_gray(out, p, n, t->pixel_bytes, 8);
        return;
    default: /* true colour: blue, green, red (then alpha), or x1r5g5b5 */
        if (t->pixel_bytes == 2) {
            for (uint32_t x = 0; x < n; x++) five_bit_rgb(gs_load_le16(p + 2 * (size_t)x), t->rgb + 3 * (size_t)x);
            gs_row_to_gray(out, t->rgb, n, 3, 8);
            return;
        }
        for (uint32_t x = 0; x < n; x++) {
            const unsigned char *q = p + (size_t)x * t->pixel_bytes;
            uint8_t *s = t->rgb + (size_t)x * t->pixel_bytes;
            s[0] = q[2], s[1] = q[1], s[2] = q[0];
            if (t->pixel_bytes == 4) s[3] = q[3];
        }
        gs_row_to_gray(out, t->rgb, n, t->pixel_bytes, 8);
    }
}

/* The file's next row, `index` in the file's order, to gray at `out` (left to right). */
static gs_status read_row(tga_state *t, gs_source *src, uint32_t index, uint8_t *out, char *err,
                          size_t err_size)
{
    for (uint32_t x = 0; x < t->width; x += TGA_CHUNK_PIXELS) {
        const uint32_t n = t->width - x < TGA_CHUNK_PIXELS ? t->width - x : TGA_CHUNK_PIXELS;
        uint32_t got;
        if (t->pixel_bytes == 0) { /* 1-bit gray: whole bytes, raw only */
            const size_t bytes = ((size_t)n + 7) / 8;
            got = gs_source_read(src, t->raw, bytes) == bytes ? n : 0;
        } else {
            got = take_pixels(t, src, n);
        }
        if (got != n) {
            if (src->read_errno) return read_failed(src, err, err_size);
            return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated TGA: the pixel data ends in row %u of %u",
                           index + 1, t->height);
        }
        decode_pixels(t, n, out + x);
    }
    if (t->right_to_left)
        for (uint32_t a = 0, b = t->width - 1; a < b; a++, b--) {
            uint8_t v = out[a];
            out[a] = out[b], out[b] = v;
        }
    return GS_OK;
}

static gs_status tga_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                               uint32_t rows, char *err, size_t err_size)
{
    tga_state *t = reader->impl;
    for (uint32_t r = 0; r < rows; r++) {
        uint8_t *out = dst + (size_t)r * stride;
        if (t->image) {
            memcpy(out, t->image + (size_t)(reader->next_row + r) * t->width, t->width);
        } else {
            gs_status rc = read_row(t, &reader->src, reader->next_row + r, out, err, err_size);
            if (rc != GS_OK) return rc;
        }
    }
    return GS_OK;
}

static void tga_state_destroy(void *impl)
{
    tga_state *t = impl;
    if (!t) return;
    free(t->gray);
    free(t->in);
    free(t->image);
    free(t);
}

static const gs_reader_ops tga_ops = {
    .read_rows = tga_read_rows,
    .destroy = tga_state_destroy,
};

/* Bytes of a colour-map entry of `depth` bits; 0 for a depth TGA has no entries of. */
static unsigned map_entry_bytes(unsigned depth)
{
    return depth == 15 || depth == 16 ? 2 : depth == 24 ? 3 : depth == 32 ? 4 : 0;
}

/* Whether the 18 bytes at h are a TGA header this reader decodes: the format has no
 * signature, so every field that can be checked is, and anything else is not a TGA. */
static int header_is_tga(const unsigned char *h)
{
    const unsigned map_type = h[TGA_MAP_TYPE_AT], type = h[TGA_IMAGE_TYPE_AT] & ~TGA_RLE_BIT;
    const unsigned depth = h[TGA_DEPTH_AT];
    if (map_type > 1 || (h[TGA_IMAGE_TYPE_AT] & ~(TGA_RLE_BIT | 3u)) != 0) return 0;
    if (gs_load_le16(h + TGA_WIDTH_AT) == 0 || gs_load_le16(h + TGA_HEIGHT_AT) == 0) return 0;
    if (h[TGA_DESCRIPTOR_AT] & TGA_INTERLEAVE) return 0;
    if (map_type == 1 && map_entry_bytes(h[TGA_MAP_DEPTH_AT]) == 0) return 0;
    switch (type) {
    case TGA_MAPPED:
        return map_type == 1 && gs_load_le16(h + TGA_MAP_LENGTH_AT) > 0 && (depth == 8 || depth == 16);
    case TGA_TRUE_COLOUR:
        return depth == 15 || depth == 16 || depth == 24 || depth == 32;
    case TGA_GRAY:
        return depth == 8 || depth == 16 || (depth == TGA_BILEVEL_DEPTH && !(h[TGA_IMAGE_TYPE_AT] & TGA_RLE_BIT));
    default:
        return 0;
    }
}

/* The colour map's gray table for a colour-mapped image. Pillow's rules: pixel value i is
 * the map's entry i - first (its "first entry index"); a value below first is black (Pillow
 * pads the map with zeros), and so is one past its end (Pillow 10.1 and later; Pillow 9
 * gave those the gray ramp its palettes started as). */
static gs_status read_map(tga_state *t, gs_source *src, unsigned first, unsigned length,
                          unsigned depth, int *colour, char *err, size_t err_size)
{
    const unsigned entry_bytes = map_entry_bytes(depth);
    const unsigned entries = t->pixel_bytes == 1 ? GS_PALETTE_8BIT_ENTRIES : TGA_INDEX16_ENTRIES;
    t->gray = calloc(entries, 1);
    if (!t->gray) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    unsigned char e[TGA_MAX_PIXEL_BYTES];
    for (unsigned i = 0; i < length; i++) {
        if (gs_source_read(src, e, entry_bytes) != entry_bytes) {
            if (src->read_errno) return read_failed(src, err, err_size);
            return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated TGA: the file ends in its colour map");
        }
        const unsigned index = first + i;
        if (index >= entries) continue; /* no pixel value reaches it */
        uint8_t rgb[3];
        if (entry_bytes == 2) five_bit_rgb(gs_load_le16(e), rgb);
        else rgb[0] = e[2], rgb[1] = e[1], rgb[2] = e[0];
        t->gray[index] = gs_palette_gray(rgb[0], rgb[1], rgb[2], colour);
    }
    return GS_OK;
}

gs_status gs_read_tga_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    gs_source *src = &reader->src;
    tga_state *t = NULL;
    const unsigned char *h = reader->head;

    if (reader->head_len < TGA_HEADER_BYTES || !header_is_tga(h))
        return gs_fail(err, err_size, GS_ERR_FORMAT, "not an image in a supported format (%s)",
                       GS_SUPPORTED_INPUTS);
    const uint32_t width = gs_load_le16(h + TGA_WIDTH_AT), height = gs_load_le16(h + TGA_HEIGHT_AT);
    const unsigned depth = h[TGA_DEPTH_AT], descriptor = h[TGA_DESCRIPTOR_AT];
    const unsigned map_type = h[TGA_MAP_TYPE_AT], map_depth = h[TGA_MAP_DEPTH_AT];
    const unsigned map_first = gs_load_le16(h + TGA_MAP_FIRST_AT), map_length = gs_load_le16(h + TGA_MAP_LENGTH_AT);
    rc = gs_check_pixels(width, height, max_pixels, err, err_size);
    if (rc != GS_OK) return rc;

    t = calloc(1, sizeof *t);
    if (!t) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    t->width = width;
    t->height = height;
    t->type = h[TGA_IMAGE_TYPE_AT] & ~TGA_RLE_BIT;
    t->rle = (h[TGA_IMAGE_TYPE_AT] & TGA_RLE_BIT) != 0;
    t->pixel_bytes = depth == TGA_BILEVEL_DEPTH ? 0 : (depth + 7) / 8;
    t->top_down = (descriptor & TGA_TOP_DOWN) != 0;
    t->right_to_left = (descriptor & TGA_RIGHT_TO_LEFT) != 0;

    /* The header, the ID, then the colour map: kept for a colour-mapped image, else skipped. */
    const size_t skip = TGA_HEADER_BYTES + h[TGA_ID_LENGTH_AT];
    int colour = t->type == TGA_TRUE_COLOUR;
    if (gs_source_skip(src, skip) != skip) goto truncated;
    if (map_type == 1 && t->type == TGA_MAPPED) {
        rc = read_map(t, src, map_first, map_length, map_depth, &colour, err, err_size);
        if (rc != GS_OK) goto cleanup;
    } else if (map_type == 1) {
        const size_t map_bytes = (size_t)map_length * map_entry_bytes(map_depth);
        if (gs_source_skip(src, map_bytes) != map_bytes) goto truncated;
    }
    if (t->rle) {
        t->in = malloc(sizeof *t->in);
        if (!t->in) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        gs_rle_input_init(t->in, src);
    }
    if (!t->top_down) {
        t->image = malloc((size_t)width * height);
        if (!t->image) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %ux%u image", width, height);
            goto cleanup;
        }
        for (uint32_t i = 0; i < height && rc == GS_OK; i++)
            rc = read_row(t, src, i, t->image + (size_t)(height - 1 - i) * width, err, err_size);
        if (rc != GS_OK) goto cleanup;
    }

    /* Alpha is there when the descriptor gives the pixels (or map entries) attribute bits
     * and they have room for them: 16-bit gray is gray then alpha, 16-bit colour has one
     * spare bit, 32-bit colour a byte. */
    const unsigned stored_depth = t->type == TGA_MAPPED ? map_depth : depth;
    reader->info.width = width;
    reader->info.height = height;
    reader->info.bits = 8;
    reader->info.format = "TGA";
    reader->info.was_color = colour;
    reader->info.had_alpha = (descriptor & TGA_ATTRIBUTE_BITS) != 0 && (stored_depth == 16 || stored_depth == 32);
    reader->ops = &tga_ops;
    reader->impl = t;
    t = NULL;
    goto cleanup;

truncated:
    rc = src->read_errno ? read_failed(src, err, err_size)
                         : gs_fail(err, err_size, GS_ERR_FORMAT, "truncated TGA: the file ends before its pixel data");
cleanup:
    tga_state_destroy(t);
    return rc;
}
