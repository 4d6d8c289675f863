/* unfilter_bench.c: the PNG unfilter timed per filter and pixel size, beside a memcpy. */
/* What is timed: one batch as the fast reader makes it (gs_png_isal_batch_rows: 256 KiB of
 * filtered rows, at least 16 of wide ones; each a filter byte and random bytes) unfiltered in place by
 * gs_png_unfilter_batch, restored from a pristine copy between runs (untimed); the median
 * of RUNS, in ns per row byte. The anchor is a memcpy of the same bytes, timed the same way
 * in the same run. Every variant's result is compared with the reference's. */

#define _POSIX_C_SOURCE 200809L
#include "unfilter_bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "png_isal_limits.h"
#include "png_unfilter.h"

/* Rows as an 8192-byte-wide image's (8192 gray pixels, 1024 RGBA16 pixels), and as the
 * gigapixel mosaic's (32768 bytes). */
#define ROW_BYTES 8192
#define WIDE_ROW_BYTES 32768
#define RUNS 41
#define MIXED (-1) /* each row's filter at random */

static const char *const variants[] = {"scalar", "sse2", "avx2"};
#define VARIANTS (sizeof variants / sizeof variants[0])
static const unsigned pixel_sizes[] = {1, 2, 3, 4, 6, 8};
static const char *const filter_names[] = {"None", "Sub", "Up", "Average", "Paeth"};

static uint64_t rng = 0x2545F4914F6CDD1Du;
static unsigned rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* Median seconds of RUNS unfilters (isa) or copies (isa NULL) of `work`, restored from
 * `pristine` before each. */
static double time_runs(const gs_png_unfilter_isa *isa, unsigned char *work, const unsigned char *pristine,
                        unsigned char *copy, size_t bytes, size_t stride, uint32_t rows,
                        const unsigned char *up, size_t n, unsigned bpp)
{
    double t[RUNS];
    for (int k = 0; k < RUNS; k++) {
        memcpy(work, pristine, bytes);
        const double t0 = gs_bench_now();
        if (isa) gs_png_unfilter_batch(isa, work, stride, rows, up, n, bpp);
        else memcpy(copy, work, bytes);
        t[k] = gs_bench_now() - t0;
    }
    return gs_bench_median(t, RUNS);
}

/* One line of the table; 0, or 1 when a variant's bytes differ from the reference's. */
static int line(int filter, unsigned bpp, size_t n, const gs_png_unfilter_isa *const *isa, size_t nisa,
                unsigned char *pristine, unsigned char *work, unsigned char *ref, unsigned char *copy,
                unsigned char *up)
{
    const size_t stride = n + 1;
    const uint32_t rows = (uint32_t)gs_png_isal_batch_rows(stride, GS_PNG_UNFILTER_WAVE_ROWS);
    const size_t bytes = stride * rows, payload = n * rows;
    for (size_t i = 0; i < bytes; i++) pristine[i] = (unsigned char)rnd();
    for (uint32_t r = 0; r < rows; r++)
        pristine[(size_t)r * stride] = (unsigned char)(filter == MIXED ? rnd() % GS_PNG_FILTER_TYPES : (unsigned)filter);
    memcpy(ref, pristine, bytes);
    gs_png_unfilter_batch(&gs_png_unfilter_isa_scalar, ref, stride, rows, up, n, bpp);
    const double copy_s = time_runs(NULL, work, pristine, copy, bytes, stride, rows, up, n, bpp);
    printf("| %s | %u | %zu x %u |", filter == MIXED ? "mixed" : filter_names[filter], bpp, n, rows);
    int bad = 0;
    for (size_t v = 0; v < nisa; v++) {
        const double s = time_runs(isa[v], work, pristine, copy, bytes, stride, rows, up, n, bpp);
        const int same = memcmp(work, ref, bytes) == 0;
        bad |= !same;
        printf(" %.3f%s |", s * 1e9 / (double)payload, same ? "" : " DIFFERS");
    }
    printf(" %.3f |\n", copy_s * 1e9 / (double)payload);
    return bad;
}

int gs_unfilter_bench_print(void)
{
    const gs_png_unfilter_isa *isa[VARIANTS];
    size_t nisa = 0;
    for (size_t v = 0; v < VARIANTS; v++)
        if ((isa[nisa] = gs_png_unfilter_by_name(variants[v]))) nisa++;
    const size_t cap = GS_PNG_ISAL_BATCH_BYTES + GS_PNG_ISAL_WAVE_BATCH_BYTES;
    unsigned char *pristine = malloc(cap), *work = malloc(cap), *ref = malloc(cap), *copy = malloc(cap);
    unsigned char *up = malloc(WIDE_ROW_BYTES);
    int bad = 1;
    if (!pristine || !work || !ref || !copy || !up) {
        fprintf(stderr, "unfilter bench: out of memory\n");
        goto cleanup;
    }
    for (size_t i = 0; i < WIDE_ROW_BYTES; i++) up[i] = (unsigned char)rnd();
    printf("unfilter: ns per row byte, in place, one batch of the fast reader's of random filtered "
           "rows (median of %d; memcpy: the same bytes copied)\n", RUNS);
    printf("| filter | bytes a pixel | row bytes x rows |");
    for (size_t v = 0; v < nisa; v++) printf(" %s |", isa[v]->name);
    printf(" memcpy |\n| --- | --- | --- |");
    for (size_t v = 0; v <= nisa; v++) printf(" --- |");
    printf("\n");
    bad = 0;
    for (int f = 0; f < GS_PNG_FILTER_TYPES; f++)
        for (size_t p = 0; p < sizeof pixel_sizes / sizeof pixel_sizes[0]; p++)
            bad |= line(f, pixel_sizes[p], ROW_BYTES / pixel_sizes[p] * pixel_sizes[p], isa, nisa,
                        pristine, work, ref, copy, up);
    bad |= line(MIXED, 1, ROW_BYTES, isa, nisa, pristine, work, ref, copy, up);
    bad |= line(MIXED, 3, ROW_BYTES / 3 * 3, isa, nisa, pristine, work, ref, copy, up);
    bad |= line(GS_PNG_FILTER_PAETH, 1, WIDE_ROW_BYTES, isa, nisa, pristine, work, ref, copy, up);

cleanup:
    free(pristine);
    free(work);
    free(ref);
    free(copy);
    free(up);
    return bad;
}
