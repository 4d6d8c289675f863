/* write_png.c: the PNG writer: 8- or 16-bit gray rows, Sub-filtered, deflated by png_deflate.c on worker threads, in a container (signature, IHDR, IEND by libpng; IDAT chunks framed here). */
#include "io_internal.h"
#include "png_deflate.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Why not libpng's row writer: it filters and deflates on the caller's thread, one row at a
 * time, and offers no way to hand it IDAT data compressed elsewhere. libpng still writes
 * the container: signature and IHDR (png_write_info) and IEND (png_write_chunk), with
 * their CRCs; put_idat frames the IDAT chunks. Its default (all five filters tried per
 * row, zlib level 6) took nearly all of an end-to-end run (docs/performance.md, "Choices
 * the code makes"). Each piece of the deflate stream becomes one IDAT chunk.
 */

/* PNG row filter types (PNG specification, section 9.2). */
#define FILTER_NONE 0
#define FILTER_SUB 1
/* Longest libpng message kept. */
#define CONTAINER_MESSAGE_SIZE 256

/* libpng's write side, used for the container only; its errors come back as a status. */
typedef struct container {
    png_structp png;           /* libpng write struct */
    png_infop info;            /* its info struct (IHDR) */
    gs_out_file *file;         /* where the bytes go */
    gs_status status;          /* first failure, GS_OK until then */
    char msg[CONTAINER_MESSAGE_SIZE]; /* its message */
} container;

typedef struct encoder {
    container out;             /* the PNG container */
    gs_deflate *stream;        /* the IDAT data */
    int level;                 /* zlib level: 0 stores rows unfiltered */
    unsigned bytes_per_sample; /* 1 or 2 */
    size_t row_bytes;          /* filter byte + samples */
} encoder;

/* libpng callbacks: bytes go through the atomic writer; failures become a status. */
static void container_write(png_structp png, png_bytep data, size_t n)
{
    container *c = png_get_io_ptr(png);
    char msg[sizeof c->msg];
    gs_status rc = gs_out_file_put(c->file, data, n, msg, sizeof msg);
    if (rc != GS_OK) {
        c->status = rc;
        snprintf(c->msg, sizeof c->msg, "%s", msg);
        png_error(png, c->msg);
    }
}

static void container_flush(png_structp png) { (void)png; /* commit flushes and syncs */ }

static void container_error(png_structp png, png_const_charp msg)
{
    container *c = png_get_error_ptr(png);
    if (c->status == GS_OK) {
        c->status = GS_ERR_FORMAT;
        snprintf(c->msg, sizeof c->msg, "libpng: %s", msg);
    }
    png_longjmp(png, 1);
}

static void container_warning(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* nothing libpng warns about here changes the file */
}

/* IEND, written by libpng (length, type, CRC). */
static gs_status put_iend(container *c, char *err, size_t err_size)
{
    if (setjmp(png_jmpbuf(c->png)))
        return gs_fail(err, err_size, c->status != GS_OK ? c->status : GS_ERR_IO, "%s", c->msg);
    png_write_chunk(c->png, (png_const_bytep) "IEND", NULL, 0);
    return GS_OK;
}

/* The deflate stream's sink: each piece becomes one IDAT chunk, framed here rather than by
 * libpng so that its CRC runs on gs_png_crc (ISA-L) over the whole image data: libpng's,
 * zlib's crc32, was about 1% of an end-to-end run's CPU. Nothing of libpng's state tracks
 * IDAT chunks written through its chunk API, so IEND after them is unchanged. */
static gs_status put_idat(void *ctx, const unsigned char *head, size_t head_len,
                          const unsigned char *body, size_t body_len, const unsigned char *tail,
                          size_t tail_len, char *err, size_t err_size)
{
    container *c = ctx;
    const size_t length = head_len + body_len + tail_len; /* < 2^31: png_deflate.c's pieces */
    unsigned char frame[8];
    gs_store_be32(frame, (uint32_t)length);
    memcpy(frame + 4, "IDAT", 4);
    uint32_t crc = gs_png_crc(0, frame + 4, 4);
    crc = gs_png_crc(crc, head, head_len);
    crc = gs_png_crc(crc, body, body_len);
    crc = gs_png_crc(crc, tail, tail_len);
    unsigned char crc_bytes[4];
    gs_store_be32(crc_bytes, crc);
    gs_status rc = gs_out_file_put(c->file, frame, sizeof frame, err, err_size);
    if (rc == GS_OK && head_len) rc = gs_out_file_put(c->file, head, head_len, err, err_size);
    if (rc == GS_OK && body_len) rc = gs_out_file_put(c->file, body, body_len, err, err_size);
    if (rc == GS_OK && tail_len) rc = gs_out_file_put(c->file, tail, tail_len, err, err_size);
    if (rc == GS_OK) rc = gs_out_file_put(c->file, crc_bytes, sizeof crc_bytes, err, err_size);
    return rc;
}

/* ---- row filters ---- */

/* One row as PNG stores it: the filter byte, then big-endian samples, each byte minus the
 * same byte of the sample to its left (Sub). Rows are smoothed along x, so neighbours
 * differ little: on the mosaic Sub beat None, Up, Average, Paeth and libpng's per-row
 * choice at every zlib level (docs/performance.md). Level 0 stores rows unfiltered. */
static void filter_row(unsigned char *dst, const unsigned char *src, uint32_t width,
                       unsigned bytes_per_sample, int level)
{
    if (bytes_per_sample == 1) {
        if (level == 0) {
            dst[0] = FILTER_NONE;
            memcpy(dst + 1, src, width);
            return;
        }
        dst[0] = FILTER_SUB;
        dst[1] = src[0];
        for (uint32_t x = 1; x < width; x++) dst[1 + x] = (unsigned char)(src[x] - src[x - 1]);
        return;
    }
    unsigned char *d = dst + 1;
    dst[0] = level == 0 ? FILTER_NONE : FILTER_SUB;
    unsigned prev_hi = 0, prev_lo = 0;
    for (uint32_t x = 0; x < width; x++) {
        uint16_t v; /* native-endian; memcpy because callers promise no alignment */
        memcpy(&v, src + 2 * (size_t)x, sizeof v);
        unsigned hi = v >> 8u, lo = v & 0xFFu;
        d[2 * x] = (unsigned char)(level == 0 ? hi : hi - prev_hi);
        d[2 * x + 1] = (unsigned char)(level == 0 ? lo : lo - prev_lo);
        prev_hi = hi, prev_lo = lo;
    }
}

/* ---- the writer's operations ---- */

static gs_status write_rows(gs_writer *writer, const unsigned char *src, size_t stride,
                            uint32_t rows, char *err, size_t err_size)
{
    encoder *enc = writer->impl;
    for (uint32_t r = 0; r < rows; r++) {
        unsigned char *dst = gs_deflate_reserve(enc->stream, enc->row_bytes);
        filter_row(dst, src + (size_t)r * stride, writer->width, enc->bytes_per_sample, enc->level);
        gs_status rc = gs_deflate_append(enc->stream, enc->row_bytes, err, err_size);
        if (rc != GS_OK) return rc;
    }
    return GS_OK;
}

static gs_status finish(gs_writer *writer, char *err, size_t err_size)
{
    encoder *enc = writer->impl;
    gs_status rc = gs_deflate_finish(enc->stream, err, err_size);
    if (rc == GS_OK) rc = put_iend(&enc->out, err, err_size);
    return rc;
}

static void encoder_destroy(void *impl)
{
    encoder *enc = impl;
    if (!enc) return;
    gs_deflate_close(enc->stream);
    if (enc->out.png) png_destroy_write_struct(&enc->out.png, &enc->out.info);
    free(enc);
}

static const gs_writer_ops encoder_ops = {
    .write_rows = write_rows,
    .finish = finish,
    .destroy = encoder_destroy,
};

/* libpng writes the signature and IHDR: gray, 8 or 16 bits, no interlace. */
static gs_status write_header(gs_writer *writer, encoder *enc, char *err, size_t err_size)
{
    container *c = &enc->out;
    c->file = &writer->out;
    c->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, c, container_error, container_warning);
    if (!c->png || !(c->info = png_create_info_struct(c->png)))
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for libpng");
    if (setjmp(png_jmpbuf(c->png)))
        return gs_fail(err, err_size, c->status != GS_OK ? c->status : GS_ERR_IO, "%s", c->msg);
    png_set_write_fn(c->png, c, container_write, container_flush);
    /* libpng's default 1,000,000-pixel limit applies to writing too; PNG allows 2^31-1. */
    png_set_user_limits(c->png, GS_PNG_DIMENSION_MAX, GS_PNG_DIMENSION_MAX);
    png_set_IHDR(c->png, c->info, writer->width, writer->height, (int)writer->bits,
                 PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(c->png, c->info);
    return GS_OK;
}

gs_status gs_write_png_open(gs_writer *writer, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    encoder *enc = NULL;

    if (writer->bits != 8 && writer->bits != 16) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "PNG holds 8- or 16-bit samples, not %u-bit",
                     writer->bits);
        goto cleanup;
    }
    if (writer->width == 0 || writer->height == 0 || writer->width > GS_PNG_DIMENSION_MAX ||
        writer->height > GS_PNG_DIMENSION_MAX) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "PNG cannot hold a %ux%u image",
                     writer->width, writer->height);
        goto cleanup;
    }
    enc = calloc(1, sizeof *enc);
    if (!enc) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    enc->level = writer->encode.level;
    enc->bytes_per_sample = writer->bits / 8;
    enc->row_bytes = 1 + (size_t)writer->width * enc->bytes_per_sample;
    rc = gs_deflate_open(enc->level, writer->encode.threads, enc->row_bytes, put_idat, &enc->out,
                         &enc->stream, err, err_size);
    if (rc != GS_OK) goto cleanup;
    rc = write_header(writer, enc, err, err_size);
    if (rc != GS_OK) goto cleanup;

    writer->ops = &encoder_ops;
    writer->impl = enc;
    enc = NULL;

cleanup:
    encoder_destroy(enc);
    return rc;
}
