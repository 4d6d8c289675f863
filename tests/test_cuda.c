/* test_cuda.c: the CUDA plugin against the CPU plugin, byte for byte. */
/*
 * Through the plugin ABI: smoothing, down columns and both axes, integral rows and 2d.
 */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsmooth/gsmooth_plugin.h"
#include "plugin_or_skip.h"

/*
 * Usage: test_cuda CPU_PLUGIN.so CUDA_PLUGIN.so. Exits 77 (ctest's skip) when the CUDA
 * plugin's probe fails. GSMOOTH_TEST_SMALL=1 runs a reduced case list, small enough for
 * compute-sanitizer. Check runs in-process (CK_NOFORK): a CUDA context does not survive
 * fork, and the instances are made once, in main.
 */

#define ERR_LEN 512

/* Everything the tests share, set up in main before the runner starts. */
static const gs_plugin_desc *g_cpu, *g_cuda;
static gs_plugin_instance *g_cpu_inst;
static gs_plugin_instance *g_cuda_inst;
static int g_small;

/* ---- case lists ---- */

/* Smoothing: widths around the kernels' segments (one-warp group 1024, one-block span 32768)
 * and the row ends; the heaviest shapes only with small K. */
typedef struct { uint32_t width, height, iters, bits; } smooth_case;
typedef struct { uint32_t width, height, in_bits, out_bits; } integral_case;
/* smooth_axes: a window of above + rows + below rows, rows written. */
typedef struct { uint32_t width, above, rows, below, iters, bits, axes; } axes_case;

static smooth_case *g_smooth;
static int g_smooth_n;
static integral_case *g_integral;
static int g_integral_n;
static axes_case *g_axes;
static int g_axes_n;

static void add_smooth(uint32_t w, uint32_t h, uint32_t k, uint32_t bits)
{
    g_smooth = realloc(g_smooth, (size_t)(g_smooth_n + 1) * sizeof *g_smooth);
    if (!g_smooth) abort();
    g_smooth[g_smooth_n++] = (smooth_case){w, h, k, bits};
}

static void add_integral(uint32_t w, uint32_t h, uint32_t in_bits, uint32_t out_bits)
{
    g_integral = realloc(g_integral, (size_t)(g_integral_n + 1) * sizeof *g_integral);
    if (!g_integral) abort();
    g_integral[g_integral_n++] = (integral_case){w, h, in_bits, out_bits};
}

static void add_axes(uint32_t w, uint32_t above, uint32_t rows, uint32_t below, uint32_t k,
                     uint32_t bits, uint32_t axes)
{
    g_axes = realloc(g_axes, (size_t)(g_axes_n + 1) * sizeof *g_axes);
    if (!g_axes) abort();
    g_axes[g_axes_n++] = (axes_case){w, above, rows, below, k, bits, axes};
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Down columns: widths across the column blocks and the rows kernel's spans, passes from 1
 * to 4 (8-bit column segments at least K from the window's ends take integer sums: every
 * window here but the whole images of 1, 2 and 37 rows holds such segments) and on both
 * sides of the column kernel's limit (10 passes a launch), windows that are whole images,
 * that carry halos, and that are taller than one chunk (16 MiB). The small list
 * (compute-sanitizer) keeps K = 0, 2, 4, 8, 10 (one launch, 10 its most), 20 (two) and 22
 * (three: a float-to-float launch between, both scratch halves). */
static void build_axes_cases(void)
{
    static const uint32_t widths[] = {1, 2, 33, 1025, 4097, 32769};
    static const uint32_t iters[] = {0, 1, 2, 3, 4, 8, 10, 11, 20, 22};
    static const uint32_t windows[][3] = {{0, 1, 0}, {0, 2, 0}, {0, 37, 0}, {5, 20, 9}, {40, 300, 40}};
    for (int b = 8; b <= 16; b += 8)
        for (uint32_t axes = 2; axes <= 3; ++axes) {
            for (int w = 0; w < COUNT(widths); ++w)
                for (int k = 0; k < COUNT(iters); ++k)
                    for (int v = 0; v < COUNT(windows); ++v) {
                        if (g_small && (iters[k] % 2 || v == 4 || widths[w] > 4097)) continue;
                        add_axes(widths[w], windows[v][0], windows[v][1], windows[v][2], iters[k],
                                 (uint32_t)b, axes);
                    }
            /* Strip edges: windows with exactly K rows of halo on both sides, or above only
             * (the image's last rows below), widths on both sides of the xy one-pass kernels'
             * words and tiles (a 16-bit warp stores 120 samples; 112 and 104 for the 2 and 3
             * lanes a side that 5 to 10 passes would spoil; a u8 warp 248, below) and of K
             * from the row ends, a warp's 128 columns ending on the row's last (220) and one
             * short of it, K from 1 to 100. The small list keeps K = 1 and 3 at two widths. */
            static const uint32_t edge_widths[] = {5, 9, 10, 11, 103, 105, 111, 113, 119, 121, 220, 221, 243, 1003};
            static const uint32_t edge_iters[] = {1, 2, 3, 4, 5, 7, 8, 10, 33, 100};
            for (int k = 0; k < COUNT(edge_iters); ++k)
                for (int w = 0; w < COUNT(edge_widths); ++w) {
                    const uint32_t kk = edge_iters[k];
                    if (g_small && ((kk != 1 && kk != 3) || (w != 1 && w != 9))) continue;
                    add_axes(edge_widths[w], kk, 40 + kk, kk, kk, (uint32_t)b, axes);
                    if (!g_small) add_axes(edge_widths[w], kk, 300, 0, kk, (uint32_t)b, axes);
                }
            /* The u8 xy interior's warp tiles: warp g stores the interior words [62 g + 1,
             * 62 g + 63), and the words from (width - K) / 4 on are the edge launch's, so
             * these widths end the interior a word or two either side of the first and the
             * second warp's last. */
            static const uint32_t tile_widths[] = {251, 252, 255, 256, 257, 259, 260, 501, 503, 505, 507};
            for (uint32_t k = 1; k <= 3; ++k)
                for (int w = 0; w < COUNT(tile_widths); ++w)
                    if (b == 8 && axes == 3 && (!g_small || w % 2 == 0))
                        add_axes(tile_widths[w], k, 20 + k, k, k, 8, axes);
            /* The u8 xy tiles (4 to 10 passes): a block's 256 columns are walked along the
             * rows by two threads of 128 each, and a walker takes the row-end means when its
             * levels reach a row end: widths either side of where the first tile's second
             * walker (from 256 + K) and the second tile's first (from 384 + K) stop reaching
             * it (these narrow windows are cut into short column segments, fitted to the
             * device's waves, so their walks take one chunk of rows or two); and a wide
             * image whose segments walk several chunks of 60 rows. */
            static const uint32_t tile_iters[] = {4, 5, 6, 7, 9, 10};
            for (int k = 0; k < COUNT(tile_iters); ++k)
                for (uint32_t d = 0; d < 3; ++d) {
                    const uint32_t kk = tile_iters[k];
                    if (b != 8 || axes != 3 || (g_small && (d == 2 || kk % 2))) continue;
                    add_axes(255 + kk + d, kk, 20 + kk, kk, kk, 8, axes);
                    add_axes(383 + kk + d, kk, 61, kk, kk, 8, axes);
                    if (d == 0 && (kk == 10 || (!g_small && kk == 4)))
                        add_axes(16384, kk, 400, kk, kk, 8, axes);
                }
            /* Walks of every length modulo a batch (6 rows): whole windows of 2K + 1 to
             * 2K + 12 rows, one segment each, so the last batch holds 1 to 6 rows. */
            for (uint32_t k = 1; k <= 3; ++k)
                for (uint32_t r = 2 * k + 1; r <= 2 * k + 12; ++r)
                    if (!g_small || r % 3 == 0) add_axes(243, 0, r, 0, k, (uint32_t)b, axes);
            if (g_small) continue;
            add_axes(4097, 3, 5000, 3, 3, (uint32_t)b, axes);    /* two chunks and more */
            /* whole images of several column segments (segments are fitted to the device's
             * waves, 32 rows at least), and halos one row short of K: the integer sums'
             * segments must stop K rows from the window's ends; 1031 columns leave the last
             * thread three */
            for (uint32_t k = 1; k <= 4; ++k) add_axes(1031, 0, 600, 0, k, (uint32_t)b, axes);
            add_axes(1031, 2, 600, 2, 3, (uint32_t)b, axes);
            add_axes(100003, 8, 700, 8, 8, (uint32_t)b, axes);   /* wide rows, many chunks */
            add_axes(4097, 10, 2000, 10, 10, (uint32_t)b, axes); /* column segments of several chunks */
            add_axes(513, 120, 2000, 120, 120, (uint32_t)b, axes); /* halos of 120 rows */
            add_axes(4097, 2, 30, 2, 40, (uint32_t)b, axes);   /* rows in one-warp segments */
            add_axes(7776, 2, 30, 2, 65, (uint32_t)b, axes);   /* rows in relay segments */
            /* relay rows of 17 warps into floats: their staging passes 48 KiB */
            add_axes(16384, 2, 20, 2, 40, (uint32_t)b, axes);
        }
}

static void build_cases(void)
{
    static const uint32_t widths[] = {1,     2,     31,    32,    33,    1023,  1024, 1025,
                                      4095,  4096,  4097,  32767, 32768, 32769, 100003};
    static const uint32_t iters[] = {0, 1, 2, 3, 4, 7, 64, 1000};
    static const uint32_t tall_widths[] = {1, 33, 1025, 4097};
    static const uint32_t tall_iters[] = {0, 3, 64};
    static const uint32_t small_widths[] = {1, 2, 33, 1025, 4097, 32769};
    static const uint32_t small_iters[] = {0, 1, 3, 33};
    static const uint32_t int_widths[] = {1,    2,     31,    32,    33,    511,   512,
                                          513,  2047,  2048,  2049,  16383, 16384, 16385,
                                          100003};
    static const uint32_t int_small[] = {1, 33, 2049, 16385};

    for (int b = 8; b <= 16; b += 8) {
        if (g_small) {
            for (int w = 0; w < COUNT(small_widths); ++w)
                for (int k = 0; k < COUNT(small_iters); ++k)
                    add_smooth(small_widths[w], 3, small_iters[k], (uint32_t)b);
            /* relay segments and row ends on a thread's last pixel, for the sanitizers */
            add_smooth(1056, 3, 64, (uint32_t)b);
            add_smooth(7776, 2, 65, (uint32_t)b);
            continue;
        }
        for (int h = 0; h < 2; ++h)
            for (int w = 0; w < COUNT(widths); ++w)
                for (int k = 0; k < COUNT(iters); ++k)
                    add_smooth(widths[w], h == 0 ? 1 : 7, iters[k], (uint32_t)b);
        for (int w = 0; w < COUNT(tall_widths); ++w)
            for (int k = 0; k < COUNT(tall_iters); ++k)
                add_smooth(tall_widths[w], 3000, tall_iters[k], (uint32_t)b);
        add_smooth(32769, 3000, 3, (uint32_t)b);
        add_smooth(100003, 3000, 3, (uint32_t)b);
        add_smooth(33, 3000, 1000, (uint32_t)b);
        /* One-warp segments (5 to 64 passes; halos of 32 and 64 pixels): the row's end on
         * the last pixel of the last segment (1984, 16384 at K = 32; 18048 at K = 64, 20
         * segments; 1920 and 17152 at K = 64 are relay rows now) and one past it, which
         * takes one more segment, the row's last pixel at element 0 of one of its threads
         * (16385, 17153, 18049); and a chain of a prefetching first launch and a float
         * launch into halo groups (32769 x 3 at K = 1030). */
        add_smooth(1984, 7, 32, (uint32_t)b);
        add_smooth(16384, 3, 32, (uint32_t)b);
        add_smooth(16385, 3, 10, (uint32_t)b);
        add_smooth(4097, 3, 5, (uint32_t)b); /* the fewest passes of one-warp segments */
        add_smooth(1920, 7, 64, (uint32_t)b);
        add_smooth(17152, 3, 64, (uint32_t)b);
        add_smooth(17153, 3, 40, (uint32_t)b);
        add_smooth(18048, 3, 64, (uint32_t)b);
        add_smooth(18049, 3, 64, (uint32_t)b);
        add_smooth(32769, 3, 1030, (uint32_t)b);
        /* Up to 4 passes each thread holds 4 pixels either side of its 32: rows whose last
         * segment holds 2, 3 or 4 pixels put the row's end in the halo of the thread before
         * (the widths above cover 1 and 3: 33, 1025, 100003; at 1028 the end is the halo's last
         * pixel, which no pass at K = 4 reads: it runs the switch's last case). */
        add_smooth(34, 7, 3, (uint32_t)b);
        add_smooth(35, 7, 4, (uint32_t)b);
        add_smooth(1028, 3, 4, (uint32_t)b);
        add_smooth(16386, 3, 3, (uint32_t)b);
        /* Relay segments (33 to 78 passes; widths that are multiples of 32 and fit 18
         * warps, where they smooth at most 1.2x the pixels of multi-warp groups): two warps
         * (1056 at K = 64; at K = 1000 prefetching groups), one refresh (16384 at K = 33),
         * two and the last pass relay takes (K = 78; K = 79 and 100 beside it take the
         * prefetching groups), the row's end on lane 2 of the last warp (7776 at K = 65,
         * refreshes at 32 and 64; 7745 beside it, not a multiple of 32, takes multi-warp
         * groups), the most warps a block takes (17344, 18, at K = 40 and 78) and a width
         * past them (17376, one-warp segments with halos of 64). */
        add_smooth(1056, 3, 64, (uint32_t)b);
        add_smooth(1056, 3, 1000, (uint32_t)b);
        add_smooth(16384, 3, 33, (uint32_t)b);
        add_smooth(16384, 3, 78, (uint32_t)b);
        add_smooth(16384, 3, 79, (uint32_t)b);
        add_smooth(16384, 3, 100, (uint32_t)b);
        add_smooth(7776, 5, 65, (uint32_t)b);
        add_smooth(7745, 5, 65, (uint32_t)b);
        add_smooth(17344, 3, 40, (uint32_t)b);
        add_smooth(17344, 3, 78, (uint32_t)b);
        add_smooth(17376, 3, 40, (uint32_t)b);
    }

    const uint32_t *iw = g_small ? int_small : int_widths;
    const int in = g_small ? COUNT(int_small) : COUNT(int_widths);
    for (int w = 0; w < in; ++w) {
        const uint32_t heights[] = {1, 7, 300};
        for (int h = 0; h < (g_small ? 2 : 3); ++h) {
            /* the dtype rule's pairs, and the two the ABI also allows */
            add_integral(iw[w], heights[h], 8, 32);
            add_integral(iw[w], heights[h], 16, 64);
            add_integral(iw[w], heights[h], 8, 64);
            add_integral(iw[w], heights[h], 16, 32);
        }
    }
    if (g_small) return;
    /* Tall strips: many bands of tiles, a last band cut short, and the widest rows the
     * tiled table takes (16384) beside the next width, which it leaves to the row and
     * column passes. */
    static const uint32_t tall_int_widths[] = {33, 2049, 16384, 16385};
    for (int w = 0; w < COUNT(tall_int_widths); ++w) {
        add_integral(tall_int_widths[w], 3000, 8, 32);
        add_integral(tall_int_widths[w], 3000, 16, 64);
        add_integral(tall_int_widths[w], 3000, 8, 64);
        add_integral(tall_int_widths[w], 3000, 16, 32);
    }
    add_integral(33, 20000, 8, 64);
    add_integral(513, 20000, 16, 32);
    /* 600 pixels: two tiles a band, the second 88 columns wide */
    add_integral(600, 20000, 8, 32);
}

/* ---- images ---- */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

typedef struct {
    uint32_t width, height, bits;
    size_t stride; /* bytes, padded past the row so strides are exercised */
    uint8_t *data;
} image;

/* Random samples, with every fifth row at the maximum value (sums and clamps at the top)
 * and every seventh row a slow gradient (long runs the stencil barely changes). */
static image make_image(uint32_t w, uint32_t h, uint32_t bits)
{
    image im = {w, h, bits, (size_t)w * (bits / 8) + 8 * (next_rand() % 3), NULL};
    im.data = malloc(im.stride * h);
    ck_assert_ptr_nonnull(im.data);
    const uint32_t maxval = bits == 16 ? 65535u : 255u;
    for (uint32_t y = 0; y < h; ++y) {
        uint8_t *row = im.data + (size_t)y * im.stride;
        for (uint32_t x = 0; x < w; ++x) {
            uint32_t v;
            if (y % 5 == 4)
                v = maxval;
            else if (y % 7 == 6)
                v = (uint32_t)((uint64_t)x * maxval / (w > 1 ? w - 1 : 1));
            else
                v = (uint32_t)(next_rand() % (maxval + 1));
            if (bits == 16)
                ((uint16_t *)row)[x] = (uint16_t)v;
            else
                row[x] = (uint8_t)v;
        }
    }
    return im;
}

static uint8_t *alloc_out(const image *im, uint32_t out_bits, size_t *stride)
{
    *stride = (size_t)im->width * (out_bits / 8) + 16;
    uint8_t *p = malloc(*stride * im->height);
    ck_assert_ptr_nonnull(p);
    memset(p, 0xA5, *stride * im->height); /* poison: unwritten bytes show */
    return p;
}

static gs_strip strip_of(const image *im, uint32_t y0, uint32_t rows, uint32_t out_bits,
                         uint8_t *dst, size_t dst_stride)
{
    return gs_test_strip(im->data + (size_t)y0 * im->stride, im->stride, im->width, rows, im->bits,
                         dst + (size_t)y0 * dst_stride, dst_stride, out_bits);
}

/* First differing row/column of two outputs, or -1. */
static long first_diff(const uint8_t *a, const uint8_t *b, size_t stride, uint32_t h,
                       size_t row_bytes, uint32_t *col_byte)
{
    for (uint32_t y = 0; y < h; ++y) {
        const uint8_t *ra = a + (size_t)y * stride, *rb = b + (size_t)y * stride;
        if (memcmp(ra, rb, row_bytes) != 0) {
            for (size_t i = 0; i < row_bytes; ++i)
                if (ra[i] != rb[i]) {
                    *col_byte = (uint32_t)i;
                    break;
                }
            return (long)y;
        }
    }
    return -1;
}

/* ---- smoothing ---- */

START_TEST(smooth_matches_cpu)
{
    const smooth_case c = g_smooth[_i];
    image im = make_image(c.width, c.height, c.bits);
    size_t stride;
    uint8_t *want = alloc_out(&im, c.bits, &stride);
    char err[ERR_LEN] = "";
    gs_strip s = strip_of(&im, 0, c.height, c.bits, want, stride);
    ck_assert_msg(g_cpu->smooth_rows(g_cpu_inst, &s, c.iters, err, sizeof err) == GS_PLUGIN_OK,
                  "cpu: %s", err);
    uint8_t *got = alloc_out(&im, c.bits, &stride);
    s = strip_of(&im, 0, c.height, c.bits, got, stride);
    gs_plugin_status st = g_cuda->smooth_rows(g_cuda_inst, &s, c.iters, err, sizeof err);
    ck_assert_msg(st == GS_PLUGIN_OK, "cuda: %s", err);
    uint32_t col = 0;
    const long y = first_diff(want, got, stride, c.height, (size_t)c.width * (c.bits / 8), &col);
    ck_assert_msg(y < 0, "%ux%u %u-bit K=%u differs at row %ld, x %u", c.width, c.height, c.bits,
                  c.iters, y, col / (c.bits / 8));
    free(got);
    free(want);
    free(im.data);
}
END_TEST

/* ---- smoothing down columns ---- */

START_TEST(axes_match_cpu)
{
    const axes_case c = g_axes[_i];
    const uint32_t window = c.above + c.rows + c.below;
    image im = make_image(c.width, window, c.bits);
    size_t stride;
    uint8_t *want = alloc_out(&im, c.bits, &stride), *got = alloc_out(&im, c.bits, &stride);
    char err[ERR_LEN] = "";
    gs_strip s = strip_of(&im, 0, c.rows, c.bits, want, stride);
    ck_assert_msg(g_cpu->smooth_axes(g_cpu_inst, &s, c.axes, c.above, c.below, c.iters, err,
                                     sizeof err) == GS_PLUGIN_OK, "cpu: %s", err);
    s = strip_of(&im, 0, c.rows, c.bits, got, stride);
    gs_plugin_status st = g_cuda->smooth_axes(g_cuda_inst, &s, c.axes, c.above,
                                              c.below, c.iters, err, sizeof err);
    ck_assert_msg(st == GS_PLUGIN_OK, "cuda: %s", err);
    uint32_t col = 0;
    const long y = first_diff(want, got, stride, c.rows, (size_t)c.width * (c.bits / 8), &col);
    ck_assert_msg(y < 0, "axes %s: %u wide, window %u+%u+%u, %u-bit K=%u differs at row %ld, x %u",
                  c.axes == 3 ? "xy" : "y", c.width, c.above, c.rows, c.below, c.bits, c.iters, y,
                  col / (c.bits / 8));
    free(want), free(got), free(im.data);
}
END_TEST

/* ---- integrals ---- */

START_TEST(integral_rows_match_cpu)
{
    const integral_case c = g_integral[_i];
    image im = make_image(c.width, c.height, c.in_bits);
    size_t stride;
    uint8_t *want = alloc_out(&im, c.out_bits, &stride);
    uint8_t *got = alloc_out(&im, c.out_bits, &stride);
    char err[ERR_LEN] = "";
    gs_strip s = strip_of(&im, 0, c.height, c.out_bits, want, stride);
    ck_assert_msg(g_cpu->integral_rows(g_cpu_inst, &s, err, sizeof err) == GS_PLUGIN_OK, "cpu: %s",
                  err);
    s = strip_of(&im, 0, c.height, c.out_bits, got, stride);
    ck_assert_msg(g_cuda->integral_rows(g_cuda_inst, &s, err, sizeof err) == GS_PLUGIN_OK,
                  "cuda: %s", err);
    uint32_t col = 0;
    const long y = first_diff(want, got, stride, c.height, (size_t)c.width * (c.out_bits / 8), &col);
    ck_assert_msg(y < 0, "integral rows %ux%u %u->%u differs at row %ld, x %u", c.width, c.height,
                  c.in_bits, c.out_bits, y, col / (c.out_bits / 8));
    free(want);
    free(got);
    free(im.data);
}
END_TEST

/* The summed-area table in strips of uneven heights, so the column sums carry; a tall image
 * starts with one strip of 5/6 of its rows. */
START_TEST(integral_2d_matches_cpu)
{
    const integral_case c = g_integral[_i];
    image im = make_image(c.width, c.height, c.in_bits);
    size_t stride;
    uint8_t *want = alloc_out(&im, c.out_bits, &stride);
    uint8_t *got = alloc_out(&im, c.out_bits, &stride);
    const size_t sums_bytes = (size_t)c.width * (c.out_bits / 8);
    void *sums_cpu = calloc(1, sums_bytes), *sums_cuda = calloc(1, sums_bytes);
    ck_assert(sums_cpu && sums_cuda);
    static const uint32_t strip_rows[] = {1, 5, 64, 3, 1000};
    char err[ERR_LEN] = "";
    uint32_t y0 = 0;
    for (int k = 0; y0 < c.height; k = (k + 1) % COUNT(strip_rows)) {
        uint32_t n = y0 == 0 && c.height >= 3000 ? c.height / 6 * 5 : strip_rows[k];
        if (n > c.height - y0) n = c.height - y0;
        gs_strip s = strip_of(&im, y0, n, c.out_bits, want, stride);
        ck_assert_msg(g_cpu->integral_2d(g_cpu_inst, &s, sums_cpu, err, sizeof err) == GS_PLUGIN_OK,
                      "cpu: %s", err);
        s = strip_of(&im, y0, n, c.out_bits, got, stride);
        ck_assert_msg(g_cuda->integral_2d(g_cuda_inst, &s, sums_cuda, err, sizeof err) ==
                          GS_PLUGIN_OK,
                      "cuda: %s", err);
        ck_assert_msg(memcmp(sums_cpu, sums_cuda, sums_bytes) == 0,
                      "2d %ux%u %u->%u: column sums differ after rows %u..%u", c.width, c.height,
                      c.in_bits, c.out_bits, y0, y0 + n - 1);
        y0 += n;
    }
    uint32_t col = 0;
    const long y = first_diff(want, got, stride, c.height, (size_t)c.width * (c.out_bits / 8), &col);
    ck_assert_msg(y < 0, "integral 2d %ux%u %u->%u differs at row %ld, x %u", c.width, c.height,
                  c.in_bits, c.out_bits, y, col / (c.out_bits / 8));
    free(sums_cpu);
    free(sums_cuda);
    free(want);
    free(got);
    free(im.data);
}
END_TEST

/* ---- errors and timings ---- */

START_TEST(bad_arguments_are_refused)
{
    char err[ERR_LEN] = "";
    uint8_t px[4] = {1, 2, 3, 4}, out[4];
    image im = {4, 1, 8, 4, px};
    gs_strip s = strip_of(&im, 0, 1, 8, out, 4);
    ck_assert_int_eq(g_cuda->smooth_rows(g_cuda_inst, NULL, 3, err, sizeof err),
                     GS_PLUGIN_ERR_INVALID);
    ck_assert(err[0] != '\0');
    ck_assert_int_eq(g_cuda->smooth_rows(g_cuda_inst, &s, 100001, err, sizeof err),
                     GS_PLUGIN_ERR_INVALID);
    s.out_bits = 16;
    ck_assert_int_eq(g_cuda->smooth_rows(g_cuda_inst, &s, 3, err, sizeof err),
                     GS_PLUGIN_ERR_UNSUPPORTED);
    s.out_bits = 8;
    s.src_stride = 2;
    ck_assert_int_eq(g_cuda->smooth_rows(g_cuda_inst, &s, 3, err, sizeof err),
                     GS_PLUGIN_ERR_INVALID);
    s.src_stride = 4;
    /* a window of 2^31 + 1 rows (the buffer holds one): refused before any row is read */
    ck_assert_int_eq(g_cuda->smooth_axes(g_cuda_inst, &s, GS_AXIS_Y, GS_PLUGIN_MAX_WINDOW_ROWS, 0, 3, err, sizeof err),
                     GS_PLUGIN_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "window taller"));
    ck_assert_int_eq(g_cuda->integral_2d(g_cuda_inst, &s, NULL, err, sizeof err),
                     GS_PLUGIN_ERR_UNSUPPORTED); /* out_bits 8 is no integral depth */

    g_cuda->destroy(NULL); /* a no-op */
}
END_TEST

START_TEST(timings_add_up)
{
    if (!g_cuda->timings) return;
    gs_plugin_timings t = {GS_ABI_HEADER_INIT(gs_plugin_timings), 0, 0, 0};
    g_cuda->timings(g_cuda_inst, &t);
    ck_assert_msg(t.kernel_ns > 0 && t.upload_ns > 0 && t.download_ns > 0,
                  "timings after the suite: upload %llu, kernel %llu, download %llu ns",
                  (unsigned long long)t.upload_ns, (unsigned long long)t.kernel_ns,
                  (unsigned long long)t.download_ns);
}
END_TEST

/* ---- set-up ---- */

static gs_plugin_instance *make(const gs_plugin_desc *d)
{
    char err[ERR_LEN] = "";
    gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), 0, -1, GS_MEMORY_HOST};
    gs_plugin_instance *inst = NULL;
    gs_plugin_status st = d->create(&cfg, &inst, err, sizeof err);
    if (st != GS_PLUGIN_OK) fprintf(stderr, "test_cuda: create %s: %s\n", d->name, err);
    return inst;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_cuda CPU_PLUGIN.so CUDA_PLUGIN.so\n");
        return 2;
    }
    g_small = getenv("GSMOOTH_TEST_SMALL") && strcmp(getenv("GSMOOTH_TEST_SMALL"), "1") == 0;
    g_cpu = gs_test_load_plugin("test_cuda", argv[1]);
    g_cuda = gs_test_load_plugin("test_cuda", argv[2]);
    if (!g_cpu || !g_cuda) return 1;
    char why[ERR_LEN] = "";
    const int skip = gs_test_device_or_skip(g_cuda, why, sizeof why);
    if (skip) return skip;
    printf("test_cuda: %s%s\n", why, g_small ? " (small case list)" : "");
    g_cpu_inst = make(g_cpu);
    g_cuda_inst = make(g_cuda);
    if (!g_cpu_inst || !g_cuda_inst) return 1;
    build_cases();
    build_axes_cases();
    if (!(g_cuda->ops & GS_OP_SMOOTH_AXES) || !(g_cpu->ops & GS_OP_SMOOTH_AXES)) {
        fprintf(stderr, "test_cuda: a plugin lacks smooth_axes\n");
        return 1;
    }

    Suite *suite = suite_create("cuda");
    TCase *tc = tcase_create("smooth");
    tcase_set_timeout(tc, 0);
    tcase_add_loop_test(tc, smooth_matches_cpu, 0, g_smooth_n);
    suite_add_tcase(suite, tc);
    tc = tcase_create("axes");
    tcase_set_timeout(tc, 0);
    tcase_add_loop_test(tc, axes_match_cpu, 0, g_axes_n);
    suite_add_tcase(suite, tc);
    tc = tcase_create("integral");
    tcase_set_timeout(tc, 0);
    tcase_add_loop_test(tc, integral_rows_match_cpu, 0, g_integral_n);
    tcase_add_loop_test(tc, integral_2d_matches_cpu, 0, g_integral_n);
    suite_add_tcase(suite, tc);
    tc = tcase_create("api");
    tcase_add_test(tc, bad_arguments_are_refused);
    tcase_add_test(tc, timings_add_up);
    suite_add_tcase(suite, tc);

    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);

    g_cuda->destroy(g_cuda_inst);
    g_cpu->destroy(g_cpu_inst);
    free(g_smooth);
    free(g_integral);
    free(g_axes);
    return failed == 0 ? 0 : 1;
}
