/* read_pnm.c: the reader for binary PGM (P5) and PPM (P6), 8 or 16-bit, any maxval, parsed here and streamed one row at a time. */
#include "io_internal.h"
#include "sample_scale.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* stb_image 2.27 returns 16-bit PNM samples in the file's big-endian byte order (upstream
 * stb pull requests #1710 and #1828, still open), does not notice a truncated raster (its
 * getn result is ignored; 2.28 checks it), and leaves samples unscaled when maxval is
 * not 255 or 65535. The format is a short text header and raw samples, so it is read here,
 * streaming, one row at a time. */

#define PNM_MAXVAL_MAX 65535u /* Netpbm's largest maxval; above 255 samples take 2 bytes */
#define PNM_BYTE_MAXVAL 255u  /* largest maxval stored in one byte per sample */

typedef struct pnm_state {
    unsigned channels;  /* 1 (P5, gray) or 3 (P6, RGB) */
    uint32_t maxval;    /* largest sample value, from the header */
    uint32_t out_max;   /* 255 or 65535: samples are scaled from maxval to this full range */
    unsigned bytes;     /* bytes per sample, in the file and delivered: 1 or 2 */
    size_t row_bytes;   /* bytes of one row in the file */
    unsigned char *raw; /* one row as stored in the file (big-endian for 2 bytes) */
    void *row;          /* the same row as native samples scaled to out_max */
} pnm_state;

static int pnm_getc(gs_source *src)
{
    unsigned char c;
    return gs_source_read(src, &c, 1) == 1 ? c : EOF;
}


/* Read one header number: skip whitespace and '#' comments, read decimal digits, then
 * consume the one whitespace byte that must follow (after maxval it is the last byte
 * before the raster). */
static gs_status pnm_number(gs_source *src, const char *what, uint32_t max, uint32_t *value,
                            char *err, size_t err_size)
{
    int c = pnm_getc(src);
    for (;;) {
        while (gs_pnm_space(c)) c = pnm_getc(src);
        if (c != '#') break;
        while (c != EOF && c != '\n' && c != '\r') c = pnm_getc(src);
    }
    if (src->read_errno) return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(src->read_errno));
    if (c < '0' || c > '9')
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNM header: no %s", what);

    uint64_t v = 0;
    for (; c >= '0' && c <= '9'; c = pnm_getc(src)) {
        v = v * 10 + (uint64_t)(c - '0');
        if (v > max)
            return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNM header: %s is over %u", what, max);
    }
    if (!gs_pnm_space(c))
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "invalid PNM header: %s not followed by whitespace", what);
    *value = (uint32_t)v;
    return GS_OK;
}

/* Scale a sample from 0..maxval to 0..out_max (rounded), the way 1/2/4-bit PNG gray
 * becomes 0..255. Samples above maxval are invalid Netpbm; they are clamped to it. */
static uint32_t pnm_scale(const pnm_state *pnm, uint32_t v)
{
    if (v > pnm->maxval) v = pnm->maxval;
    if (pnm->maxval == pnm->out_max) return v;
    return (uint32_t)gs_rescale(v, pnm->maxval, pnm->out_max);
}

static gs_status pnm_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                               uint32_t rows, char *err, size_t err_size)
{
    pnm_state *pnm = reader->impl;
    const size_t samples = (size_t)reader->info.width * pnm->channels;

    /* At maxval 255 or 65535 no sample can exceed maxval, and scaling is the identity:
     * those rows take a plain loop the compiler vectorizes (measured on an 8192^2 PGM: the
     * per-sample path was 40% of the CLI's CPU time). Full-range gray bytes (P5, maxval
     * 255) are already the samples: read them in place. */
    const int full = pnm->maxval == pnm->out_max;
    const int direct = full && pnm->bytes == 1 && pnm->channels == 1;
    for (uint32_t r = 0; r < rows; r++) {
        unsigned char *raw = direct ? dst + (size_t)r * stride : pnm->raw;
        if (gs_source_read(&reader->src, raw, pnm->row_bytes) != pnm->row_bytes) {
            if (reader->src.read_errno)
                return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s",
                               strerror(reader->src.read_errno));
            return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated %s: data ends in row %u of %u",
                           reader->info.format, reader->next_row + r + 1, reader->info.height);
        }
        if (direct) continue;
        const void *samples_row = pnm->row;
        if (pnm->bytes == 2) {
            uint16_t *out = pnm->row;
            if (full)
                for (size_t i = 0; i < samples; i++)
                    out[i] = (uint16_t)(pnm->raw[2 * i] << 8 | pnm->raw[2 * i + 1]);
            else
                for (size_t i = 0; i < samples; i++)
                    out[i] = (uint16_t)pnm_scale(pnm, (uint32_t)pnm->raw[2 * i] << 8 | pnm->raw[2 * i + 1]);
        } else {
            uint8_t *out = pnm->row;
            if (full)
                samples_row = pnm->raw; /* the bytes are the samples */
            else
                for (size_t i = 0; i < samples; i++) out[i] = (uint8_t)pnm_scale(pnm, pnm->raw[i]);
        }
        gs_row_to_gray(dst + (size_t)r * stride, samples_row, reader->info.width, pnm->channels,
                       reader->info.bits);
    }
    return GS_OK;
}

static void pnm_state_destroy(void *impl)
{
    pnm_state *pnm = impl;
    if (!pnm) return;
    free(pnm->raw);
    free(pnm->row);
    free(pnm);
}

static const gs_reader_ops pnm_ops = {
    .read_rows = pnm_read_rows,
    .destroy = pnm_state_destroy,
};

gs_status gs_read_pnm_open(gs_reader *reader, uint64_t max_pixels, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    pnm_state *pnm = NULL;
    unsigned char magic[2];
    uint32_t width = 0, height = 0, maxval = 0;

    if (gs_source_read(&reader->src, magic, sizeof magic) != sizeof magic || magic[0] != 'P' ||
        (magic[1] != '5' && magic[1] != '6')) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "not a binary PGM or PPM file");
        goto cleanup;
    }
    if ((rc = pnm_number(&reader->src, "width", UINT32_MAX, &width, err, err_size)) != GS_OK ||
        (rc = pnm_number(&reader->src, "height", UINT32_MAX, &height, err, err_size)) != GS_OK ||
        (rc = pnm_number(&reader->src, "maxval", PNM_MAXVAL_MAX, &maxval, err, err_size)) != GS_OK)
        goto cleanup;
    if (width == 0 || height == 0 || maxval == 0) {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "invalid PNM header: %ux%u, maxval %u",
                     width, height, maxval);
        goto cleanup;
    }
    rc = gs_check_pixels(width, height, max_pixels, err, err_size);
    if (rc != GS_OK) goto cleanup;

    pnm = calloc(1, sizeof *pnm);
    if (!pnm) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    pnm->channels = magic[1] == '6' ? 3 : 1;
    pnm->maxval = maxval;
    pnm->bytes = maxval > PNM_BYTE_MAXVAL ? 2 : 1;
    pnm->out_max = pnm->bytes == 2 ? PNM_MAXVAL_MAX : PNM_BYTE_MAXVAL;
    if (width > SIZE_MAX / (pnm->channels * pnm->bytes)) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "PNM row of %u pixels does not fit in memory", width);
        goto cleanup;
    }
    pnm->row_bytes = (size_t)width * pnm->channels * pnm->bytes;
    pnm->raw = malloc(pnm->row_bytes);
    pnm->row = malloc(pnm->row_bytes);
    if (!pnm->raw || !pnm->row) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %zu-byte row", pnm->row_bytes);
        goto cleanup;
    }

    reader->info.width = width;
    reader->info.height = height;
    reader->info.bits = pnm->bytes * 8;
    reader->info.format = pnm->channels == 3 ? "PPM" : "PGM";
    reader->info.was_color = pnm->channels == 3;
    reader->info.had_alpha = 0;
    reader->ops = &pnm_ops;
    reader->impl = pnm;
    pnm = NULL;

cleanup:
    pnm_state_destroy(pnm);
    return rc;
}
