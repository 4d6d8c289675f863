/* png_unfilter.h: undoing PNG's row filters a batch of rows at a time, scalar and SIMD. */
/* The plain C loop (gs_png_unfilter_isa_scalar) is the reference; the SIMD variants give its
 * bytes for every filter, pixel size, row length and mix of filters (tests/test_png_unfilter.c
 * checks them byte for byte, each variant forced in turn). */

#ifndef GS_PNG_UNFILTER_H
#define GS_PNG_UNFILTER_H

#include <stddef.h>
#include <stdint.h>

/* The filter types (PNG specification, section 9.2). */
#define GS_PNG_FILTER_NONE 0
#define GS_PNG_FILTER_SUB 1
#define GS_PNG_FILTER_UP 2
#define GS_PNG_FILTER_AVERAGE 3
#define GS_PNG_FILTER_PAETH 4
#define GS_PNG_FILTER_TYPES 5

/* Rows unfiltered together by the SIMD wavefront: one a lane of a 16-byte vector, each a
 * pixel behind the row above it, so that Sub, Average and Paeth (sequential along a row)
 * run on 16 rows at once. */
#define GS_PNG_UNFILTER_WAVE_ROWS 16
/* Bytes a pixel the unfilter takes: 1, 2, 3, 4, 6 or 8 (8 and 16-bit gray, gray+alpha,
 * RGB, RGBA, and 8-bit palette indices). */
#define GS_PNG_UNFILTER_MAX_BPP 8

/* One instruction set's unfilter. `row` undoes the filter of one row `x` (n bytes) against
 * the finished row above it, `up`; `wave`, where not NULL, undoes `count` rows (2 to
 * GS_PNG_UNFILTER_WAVE_ROWS) at row[0..count-1], the first against `up`, each against the
 * one before, with filters[r] row r's type. Filter types are checked before either runs. */
typedef struct gs_png_unfilter_isa {
    const char *name; /* "scalar", "sse2", "avx2": GSMOOTH_PNG_UNFILTER's values */
    void (*row)(unsigned filter, unsigned char *x, const unsigned char *up, size_t n, unsigned bpp);
    void (*wave)(unsigned char *const *row, const unsigned char *filters, unsigned count,
                 const unsigned char *up, size_t n, unsigned bpp);
} gs_png_unfilter_isa;

extern const gs_png_unfilter_isa gs_png_unfilter_isa_scalar;
extern const gs_png_unfilter_isa gs_png_unfilter_isa_sse2; /* x86-64 only */
extern const gs_png_unfilter_isa gs_png_unfilter_isa_avx2; /* x86-64 only */

/* The best variant this CPU runs, at most the one GSMOOTH_PNG_UNFILTER names (scalar, sse2,
 * avx2), so that tests can force each; an unknown or unavailable name gives scalar. */
const gs_png_unfilter_isa *gs_png_unfilter_best(void);

/* The variant called `name`, or NULL when there is none or this CPU cannot run it. */
const gs_png_unfilter_isa *gs_png_unfilter_by_name(const char *name);

/* Unfilter `count` stored rows in place: row r's filter byte at batch + r * stride, its n
 * bytes (bpp a pixel) after it; `up` is the finished row above the first (zeros above the
 * image's first row). Returns -1, with nothing changed, when a filter byte is not a type. */
int gs_png_unfilter_batch(const gs_png_unfilter_isa *isa, unsigned char *batch, size_t stride,
                          uint32_t count, const unsigned char *up, size_t n, unsigned bpp);

#endif /* GS_PNG_UNFILTER_H */
