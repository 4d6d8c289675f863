/* fuzz_decode.c: libFuzzer entry point for one decoder alone (GS_FUZZ_DECODER). */
/* GS_FUZZ_DECODER is one of png, pngfast, jpeg, stb, pnm, tiff, gif, bmp, tga, webp, fits, npy. The decoder
 * is called directly whatever the input's magic bytes (pngfast: a PNG it takes), so
 * coverage can be read per format; every row is read and every sample used. */

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_internal.h"

/*
 * Built once per decoder by fuzz/CMakeLists.txt (and without libFuzzer by the
 * fuzz_regressions test). A contract violation calls abort(), which libFuzzer reports as a
 * crash with the input saved: a success with an invalid header, a failure without a
 * one-line message, a read after a failure that is not refused. Every decoded row is
 * written to /dev/null, so valgrind's replay (scripts/test_valgrind.sh) reports any sample
 * the decoder left uninitialised ("Syscall param write(buf) points to uninitialised
 * byte(s)"); a branch on a checksum would not do, the compiler may drop it.
 */

/* --max-pixels of every run, as in fuzz_pipeline.c: 2^20 pixels is 16 MiB at the worst. */
#define GS_FUZZ_MAX_PIXELS (UINT64_C(1) << 20)
/* Rows asked for per read: not a divisor of typical heights, so the last read is partial. */
#define GS_FUZZ_ROWS_PER_READ 7

#define GS_STR(x) GS_STR_(x)
#define GS_STR_(x) #x

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fatal(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_decode_" GS_STR(GS_FUZZ_DECODER) ": %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    abort();
}

/* The decoder under test, called as reader.c would call it. */
static gs_status open_decoder(gs_reader *reader, char *err, size_t err_size)
{
#define GS_DECODER_png 1
#define GS_DECODER_jpeg 2
#define GS_DECODER_stb 3
#define GS_DECODER_pnm 4
#define GS_DECODER_pngfast 5
#define GS_DECODER_tiff 6
#define GS_DECODER_gif 7
#define GS_DECODER_bmp 8
#define GS_DECODER_tga 9
#define GS_DECODER_webp 10
#define GS_DECODER_fits 11
#define GS_DECODER_npy 12
#define GS_DECODER_ID(name) GS_DECODER_ID_(name)
#define GS_DECODER_ID_(name) GS_DECODER_##name
#if GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_png
    return gs_read_png_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_jpeg
    return gs_read_jpeg_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_stb
    return gs_read_stb_open(reader, GS_FUZZ_MAX_PIXELS, NULL, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_pnm
    return gs_read_pnm_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_pngfast
    /* What reader.c checks before choosing it: the signature, and a header it takes. */
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (reader->head_len < sizeof png_sig || memcmp(reader->head, png_sig, sizeof png_sig) != 0 ||
        !gs_png_isal_takes(reader->head, reader->head_len))
        return gs_fail(err, err_size, GS_ERR_FORMAT, "not a PNG the fast path takes");
    return gs_read_png_isal_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_tiff
    return gs_read_tiff_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_gif
    return gs_read_gif_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_bmp
    return gs_read_bmp_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_tga
    return gs_read_tga_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_webp
    /* What reader.c checks before choosing it: RIFF, a size, "WEBP". */
    if (reader->head_len < 12 || memcmp(reader->head, "RIFF", 4) != 0 || memcmp(reader->head + 8, "WEBP", 4) != 0)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "not a WebP");
    return gs_read_webp_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_fits
    /* What reader.c checks before choosing it: the SIMPLE card's start. */
    if (reader->head_len < 10 || memcmp(reader->head, "SIMPLE  = ", 10) != 0)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "not a FITS file");
    return gs_read_fits_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#elif GS_DECODER_ID(GS_FUZZ_DECODER) == GS_DECODER_npy
    return gs_read_npy_open(reader, GS_FUZZ_MAX_PIXELS, err, err_size);
#else
#error "GS_FUZZ_DECODER must be png, pngfast, jpeg, stb, pnm, tiff, gif, bmp, tga, webp, fits or npy"
#endif
}

/* A failure must say why in one line. */
static void check_message(const char *err)
{
    if (!err[0]) fatal("a failure without a message", NULL);
    if (strchr(err, '\n')) fatal("a failure message of more than one line", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[GS_ERR_SIZE] = "";
    gs_image_info info;
    gs_reader *reader = calloc(1, sizeof *reader);
    if (!reader) fatal("calloc", NULL);
    /* The input in memory (a copy: a decoder must not rely on bytes past its end); the
     * head as reader.c keeps it. */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) fatal("malloc", NULL);
    if (size) memcpy(copy, data, size);
    gs_source_from_memory(&reader->src, copy, size);
    reader->head_len = size < sizeof reader->head ? size : sizeof reader->head;
    memcpy(reader->head, data, reader->head_len);

    gs_status rc = open_decoder(reader, err, sizeof err);
    if (rc != GS_OK) {
        check_message(err);
        gs_reader_close(reader);
        free(copy);
        return 0;
    }
    info = reader->info;
    if (info.width == 0 || info.height == 0 || (info.bits != 8 && info.bits != 16 && info.bits != 32) ||
        (uint64_t)info.width * info.height > GS_FUZZ_MAX_PIXELS || !info.format)
        fatal("a decoder accepted an invalid header", info.format);

    static int devnull = -1;
    if (devnull < 0 && (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) fatal("open /dev/null", NULL);
    const size_t row_bytes = (size_t)info.width * (info.bits / 8);
    unsigned char *rows = malloc(row_bytes * GS_FUZZ_ROWS_PER_READ);
    if (!rows) fatal("malloc", NULL);
    for (uint32_t y = 0; y < info.height; y += GS_FUZZ_ROWS_PER_READ) {
        uint32_t n = info.height - y < GS_FUZZ_ROWS_PER_READ ? info.height - y : GS_FUZZ_ROWS_PER_READ;
        rc = gs_reader_read_rows(reader, rows, row_bytes, n, err, sizeof err);
        if (rc != GS_OK) {
            check_message(err);
            err[0] = '\0';
            if (gs_reader_read_rows(reader, rows, row_bytes, 1, err, sizeof err) == GS_OK)
                fatal("a read after a failed read was not refused", NULL);
            break;
        }
        if (write(devnull, rows, row_bytes * n) < 0) fatal("write /dev/null", NULL);
    }
    free(rows);
    gs_reader_close(reader);
    free(copy);
    return 0;
}
