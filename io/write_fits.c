/* write_fits.c: the FITS writer: a header made by cfitsio, then the rows streamed in FITS's byte order. */

/*
 * Samples (writer->kind, writer->bits) and the image they make:
 *   - unsigned 8: BITPIX 8;
 *   - unsigned 16, 32, 64: BITPIX 16, 32, 64 with BSCALE 1 and BZERO 2^15, 2^31, 2^63, the
 *     standard's unsigned convention (cfitsio's USHORT_IMG, ULONG_IMG, ULONGLONG_IMG):
 *     the stored signed value is the sample minus BZERO, which in two's complement is the
 *     sample with its top bit flipped;
 *   - float 32, 64: BITPIX -32, -64, the IEEE values bit for bit.
 * Row 0 of the caller is the first row stored (NAXIS2 index 1), the order read_fits.c
 * delivers, so a FITS input written back keeps its rows where they were.
 *
 * cfitsio writes files it creates itself, by name, and keeps the whole file in memory for
 * standard output. gsmooth's output contract (a temporary file renamed into place, "-"
 * streamed, memory bounded whatever the size) is kept this way: cfitsio builds the header
 * in a small memory file (the image created 1x1, then NAXIS1 and NAXIS2 set, so cfitsio
 * never reserves the data unit), its cards are read back and written first; the data unit
 * follows a row at a time through gs_out_file, big-endian as FITS requires, and is padded
 * with zeros to a whole block. The header carries the cards of gs_writer_keep_cards (less
 * those the writer sets itself) and one HISTORY card naming gsmooth.
 */

#include "io_internal.h"

#include <fitsio.h>
#include <stdlib.h>
#include <string.h>

#define FITS_CARD 80
#define FITS_KEYWORD 8
/* Headers and data units are whole blocks of 2880 bytes (36 cards). */
#define FITS_BLOCK 2880u
/* The header's memory file grows by this much at a time (past its first size, below). */
#define FITS_HEADER_GROWTH ((size_t)FITS_BLOCK * 4)
/* Cards cfitsio writes itself (SIMPLE ... BSCALE, its two COMMENT cards, HISTORY, END), and
 * the blocks beside the header's: the 1x1 data unit and one to spare. */
#define FITS_OWN_CARDS 16u
#define FITS_SPARE_BLOCKS 2u
#define FITS_CARDS_PER_BLOCK (FITS_BLOCK / FITS_CARD)
#define FITS_HISTORY "written by gsmooth"

typedef struct fits_out {
    unsigned bytes;       /* bytes per sample: 1, 2, 4 or 8 */
    int flip_top_bit;     /* unsigned 16/32/64: stored = sample - 2^(bits-1) */
    int cfitsio_type;     /* BYTE_IMG, USHORT_IMG, ... for the header */
    int header_written;   /* the header goes out with the first rows (cards come first) */
    unsigned char *row;   /* one row in the file's byte order */
    uint64_t data_bytes;  /* bytes of the data unit written so far */
} fits_out;

static gs_status fits_failure(int status, const char *what, char *err, size_t err_size)
{
    char text[FLEN_STATUS];
    fits_get_errstatus(status, text);
    return gs_fail(err, err_size, status == MEMORY_ALLOCATION ? GS_ERR_NOMEM : GS_ERR_FORMAT,
                   "FITS: %s: %s (cfitsio status %d)", what, text, status);
}

/* Keywords the writer sets itself (the image's structure and scaling), and those that
 * would be false of the new data (BLANK, the checksums): never copied from kept cards. */
static int own_keyword(const char *card)
{
    static const char *const own[] = {"SIMPLE", "BITPIX", "NAXIS", "EXTEND", "BZERO", "BSCALE", "END",
                                      "XTENSION", "PCOUNT", "GCOUNT", "BLANK", "CHECKSUM", "DATASUM"};
    char key[FITS_KEYWORD + 1];
    size_t k = 0;
    while (k < FITS_KEYWORD && card[k] && card[k] != ' ' && card[k] != '=') key[k] = card[k], ++k;
    key[k] = '\0';
    for (size_t i = 0; i < sizeof own / sizeof *own; ++i)
        if (strcmp(key, own[i]) == 0) return 1;
    /* NAXISn */
    if (strncmp(key, "NAXIS", 5) == 0 && key[5] >= '0' && key[5] <= '9') return 1;
    return 0;
}

/* The header, built by cfitsio in memory, into a malloc'd buffer of whole blocks. */
static gs_status build_header(gs_writer *writer, fits_out *out, unsigned char **header, size_t *len,
                              char *err, size_t err_size)
{
    const int setup = gs_fits_setup();
    if (setup) return fits_failure(setup, "setting up cfitsio", err, err_size);
    gs_status rc = GS_OK;
    int status = 0;
    /* Zeroed, and large enough that cfitsio need not grow it: cfitsio reads the header's
     * unwritten space when it closes the file, and memory it grew (realloc) would be
     * uninitialised there. */
    size_t mem_size = ((writer->card_count + FITS_OWN_CARDS) / FITS_CARDS_PER_BLOCK + 1 + FITS_SPARE_BLOCKS) * FITS_BLOCK;
    void *mem = calloc(1, mem_size);
    fitsfile *fptr = NULL;
    unsigned char *text = NULL;
    if (!mem) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    long one[2] = {1, 1};
    if (fits_create_memfile(&fptr, &mem, &mem_size, FITS_HEADER_GROWTH, realloc, &status) ||
        fits_create_img(fptr, out->cfitsio_type, 2, one, &status)) {
        rc = fits_failure(status, "making the header", err, err_size);
        goto cleanup;
    }
    for (size_t i = 0; i < writer->card_count; ++i) {
        char card[FITS_CARD + 1];
        memcpy(card, writer->cards + i * FITS_CARD, FITS_CARD);
        card[FITS_CARD] = '\0';
        if (own_keyword(card)) continue;
        if (fits_write_record(fptr, card, &status)) {
            char what[64];
            snprintf(what, sizeof what, "kept header card %zu", i + 1);
            rc = fits_failure(status, what, err, err_size);
            goto cleanup;
        }
    }
    /* The real size last: from here on cfitsio must not be asked to lay out the data. */
    if (fits_write_history(fptr, FITS_HISTORY, &status) ||
        fits_update_key_lng(fptr, "NAXIS1", (LONGLONG)writer->width, NULL, &status) ||
        fits_update_key_lng(fptr, "NAXIS2", (LONGLONG)writer->height, NULL, &status)) {
        rc = fits_failure(status, "making the header", err, err_size);
        goto cleanup;
    }
    int nkeys = 0;
    if (fits_get_hdrspace(fptr, &nkeys, NULL, &status)) {
        rc = fits_failure(status, "making the header", err, err_size);
        goto cleanup;
    }
    /* nkeys cards and END, in whole blocks padded with blanks. */
    const size_t bytes = ((size_t)(nkeys + 1) * FITS_CARD + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK;
    text = malloc(bytes);
    if (!text) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for the FITS header");
        goto cleanup;
    }
    memset(text, ' ', bytes);
    for (int i = 1; i <= nkeys; ++i) {
        char card[FLEN_CARD];
        if (fits_read_record(fptr, i, card, &status)) {
            rc = fits_failure(status, "making the header", err, err_size);
            goto cleanup;
        }
        const size_t n = strlen(card) < FITS_CARD ? strlen(card) : FITS_CARD;
        memcpy(text + (size_t)(i - 1) * FITS_CARD, card, n);
    }
    memcpy(text + (size_t)nkeys * FITS_CARD, "END", 3);
    /* Back to 1x1 so closing the memory file writes one small data block, not the image. */
    fits_update_key_lng(fptr, "NAXIS1", 1, NULL, &status);
    fits_update_key_lng(fptr, "NAXIS2", 1, NULL, &status);
    if (status) {
        rc = fits_failure(status, "making the header", err, err_size);
        goto cleanup;
    }
    *header = text;
    *len = bytes;
    text = NULL;

cleanup:
    if (fptr) {
        int close_status = 0;
        if (rc != GS_OK) { /* keep the file 1x1 whatever failed, so closing stays small */
            fits_update_key_lng(fptr, "NAXIS1", 1, NULL, &close_status);
            fits_update_key_lng(fptr, "NAXIS2", 1, NULL, &close_status);
            close_status = 0;
        }
        fits_close_file(fptr, &close_status); /* a memory file created here: the memory stays ours */
    }
    free(mem);
    free(text);
    return rc;
}

/* One row of native samples into the file's order: big-endian, the top bit flipped for
 * unsigned samples wider than a byte. */
static void encode_row(const fits_out *out, unsigned char *dst, const unsigned char *src, uint32_t width)
{
    const unsigned bytes = out->bytes;
    const uint64_t flip = out->flip_top_bit ? UINT64_C(1) << (8 * bytes - 1) : 0;
    for (size_t x = 0; x < width; ++x) {
        uint64_t v;
        switch (bytes) {
        case 1: v = src[x]; break;
        case 2: { uint16_t s; memcpy(&s, src + 2 * x, 2); v = s; break; }
        case 4: { uint32_t s; memcpy(&s, src + 4 * x, 4); v = s; break; }
        default: memcpy(&v, src + 8 * x, 8); break;
        }
        v ^= flip;
        for (unsigned b = 0; b < bytes; ++b) dst[x * bytes + b] = (unsigned char)(v >> (8 * (bytes - 1 - b)));
    }
}

static gs_status fits_write_rows(gs_writer *writer, const unsigned char *src, size_t stride,
                                 uint32_t rows, char *err, size_t err_size)
{
    fits_out *out = writer->impl;
    gs_status rc = GS_OK;
    if (!out->header_written) {
        unsigned char *header = NULL;
        size_t len = 0;
        rc = build_header(writer, out, &header, &len, err, err_size);
        if (rc == GS_OK) rc = gs_out_file_put(&writer->out, header, len, err, err_size);
        free(header);
        if (rc != GS_OK) return rc;
        out->header_written = 1;
    }
    const size_t row_bytes = (size_t)writer->width * out->bytes;
    for (uint32_t r = 0; r < rows; ++r) {
        encode_row(out, out->row, src + (size_t)r * stride, writer->width);
        rc = gs_out_file_put(&writer->out, out->row, row_bytes, err, err_size);
        if (rc != GS_OK) return rc;
        out->data_bytes += row_bytes;
    }
    return GS_OK;
}

/* The data unit ends on a block: zeros after the last row. */
static gs_status fits_finish(gs_writer *writer, char *err, size_t err_size)
{
    fits_out *out = writer->impl;
    static const unsigned char zeros[FITS_BLOCK];
    const size_t tail = (size_t)(out->data_bytes % FITS_BLOCK);
    return tail ? gs_out_file_put(&writer->out, zeros, FITS_BLOCK - tail, err, err_size) : GS_OK;
}

static void fits_out_destroy(void *impl)
{
    fits_out *out = impl;
    if (!out) return;
    free(out->row);
    free(out);
}

static const gs_writer_ops fits_writer_ops = {
    .write_rows = fits_write_rows,
    .finish = fits_finish,
    .destroy = fits_out_destroy,
};

gs_status gs_write_fits_open(gs_writer *writer, char *err, size_t err_size)
{
    int type;
    const uint32_t bits = writer->bits;
    if (writer->kind == GS_SAMPLES_FLOAT) {
        type = bits == 32 ? FLOAT_IMG : DOUBLE_IMG; /* writer.c allows 32 and 64 alone */
    } else {
        switch (bits) {
        case 8: type = BYTE_IMG; break;
        case 16: type = USHORT_IMG; break;
        case 32: type = ULONG_IMG; break;
        case 64: type = ULONGLONG_IMG; break;
        default:
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "FITS output takes 8, 16, 32 or 64-bit samples, not %u-bit", bits);
        }
    }
    const uint64_t row_bytes = (uint64_t)writer->width * (bits / 8u);
    if (row_bytes > SIZE_MAX / 2)
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "FITS row of %u samples does not fit in memory",
                       writer->width);
    fits_out *out = calloc(1, sizeof *out);
    if (!out) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    out->bytes = bits / 8u;
    out->flip_top_bit = writer->kind == GS_SAMPLES_UINT && bits > 8;
    out->cfitsio_type = type;
    out->row = malloc((size_t)row_bytes);
    if (!out->row) {
        fits_out_destroy(out);
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for a %u-sample row", writer->width);
    }
    writer->ops = &fits_writer_ops;
    writer->impl = out;
    return GS_OK;
}
