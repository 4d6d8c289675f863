/* fits_write_tool.c: writes raw samples as FITS through gsmooth's writer, for fits_check.py to read with astropy. */
/* usage: fits_write_tool uint|float BITS WIDTH HEIGHT RAW OUT [CARDS_FROM]
 * RAW holds HEIGHT rows of WIDTH native-endian samples; OUT may be "-" (standard output);
 * the WCS cards gsmooth's reader finds in CARDS_FROM (a FITS file) are kept. Rows go to the
 * writer in reads of 3 so the data unit is built across several calls. Exit 0, or 1 with
 * one line on stderr. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_io.h"

#define ROWS_PER_WRITE 3

int main(int argc, char **argv)
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: %s uint|float BITS WIDTH HEIGHT RAW OUT [CARDS_FROM]\n", argv[0]);
        return 2;
    }
    char err[GS_ERR_SIZE] = "";
    const gs_sample_kind kind = strcmp(argv[1], "float") == 0 ? GS_SAMPLES_FLOAT : GS_SAMPLES_UINT;
    const unsigned bits = (unsigned)atoi(argv[2]);
    const uint32_t width = (uint32_t)strtoul(argv[3], NULL, 10), height = (uint32_t)strtoul(argv[4], NULL, 10);
    const size_t row_bytes = (size_t)width * (bits / 8), bytes = row_bytes * height;
    unsigned char *samples = malloc(bytes ? bytes : 1);
    FILE *in = fopen(argv[5], "rb");
    if (!samples || !in || fread(samples, 1, bytes, in) != bytes) {
        fprintf(stderr, "fits_write_tool: cannot read %zu bytes from %s\n", bytes, argv[5]);
        return 1;
    }
    fclose(in);
    gs_reader *cards_from = NULL;
    if (argc == 8) {
        gs_image_info info;
        if (gs_reader_open(argv[7], UINT64_C(1) << 30, &cards_from, &info, err, sizeof err) != GS_OK) {
            fprintf(stderr, "fits_write_tool: %s: %s\n", argv[7], err);
            return 1;
        }
    }
    gs_writer *w = NULL;
    gs_status rc = gs_writer_open_kind(argv[6], GS_OUT_FITS, width, height, bits, kind, NULL, &w, err, sizeof err);
    if (rc == GS_OK && cards_from) {
        size_t count = 0;
        const char *cards = gs_reader_fits_cards(cards_from, &count);
        rc = gs_writer_keep_cards(w, cards, count, err, sizeof err);
    }
    for (uint32_t y = 0; rc == GS_OK && y < height; y += ROWS_PER_WRITE) {
        const uint32_t n = height - y < ROWS_PER_WRITE ? height - y : ROWS_PER_WRITE;
        rc = gs_writer_write_rows(w, samples + (size_t)y * row_bytes, row_bytes, n, err, sizeof err);
    }
    if (rc == GS_OK) {
        rc = gs_writer_commit(w, err, sizeof err);
    } else {
        gs_writer_abort(w);
    }
    gs_reader_close(cards_from);
    free(samples);
    if (rc != GS_OK) {
        fprintf(stderr, "fits_write_tool: %s: %s\n", argv[6], err);
        return 1;
    }
    return 0;
}
