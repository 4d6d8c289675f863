/* write_stb.c: BMP, TGA and JPEG writers through stb_image_write. */
/* The whole image is encoded at commit. */

#include <stb_image_write.h>

#include "io_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ==== stb_image_write: BMP, TGA, JPEG ==== */

/* stb_image_write's stdio functions ignore write errors, so everything goes through the
 * *_to_func variants into the writer's temporary file, and every fwrite is checked. The
 * encoders need the whole image: rows are buffered (8-bit only: width * height bytes). */

#define JPEG_QUALITY 95        /* stb's 1..100 scale; high enough that smoothing, not
                                * compression, is what a viewer sees */
#define TGA_DIMENSION_MAX 65535u  /* the TGA header stores width and height in 16 bits */
#define JPEG_DIMENSION_MAX 65535u /* the JPEG frame header stores them in 16 bits */
#define BMP_HEADER_BYTES 54u      /* file header (14) + BITMAPINFOHEADER (40) */
#define BMP_BYTES_PER_PIXEL 3u    /* stb writes gray as 24-bit BGR */
#define BMP_ROW_ALIGN 4u          /* BMP rows are padded to 4 bytes */

typedef struct stb_out {
    unsigned char *pixels; /* the whole image, filled by write_rows, encoded by finish */
    FILE *fp;              /* the writer's file, written by write_callback */
    int io_errno;          /* errno of the first failed fwrite; 0 if none */
} stb_out;

static void write_callback(void *context, void *data, int size)
{
    stb_out *enc = context;
    if (enc->io_errno || size <= 0) return; /* after a failure, drop the rest: finish reports it */
    errno = 0;
    if (fwrite(data, 1, (size_t)size, enc->fp) != (size_t)size) enc->io_errno = errno ? errno : EIO;
}

static gs_status stb_write_rows(gs_writer *writer, const unsigned char *src, size_t stride,
                                uint32_t rows, char *err, size_t err_size)
{
    (void)err;
    (void)err_size;
    stb_out *enc = writer->impl;
    for (uint32_t r = 0; r < rows; r++)
        memcpy(enc->pixels + (size_t)(writer->rows_written + r) * writer->width,
               src + (size_t)r * stride, writer->width);
    return GS_OK;
}

static gs_status stb_finish(gs_writer *writer, char *err, size_t err_size)
{
    stb_out *enc = writer->impl;
    const int w = (int)writer->width, h = (int)writer->height; /* checked at open */
    int ok = 0;

    switch (writer->format) {
    case GS_OUT_BMP: ok = stbi_write_bmp_to_func(write_callback, enc, w, h, 1, enc->pixels); break;
    case GS_OUT_TGA: ok = stbi_write_tga_to_func(write_callback, enc, w, h, 1, enc->pixels); break;
    case GS_OUT_JPG:
        ok = stbi_write_jpg_to_func(write_callback, enc, w, h, 1, enc->pixels, JPEG_QUALITY);
        break;
    default: break;
    }
    if (enc->io_errno) return gs_fail(err, err_size, GS_ERR_IO, "write failed: %s", strerror(enc->io_errno));
    if (!ok)
        return gs_fail(err, err_size, GS_ERR_NOMEM, "%s encoder failed (out of memory?)",
                       gs_out_format_name(writer->format));
    return GS_OK;
}

static void stb_out_destroy(void *impl)
{
    stb_out *enc = impl;
    if (!enc) return;
    free(enc->pixels);
    free(enc);
}

static const gs_writer_ops stb_ops = {
    .write_rows = stb_write_rows,
    .finish = stb_finish,
    .destroy = stb_out_destroy,
};

/* The size limits of each format, and stb_image_write's own: it takes int sizes and
 * computes the BMP file size in an int. */
static gs_status check_stb_size(const gs_writer *writer, const char *name, char *err,
                                size_t err_size)
{
    uint64_t w = writer->width, h = writer->height, limit = INT_MAX;
    if (writer->format == GS_OUT_TGA) limit = TGA_DIMENSION_MAX;
    if (writer->format == GS_OUT_JPG) limit = JPEG_DIMENSION_MAX;
    if (w > limit || h > limit)
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "%s holds at most %llux%llu pixels, not %llux%llu",
                       name, (unsigned long long)limit, (unsigned long long)limit,
                       (unsigned long long)w, (unsigned long long)h);
    if (writer->format == GS_OUT_BMP) {
        uint64_t row = (w * BMP_BYTES_PER_PIXEL + BMP_ROW_ALIGN - 1) / BMP_ROW_ALIGN * BMP_ROW_ALIGN;
        if (row > (INT_MAX - BMP_HEADER_BYTES) / h)
            return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "a %llux%llu BMP would be over 2 GiB",
                           (unsigned long long)w, (unsigned long long)h);
    }
    if (w * h > SIZE_MAX)
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "%llux%llu does not fit in memory",
                       (unsigned long long)w, (unsigned long long)h);
    return GS_OK;
}

gs_status gs_write_stb_open(gs_writer *writer, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    stb_out *enc = NULL;
    const char *name = gs_out_format_name(writer->format);

    if (writer->bits == 16) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT,
                     "%s holds only 8-bit samples and this image is 16-bit; write depth 8 (--depth 8) "
                     "(or write .png or .pgm)", name);
        goto cleanup;
    }
    if (writer->bits != 8) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "%s holds 8-bit samples, not %u-bit", name,
                     writer->bits);
        goto cleanup;
    }
    rc = check_stb_size(writer, name, err, err_size);
    if (rc != GS_OK) goto cleanup;

    enc = calloc(1, sizeof *enc);
    if (!enc) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    enc->fp = writer->out.fp;
    enc->pixels = malloc((size_t)writer->width * writer->height);
    if (!enc->pixels) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %ux%u %s image",
                     writer->width, writer->height, name);
        goto cleanup;
    }
    writer->ops = &stb_ops;
    writer->impl = enc;
    enc = NULL;

cleanup:
    stb_out_destroy(enc);
    return rc;
}
