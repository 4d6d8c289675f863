/* writer.c: the image writer: checks, atomic output file, rows to the encoder. */
/* It checks the request, opens the atomic output file, and hands rows to the format's
 * encoder until commit or abort. */

#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

/* Each format's opener, which writes its header and sets the writer's operations. */
static gs_status (*const format_open[])(gs_writer *writer, char *err, size_t err_size) = {
    [GS_OUT_PNG] = gs_write_png_open, [GS_OUT_PGM] = gs_write_pgm_open,
    [GS_OUT_BMP] = gs_write_stb_open, [GS_OUT_TGA] = gs_write_stb_open,
    [GS_OUT_JPG] = gs_write_stb_open, [GS_OUT_NPY] = gs_write_npy_open,
    [GS_OUT_TIF] = gs_write_tiff_open, [GS_OUT_FITS] = gs_write_fits_open,
};
_Static_assert(sizeof format_open / sizeof format_open[0] == GS_OUT_FORMAT_COUNT,
               "every gs_out_format needs an opener");

/* Free everything; an unrenamed temporary file is closed and unlinked. */
static void writer_free(gs_writer *writer)
{
    if (!writer) return;
    if (writer->ops && writer->impl) writer->ops->destroy(writer->impl);
    gs_out_file_discard(&writer->out);
    free(writer->cards);
    free(writer);
}

gs_status gs_writer_open(const char *path, gs_out_format fmt, uint32_t width, uint32_t height,
                         uint32_t bits, const gs_encode_settings *encode, gs_writer **out,
                         char *err, size_t err_size)
{
    return gs_writer_open_kind(path, fmt, width, height, bits, GS_SAMPLES_UINT, encode, out,
                               err, err_size);
}

gs_status gs_writer_open_kind(const char *path, gs_out_format fmt, uint32_t width,
                              uint32_t height, uint32_t bits, gs_sample_kind kind,
                              const gs_encode_settings *encode, gs_writer **out, char *err,
                              size_t err_size)
{
    gs_status rc = GS_OK;
    gs_writer *writer = NULL;

    if (out) *out = NULL;
    if (!path || !out) return gs_fail(err, err_size, GS_ERR_USAGE, "gs_writer_open: NULL argument");
    if ((unsigned)fmt >= GS_OUT_FORMAT_COUNT)
        return gs_fail(err, err_size, GS_ERR_USAGE, "unknown output format %d", (int)fmt);
    if (width == 0 || height == 0)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "cannot write an empty %ux%u image", width, height);
    if (kind == GS_SAMPLES_FLOAT && !gs_out_format_takes_float(fmt))
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "%s stores no float samples: write .tif, .fits or .npy", gs_out_format_name(fmt));
    if (kind == GS_SAMPLES_FLOAT && bits != 32 && bits != 64)
        return gs_fail(err, err_size, GS_ERR_USAGE, "float samples are 32 or 64 bits, not %u", bits);

    writer = calloc(1, sizeof *writer);
    if (!writer) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    writer->format = fmt;
    writer->width = width;
    writer->height = height;
    writer->bits = bits;
    writer->kind = kind;
    writer->encode = encode ? *encode : gs_encode_settings_make(-1, 0);
    rc = gs_out_file_open(&writer->out, path, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = format_open[fmt](writer, err, err_size);
    if (rc != GS_OK) goto cleanup;
    *out = writer;
    writer = NULL;

cleanup:
    writer_free(writer);
    return rc;
}

gs_status gs_writer_keep_cards(gs_writer *writer, const char *cards, size_t count, char *err,
                               size_t err_size)
{
    if (!writer || (!cards && count))
        return gs_fail(err, err_size, GS_ERR_USAGE, "gs_writer_keep_cards: NULL argument");
    if (writer->rows_written)
        return gs_fail(err, err_size, GS_ERR_USAGE, "header cards come before the first row");
    if (writer->format != GS_OUT_FITS || count == 0) return GS_OK;
    if (count > SIZE_MAX / 80) return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "too many header cards");
    char *copy = malloc(count * 80);
    if (!copy) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    memcpy(copy, cards, count * 80);
    free(writer->cards);
    writer->cards = copy;
    writer->card_count = count;
    return GS_OK;
}

gs_status gs_writer_write_rows(gs_writer *writer, const void *src, size_t stride, uint32_t rows,
                               char *err, size_t err_size)
{
    if (!writer || (!src && rows))
        return gs_fail(err, err_size, GS_ERR_USAGE, "gs_writer_write_rows: NULL argument");
    if (writer->failed)
        return gs_fail(err, err_size, GS_ERR_IO, "an earlier write to this file failed");
    if (rows > writer->height - writer->rows_written)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%u more rows would exceed the image's %u rows",
                       rows, writer->height);
    size_t row_bytes = (size_t)writer->width * (writer->bits / 8);
    if (rows > 1 && stride < row_bytes)
        return gs_fail(err, err_size, GS_ERR_USAGE, "row stride %zu is below the row size %zu",
                       stride, row_bytes);
    if (rows == 0) return GS_OK;

    gs_status rc = writer->ops->write_rows(writer, src, stride, rows, err, err_size);
    if (rc != GS_OK) {
        writer->failed = 1;
        return rc;
    }
    writer->rows_written += rows;
    return GS_OK;
}

gs_status gs_writer_commit(gs_writer *writer, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    if (!writer) return gs_fail(err, err_size, GS_ERR_USAGE, "gs_writer_commit: NULL writer");

    if (writer->failed) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "an earlier write to this file failed");
        goto cleanup;
    }
    if (writer->rows_written != writer->height) {
        rc = gs_fail(err, err_size, GS_ERR_USAGE, "only %u of %u rows were written",
                     writer->rows_written, writer->height);
        goto cleanup;
    }
    rc = writer->ops->finish(writer, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = gs_out_file_commit(&writer->out, err, err_size);

cleanup:
    writer_free(writer);
    return rc;
}

void gs_writer_abort(gs_writer *writer)
{
    writer_free(writer);
}
