/* write_tiff.c: the TIFF writer on libtiff, streamed in deflated strips. */
/* 8/16-bit gray images and exact 32/64-bit integrals with the horizontal predictor, float32
 * images and float64 integrals with the floating-point one; BigTIFF whenever the file could
 * pass 4 GiB. */
#include "io_internal.h"
#include "tiff_io.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of uncompressed rows per strip: small enough to stream, large enough for deflate. */
#define TIFF_STRIP_BYTES (256u << 10)
/* The deflate level follows the PNG setting (--compression, --png-level): 0 writes
 * uncompressed strips; ISA-L's fast tier 1..3 (the default, 2, among them) becomes
 * libdeflate's level 1, which is several times faster than 2 for a few percent more
 * bytes; zlib's levels 4..9 the same libdeflate level (docs/performance.md has the
 * sizes and times). */
#define TIFF_FAST_LEVEL 1
#define TIFF_FAST_TIER_MAX 3

static int tiff_deflate_level(int png_level)
{
    return png_level <= TIFF_FAST_TIER_MAX && png_level > 0 ? TIFF_FAST_LEVEL : png_level;
}

typedef struct tiff_out_state {
    TIFF *tif;
    gs_tiff_output out;
    gs_tiff_messages msgs;
    unsigned char *strip; /* rows gathered for the next strip */
    size_t row_bytes;
    uint32_t rows_per_strip;
    uint32_t rows_held;   /* rows in `strip` */
    uint32_t next_strip;  /* index of the next strip to write */
} tiff_out_state;

static gs_status tiff_write_failure(tiff_out_state *t, const char *what, char *err, size_t err_size)
{
    if (t->out.write_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "write failed: %s", strerror(t->out.write_errno));
    return gs_fail(err, err_size, GS_ERR_IO, "TIFF %s failed: %s", what,
                   t->msgs.error[0] ? t->msgs.error : "libtiff gave no reason");
}

/* Whole strips go to TIFFWriteEncodedStrip, which deflates them with libdeflate in one
 * call (row by row, libtiff must use zlib's streaming deflate, many times slower). */
static gs_status flush_strip(tiff_out_state *t, char *err, size_t err_size)
{
    const tmsize_t bytes = (tmsize_t)((size_t)t->rows_held * t->row_bytes);
    if (TIFFWriteEncodedStrip(t->tif, t->next_strip, t->strip, bytes) != bytes)
        return tiff_write_failure(t, "strip write", err, err_size);
    t->next_strip++;
    t->rows_held = 0;
    return GS_OK;
}

static gs_status tiff_write_rows(gs_writer *writer, const unsigned char *src, size_t stride,
                                 uint32_t rows, char *err, size_t err_size)
{
    tiff_out_state *t = writer->impl;
    for (uint32_t i = 0; i < rows; ++i) {
        memcpy(t->strip + (size_t)t->rows_held * t->row_bytes, src + (size_t)i * stride, t->row_bytes);
        const uint32_t y = writer->rows_written + i;
        if (++t->rows_held == t->rows_per_strip || y + 1 == writer->height) {
            gs_status rc = flush_strip(t, err, err_size);
            if (rc != GS_OK) return rc;
        }
    }
    return GS_OK;
}

static gs_status tiff_finish(gs_writer *writer, char *err, size_t err_size)
{
    tiff_out_state *t = writer->impl;
    if (!TIFFFlush(t->tif) || t->out.write_errno)
        return tiff_write_failure(t, "directory write", err, err_size);
    TIFFClose(t->tif); /* the file stays open: gs_out_file commits it */
    t->tif = NULL;
    return t->out.write_errno ? tiff_write_failure(t, "close", err, err_size) : GS_OK;
}

static void tiff_out_destroy(void *impl)
{
    tiff_out_state *t = impl;
    if (!t) return;
    if (t->tif) {
        t->out.discard = 1; /* aborted: TIFFCleanup flushes a file open for writing */
        TIFFCleanup(t->tif);
    }
    free(t->strip);
    free(t);
}

static const gs_writer_ops tiff_writer_ops = {
    .write_rows = tiff_write_rows,
    .finish = tiff_finish,
    .destroy = tiff_out_destroy,
};

gs_status gs_write_tiff_open(gs_writer *writer, char *err, size_t err_size)
{
    const uint32_t bits = writer->bits;
    const int is_float = writer->kind == GS_SAMPLES_FLOAT;
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "TIFF output takes 8, 16, 32 or 64-bit samples, not %u-bit", bits);
    if (is_float && bits != 32 && bits != 64)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "TIFF output takes 32 or 64-bit float samples, not %u-bit", bits);
    const uint64_t row_bytes = (uint64_t)writer->width * (bits / 8u);
    if (row_bytes > SIZE_MAX / 4)
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "TIFF row of %u samples does not fit in memory", writer->width);
    uint32_t rows_per_strip = row_bytes >= TIFF_STRIP_BYTES ? 1u : (uint32_t)(TIFF_STRIP_BYTES / row_bytes);
    if (rows_per_strip > writer->height) rows_per_strip = writer->height;

    tiff_out_state *t = calloc(1, sizeof *t);
    if (!t) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    gs_status rc = GS_OK;
    t->row_bytes = (size_t)row_bytes;
    t->rows_per_strip = rows_per_strip;
    t->strip = malloc(t->row_bytes * rows_per_strip);
    if (!t->strip) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %u-row strip", rows_per_strip);
        goto cleanup;
    }
    t->out.fp = writer->out.fp;
    t->tif = gs_tiff_open_write(&t->out, gs_tiff_needs_bigtiff(writer->width, writer->height, bits, rows_per_strip),
                                &t->msgs);
    if (!t->tif) {
        rc = tiff_write_failure(t, "open", err, err_size);
        goto cleanup;
    }
    if (!TIFFSetField(t->tif, TIFFTAG_IMAGEWIDTH, writer->width) ||
        !TIFFSetField(t->tif, TIFFTAG_IMAGELENGTH, writer->height) ||
        !TIFFSetField(t->tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)bits) ||
        !TIFFSetField(t->tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)1) ||
        !TIFFSetField(t->tif, TIFFTAG_SAMPLEFORMAT, (uint16_t)(is_float ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT)) ||
        !TIFFSetField(t->tif, TIFFTAG_PHOTOMETRIC, (uint16_t)PHOTOMETRIC_MINISBLACK) ||
        !TIFFSetField(t->tif, TIFFTAG_PLANARCONFIG, (uint16_t)PLANARCONFIG_CONTIG) ||
        !TIFFSetField(t->tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip) ||
        !TIFFSetField(t->tif, TIFFTAG_SOFTWARE, "gsmooth")) {
        rc = tiff_write_failure(t, "header", err, err_size);
        goto cleanup;
    }
    /* The floating-point predictor (3) splits each row's samples into byte planes and
     * differences those: deflate then finds the runs of sign and exponent bytes that the
     * horizontal predictor's integer differences of float bit patterns hide. Level 0 is
     * stored as it is, predictor and all: nothing to predict for. */
    const int level = tiff_deflate_level(writer->encode.level);
    const uint16_t predictor = is_float ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL;
    if (level > 0 && (!TIFFSetField(t->tif, TIFFTAG_COMPRESSION, (uint16_t)COMPRESSION_ADOBE_DEFLATE) ||
                      !TIFFSetField(t->tif, TIFFTAG_PREDICTOR, predictor) ||
                      !TIFFSetField(t->tif, TIFFTAG_ZIPQUALITY, level))) {
        rc = tiff_write_failure(t, "header", err, err_size);
        goto cleanup;
    }
    writer->ops = &tiff_writer_ops;
    writer->impl = t;
    t = NULL;

cleanup:
    tiff_out_destroy(t);
    return rc;
}
