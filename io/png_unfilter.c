/* png_unfilter.c: the reference unfilter, the choice of variant and the grouping of rows. */

#include "png_unfilter.h"

#include <stdlib.h>
#include <string.h>

/* Paeth's predictor without branches (its choices follow the image, so branches
 * mispredict): p = a + b - c, and the nearest of a, b, c to p, ties in that order. With
 * d = b - c and e = a - c: |p - a| = |d|, |p - b| = |e|, |p - c| = |d + e|. */
static inline unsigned paeth(int a, int b, int c)
{
    const int d = b - c, e = a - c;
    const int pa = abs(d), pb = abs(e), pc = abs(d + e);
    const int take_b = -(pb <= pc); /* all ones when b beats c */
    const int bc = (b & take_b) | (c & ~take_b);
    const int take_a = -(pa <= (pb <= pc ? pb : pc));
    return (unsigned)((a & take_a) | (bc & ~take_a));
}

/* The reference: PNG specification section 9.2, a byte at a time. */
static void scalar_row(unsigned filter, unsigned char *x, const unsigned char *up, size_t n,
                       unsigned bpp)
{
    size_t i;
    switch (filter) {
    case GS_PNG_FILTER_SUB:
        for (i = bpp; i < n; i++) x[i] = (unsigned char)(x[i] + x[i - bpp]);
        break;
    case GS_PNG_FILTER_UP:
        for (i = 0; i < n; i++) x[i] = (unsigned char)(x[i] + up[i]);
        break;
    case GS_PNG_FILTER_AVERAGE:
        for (i = 0; i < bpp && i < n; i++) x[i] = (unsigned char)(x[i] + (up[i] >> 1));
        for (; i < n; i++) x[i] = (unsigned char)(x[i] + ((x[i - bpp] + up[i]) >> 1));
        break;
    case GS_PNG_FILTER_PAETH:
        for (i = 0; i < bpp && i < n; i++) x[i] = (unsigned char)(x[i] + up[i]); /* a = c = 0 */
        for (; i < n; i++) x[i] = (unsigned char)(x[i] + paeth(x[i - bpp], up[i], up[i - bpp]));
        break;
    default: break; /* None */
    }
}

const gs_png_unfilter_isa gs_png_unfilter_isa_scalar = {
    .name = "scalar",
    .row = scalar_row,
    .wave = NULL,
};

#if defined(__x86_64__)
static int cpu_runs(const gs_png_unfilter_isa *isa)
{
    __builtin_cpu_init();
    if (isa == &gs_png_unfilter_isa_avx2) return __builtin_cpu_supports("avx2");
    return 1; /* SSE2 is part of x86-64 */
}
static const gs_png_unfilter_isa *const all_isas[] = {&gs_png_unfilter_isa_avx2, &gs_png_unfilter_isa_sse2,
                                                      &gs_png_unfilter_isa_scalar, NULL};
#else
static int cpu_runs(const gs_png_unfilter_isa *isa) { return isa == &gs_png_unfilter_isa_scalar; }
static const gs_png_unfilter_isa *const all_isas[] = {&gs_png_unfilter_isa_scalar, NULL};
#endif

const gs_png_unfilter_isa *gs_png_unfilter_by_name(const char *name)
{
    for (const gs_png_unfilter_isa *const *p = all_isas; *p; ++p)
        if (strcmp((*p)->name, name) == 0) return cpu_runs(*p) ? *p : NULL;
    return NULL;
}

const gs_png_unfilter_isa *gs_png_unfilter_best(void)
{
    /* A cap from the environment starts the search at that variant. */
    const char *cap = getenv("GSMOOTH_PNG_UNFILTER");
    int capped = cap && *cap;
    for (const gs_png_unfilter_isa *const *p = all_isas; *p; ++p) {
        if (capped && strcmp((*p)->name, cap) != 0) continue;
        capped = 0;
        if (cpu_runs(*p)) return *p;
    }
    return &gs_png_unfilter_isa_scalar;
}

/* A group of rows goes through the wavefront when it has two rows or more and one of them
 * is Average or Paeth (sequential along the row); None, Up and Sub rows alone are done a row
 * at a time, which their own vector loops make as fast. */
static int wants_wave(const unsigned char *filters, unsigned count)
{
    if (count < 2) return 0;
    for (unsigned r = 0; r < count; r++)
        if (filters[r] == GS_PNG_FILTER_AVERAGE || filters[r] == GS_PNG_FILTER_PAETH) return 1;
    return 0;
}

int gs_png_unfilter_batch(const gs_png_unfilter_isa *isa, unsigned char *batch, size_t stride,
                          uint32_t count, const unsigned char *up, size_t n, unsigned bpp)
{
    for (uint32_t r = 0; r < count; r++)
        if (batch[(size_t)r * stride] >= GS_PNG_FILTER_TYPES) return -1;
    for (uint32_t r = 0; r < count;) {
        unsigned char *row[GS_PNG_UNFILTER_WAVE_ROWS];
        unsigned char filters[GS_PNG_UNFILTER_WAVE_ROWS];
        const unsigned group = count - r < GS_PNG_UNFILTER_WAVE_ROWS ? count - r : GS_PNG_UNFILTER_WAVE_ROWS;
        for (unsigned k = 0; k < group; k++) {
            unsigned char *stored = batch + (size_t)(r + k) * stride;
            filters[k] = stored[0];
            row[k] = stored + 1;
        }
        if (isa->wave && wants_wave(filters, group)) {
            isa->wave(row, filters, group, up, n, bpp);
        } else {
            for (unsigned k = 0; k < group; k++) isa->row(filters[k], row[k], k ? row[k - 1] : up, n, bpp);
        }
        up = row[group - 1];
        r += group;
    }
    return 0;
}
