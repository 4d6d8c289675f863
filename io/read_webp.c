/* read_webp.c: the reader for still WebP images (lossy, lossless, with alpha), through libwebp. */
/* Decoded whole: libwebp writes the whole picture into one buffer, like stb_image. */

#include <webp/decode.h>

#include "io_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Bytes read before the header is judged: the RIFF header and the first chunk's header
 * (VP8, VP8L or VP8X, whose canvas size is in its first 10 bytes) lie in the first 30. */
#define WEBP_HEADER_BYTES 64
/* What the file may hold beyond the coded pixels (ICC profile, EXIF, XMP), on top of 5
 * bytes a pixel, more than a lossless image of noise needs: a larger declared size is
 * refused before it is read. */
#define WEBP_METADATA_ALLOWANCE ((uint64_t)16 << 20)

typedef struct webp_state {
    uint8_t *pixels;   /* the decoded picture: RGB or RGBA, rows of row_bytes */
    unsigned channels; /* 3, or 4 with alpha */
    size_t row_bytes;
} webp_state;

static gs_status webp_read_rows(gs_reader *reader, unsigned char *dst, size_t stride, uint32_t rows,
                                char *err, size_t err_size)
{
    (void)err;
    (void)err_size;
    const webp_state *img = reader->impl;
    for (uint32_t r = 0; r < rows; r++)
        gs_row_to_gray(dst + (size_t)r * stride, img->pixels + (size_t)(reader->next_row + r) * img->row_bytes,
                       reader->info.width, img->channels, 8);
    return GS_OK;
}

static void webp_state_destroy(void *impl)
{
    webp_state *img = impl;
    if (!img) return;
    free(img->pixels);
    free(img);
}

static const gs_reader_ops webp_ops = {
    .read_rows = webp_read_rows,
    .destroy = webp_state_destroy,
};

/* libwebp's status in words. */
static const char *webp_reason(VP8StatusCode status)
{
    switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the data ends before the image does";
    default: return "decoding failed";
    }
}

/* Read the input's next `n` bytes into data + *have; GS_ERR_FORMAT if it ends first. */
static gs_status read_more(gs_reader *reader, uint8_t *data, size_t *have, size_t n, char *err,
                           size_t err_size)
{
    size_t got = gs_source_read(&reader->src, data + *have, n);
    *have += got;
    if (reader->src.read_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(reader->src.read_errno));
    if (got < n) return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated WebP: the data ends before the image does");
    return GS_OK;
}

gs_status gs_read_webp_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    webp_state *img = NULL;
    uint8_t *data = NULL;
    /* RIFF, the size of what follows it (even: chunks are padded), "WEBP". */
    const uint64_t file_size = (uint64_t)reader->head[4] | (uint64_t)reader->head[5] << 8 |
                               (uint64_t)reader->head[6] << 16 | (uint64_t)reader->head[7] << 24;
    const uint64_t total = file_size + 8;
    if (total < 8 + 4 + 8 + 10)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid WebP: a RIFF size of %llu holds no image",
                       (unsigned long long)file_size);
    size_t have = 0;
    const size_t first = total < WEBP_HEADER_BYTES ? (size_t)total : WEBP_HEADER_BYTES;
    data = malloc(first);
    if (!data) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    if ((rc = read_more(reader, data, &have, first, err, err_size)) != GS_OK) goto cleanup;

    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(data, have, &features);
    if (status != VP8_STATUS_OK) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid WebP: %s", webp_reason(status));
        goto cleanup;
    }
    if (features.has_animation) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "animated WebP is not read (only still images; convert its first frame to PNG)");
        goto cleanup;
    }
    if (features.width <= 0 || features.height <= 0) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid WebP header (%dx%d)", features.width,
                     features.height);
        goto cleanup;
    }
    const uint32_t width = (uint32_t)features.width, height = (uint32_t)features.height;
    if ((rc = gs_check_pixels(width, height, max_pixels, err, err_size)) != GS_OK) goto cleanup;
    const uint64_t pixels = (uint64_t)width * height;
    if (total > 5 * pixels + WEBP_METADATA_ALLOWANCE || total > SIZE_MAX / 2) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "invalid WebP: its RIFF size (%llu bytes) is more than a %ux%u image needs",
                     (unsigned long long)file_size, width, height);
        goto cleanup;
    }
    /* The buffer grows as the data arrives, so a short file that claims much holds little. */
    for (size_t room = first; have < total;) {
        room = room * 2 < total ? room * 2 : (size_t)total;
        uint8_t *grown = realloc(data, room);
        if (!grown) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        data = grown;
        if ((rc = read_more(reader, data, &have, room - have, err, err_size)) != GS_OK) goto cleanup;
    }

    img = calloc(1, sizeof *img);
    if (!img) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    img->channels = features.has_alpha ? 4 : 3;
    img->row_bytes = (size_t)width * img->channels;
    if (img->row_bytes > INT_MAX) { /* libwebp takes the stride as an int */
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "a WebP %u pixels wide is more than libwebp takes", width);
        goto cleanup;
    }
    const size_t bytes = img->row_bytes * height;
    img->pixels = malloc(bytes);
    if (!img->pixels) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %ux%u WebP", width, height);
        goto cleanup;
    }
    const uint8_t *decoded =
        features.has_alpha ? WebPDecodeRGBAInto(data, have, img->pixels, bytes, (int)img->row_bytes)
                           : WebPDecodeRGBInto(data, have, img->pixels, bytes, (int)img->row_bytes);
    if (!decoded) {
        /* The Into calls say only that they failed: the full decoder names the reason. */
        WebPDecoderConfig config;
        VP8StatusCode why = VP8_STATUS_BITSTREAM_ERROR;
        if (WebPInitDecoderConfig(&config)) {
            why = WebPDecode(data, have, &config);
            WebPFreeDecBuffer(&config.output);
        }
        rc = gs_fail(err, err_size, why == VP8_STATUS_OUT_OF_MEMORY ? GS_ERR_NOMEM : GS_ERR_FORMAT,
                     "invalid WebP: %s", webp_reason(why == VP8_STATUS_OK ? VP8_STATUS_BITSTREAM_ERROR : why));
        goto cleanup;
    }

    reader->info.width = width;
    reader->info.height = height;
    reader->info.bits = 8;
    reader->info.format = "WebP";
    reader->info.was_color = 1; /* WebP codes colour only (lossy as YUV 4:2:0) */
    reader->info.had_alpha = features.has_alpha;
    reader->ops = &webp_ops;
    reader->impl = img;
    img = NULL;

cleanup:
    free(data);
    webp_state_destroy(img);
    return rc;
}
