/* read_pnm.c: the reader for Netpbm's PBM, PGM and PPM. */
/* Plain (P1-P3) and binary (P4-P6), 1, 8 or 16-bit, any maxval, parsed here and streamed
 * one row at a time. */

#include "io_internal.h"
#include "sample_scale.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* stb_image 2.27 returns 16-bit PNM samples in the file's big-endian byte order (upstream
 * stb pull requests #1710 and #1828, still open), does not notice a truncated raster (its
 * getn result is ignored; 2.28 checks it), and leaves samples unscaled when maxval is
 * not 255 or 65535. The format is a short text header and raw or decimal samples, so it
 * is read here, streaming, one row at a time.
 *
 * One rule for every type: maxval <= 255 gives 8-bit gray, more gives 16-bit, and samples
 * are scaled from 0..maxval to the full range (gs_rescale: rounded, halves up), whether the
 * file stores them as bytes or as decimal text. A bitmap (PBM) is 8-bit with 1 (black) as
 * 0 and 0 (white) as 255, as Netpbm's pbmtopgm and PIL give it. Comments ('#' to the end
 * of its line) are whitespace wherever libnetpbm takes them: between the header's fields,
 * right after one, and anywhere in a plain raster. */

#define PNM_MAXVAL_MAX 65535u /* Netpbm's largest maxval; above 255 samples take 2 bytes */
#define PNM_BYTE_MAXVAL 255u  /* largest maxval stored in one byte per sample */
#define PBM_WHITE 255u        /* a PBM 0 bit */
#define PBM_BLACK 0u          /* a PBM 1 bit */
#define PBM_PIXELS_PER_BYTE 8u /* P4 packs a row's bits from the most significant, padded to a byte */
/* Bytes of a plain raster taken from the source at a time (a stream gives what it has). */
#define PNM_TEXT_CHUNK ((size_t)64 << 10)

typedef struct pnm_state {
    int plain;          /* P1-P3: samples are decimal text (P1: one '0' or '1' a pixel) */
    int bitmap;         /* P1 or P4: one bit a pixel */
    unsigned channels;  /* 1 (PBM, PGM) or 3 (PPM, RGB) */
    uint32_t maxval;    /* largest sample value, from the header (1 for a bitmap) */
    uint32_t out_max;   /* 255 or 65535: samples are scaled from maxval to this full range */
    unsigned bytes;     /* bytes per delivered sample (1 or 2), and per stored one in P5/P6 */
    size_t row_bytes;   /* bytes of one row in a binary file */
    unsigned char *raw; /* one binary row as stored in the file (big-endian for 2 bytes) */
    void *row;          /* one row as native samples scaled to out_max */
    unsigned char *text; /* plain rasters: the text being parsed */
    size_t text_pos, text_len; /* its unparsed bytes: text[text_pos..text_len) */
} pnm_state;

static int pnm_getc(gs_source *src)
{
    unsigned char c;
    return gs_source_read(src, &c, 1) == 1 ? c : EOF;
}


/* Read one header number: skip whitespace and '#' comments, read decimal digits, then
 * consume the one whitespace byte (or comment) that must follow: after the last field it
 * is the last byte before the raster. */
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
    if (c == '#') /* libnetpbm reads a comment as the newline that ends it */
        while (c != EOF && c != '\n' && c != '\r') c = pnm_getc(src);
    else if (!gs_pnm_space(c))
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

static gs_status pnm_truncated(const gs_reader *reader, uint32_t row, char *err, size_t err_size)
{
    if (reader->src.read_errno)
        return gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(reader->src.read_errno));
    return gs_fail(err, err_size, GS_ERR_FORMAT, "truncated %s: data ends in row %u of %u",
                   reader->info.format, row + 1, reader->info.height);
}

/* ---- plain rasters (P1-P3) ---- */

/* The next byte of a plain raster, or EOF at the input's end. */
static int text_getc(gs_reader *reader, pnm_state *pnm)
{
    if (pnm->text_pos == pnm->text_len) {
        pnm->text_pos = 0;
        pnm->text_len = gs_source_read_some(&reader->src, pnm->text, PNM_TEXT_CHUNK);
        if (pnm->text_len == 0) return EOF;
    }
    return pnm->text[pnm->text_pos++];
}

/* A byte in a plain raster that no sample can start with or end on. */
static gs_status plain_junk(const gs_reader *reader, int c, uint32_t row, char *err, size_t err_size)
{
    if (c > ' ' && c <= '~') /* printable ASCII, whatever the locale */
        return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid plain %s: '%c' in row %u",
                       reader->info.format, c, row + 1);
    return gs_fail(err, err_size, GS_ERR_FORMAT, "invalid plain %s: byte 0x%02X in row %u",
                   reader->info.format, (unsigned)c, row + 1);
}

/* One plain sample, unscaled: P1 takes one '0' or '1' (Netpbm needs no space between
 * them), P2 and P3 a decimal number ended by whitespace, a comment or the input's end;
 * numbers past maxval saturate there (pnm_scale clamps them to it). */
static gs_status plain_sample(gs_reader *reader, pnm_state *pnm, uint32_t row, uint32_t *value,
                              char *err, size_t err_size)
{
    int c = text_getc(reader, pnm);
    for (;;) {
        while (gs_pnm_space(c)) c = text_getc(reader, pnm);
        if (c != '#') break;
        while (c != EOF && c != '\n' && c != '\r') c = text_getc(reader, pnm);
    }
    if (c == EOF) return pnm_truncated(reader, row, err, err_size);
    if (pnm->bitmap && (c == '0' || c == '1')) {
        *value = (uint32_t)(c - '0');
        return GS_OK;
    }
    if (pnm->bitmap || c < '0' || c > '9') return plain_junk(reader, c, row, err, err_size);
    uint32_t v = 0;
    for (; c >= '0' && c <= '9'; c = text_getc(reader, pnm))
        if (v <= pnm->maxval) v = v * 10 + (uint32_t)(c - '0'); /* < 2^20: no wrap */
    if (c != EOF && !gs_pnm_space(c) && c != '#') return plain_junk(reader, c, row, err, err_size);
    if (c == '#') pnm->text_pos--; /* the comment is the next sample's to skip */
    *value = v;
    return GS_OK;
}

/* One plain row into `out`: native samples of pnm->bytes each, scaled (bitmaps: white or
 * black bytes). */
static gs_status plain_row(gs_reader *reader, pnm_state *pnm, uint32_t row, void *out,
                           char *err, size_t err_size)
{
    const size_t samples = (size_t)reader->info.width * pnm->channels;
    for (size_t i = 0; i < samples; i++) {
        uint32_t v = 0;
        gs_status rc = plain_sample(reader, pnm, row, &v, err, err_size);
        if (rc != GS_OK) return rc;
        if (pnm->bitmap)
            ((uint8_t *)out)[i] = (uint8_t)(v ? PBM_BLACK : PBM_WHITE);
        else if (pnm->bytes == 2)
            ((uint16_t *)out)[i] = (uint16_t)pnm_scale(pnm, v);
        else
            ((uint8_t *)out)[i] = (uint8_t)pnm_scale(pnm, v);
    }
    return GS_OK;
}

/* ---- binary rasters (P4-P6) ---- */

/* One P4 row of packed bits as white and black bytes; the padding bits are ignored. */
static void unpack_bits(uint8_t *out, const unsigned char *raw, uint32_t width)
{
    for (uint32_t x = 0; x < width; x++) {
        const unsigned shift = PBM_PIXELS_PER_BYTE - 1 - x % PBM_PIXELS_PER_BYTE;
        out[x] = (uint8_t)((raw[x / PBM_PIXELS_PER_BYTE] >> shift) & 1u ? PBM_BLACK : PBM_WHITE);
    }
}

/* One binary row (P5/P6) from pnm->raw into native samples; returns where they are. */
static const void *binary_samples(pnm_state *pnm, size_t samples)
{
    /* At maxval 255 or 65535 no sample can exceed maxval, and scaling is the identity:
     * those rows take a plain loop the compiler vectorizes (measured: the per-sample path
     * was a large share of the CLI's time on a big PGM). */
    const int full = pnm->maxval == pnm->out_max;
    if (pnm->bytes == 2) {
        uint16_t *out = pnm->row;
        if (full)
            for (size_t i = 0; i < samples; i++)
                out[i] = (uint16_t)(pnm->raw[2 * i] << 8 | pnm->raw[2 * i + 1]);
        else
            for (size_t i = 0; i < samples; i++)
                out[i] = (uint16_t)pnm_scale(pnm, (uint32_t)pnm->raw[2 * i] << 8 | pnm->raw[2 * i + 1]);
        return out;
    }
    if (full) return pnm->raw; /* the bytes are the samples */
    uint8_t *out = pnm->row;
    for (size_t i = 0; i < samples; i++) out[i] = (uint8_t)pnm_scale(pnm, pnm->raw[i]);
    return out;
}

static gs_status pnm_read_rows(gs_reader *reader, unsigned char *dst, size_t stride,
                               uint32_t rows, char *err, size_t err_size)
{
    pnm_state *pnm = reader->impl;
    const size_t samples = (size_t)reader->info.width * pnm->channels;
    /* Full-range gray bytes (P5, maxval 255) are already the samples: read them in place. */
    const int direct = !pnm->plain && !pnm->bitmap && pnm->channels == 1 &&
                       pnm->maxval == pnm->out_max && pnm->bytes == 1;
    for (uint32_t r = 0; r < rows; r++) {
        const uint32_t row = reader->next_row + r;
        unsigned char *out = dst + (size_t)r * stride;
        if (pnm->plain) { /* bitmap bytes straight into the output row, samples through row
                           * (the output row of 16-bit samples need not be aligned for them) */
            void *samples_row = pnm->bitmap ? (void *)out : pnm->row;
            gs_status rc = plain_row(reader, pnm, row, samples_row, err, err_size);
            if (rc != GS_OK) return rc;
            if (!pnm->bitmap)
                gs_row_to_gray(out, samples_row, reader->info.width, pnm->channels, reader->info.bits);
            continue;
        }
        unsigned char *raw = direct ? out : pnm->raw;
        if (gs_source_read(&reader->src, raw, pnm->row_bytes) != pnm->row_bytes)
            return pnm_truncated(reader, row, err, err_size);
        if (direct) continue;
        if (pnm->bitmap) {
            unpack_bits(out, pnm->raw, reader->info.width);
            continue;
        }
        gs_row_to_gray(out, binary_samples(pnm, samples), reader->info.width, pnm->channels,
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
    free(pnm->text);
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
    uint32_t width = 0, height = 0, maxval = 1;

    if (gs_source_read(&reader->src, magic, sizeof magic) != sizeof magic || magic[0] != 'P' ||
        magic[1] < '1' || magic[1] > '6') {
        rc = gs_fail(err, err_size, GS_ERR_FORMAT, "not a PBM, PGM or PPM file");
        goto cleanup;
    }
    const int type = magic[1] - '0';           /* 1-3 plain, 4-6 binary */
    const int bitmap = type == 1 || type == 4; /* PBM: no maxval field */
    if ((rc = pnm_number(&reader->src, "width", UINT32_MAX, &width, err, err_size)) != GS_OK ||
        (rc = pnm_number(&reader->src, "height", UINT32_MAX, &height, err, err_size)) != GS_OK ||
        (!bitmap &&
         (rc = pnm_number(&reader->src, "maxval", PNM_MAXVAL_MAX, &maxval, err, err_size)) != GS_OK))
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
    pnm->plain = type <= 3;
    pnm->bitmap = bitmap;
    pnm->channels = type == 3 || type == 6 ? 3 : 1;
    pnm->maxval = maxval;
    pnm->bytes = maxval > PNM_BYTE_MAXVAL ? 2 : 1;
    pnm->out_max = pnm->bytes == 2 ? PNM_MAXVAL_MAX : PNM_BYTE_MAXVAL;
    if (width > SIZE_MAX / (pnm->channels * pnm->bytes)) {
        rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "PNM row of %u pixels does not fit in memory", width);
        goto cleanup;
    }
    const size_t row_samples_bytes = (size_t)width * pnm->channels * pnm->bytes;
    pnm->row_bytes = bitmap ? width / PBM_PIXELS_PER_BYTE + (width % PBM_PIXELS_PER_BYTE != 0)
                            : row_samples_bytes;
    if (!pnm->plain && !(pnm->raw = malloc(pnm->row_bytes))) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %zu-byte row", pnm->row_bytes);
        goto cleanup;
    }
    if (!bitmap) {
        if (!(pnm->row = malloc(row_samples_bytes))) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %zu-byte row", row_samples_bytes);
            goto cleanup;
        }
    }
    if (pnm->plain && !(pnm->text = malloc(PNM_TEXT_CHUNK))) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }

    static const char *const names[] = {"PBM", "PGM", "PPM"};
    reader->info.width = width;
    reader->info.height = height;
    reader->info.bits = pnm->bytes * 8;
    reader->info.format = names[(type - 1) % 3];
    reader->info.was_color = pnm->channels == 3;
    reader->info.had_alpha = 0;
    reader->ops = &pnm_ops;
    reader->impl = pnm;
    pnm = NULL;

cleanup:
    pnm_state_destroy(pnm);
    return rc;
}
