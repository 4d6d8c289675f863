/* test_cuda_float.c: the CUDA plugin's float32 work against the C reference, byte for byte. */
/*
 * Through the plugin ABI: float32 samples smoothed to float32 (rows, columns, both, strips
 * with halo rows as a streaming host passes them), 8 and 16-bit samples smoothed to
 * float32, float64 integral rows and 2d tables across strips with carried column sums, on
 * host strips and on device memory (gs_plugin_config.memory = GS_MEMORY_DEVICE).
 * Usage: test_cuda_float CUDA_PLUGIN.so. Exits 77 (ctest's skip) when the plugin's probe
 * fails. GSMOOTH_TEST_SMALL=1 runs a reduced list, small enough for compute-sanitizer.
 * Check runs in-process (CK_NOFORK): a CUDA context does not survive fork.
 */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include <check.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsmooth/gsmooth_plugin.h"
#include "plugin_or_skip.h"
#include "reference.h"

#define ERR_LEN 512

static const gs_plugin_desc *g_cuda;
static gs_plugin_instance *g_host_inst; /* host strips */
static gs_plugin_instance *g_dev_inst;  /* device strips */
static int g_small;

/* ---- samples ---- */

static uint64_t g_rng = 0x243f6a8885a308d3ull;
static uint64_t next_rand(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* A value the passes must carry exactly: NaN of several payloads and both signs (quiet and
 * signalling), infinities, subnormals, zeros of both signs, huge and tiny magnitudes. */
static float special_value(void)
{
    static const uint32_t bits[] = {
        0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fc12345u, 0xffffffffu, /* NaN */
        0x7f800000u, 0xff800000u,                                        /* +/-Inf */
        0x00000001u, 0x80000001u, 0x00400000u, 0x007fffffu, 0x80555555u, /* subnormals */
        0x00000000u, 0x80000000u,                                        /* +/-0 */
        0x7f7fffffu, 0xff7fffffu, 0x7e967699u, 0xfe967699u,              /* FLT_MAX, 1e38 */
        0x00800000u, 0x80800000u, 0x0da24260u,                           /* FLT_MIN, 1e-30 */
    };
    const uint32_t n = (uint32_t)(sizeof bits / sizeof bits[0]);
    const uint32_t b = bits[next_rand() % n];
    if (b == 0x7e967699u || b == 0xfe967699u) /* around 1e38: sums overflow to Inf */
        return from_bits(b) * (float)(1.0 + (double)(next_rand() % 1000) / 1000.0);
    return from_bits(b);
}

/* An ordinary value: negative and positive, of magnitudes from tiny to large. */
static float ordinary_value(void)
{
    const double u = (double)(next_rand() % 2000001) / 1000000.0 - 1.0;
    const int e = (int)(next_rand() % 60) - 30;
    return (float)ldexp(u, e);
}

typedef struct {
    uint32_t width, height, bits;
    size_t stride; /* bytes, padded past the row so strides are exercised */
    uint8_t *data;
} image;

/* Rows of four kinds by row index: no specials, one special, specials at about 1 in 20,
 * and (u8/u16) plain samples; every row otherwise ordinary values. */
static image make_image(uint32_t w, uint32_t h, uint32_t bits)
{
    image im = {w, h, bits, (size_t)w * (bits / 8) + 4 * (next_rand() % 4), NULL};
    im.data = malloc(im.stride * h + 1);
    ck_assert_ptr_nonnull(im.data);
    for (uint32_t y = 0; y < h; ++y) {
        uint8_t *row = im.data + (size_t)y * im.stride;
        const uint32_t one = (uint32_t)(next_rand() % w);
        for (uint32_t x = 0; x < w; ++x) {
            if (bits == 8) {
                row[x] = (uint8_t)next_rand();
                continue;
            }
            if (bits == 16) {
                ((uint16_t *)row)[x] = (uint16_t)next_rand();
                continue;
            }
            float v = ordinary_value();
            if ((y % 3 == 1 && x == one) || (y % 3 == 2 && next_rand() % 20 == 0))
                v = special_value();
            memcpy(row + 4 * (size_t)x, &v, sizeof v);
        }
    }
    return im;
}

static uint8_t *alloc_out(uint32_t width, uint32_t height, uint32_t out_bits, size_t *stride)
{
    *stride = (size_t)width * (out_bits / 8) + 8 * (next_rand() % 3);
    uint8_t *p = malloc(*stride * height + 1);
    ck_assert_ptr_nonnull(p);
    memset(p, 0xA5, *stride * height); /* poison: unwritten bytes show */
    return p;
}

static gs_strip strip_of(const uint8_t *src, size_t src_stride, uint32_t width, uint32_t rows,
                         uint32_t in_bits, uint8_t *dst, size_t dst_stride, uint32_t out_bits)
{
    return gs_test_strip(src, src_stride, width, rows, in_bits, dst, dst_stride, out_bits);
}

/* Fail with the first differing row and byte of two outputs of `row_bytes` a row. */
static void expect_same(const char *what, const uint8_t *want, size_t want_stride,
                        const uint8_t *got, size_t got_stride, uint32_t rows, size_t row_bytes)
{
    for (uint32_t y = 0; y < rows; ++y) {
        const uint8_t *a = want + (size_t)y * want_stride, *b = got + (size_t)y * got_stride;
        if (memcmp(a, b, row_bytes) == 0) continue;
        size_t i = 0;
        while (a[i] == b[i]) ++i;
        const size_t word = i / 4 * 4;
        uint32_t wa, wb;
        memcpy(&wa, a + word, 4);
        memcpy(&wb, b + word, 4);
        ck_abort_msg("%s: row %u byte %zu differs (reference word 0x%08x, CUDA 0x%08x)", what, y,
                     i, wa, wb);
    }
}

/* Fail if a byte of a row's padding, [row_bytes, stride), is no longer the 0xA5 poison: the
 * plugin writes a strip's rows and nothing between them (a caller's device buffer may keep
 * data there). */
static void expect_untouched(const char *what, const uint8_t *got, size_t stride, uint32_t rows,
                             size_t row_bytes)
{
    for (uint32_t y = 0; y < rows; ++y)
        for (size_t i = row_bytes; i < stride; ++i)
            ck_assert_msg(got[(size_t)y * stride + i] == 0xA5,
                          "%s: row %u byte %zu past the row's %zu written", what, y, i, row_bytes);
}

/* ---- device strips ---- */

/* A copy of `rows` rows of `row_bytes` on the device, `pitch` bytes apart (pitch 0: packed). */
static void *to_device(const uint8_t *src, size_t src_stride, uint32_t rows, size_t row_bytes,
                       size_t pitch)
{
    void *d = NULL;
    ck_assert_int_eq(cudaMalloc(&d, pitch * rows + 16), cudaSuccess);
    ck_assert_int_eq(cudaMemset(d, 0xA5, pitch * rows + 16), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy2D(d, pitch, src, src_stride, row_bytes, rows, cudaMemcpyHostToDevice),
                     cudaSuccess);
    return d;
}

/* ---- case lists ---- */

typedef struct { uint32_t width, height, iters, in_bits; } smooth_case;
typedef struct { uint32_t width, above, rows, below, iters, in_bits, axes; } axes_case;
typedef struct { uint32_t width, height, strip_rows; } integral_case;

static smooth_case *g_smooth;
static int g_smooth_n;
static axes_case *g_axes;
static int g_axes_n;
static integral_case *g_integral;
static int g_integral_n;

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define APPEND(list, n, ...)                                                     \
    do {                                                                         \
        list = realloc(list, (size_t)(n + 1) * sizeof *list);                    \
        if (!list) abort();                                                      \
        list[n++] = (__typeof__(*list)){__VA_ARGS__};                            \
    } while (0)

/* Widths at the row kernels' boundaries (a thread's 32 pixels, a warp's 1024, a block's
 * span of 32768) and ones that are multiples of nothing; K across the single-launch
 * passes, the 79th pass (where integer runs change division), and 100. */
static void build_cases(void)
{
    static const uint32_t widths[] = {1, 2, 3, 31, 32, 33, 255, 256, 257, 1000, 1023, 1025, 4099};
    static const uint32_t ks[] = {0, 1, 2, 3, 4, 5, 10, 79, 100};
    static const uint32_t small_widths[] = {1, 2, 33, 257, 1025};
    static const uint32_t small_ks[] = {0, 1, 3, 10};
    const uint32_t *wl = g_small ? small_widths : widths;
    const int wn = g_small ? COUNT(small_widths) : COUNT(widths);
    const uint32_t *kl = g_small ? small_ks : ks;
    const int kn = g_small ? COUNT(small_ks) : COUNT(ks);
    for (int i = 0; i < wn; ++i)
        for (int j = 0; j < kn; ++j) {
            APPEND(g_smooth, g_smooth_n, wl[i], 5, kl[j], 32);
            if (j % 2 == 0) APPEND(g_smooth, g_smooth_n, wl[i], 3, kl[j], i % 2 ? 16 : 8);
        }
    /* rows past a block's span take halo segments; many rows fill the grid */
    APPEND(g_smooth, g_smooth_n, 32769, 2, 3, 32);
    APPEND(g_smooth, g_smooth_n, 40000, 2, g_small ? 3 : 1500, 32);
    APPEND(g_smooth, g_smooth_n, 513, 200, 3, 32);
    /* 8 and 16-bit samples to float32 over many rows (the cases above have 3, so a grid of
     * a few blocks): K of the few-passes kernel, of one-warp and of multi-warp segments */
    APPEND(g_smooth, g_smooth_n, 4099, g_small ? 40 : 300, 3, 8);
    APPEND(g_smooth, g_smooth_n, 2053, 97, 5, 16);
    APPEND(g_smooth, g_smooth_n, 4099, 67, 10, 8);
    if (!g_small) APPEND(g_smooth, g_smooth_n, 32769, 33, 12, 8);

    /* smooth_axes: windows that are whole images and that carry halos; K on both sides of
     * the column kernel's 10 passes a launch (11 and 20 chain two launches, 22 three: a
     * float-to-float launch between, both scratch halves) */
    static const uint32_t awidths[] = {1, 2, 33, 257, 1025};
    static const uint32_t aks[] = {0, 1, 3, 10, 11, 20, 22};
    static const uint32_t axes[] = {GS_AXIS_X, GS_AXIS_Y, GS_AXIS_X | GS_AXIS_Y};
    for (int i = 0; i < COUNT(awidths); ++i)
        for (int j = 0; j < COUNT(aks); ++j)
            for (int a = 0; a < COUNT(axes); ++a) {
                if (g_small && (j % 2 || i == 3)) continue;
                const uint32_t k = aks[j];
                APPEND(g_axes, g_axes_n, awidths[i], 0, 37, 0, k, 32, axes[a]);
                APPEND(g_axes, g_axes_n, awidths[i], k, 19, k, k, 32, axes[a]);
                if (a > 0 && j % 2 == 0)
                    APPEND(g_axes, g_axes_n, awidths[i], k / 2, 23, k, k, i % 2 ? 16 : 8, axes[a]);
            }
    APPEND(g_axes, g_axes_n, 4099, 3, 300, 3, 3, 32, GS_AXIS_X | GS_AXIS_Y);
    /* xy of 8 and 16-bit samples to float32 over many rows: the rows step's float results
     * reach the output unrounded, so an ulp there fails here (an integer output may hide it) */
    APPEND(g_axes, g_axes_n, 4099, 10, 130, 10, 10, 8, GS_AXIS_X | GS_AXIS_Y);
    if (!g_small) APPEND(g_axes, g_axes_n, 2053, 5, 97, 5, 5, 16, GS_AXIS_X | GS_AXIS_Y);

    static const uint32_t iwidths[] = {1, 2, 3, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 4099};
    for (int i = 0; i < COUNT(iwidths); ++i) {
        if (g_small && i % 3) continue;
        APPEND(g_integral, g_integral_n, iwidths[i], 1, 1);
        APPEND(g_integral, g_integral_n, iwidths[i], 70, 70);
        APPEND(g_integral, g_integral_n, iwidths[i], 75, 7 + i % 20);
    }
    APPEND(g_integral, g_integral_n, 333, 1000, 300);
}

/* ---- smoothing ---- */

/* The reference's float32 rows of an image. */
static uint8_t *reference_rows(const image *im, uint32_t iters, size_t *stride)
{
    uint8_t *want = alloc_out(im->width, im->height, 32, stride);
    float *scratch = malloc(2 * (size_t)im->width * sizeof(float));
    ck_assert_ptr_nonnull(scratch);
    for (uint32_t y = 0; y < im->height; ++y)
        gs_ref_smooth_row_to(im->data + (size_t)y * im->stride, im->bits, want + (size_t)y * *stride,
                             32, im->width, iters, scratch);
    free(scratch);
    return want;
}

START_TEST(smooth_rows_match_reference)
{
    const smooth_case c = g_smooth[_i];
    char what[160], err[ERR_LEN] = "";
    snprintf(what, sizeof what, "smooth_rows %ux%u K=%u in_bits %u -> float32", c.width, c.height,
             c.iters, c.in_bits);
    image im = make_image(c.width, c.height, c.in_bits);
    size_t want_stride, got_stride;
    uint8_t *want = reference_rows(&im, c.iters, &want_stride);
    uint8_t *got = alloc_out(c.width, c.height, 32, &got_stride);
    gs_strip s = strip_of(im.data, im.stride, c.width, c.height, c.in_bits, got, got_stride, 32);
    ck_assert_msg(g_cuda->smooth_rows(g_host_inst, &s, c.iters, err, sizeof err) == GS_PLUGIN_OK,
                  "%s: %s", what, err);
    expect_same(what, want, want_stride, got, got_stride, c.height, (size_t)c.width * 4);
    free(want), free(got), free(im.data);
}
END_TEST

/* The reference over a window (the whole image to smooth_axes), rows [above, above + rows). */
static uint8_t *reference_window(const image *im, uint32_t iters, uint32_t axes, size_t *stride)
{
    uint8_t *want = alloc_out(im->width, im->height, 32, stride);
    ck_assert_int_eq(gs_ref_smooth_image_to(im->data, im->stride, im->bits, want, *stride, 32,
                                            im->width, im->height, iters, axes),
                     0);
    return want;
}

START_TEST(axes_match_reference)
{
    const axes_case c = g_axes[_i];
    const uint32_t window = c.above + c.rows + c.below;
    char what[200], err[ERR_LEN] = "";
    snprintf(what, sizeof what, "smooth_axes 0x%x width %u window %u+%u+%u K=%u in_bits %u", c.axes,
             c.width, c.above, c.rows, c.below, c.iters, c.in_bits);
    image im = make_image(c.width, window, c.in_bits);
    size_t want_stride, got_stride;
    uint8_t *want = reference_window(&im, c.iters, c.axes, &want_stride);
    uint8_t *got = alloc_out(c.width, c.rows, 32, &got_stride);
    gs_strip s = strip_of(im.data, im.stride, c.width, c.rows, c.in_bits, got, got_stride, 32);
    ck_assert_msg(g_cuda->smooth_axes(g_host_inst, &s, c.axes, c.above, c.below, c.iters, err,
                                      sizeof err) == GS_PLUGIN_OK,
                  "%s: %s", what, err);
    expect_same(what, want + (size_t)c.above * want_stride, want_stride, got, got_stride, c.rows,
                (size_t)c.width * 4);
    free(want), free(got), free(im.data);
}
END_TEST

/*
 * Few nonzero samples among zeros, to float32 down the columns (y) or both ways (xy) for
 * many passes: a tail shrinks about 3x a pass, so from pass 79 since the samples (K + K for
 * xy) some sums fall below 2^-123, where the two-instruction division rounds otherwise (a
 * simulation of that division in every column launch changed 13 to 58 pixels of these
 * cases). The column launches choose their division by the passes before them, xy's row
 * passes counted, so the float results must match the reference bit for bit on both sides
 * of that limit; random samples never reach it. y: one row of distinct samples (each column
 * its own tail); xy: two lone samples, K from the row ends and far apart.
 */
typedef struct { uint32_t axes, iters; } sparse_case;
static const sparse_case g_sparse[] = {
    {GS_AXIS_Y, 79}, {GS_AXIS_Y, 90}, {GS_AXIS_Y, 120},
    {GS_AXIS_X | GS_AXIS_Y, 40}, {GS_AXIS_X | GS_AXIS_Y, 45}, {GS_AXIS_X | GS_AXIS_Y, 60},
};

static void put_sample(image *im, uint32_t x, uint32_t y, uint32_t v)
{
    uint8_t *p = im->data + (size_t)y * im->stride + (size_t)x * (im->bits / 8);
    if (im->bits == 8) p[0] = (uint8_t)v;
    else memcpy(p, &(uint16_t){(uint16_t)v}, 2);
}

START_TEST(sparse_samples_many_passes_match_reference)
{
    const sparse_case c = g_sparse[_i / 2];
    /* wide and tall enough for a tail of K samples each way from a lone sample */
    const uint32_t bits = _i % 2 ? 16 : 8, width = 131, height = 260;
    image im = {width, height, bits, (size_t)width * (bits / 8) + 8, NULL};
    im.data = calloc(im.stride * height, 1);
    ck_assert_ptr_nonnull(im.data);
    if (c.axes & GS_AXIS_X) {
        put_sample(&im, 5, 3, bits == 8 ? 1 : 65535);
        put_sample(&im, 125, 250, bits == 8 ? 3 : 1000);
    } else {
        for (uint32_t x = 0; x < width; ++x) put_sample(&im, x, 3, bits == 8 ? x * 7 % 255 + 1 : x * 769 % 65535 + 1);
    }
    size_t want_stride, got_stride;
    uint8_t *want = reference_window(&im, c.iters, c.axes, &want_stride);
    int tiny = 0; /* the case reaches the range it is for */
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x) {
            float v;
            memcpy(&v, want + (size_t)y * want_stride + 4 * (size_t)x, sizeof v);
            tiny |= v > 0.0f && v < 0x1p-123f;
        }
    char what[200], err[ERR_LEN] = "";
    snprintf(what, sizeof what, "sparse %u-bit samples, axes 0x%x, K=%u", bits, c.axes, c.iters);
    const int reaches = c.axes & GS_AXIS_X ? c.iters >= 45 : c.iters >= 90; /* 2K or K passes */
    ck_assert_msg(tiny || !reaches, "%s: no value below 2^-123", what);
    uint8_t *got = alloc_out(width, height, 32, &got_stride);
    gs_strip s = strip_of(im.data, im.stride, width, height, bits, got, got_stride, 32);
    ck_assert_msg(g_cuda->smooth_axes(g_host_inst, &s, c.axes, 0, 0, c.iters, err, sizeof err) == GS_PLUGIN_OK,
                  "%s: %s", what, err);
    expect_same(what, want, want_stride, got, got_stride, height, (size_t)width * 4);
    free(want), free(got), free(im.data);
}
END_TEST

/* A taller image streamed in strips as a host does: each strip's window has min(K, rows
 * available) rows of halo on each side; the rows written equal the whole image's. */
START_TEST(strips_with_halos_match_reference)
{
    static const uint32_t axes[] = {GS_AXIS_Y, GS_AXIS_X | GS_AXIS_Y};
    const uint32_t width = _i % 2 ? 1000 : 33, height = 101, strip_rows = 23;
    const uint32_t k = _i < 2 ? 5 : 12, ax = axes[_i % 2];
    char what[160], err[ERR_LEN] = "";
    image im = make_image(width, height, 32);
    size_t want_stride, got_stride;
    uint8_t *want = reference_window(&im, k, ax, &want_stride);
    uint8_t *got = alloc_out(width, height, 32, &got_stride);
    for (uint32_t y0 = 0; y0 < height; y0 += strip_rows) {
        const uint32_t rows = height - y0 < strip_rows ? height - y0 : strip_rows;
        const uint32_t above = y0 < k ? y0 : k;
        const uint32_t below = height - y0 - rows < k ? height - y0 - rows : k;
        gs_strip s = strip_of(im.data + (size_t)(y0 - above) * im.stride, im.stride, width, rows, 32,
                              got + (size_t)y0 * got_stride, got_stride, 32);
        ck_assert_msg(g_cuda->smooth_axes(g_host_inst, &s, ax, above, below, k, err, sizeof err) ==
                          GS_PLUGIN_OK,
                      "strip at %u: %s", y0, err);
    }
    snprintf(what, sizeof what, "strips of %u rows, axes 0x%x, width %u, K=%u", strip_rows, ax,
             width, k);
    expect_same(what, want, want_stride, got, got_stride, height, (size_t)width * 4);
    free(want), free(got), free(im.data);
}
END_TEST

/* ---- integrals ---- */

static uint8_t *reference_integral(const image *im, int table, size_t *stride)
{
    uint8_t *want = alloc_out(im->width, im->height, 64, stride);
    double *col = malloc((size_t)im->width * sizeof *col);
    ck_assert_ptr_nonnull(col);
    for (uint32_t x = 0; x < im->width; ++x) col[x] = -0.0;
    for (uint32_t y = 0; y < im->height; ++y) {
        const uint8_t *in = im->data + (size_t)y * im->stride;
        uint8_t *out = want + (size_t)y * *stride;
        if (table)
            gs_ref_integral_2d_row(in, out, col, im->width, 32, 64);
        else
            gs_ref_integral_row(in, out, im->width, 32, 64);
    }
    free(col);
    return want;
}

/* Rows or the 2d table (table = 1) in strips of c.strip_rows, column sums carried. */
static void run_integral(const integral_case c, int table)
{
    char what[160], err[ERR_LEN] = "";
    snprintf(what, sizeof what, "integral %s %ux%u in strips of %u", table ? "2d" : "rows",
             c.width, c.height, c.strip_rows);
    image im = make_image(c.width, c.height, 32);
    size_t want_stride, got_stride;
    uint8_t *want = reference_integral(&im, table, &want_stride);
    uint8_t *got = alloc_out(c.width, c.height, 64, &got_stride);
    double *col = malloc((size_t)c.width * sizeof *col);
    ck_assert_ptr_nonnull(col);
    for (uint32_t x = 0; x < c.width; ++x) col[x] = -0.0; /* the host fills -0.0 first */
    for (uint32_t y0 = 0; y0 < c.height; y0 += c.strip_rows) {
        const uint32_t rows = c.height - y0 < c.strip_rows ? c.height - y0 : c.strip_rows;
        gs_strip s = strip_of(im.data + (size_t)y0 * im.stride, im.stride, c.width, rows, 32,
                              got + (size_t)y0 * got_stride, got_stride, 64);
        const gs_plugin_status st = table ? g_cuda->integral_2d(g_host_inst, &s, col, err, sizeof err)
                                          : g_cuda->integral_rows(g_host_inst, &s, err, sizeof err);
        ck_assert_msg(st == GS_PLUGIN_OK, "%s, strip at %u: %s", what, y0, err);
    }
    expect_same(what, want, want_stride, got, got_stride, c.height, (size_t)c.width * 8);
    if (table) /* the carry is the table's last row */
        expect_same("column sums after the last strip",
                    want + (size_t)(c.height - 1) * want_stride, 0, (const uint8_t *)col, 0, 1,
                    (size_t)c.width * 8);
    free(col), free(want), free(got), free(im.data);
}

START_TEST(integral_rows_match_reference) { run_integral(g_integral[_i], 0); }
END_TEST

START_TEST(integral_2d_matches_reference) { run_integral(g_integral[_i], 1); }
END_TEST

/* ---- device memory ---- */

/* Every float operation on device strips: packed rows the kernels take in place (width a
 * multiple of 4) and rows that go through the plugin's device copies (odd widths, pitch not
 * a multiple of 16). */
START_TEST(device_memory_matches_reference)
{
    /* 1024: a warp's whole span; 1000: in place with the row's last warp running past its
     * end (stores there would land in the padding); 1001: copied */
    static const uint32_t widths[] = {1024, 1001, 1000, 1024, 1001}, ks[] = {3, 3, 3, 0, 0};
    const uint32_t width = widths[_i], height = 45, k = ks[_i];
    const size_t pitch = (size_t)width * 4 + (width % 4 ? 4 : 0);
    char what[160], err[ERR_LEN] = "";
    image im = make_image(width, height, 32);
    void *d_src = to_device(im.data, im.stride, height, (size_t)width * 4, pitch);
    const size_t out_pitch = (size_t)width * 8 + (width % 4 ? 8 : 0);
    void *d_dst = NULL;
    ck_assert_int_eq(cudaMalloc(&d_dst, out_pitch * height), cudaSuccess);
    uint8_t *got = malloc(out_pitch * height);
    ck_assert_ptr_nonnull(got);

    static const uint32_t axes[] = {GS_AXIS_X, GS_AXIS_Y, GS_AXIS_X | GS_AXIS_Y};
    for (int a = 0; a < COUNT(axes); ++a) {
        size_t want_stride;
        uint8_t *want = reference_window(&im, k, axes[a], &want_stride);
        ck_assert_int_eq(cudaMemset(d_dst, 0xA5, out_pitch * height), cudaSuccess);
        gs_strip s = strip_of(d_src, pitch, width, height, 32, d_dst, out_pitch, 32);
        ck_assert_msg(g_cuda->smooth_axes(g_dev_inst, &s, axes[a], 0, 0, k, err, sizeof err) ==
                          GS_PLUGIN_OK,
                      "device smooth_axes: %s", err);
        ck_assert_int_eq(cudaMemcpy(got, d_dst, out_pitch * height, cudaMemcpyDeviceToHost),
                         cudaSuccess);
        snprintf(what, sizeof what, "device smooth axes 0x%x width %u K=%u", axes[a], width, k);
        expect_same(what, want, want_stride, got, out_pitch, height, (size_t)width * 4);
        expect_untouched(what, got, out_pitch, height, (size_t)width * 4);
        free(want);
    }
    for (int table = 0; table < 2; ++table) {
        size_t want_stride;
        uint8_t *want = reference_integral(&im, table, &want_stride);
        double *col = malloc((size_t)width * sizeof *col);
        ck_assert_ptr_nonnull(col);
        for (uint32_t x = 0; x < width; ++x) col[x] = -0.0;
        ck_assert_int_eq(cudaMemset(d_dst, 0xA5, out_pitch * height), cudaSuccess);
        for (uint32_t y0 = 0; y0 < height; y0 += 16) { /* strips of 16 rows, carried */
            const uint32_t rows = height - y0 < 16 ? height - y0 : 16;
            gs_strip s = strip_of((const uint8_t *)d_src + (size_t)y0 * pitch, pitch, width, rows,
                                  32, (uint8_t *)d_dst + (size_t)y0 * out_pitch, out_pitch, 64);
            const gs_plugin_status st = table ? g_cuda->integral_2d(g_dev_inst, &s, col, err, sizeof err)
                                              : g_cuda->integral_rows(g_dev_inst, &s, err, sizeof err);
            ck_assert_msg(st == GS_PLUGIN_OK, "device integral: %s", err);
        }
        ck_assert_int_eq(cudaMemcpy(got, d_dst, out_pitch * height, cudaMemcpyDeviceToHost),
                         cudaSuccess);
        snprintf(what, sizeof what, "device integral %s width %u", table ? "2d" : "rows", width);
        expect_same(what, want, want_stride, got, out_pitch, height, (size_t)width * 8);
        free(col), free(want);
    }
    cudaFree(d_src), cudaFree(d_dst);
    free(got), free(im.data);
}
END_TEST

/* The descriptor says float32, and a float strip asks for a depth the ABI allows. */
START_TEST(float_depths_are_stated)
{
    char err[ERR_LEN] = "";
    ck_assert(g_cuda->depths & GS_DEPTH_F32);
    float px[4] = {1, 2, 3, 4}, out[4];
    gs_strip s = strip_of((const uint8_t *)px, 16, 4, 1, 32, (uint8_t *)out, 16, 16);
    ck_assert_int_eq(g_cuda->smooth_rows(g_host_inst, &s, 3, err, sizeof err),
                     GS_PLUGIN_ERR_UNSUPPORTED); /* float32 in, 16-bit out */
    s.out_bits = 32;
    ck_assert_int_eq(g_cuda->integral_rows(g_host_inst, &s, err, sizeof err),
                     GS_PLUGIN_ERR_UNSUPPORTED); /* float32 integrals are float64 */
}
END_TEST

/* ---- set-up ---- */

static gs_plugin_instance *make(uint32_t memory)
{
    char err[ERR_LEN] = "";
    gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), 0, -1, memory};
    gs_plugin_instance *inst = NULL;
    if (g_cuda->create(&cfg, &inst, err, sizeof err) != GS_PLUGIN_OK)
        fprintf(stderr, "test_cuda_float: create: %s\n", err);
    return inst;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cuda_float CUDA_PLUGIN.so\n");
        return 2;
    }
    g_small = getenv("GSMOOTH_TEST_SMALL") && strcmp(getenv("GSMOOTH_TEST_SMALL"), "1") == 0;
    g_cuda = gs_test_load_plugin("test_cuda_float", argv[1]);
    if (!g_cuda) return 1;
    char why[ERR_LEN] = "";
    const int skip = gs_test_device_or_skip(g_cuda, why, sizeof why);
    if (skip) return skip;
    printf("test_cuda_float: %s%s\n", why, g_small ? " (small case list)" : "");
    g_host_inst = make(GS_MEMORY_HOST);
    g_dev_inst = make(GS_MEMORY_DEVICE);
    if (!g_host_inst || !g_dev_inst) return 1;
    build_cases();

    Suite *suite = suite_create("cuda_float");
    TCase *tc = tcase_create("smooth");
    tcase_set_timeout(tc, 0);
    tcase_add_loop_test(tc, smooth_rows_match_reference, 0, g_smooth_n);
    tcase_add_loop_test(tc, axes_match_reference, 0, g_axes_n);
    tcase_add_loop_test(tc, strips_with_halos_match_reference, 0, 4);
    tcase_add_loop_test(tc, sparse_samples_many_passes_match_reference, 0, 2 * COUNT(g_sparse));
    suite_add_tcase(suite, tc);
    tc = tcase_create("integral");
    tcase_set_timeout(tc, 0);
    tcase_add_loop_test(tc, integral_rows_match_reference, 0, g_integral_n);
    tcase_add_loop_test(tc, integral_2d_matches_reference, 0, g_integral_n);
    suite_add_tcase(suite, tc);
    tc = tcase_create("device");
    tcase_set_timeout(tc, 0);
    tcase_add_loop_test(tc, device_memory_matches_reference, 0, 5);
    tcase_add_test(tc, float_depths_are_stated);
    suite_add_tcase(suite, tc);

    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    g_cuda->destroy(g_dev_inst);
    g_cuda->destroy(g_host_inst);
    free(g_smooth), free(g_axes), free(g_integral);
    return failed == 0 ? 0 : 1;
}
