/* decode_bench.c: the decode phase alone, the fast PNG path against libpng. */
/* An image is read whole through gsmooth's readers, the fast PNG path and libpng on the
 * same file in the same run (medians of RUNS), and the pixels are compared; then the
 * unfilter's table (unfilter_bench.c). `--unfilter` alone prints only the table. */

#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "image_io.h"
#include "unfilter_bench.h"

/* Rows read per call, as the pipeline's 1 MiB strips would be for an 8192-wide image. */
#define ROWS_PER_READ 128

/* Read `path` whole with the PNG decoder `decoder` ("libpng" or "auto"); seconds, or -1. */
static double decode(const char *path, const char *decoder, unsigned char **pixels, size_t *bytes)
{
    char err[GS_ERR_SIZE];
    gs_reader *r = NULL;
    gs_image_info info;
    setenv("GSMOOTH_PNG_DECODER", decoder, 1);
    double t = gs_bench_now();
    if (gs_reader_open(path, UINT64_C(1) << 32, &r, &info, err, sizeof err) != GS_OK) {
        fprintf(stderr, "decode_bench: %s: %s\n", path, err);
        return -1;
    }
    size_t stride = (size_t)info.width * (info.bits / 8);
    *bytes = stride * info.height;
    *pixels = realloc(*pixels, *bytes);
    for (uint32_t y = 0; y < info.height; y += ROWS_PER_READ) {
        uint32_t n = info.height - y < ROWS_PER_READ ? info.height - y : ROWS_PER_READ;
        if (gs_reader_read_rows(r, *pixels + (size_t)y * stride, stride, n, err, sizeof err) != GS_OK) {
            fprintf(stderr, "decode_bench: %s: %s\n", path, err);
            gs_reader_close(r);
            return -1;
        }
    }
    gs_reader_close(r);
    return gs_bench_now() - t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s IMAGE.png [RUNS] | --unfilter\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "--unfilter") == 0) return gs_unfilter_bench_print();
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 99) runs = 5;
    const char *decoders[2] = {"libpng", "auto"};
    double t[2][99];
    unsigned char *pixels[2] = {NULL, NULL};
    size_t bytes[2] = {0, 0};
    for (int k = 0; k < runs; k++) /* interleaved, so drifts in the machine hit both */
        for (int d = 0; d < 2; d++)
            if ((t[d][k] = decode(argv[1], decoders[d], &pixels[d], &bytes[d])) < 0) return 1;
    double med[2];
    for (int d = 0; d < 2; d++) med[d] = gs_bench_median(t[d], runs);
    int same = bytes[0] == bytes[1] && memcmp(pixels[0], pixels[1], bytes[0]) == 0;
    printf("decode %s: libpng %.1f ms, fast path %.1f ms: %.2fx libpng; pixels %s (median of %d)\n",
           argv[1], med[0] * 1e3, med[1] * 1e3, med[0] / med[1], same ? "identical" : "DIFFER", runs);
    free(pixels[0]);
    free(pixels[1]);
    const int table_bad = gs_unfilter_bench_print();
    return same && !table_bad ? 0 : 1;
}
