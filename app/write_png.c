/* write_png.c: the libpng writer: 8- or 16-bit gray PNG, streamed one row at a time into the writer's temporary file. */
#include <png.h>

#include "image_io_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* zlib level 6: zlib's own default balance of speed and size. Placeholder until the
 * end-to-end benchmark (bench/) tunes it against the vips anchor. */
#define PNG_ZLIB_LEVEL 6

/* libpng's default row filter choice for 8/16-bit gray: try all five, keep the best per
 * row. Placeholder, tuned together with PNG_ZLIB_LEVEL. */
#define PNG_ROW_FILTERS PNG_ALL_FILTERS

typedef struct encoder {
    png_structp png;  /* libpng's encoder */
    png_infop info;   /* libpng's header data */
    gs_png_msgs msgs; /* where the handlers put libpng's messages */
    FILE *fp;         /* the writer's file, written by write_callback */
    int io_errno;     /* errno of a failed fwrite; 0 if writing never failed */
} encoder;

static void write_callback(png_structp png, png_bytep buf, size_t len)
{
    encoder *st = png_get_io_ptr(png);
    errno = 0;
    if (fwrite(buf, 1, len, st->fp) == len) return;
    st->io_errno = errno ? errno : EIO;
    png_error(png, strerror(st->io_errno));
}

/* gs_writer_commit flushes and syncs the file itself. */
static void flush_callback(png_structp png)
{
    (void)png;
}

/* The status and message for a longjmp out of libpng. */
static gs_status jump_status(const encoder *st, char *err, size_t err_size)
{
    if (st->io_errno) return gs_fail(err, err_size, GS_ERR_IO, "write failed: %s", strerror(st->io_errno));
    if (st->msgs.out_of_memory)
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory encoding PNG: %s", st->msgs.error);
    if (st->msgs.warning[0])
        return gs_fail(err, err_size, GS_ERR_FORMAT, "PNG encoder refused the image: %s (%s)",
                       st->msgs.error, st->msgs.warning);
    return gs_fail(err, err_size, GS_ERR_FORMAT, "PNG encoder refused the image: %s", st->msgs.error);
}

/* Only `st` (never reassigned) is used on the longjmp path. */
static gs_status write_header(encoder *st, const gs_writer *writer, char *err, size_t err_size)
{
    if (setjmp(png_jmpbuf(st->png))) return jump_status(st, err, err_size);

    /* png_set_IHDR checks the user limits on writing too, and libpng's default is 10^6
     * pixels per side; allow what the PNG specification allows. */
    png_set_user_limits(st->png, GS_PNG_DIMENSION_MAX, GS_PNG_DIMENSION_MAX);
    png_set_write_fn(st->png, st, write_callback, flush_callback);
    png_set_IHDR(st->png, st->info, writer->width, writer->height, (int)writer->bits,
                 PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(st->png, PNG_ZLIB_LEVEL);
    png_set_filter(st->png, PNG_FILTER_TYPE_BASE, PNG_ROW_FILTERS);
    png_write_info(st->png, st->info);
#if GS_HOST_LITTLE_ENDIAN
    if (writer->bits == 16) png_set_swap(st->png); /* callers give native, PNG wants big-endian */
#endif
    return GS_OK;
}

static gs_status write_rows(gs_writer *writer, const unsigned char *src, size_t stride,
                                uint32_t rows, char *err, size_t err_size)
{
    encoder *st = writer->impl;
    if (setjmp(png_jmpbuf(st->png))) return jump_status(st, err, err_size);
    /* libpng copies each row before transforming it, so the caller's rows stay const. */
    for (uint32_t r = 0; r < rows; r++) png_write_row(st->png, src + (size_t)r * stride);
    return GS_OK;
}

static gs_status finish(gs_writer *writer, char *err, size_t err_size)
{
    encoder *st = writer->impl;
    if (setjmp(png_jmpbuf(st->png))) return jump_status(st, err, err_size);
    png_write_end(st->png, NULL);
    return GS_OK;
}

static void encoder_destroy(void *impl)
{
    encoder *st = impl;
    if (!st) return;
    if (st->png) png_destroy_write_struct(&st->png, st->info ? &st->info : NULL);
    free(st);
}

static const gs_writer_ops encoder_ops = {
    .write_rows = write_rows,
    .finish = finish,
    .destroy = encoder_destroy,
};

gs_status gs_write_png_open(gs_writer *writer, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    encoder *st = NULL;

    if (writer->bits != 8 && writer->bits != 16) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "PNG holds 8- or 16-bit samples, not %u-bit",
                     writer->bits);
        goto cleanup;
    }
    st = calloc(1, sizeof *st);
    if (!st) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    st->fp = writer->fp;
    st->png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, &st->msgs, gs_png_on_error,
                                        gs_png_on_warning, &st->msgs, gs_png_malloc, gs_png_free);
    if (st->png) st->info = png_create_info_struct(st->png);
    if (!st->png || !st->info) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "cannot set up the PNG encoder%s%s",
                     st->msgs.error[0] ? ": " : "", st->msgs.error);
        goto cleanup;
    }
    rc = write_header(st, writer, err, err_size);
    if (rc != GS_OK) goto cleanup;

    writer->ops = &encoder_ops;
    writer->impl = st;
    st = NULL;

cleanup:
    encoder_destroy(st);
    return rc;
}
