/* decode_bench.c: the decode phase alone, the fast PNG path against libpng and against the inflate alone. */
/* An image is read whole through gsmooth's readers, the fast PNG path and libpng on the
 * same file in the same run (medians of RUNS), and the pixels are compared; the file's
 * IDAT stream is inflated alone (ISA-L, one core, into a reused buffer, no unfiltering),
 * the floor of any decode of it; then the unfilter's table (unfilter_bench.c).
 * `--unfilter` alone prints only the table; `--inflate FILE [RUNS]` only the inflate. */

#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <isa-l.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Bytes of inflated output per isal_inflate call: the reused buffer stays in L2. */
#define INFLATE_OUT_BYTES (256u << 10)

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Inflate the IDAT stream of the PNG at `path` (mapped) with ISA-L on this thread;
 * seconds, with the inflated bytes in *out_bytes, or -1. */
static double inflate_alone(const char *path, uint64_t *out_bytes)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 8) {
        fprintf(stderr, "decode_bench: %s: cannot map\n", path);
        if (fd >= 0) close(fd);
        return -1;
    }
    const size_t size = (size_t)st.st_size;
    const unsigned char *png = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (png == MAP_FAILED) return -1;
    unsigned char *out = malloc(INFLATE_OUT_BYTES);
    struct inflate_state zs;
    isal_inflate_init(&zs);
    zs.crc_flag = ISAL_ZLIB;
    uint64_t total = 0;
    int rc = ISAL_DECOMP_OK;
    double t = gs_bench_now();
    for (size_t at = 8; out && at + 12 <= size && rc == ISAL_DECOMP_OK &&
                        zs.block_state != ISAL_BLOCK_FINISH;) {
        const size_t length = be32(png + at);
        if (length > size - at - 12) break;
        if (memcmp(png + at + 4, "IDAT", 4) == 0) {
            zs.next_in = (uint8_t *)png + at + 8;
            zs.avail_in = (uint32_t)length;
            while (rc == ISAL_DECOMP_OK && zs.block_state != ISAL_BLOCK_FINISH &&
                   (zs.avail_in > 0 || zs.avail_out == 0)) {
                zs.next_out = out;
                zs.avail_out = INFLATE_OUT_BYTES;
                rc = isal_inflate(&zs);
                total += INFLATE_OUT_BYTES - zs.avail_out;
            }
        }
        at += length + 12;
    }
    t = gs_bench_now() - t;
    const int ended = out && rc == ISAL_DECOMP_OK && zs.block_state == ISAL_BLOCK_FINISH;
    free(out);
    munmap((void *)png, size);
    if (!ended) {
        fprintf(stderr, "decode_bench: %s: the IDAT stream did not inflate to its end\n", path);
        return -1;
    }
    *out_bytes = total;
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s IMAGE.png [RUNS] | --unfilter | --inflate IMAGE.png [RUNS]\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "--unfilter") == 0) return gs_unfilter_bench_print();
    if (strcmp(argv[1], "--inflate") == 0 && argc > 2) {
        int runs = argc > 3 ? atoi(argv[3]) : 3;
        if (runs < 1 || runs > 99) runs = 3;
        double alone[99];
        uint64_t inflated = 0;
        for (int k = 0; k < runs; k++)
            if ((alone[k] = inflate_alone(argv[2], &inflated)) < 0) return 1;
        printf("inflate alone (ISA-L, one core, %llu bytes out, no unfilter): %.3f s (median of %d)\n",
               (unsigned long long)inflated, gs_bench_median(alone, runs), runs);
        return 0;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 99) runs = 5;
    const char *decoders[2] = {"libpng", "auto"};
    double t[2][99];
    unsigned char *pixels[2] = {NULL, NULL};
    size_t bytes[2] = {0, 0};
    for (int k = 0; k < runs; k++) /* interleaved, so drifts in the machine hit both */
        for (int d = 0; d < 2; d++)
            if ((t[d][k] = decode(argv[1], decoders[d], &pixels[d], &bytes[d])) < 0) return 1;
    double med[2], alone[99];
    uint64_t inflated = 0;
    for (int d = 0; d < 2; d++) med[d] = gs_bench_median(t[d], runs);
    for (int k = 0; k < runs; k++)
        if ((alone[k] = inflate_alone(argv[1], &inflated)) < 0) return 1;
    const double floor_s = gs_bench_median(alone, runs);
    int same = bytes[0] == bytes[1] && memcmp(pixels[0], pixels[1], bytes[0]) == 0;
    printf("decode %s: libpng %.1f ms, fast path %.1f ms: %.2fx libpng; pixels %s (median of %d)\n",
           argv[1], med[0] * 1e3, med[1] * 1e3, med[0] / med[1], same ? "identical" : "DIFFER", runs);
    printf("inflate alone (ISA-L, one core, %llu bytes out, no unfilter): %.1f ms; the fast path "
           "is %.2fx that\n", (unsigned long long)inflated, floor_s * 1e3, med[1] / floor_s);
    free(pixels[0]);
    free(pixels[1]);
    const int table_bad = gs_unfilter_bench_print();
    return same && !table_bad ? 0 : 1;
}
