/* read_gif.c: the GIF reader on giflib: the first frame, in gray. */
/* The frame is decoded whole at open through callbacks on gs_source, placed on the logical
 * screen and turned into gray through its colour map. */

#include "io_internal.h"

#include <gif_lib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What a pixel becomes, as PIL 9.4 reads a GIF's first frame (GifImagePlugin.py; the
 * reference of tests/external/check_external.py):
 * - The image is the logical screen, grown to hold the first frame where the frame
 *   reaches past it (browsers grow it the same way).
 * - A frame pixel is the gray (BT.601) of its colour map entry: the frame's local map,
 *   else the global one. With no colour map at all an index is its own gray level; an
 *   index past the end of a short map is gray too (PIL's palettes start as the gray ramp).
 * - A transparent pixel keeps its entry's colour: gray has no alpha to carry it, and
 *   gsmooth drops alpha that way in every format (a PNG's RGBA keeps its RGB).
 * - The screen outside the frame is the transparent index's colour when the frame has
 *   one, else index 0's (PIL fills the canvas so; the background colour index is unused).
 * The frame is decoded whole when the reader opens (an interlaced frame's first row comes
 * in its last pass), one byte an index; rows are made from it as they are asked for.
 * Frames after the first are skipped over, not decoded, only to count them for the note.
 */

/* Entries an 8-bit index can name: the lookup table covers every index, whatever the map's size. */
#define GIF_INDICES 256
/* The interlaced frame's four passes: first row and row step of each. */
#define GIF_PASSES 4
static const uint32_t pass_start[GIF_PASSES] = {0, 4, 2, 1};
static const uint32_t pass_step[GIF_PASSES] = {8, 8, 4, 2};
/* Bytes of a graphic control extension's data: flags, delay (2), transparent index. */
#define GIF_GCE_BYTES 4
#define GIF_GCE_TRANSPARENT_FLAG 0x01
#define GIF_GCE_TRANSPARENT_AT 3

typedef struct gif_state {
    uint32_t left, top;           /* the frame's place on the screen */
    uint32_t frame_w, frame_h;    /* the frame's size */
    unsigned char *indices;       /* the frame's colour indices, frame_w x frame_h, row-major */
    uint8_t gray[GIF_INDICES];    /* each index's gray level */
    uint8_t fill;                 /* gray of the screen outside the frame */
} gif_state;

/* The input as giflib's read callback. giflib reads on after the last pixel to the end of
 * the frame's data blocks (their zero-length terminator); a file that ends right after its
 * last data block (no terminator, no trailer) is whole to PIL and browsers, so the input's
 * end gives one made-up terminator byte. A frame that still needed data fails on it: an
 * empty block inside the data is giflib's D_GIF_ERR_IMAGE_DEFECT. */
typedef struct gif_feed {
    gs_source *src;  /* the reader's input */
    int ended;       /* a read went past the input's end (the made-up byte counts) */
    int made_up_end; /* the terminator byte was given */
} gif_feed;

static int feed_read(GifFileType *gif, GifByteType *buf, int n)
{
    gif_feed *f = gif->UserData;
    if (n <= 0) return 0;
    size_t got = gs_source_read(f->src, buf, (size_t)n);
    if (got == (size_t)n) return n;
    if (got == 0 && n == 1 && !f->made_up_end && !f->src->read_errno) {
        buf[0] = 0;
        f->made_up_end = f->ended = 1;
        return 1;
    }
    f->ended = 1;
    return (int)got;
}

/* The one line for giflib's error `code` (the input's end or a read error first: those are
 * what giflib's READ_FAILED and EOF_TOO_SOON mean on a short file). */
static gs_status gif_failure(const gif_feed *feed, int code, char *err, size_t err_size)
{
    if (feed->src->read_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(feed->src->read_errno));
    if (code == D_GIF_ERR_NOT_ENOUGH_MEM) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    if (feed->ended)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated GIF: the data ends before the image does");
    /* Every other READ_FAILED is giflib's answer to an LZW code size byte over 8, which the
     * GIF specification's 8-bit pixels rule out (PIL and browsers read up to 12). */
    if (code == D_GIF_ERR_READ_FAILED)
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "unsupported GIF: an LZW code size over 8 bits (giflib reads 8 at most)");
    const char *why = GifErrorString(code);
    return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid GIF: %s", why ? why : "unknown error");
}

/* Skip one extension's data blocks; a graphic control extension sets *transparent (-1:
 * none) when it declares a transparent index (PIL keeps an earlier one otherwise). */
static int read_extension(GifFileType *gif, int *transparent)
{
    int code = 0;
    GifByteType *block = NULL;
    if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) return GIF_ERROR;
    if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= GIF_GCE_BYTES &&
        (block[1] & GIF_GCE_TRANSPARENT_FLAG))
        *transparent = block[1 + GIF_GCE_TRANSPARENT_AT];
    while (block)
        if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return GIF_ERROR;
    return GIF_OK;
}

/* The frame's indices, row by row in the file's order (the passes for an interlaced one). */
static int read_frame(GifFileType *gif, gif_state *st, int interlaced)
{
    const size_t w = st->frame_w;
    if (!interlaced) {
        for (uint32_t y = 0; y < st->frame_h; y++)
            if (DGifGetLine(gif, st->indices + y * w, (int)w) == GIF_ERROR) return GIF_ERROR;
        return GIF_OK;
    }
    for (int pass = 0; pass < GIF_PASSES; pass++)
        for (uint32_t y = pass_start[pass]; y < st->frame_h; y += pass_step[pass])
            if (DGifGetLine(gif, st->indices + y * w, (int)w) == GIF_ERROR) return GIF_ERROR;
    return GIF_OK;
}

/* Frames after the first, counted by walking their records and skipping their data
 * undecoded; anything giflib cannot read ends the count (the first frame is already in). */
static uint32_t count_more_frames(GifFileType *gif)
{
    uint32_t frames = 0;
    int ignored = -1;
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR || type == TERMINATE_RECORD_TYPE) return frames;
        if (type == EXTENSION_RECORD_TYPE) {
            if (read_extension(gif, &ignored) == GIF_ERROR) return frames;
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE || DGifGetImageHeader(gif) == GIF_ERROR) return frames;
        frames++;
        int code_size;
        GifByteType *block = NULL;
        if (DGifGetCode(gif, &code_size, &block) == GIF_ERROR) return frames;
        while (block)
            if (DGifGetCodeNext(gif, &block) == GIF_ERROR) return frames;
    }
}

/* Each index's gray level from `map` (NULL: none), and what the image shows: *color when a
 * pixel's entry is not gray, *alpha when a pixel is the transparent index; the fill counts
 * as a pixel when the frame leaves some of the `width` x `height` screen uncovered. */
static void make_gray_table(gif_state *st, const ColorMapObject *map, int transparent,
                            uint32_t width, uint32_t height, int *color, int *alpha)
{
    int is_color[GIF_INDICES] = {0};
    for (int i = 0; i < GIF_INDICES; i++) st->gray[i] = (uint8_t)i;
    int count = map ? map->ColorCount : 0;
    if (count > GIF_INDICES) count = GIF_INDICES;
    for (int i = 0; i < count; i++) {
        const GifColorType *c = &map->Colors[i];
        st->gray[i] = (uint8_t)gs_luma(c->Red, c->Green, c->Blue);
        is_color[i] = c->Red != c->Green || c->Green != c->Blue;
    }

    int used[GIF_INDICES] = {0};
    const size_t n = (size_t)st->frame_w * st->frame_h;
    for (size_t i = 0; i < n; i++) used[st->indices[i]] = 1;
    const int fill_index = transparent >= 0 ? transparent : 0;
    st->fill = st->gray[fill_index];
    if (st->frame_w < width || st->frame_h < height) used[fill_index] = 1;

    *color = 0;
    for (int i = 0; i < GIF_INDICES; i++) *color |= used[i] && is_color[i];
    *alpha = transparent >= 0 && used[transparent];
}

static gs_status gif_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                               uint32_t rows, char *err, size_t err_size)
{
    (void)err;
    (void)err_size;
    const gif_state *st = reader->impl;
    const uint32_t width = reader->info.width;
    for (uint32_t r = 0; r < rows; r++) {
        unsigned char *out = dst + (size_t)r * stride;
        const uint32_t y = reader->next_row + r;
        if (y < st->top || y - st->top >= st->frame_h) {
            memset(out, st->fill, width);
            continue;
        }
        const unsigned char *in = st->indices + (size_t)(y - st->top) * st->frame_w;
        memset(out, st->fill, st->left);
        for (uint32_t x = 0; x < st->frame_w; x++) out[st->left + x] = st->gray[in[x]];
        memset(out + st->left + st->frame_w, st->fill, width - st->left - st->frame_w);
    }
    return GS_OK;
}

static void gif_state_destroy(void *impl)
{
    gif_state *st = impl;
    if (!st) return;
    free(st->indices);
    free(st);
}

static const gs_reader_ops gif_ops = {
    .read_rows = gif_read_rows,
    .destroy = gif_state_destroy,
};

gs_status gs_read_gif_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    gif_state *st = NULL;
    gif_feed feed = {&reader->src, 0, 0};
    int code = D_GIF_SUCCEEDED;
    int transparent = -1;

    GifFileType *gif = DGifOpen(&feed, feed_read, &code);
    if (!gif) {
        rc = gif_failure(&feed, code, err, err_size);
        goto cleanup;
    }
    /* The screen alone may already be over the limit: refuse it before reading on. */
    rc = gs_check_pixels((uint32_t)gif->SWidth, (uint32_t)gif->SHeight, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) {
            rc = gif_failure(&feed, gif->Error, err, err_size);
            goto cleanup;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) break;
        if (type == TERMINATE_RECORD_TYPE) {
            rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid GIF: no image before the trailer");
            goto cleanup;
        }
        if (read_extension(gif, &transparent) == GIF_ERROR) {
            rc = gif_failure(&feed, gif->Error, err, err_size);
            goto cleanup;
        }
    }
    /* DGifGetImageHeader, not DGifGetImageDesc: the latter also keeps a copy of every
     * frame's descriptor and colour map, memory that would grow with the frames counted. */
    if (DGifGetImageHeader(gif) == GIF_ERROR) {
        rc = gif_failure(&feed, gif->Error, err, err_size);
        goto cleanup;
    }

    const GifImageDesc *desc = &gif->Image;
    /* GifWords are 16-bit fields, so these sums stay far below 2^32. */
    const uint32_t right = (uint32_t)desc->Left + (uint32_t)desc->Width;
    const uint32_t bottom = (uint32_t)desc->Top + (uint32_t)desc->Height;
    const uint32_t width = right > (uint32_t)gif->SWidth ? right : (uint32_t)gif->SWidth;
    const uint32_t height = bottom > (uint32_t)gif->SHeight ? bottom : (uint32_t)gif->SHeight;
    if (desc->Width == 0 || desc->Height == 0) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid GIF: the first frame is %dx%d",
                     desc->Width, desc->Height);
        goto cleanup;
    }
    rc = gs_check_pixels(width, height, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    st = calloc(1, sizeof *st);
    if (!st) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    st->left = (uint32_t)desc->Left;
    st->top = (uint32_t)desc->Top;
    st->frame_w = (uint32_t)desc->Width;
    st->frame_h = (uint32_t)desc->Height;
    /* calloc: should a path ever leave a row unread, it holds index 0, not old heap. */
    st->indices = calloc((size_t)st->frame_w * st->frame_h, 1);
    if (!st->indices) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %ux%u frame", st->frame_w,
                     st->frame_h);
        goto cleanup;
    }
    if (read_frame(gif, st, desc->Interlace) == GIF_ERROR) {
        rc = gif_failure(&feed, gif->Error, err, err_size);
        goto cleanup;
    }

    int color, alpha;
    make_gray_table(st, desc->ColorMap ? desc->ColorMap : gif->SColorMap, transparent, width,
                    height, &color, &alpha);
    const uint32_t frames = 1 + count_more_frames(gif);

    reader->info.width = width;
    reader->info.height = height;
    reader->info.bits = 8;
    reader->info.format = "GIF";
    reader->info.was_color = color;
    reader->info.had_alpha = alpha;
    reader->info.pages = frames;
    reader->ops = &gif_ops;
    reader->impl = st;
    st = NULL;

cleanup:
    if (gif) DGifCloseFile(gif, &code);
    gif_state_destroy(st);
    return rc;
}
