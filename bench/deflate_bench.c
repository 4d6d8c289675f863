/* deflate_bench.c: the PNG writer's deflate alone, level by level, on the filtered rows of a real PNG. */
/* The IDAT stream of FILE.png (a PNG gsmooth wrote holds its Sub-filtered output rows) is
 * inflated, up to MIB MiB, and deflated by the writer's stream (io/png_deflate.h) on this
 * thread at levels 1, 2 and 3: MB/s of input and the share of the input written, medians
 * of RUNS, each beside level 2 (the default) in the same run; every level's stream is
 * inflated back with zlib and compared. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bench_time.h"
#include "png_deflate.h"

/* Bytes handed to the stream a time: about a wide image's row. */
#define APPEND_BYTES (32u << 10)
#define MAX_RUNS 15

/* The first `limit` bytes of the PNG's inflated IDAT stream; NULL on failure. */
static unsigned char *filtered_rows(const char *path, size_t limit, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *rows = malloc(limit), head[8], *chunk = NULL;
    z_stream z;
    memset(&z, 0, sizeof z);
    int zr = inflateInit(&z);
    z.next_out = rows, z.avail_out = (uInt)limit;
    if (!rows || zr != Z_OK || fread(head, 1, 8, f) != 8) goto fail;
    while (z.avail_out > 0 && zr == Z_OK && fread(head, 1, 8, f) == 8) {
        const uint32_t n = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
        if (!(chunk = realloc(chunk, (size_t)n + 4)) || fread(chunk, 1, (size_t)n + 4, f) != (size_t)n + 4) goto fail;
        if (memcmp(head + 4, "IDAT", 4) != 0) continue;
        z.next_in = chunk, z.avail_in = n;
        while (z.avail_in > 0 && z.avail_out > 0 && (zr = inflate(&z, Z_NO_FLUSH)) == Z_OK) {}
    }
    if (zr != Z_OK && zr != Z_STREAM_END) goto fail;
    *len = limit - z.avail_out;
    inflateEnd(&z);
    free(chunk);
    fclose(f);
    return rows;
fail:
    inflateEnd(&z);
    free(chunk);
    free(rows);
    fclose(f);
    return NULL;
}

/* Deflate rows[0..len) at `level` on this thread into *c; seconds, or -1. */
static double deflate_once(const unsigned char *rows, size_t len, int level, gs_deflate_memory *c)
{
    char err[256];
    gs_deflate *d = NULL;
    c->len = 0;
    const double t = gs_bench_now();
    if (gs_deflate_open(level, 1, APPEND_BYTES, gs_deflate_to_memory, c, &d, err, sizeof err) != GS_OK) return -1;
    for (size_t at = 0; at < len; at += APPEND_BYTES) {
        const size_t n = len - at < APPEND_BYTES ? len - at : APPEND_BYTES;
        memcpy(gs_deflate_reserve(d, n), rows + at, n);
        if (gs_deflate_append(d, n, err, sizeof err) != GS_OK) return gs_deflate_close(d), -1;
    }
    const gs_status rc = gs_deflate_finish(d, err, sizeof err);
    gs_deflate_close(d);
    return rc == GS_OK ? gs_bench_now() - t : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.png [MIB [RUNS]]\n", argv[0]);
        return 2;
    }
    const size_t limit = (size_t)(argc > 2 ? atoi(argv[2]) : 256) << 20;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    if (runs < 1 || runs > MAX_RUNS || limit == 0) {
        fprintf(stderr, "deflate_bench: MIB >= 1, RUNS 1..%d\n", MAX_RUNS);
        return 2;
    }
    size_t len = 0;
    unsigned char *rows = filtered_rows(argv[1], limit, &len);
    if (!rows || len == 0) {
        fprintf(stderr, "deflate_bench: %s: no IDAT stream to inflate\n", argv[1]);
        return 1;
    }
    const int levels[] = {1, 2, 3};
    double speed[3], share[3];
    /* room for any level's stream: the sink grows it only in the first run */
    gs_deflate_memory c = {malloc(len + len / 8 + (1u << 20)), 0, len + len / 8 + (1u << 20)};
    unsigned char *back = malloc(len);
    for (int l = 0; l < 3; l++) {
        double t[MAX_RUNS];
        for (int k = 0; k < runs; k++)
            if ((t[k] = deflate_once(rows, len, levels[l], &c)) < 0) {
                fprintf(stderr, "deflate_bench: level %d failed\n", levels[l]);
                return 1;
            }
        uLongf back_len = len;
        if (!c.bytes || !back || uncompress(back, &back_len, c.bytes, c.len) != Z_OK || back_len != len ||
            memcmp(back, rows, len) != 0) {
            fprintf(stderr, "deflate_bench: level %d: the stream does not inflate back to the rows\n", levels[l]);
            return 1;
        }
        speed[l] = len / gs_bench_median(t, runs) / 1e6;
        share[l] = (double)c.len / len;
    }
    printf("%s: %.1f MiB of filtered rows, one thread, median of %d\n", argv[1], len / 1048576.0, runs);
    for (int l = 0; l < 3; l++)
        printf("level %d: %6.1f MB/s, %.4f of the input; against level 2: %.2fx the speed, %.3fx the size\n",
               levels[l], speed[l], share[l], speed[l] / speed[1], share[l] / share[1]);
    free(back);
    free(c.bytes);
    free(rows);
    return 0;
}
