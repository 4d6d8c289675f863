/* read_stb.c: the reader for PSD, HDR and PIC, through stb_image. */
/* Decoded whole by stb_image through callbacks that notice truncation. */

#include <stb_image.h>

#include "io_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* stb_image has no streaming: the image is decoded whole (after the max_pixels check on
 * stbi_info's header) and read_rows converts rows out of that buffer. Flip-on-load is never
 * turned on: its vertical flip once held a heap overflow (CVE), and rows come top-down. */

typedef struct stb_state {
    void *pixels;      /* the decoded image, from stbi_load*; freed with stbi_image_free */
    unsigned channels; /* samples per pixel in pixels: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    size_t row_bytes;  /* bytes of one decoded row */
} stb_state;

/* stb_image keeps the reason of its last failure per thread; read it right after the call. */
static const char *stb_reason(void)
{
    const char *reason = stbi_failure_reason();
    return reason ? reason : "unknown error";
}

/* stb_image says 4 channels for every PSD, transparent or not; for those the
 * alpha channel only counts as dropped when some pixel is not fully opaque. */
static int alpha_in_use(const stb_state *img, uint64_t pixels, unsigned bits)
{
    const unsigned a = img->channels - 1;
    if (bits == 16) {
        const uint16_t *p = img->pixels;
        for (uint64_t i = 0; i < pixels; i++)
            if (p[i * img->channels + a] != UINT16_MAX) return 1;
    } else {
        const uint8_t *p = img->pixels;
        for (uint64_t i = 0; i < pixels; i++)
            if (p[i * img->channels + a] != UINT8_MAX) return 1;
    }
    return 0;
}

static gs_status stb_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                               uint32_t rows, char *err, size_t err_size)
{
    (void)err;
    (void)err_size;
    const stb_state *img = reader->impl;
    const unsigned char *base = img->pixels;
    for (uint32_t r = 0; r < rows; r++)
        gs_row_to_gray(dst + (size_t)r * stride, base + (size_t)(reader->next_row + r) * img->row_bytes,
                       reader->info.width, img->channels, reader->info.bits);
    return GS_OK;
}

static void stb_state_destroy(void *impl)
{
    stb_state *img = impl;
    if (!img) return;
    if (img->pixels) stbi_image_free(img->pixels);
    free(img);
}

static const gs_reader_ops stb_ops = {
    .read_rows = stb_read_rows,
    .destroy = stb_state_destroy,
};

/* stb_image refills its buffer with reads of this size (sizeof stbi__context.buffer_start);
 * any other request comes from stbi__getn, which needs every byte it asks for. */
#define STB_REFILL_SIZE 128

/* The input as stb_image callbacks that notice a decoder wanting bytes past the end: stb
 * pads a short input with zeros and reports success, so without this a truncated PSD
 * or HDR would decode into an image with a made-up bottom. Refills take what
 * a stream has ready (stbi_info then returns on a header alone); exact reads wait. */
typedef struct stb_feed {
    gs_source *src;      /* the reader's input */
    int at_end;          /* the input is exhausted */
    int wanted_past_end; /* the decoder asked for bytes after the end: truncated */
} stb_feed;

static int feed_read(void *user, char *data, int size)
{
    stb_feed *f = user;
    if (size <= 0) return 0;
    if (f->at_end) {
        f->wanted_past_end = 1;
        return 0;
    }
    size_t got = size == STB_REFILL_SIZE ? gs_source_read_some(f->src, data, (size_t)size)
                                         : gs_source_read(f->src, data, (size_t)size);
    if (got == 0 || (size != STB_REFILL_SIZE && got < (size_t)size)) f->at_end = f->wanted_past_end = 1;
    return (int)got;
}

static void feed_skip(void *user, int n)
{
    stb_feed *f = user;
    if (n > 0 && gs_source_skip(f->src, (size_t)n) < (size_t)n) f->at_end = f->wanted_past_end = 1;
}

static int feed_eof(void *user)
{
    stb_feed *f = user;
    return f->at_end || gs_source_at_end(f->src);
}

static const stbi_io_callbacks feed_callbacks = {feed_read, feed_skip, feed_eof};

/* Back to the input's start, with fresh end-of-data flags, for the next stb call. */
static gs_status feed_rewind(stb_feed *f, char *err, size_t err_size)
{
    f->at_end = f->wanted_past_end = 0;
    return gs_source_rewind(f->src, err, err_size);
}

gs_status gs_read_stb_open(gs_reader *reader, uint64_t max_pixels, const char *format,
                           char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    stb_state *img = NULL;
    stb_feed feed = {&reader->src, 0, 0};
    int width = 0, height = 0, comp = 0, ok;

    ok = stbi_info_from_callbacks(&feed_callbacks, &feed, &width, &height, &comp);
    if (!ok) {
        if (format)
            rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid %s: %s", format, stb_reason());
        else
            rc = gs_fail(err, err_size, GS_ERR_FORMAT, "not an image in a supported format (%s)",
                         GS_SUPPORTED_INPUTS);
        goto cleanup;
    }
    if (!format) format = "image"; /* stb_image told the format itself (the fuzz harness) */
    if (width <= 0 || height <= 0 || comp < 1 || comp > 4) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid %s header (%dx%d, %d channels)",
                     format, width, height, comp);
        goto cleanup;
    }
    rc = gs_check_pixels((uint32_t)width, (uint32_t)height, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    /* stbi_load would quietly reduce 16-bit samples to 8; ask first and keep them. */
    if ((rc = feed_rewind(&feed, err, err_size)) != GS_OK) goto cleanup;
    const int is16 = stbi_is_16_bit_from_callbacks(&feed_callbacks, &feed);
    if ((rc = feed_rewind(&feed, err, err_size)) != GS_OK) goto cleanup;

    img = calloc(1, sizeof *img);
    if (!img) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    int dec_width = 0, dec_height = 0, dec_comp = 0;
    if (is16)
        img->pixels = stbi_load_16_from_callbacks(&feed_callbacks, &feed, &dec_width, &dec_height,
                                                 &dec_comp, 0);
    else
        img->pixels = stbi_load_from_callbacks(&feed_callbacks, &feed, &dec_width, &dec_height,
                                              &dec_comp, 0);
    if (!img->pixels) {
        const char *reason = stb_reason();
        rc = gs_fail(err, err_size, strcmp(reason, "outofmem") == 0 ? GS_ERR_NOMEM : GS_ERR_FORMAT,
                     "invalid %s: %s", format, reason);
        goto cleanup;
    }
    if (reader->src.read_errno) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(reader->src.read_errno));
        goto cleanup;
    }
    if (feed.wanted_past_end) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "truncated %s: the data ends before the image does", format);
        goto cleanup;
    }
    if (dec_width != width || dec_height != height || dec_comp < 1 || dec_comp > 4) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "invalid %s: decoded %dx%d (%d channels) but the header says %dx%d",
                     format, dec_width, dec_height, dec_comp, width, height);
        goto cleanup;
    }

    const unsigned bits = is16 ? 16 : 8;
    img->channels = (unsigned)dec_comp;
    img->row_bytes = (size_t)width * img->channels * (bits / 8);
    reader->info.width = (uint32_t)width;
    reader->info.height = (uint32_t)height;
    reader->info.bits = bits;
    reader->info.format = format;
    reader->info.was_color = img->channels >= 3;
    reader->info.had_alpha = img->channels == 2 || img->channels == 4;
    if (reader->info.had_alpha && strcmp(format, "PSD") == 0)
        reader->info.had_alpha = alpha_in_use(img, (uint64_t)width * (uint64_t)height, bits);

    reader->ops = &stb_ops;
    reader->impl = img;
    img = NULL;

cleanup:
    stb_state_destroy(img);
    return rc;
}
