/* bmp_tga_common.h: what the BMP and TGA readers share. */
/* A read-ahead window for their run-length data, the one rule that widens a 1..32-bit
 * colour channel to 8 bits, and palette entries to gray. */

#ifndef GS_BMP_TGA_COMMON_H
#define GS_BMP_TGA_COMMON_H

#include <stdint.h>
#include <string.h>

#include "io_internal.h"

/* ---- little-endian fields (both formats are little-endian throughout) ---- */

static inline uint32_t gs_load_le16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t gs_load_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- channels to 8 bits ---- */

/* A channel of `bits` bits (1..32) with value v becomes floor(v * 255 / (2^bits - 1)): the
 * rule of Pillow's unpackers (Unpack.c: "(pixel & 31) * 255 / 31" for BMP's and TGA's 5-bit
 * channels, "* 255 / 63" for 6-bit ones), which are the reference for both formats, applied
 * to every width so that one rule holds: 8 bits stay as they are, 4 bits are v * 17, 5 bits
 * give 0, 8, 16, ..., 246, 255 (not the bit-replicated 0, 8, 16, ..., 247, 255). */
static inline uint32_t gs_channel_to_8(uint32_t v, unsigned bits)
{
    const uint64_t max = (UINT64_C(1) << bits) - 1;
    return (uint32_t)((uint64_t)v * 255 / max);
}

/* ---- palettes ---- */

/* Entries an 8-bit index can reach; a 16-bit TGA index reaches 65536. */
#define GS_PALETTE_8BIT_ENTRIES 256u

/* One palette entry's gray (BT.601, as gs_row_to_gray turns an RGB pixel), and whether it
 * is a colour at all: a palette whose entries are all gray converts nothing. */
static inline uint8_t gs_palette_gray(uint32_t r, uint32_t g, uint32_t b, int *colour)
{
    if (r != g || g != b) *colour = 1;
    return (uint8_t)gs_luma(r, g, b);
}

/* ---- the read-ahead window ---- */

/* Bytes read ahead. A packet is at most 128 pixels of 4 bytes (TGA) or 255 bytes (BMP), so
 * one refill serves dozens of packets; reading ahead is harmless because nothing these
 * decoders need follows the pixel data. */
#define GS_RLE_INPUT_BYTES ((size_t)16 << 10)

typedef struct gs_rle_input {
    gs_source *src;                        /* where the bytes come from (borrowed) */
    unsigned char buf[GS_RLE_INPUT_BYTES]; /* bytes read ahead */
    size_t pos, len;                       /* unread bytes: buf[pos..len) */
    uint64_t taken;                        /* bytes handed out since gs_rle_input_init */
} gs_rle_input;

static inline void gs_rle_input_init(gs_rle_input *in, gs_source *src)
{
    in->src = src;
    in->pos = in->len = 0;
    in->taken = 0;
}

/* Copy up to n bytes to out; fewer only at the input's end (or on a read error, which
 * src->read_errno then holds). A stream is never made to wait for more than it has ready
 * beyond the bytes asked for. */
static inline size_t gs_rle_input_take(gs_rle_input *in, unsigned char *out, size_t n)
{
    size_t done = 0;
    while (done < n) {
        if (in->pos == in->len) {
            in->pos = 0;
            in->len = gs_source_read_some(in->src, in->buf, sizeof in->buf);
            if (in->len == 0) break;
        }
        size_t step = in->len - in->pos < n - done ? in->len - in->pos : n - done;
        memcpy(out + done, in->buf + in->pos, step);
        in->pos += step;
        done += step;
    }
    in->taken += done;
    return done;
}

#endif /* GS_BMP_TGA_COMMON_H */
