/* write_raster.c: the shared streaming writer for header-then-raw-rows formats. */
/* Formats that are a header then raw rows of samples in a fixed byte order (PGM:
 * big-endian, NPY: little-endian). */

#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct raster_out {
    unsigned bytes;       /* bytes per sample: 1, 2, 4 or 8 */
    int big_endian;       /* the file's byte order */
    unsigned char *row;   /* one row reordered for the file; NULL when host order matches */
} raster_out;

/* Copy one row of native samples into the file's byte order. */
static void reorder_row(unsigned char *dst, const unsigned char *src, uint32_t width,
                        unsigned bytes, int big_endian)
{
    for (size_t x = 0; x < width; x++) {
        uint64_t v;
        switch (bytes) {
        case 2: v = ((const uint16_t *)src)[x]; break;
        case 4: v = ((const uint32_t *)src)[x]; break;
        default: v = ((const uint64_t *)src)[x]; break;
        }
        for (unsigned b = 0; b < bytes; b++) {
            unsigned shift = 8 * (big_endian ? bytes - 1 - b : b);
            dst[x * bytes + b] = (unsigned char)(v >> shift);
        }
    }
}

static gs_status raster_write_rows(gs_writer *writer, const unsigned char *src, size_t stride,
                                   uint32_t rows, char *err, size_t err_size)
{
    raster_out *raster = writer->impl;
    const size_t row_bytes = (size_t)writer->width * raster->bytes;
    for (uint32_t r = 0; r < rows; r++) {
        const unsigned char *in = src + (size_t)r * stride;
        if (raster->row) {
            reorder_row(raster->row, in, writer->width, raster->bytes, raster->big_endian);
            in = raster->row;
        }
        gs_status rc = gs_out_file_put(&writer->out, in, row_bytes, err, err_size);
        if (rc != GS_OK) return rc;
    }
    return GS_OK;
}

static gs_status raster_finish(gs_writer *writer, char *err, size_t err_size)
{
    (void)writer, (void)err, (void)err_size; /* the rows end the file: no trailer */
    return GS_OK;
}

static void raster_destroy(void *impl)
{
    raster_out *raster = impl;
    if (!raster) return;
    free(raster->row);
    free(raster);
}

static const gs_writer_ops raster_ops = {
    .write_rows = raster_write_rows,
    .finish = raster_finish,
    .destroy = raster_destroy,
};

gs_status gs_write_raster_open(gs_writer *writer, const void *header, size_t header_len,
                               int big_endian, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    raster_out *raster = calloc(1, sizeof *raster);
    if (!raster) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    raster->bytes = writer->bits / 8;
    raster->big_endian = big_endian;
    if (writer->width > SIZE_MAX / raster->bytes) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "a row of %u samples does not fit in memory",
                     writer->width);
        goto cleanup;
    }
    if (raster->bytes > 1 && big_endian == GS_HOST_LITTLE_ENDIAN) {
        raster->row = malloc((size_t)writer->width * raster->bytes);
        if (!raster->row) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %u-sample row",
                         writer->width);
            goto cleanup;
        }
    }
    rc = gs_out_file_put(&writer->out, header, header_len, err, err_size);
    if (rc != GS_OK) goto cleanup;
    writer->ops = &raster_ops;
    writer->impl = raster;
    raster = NULL;

cleanup:
    raster_destroy(raster);
    return rc;
}
