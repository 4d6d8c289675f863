/* cpu_bench.c: CPU kernel benchmark, printed as ratios to anchors of the same run. */
/* gsmooth's CPU kernels beside memcpy and plain-loop anchors measured in the same run. */

#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_kernels.h"
#include "gsmooth/gsmooth_plugin.h" /* the integral dtype rule */
#include "parallel.h"
#include "reference.h"
#ifdef GS_HAVE_COMPILER_LOOP
#include "compiler_loop.h"
#endif

/* Repeats per figure; the median is reported. */
#define BENCH_REPEATS 7

typedef struct bench_image {
    uint32_t width, height;
    uint8_t *pixels;
} bench_image;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Photo-like content: smooth shading, edges and texture plus mild noise (never zeros). */
static void fill_photo_like(bench_image *im)
{
    uint64_t s = 12345;
    for (uint32_t y = 0; y < im->height; ++y)
        for (uint32_t x = 0; x < im->width; ++x) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            double v = 110 + 60 * sin(x * 0.013 + y * 0.007) + 30 * cos(y * 0.021) +
                       ((x / 97 + y / 61) % 2 ? 25 : -25) + (double)((s >> 59) & 15) - 7;
            im->pixels[(size_t)y * im->width + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

typedef struct plain_ctx {
    const bench_image *im;
    uint8_t *out;
    uint32_t iters;
    float **scratch;
    uint32_t *out32;
} plain_ctx;

static int plain_smooth_row(void *p, size_t row, unsigned worker)
{
    plain_ctx *c = p;
    size_t off = row * c->im->width;
    gs_ref_smooth_row(c->im->pixels + off, c->out + off, c->im->width, 8, c->iters, c->scratch[worker]);
    return 0;
}

static int plain_integral_row(void *p, size_t row, unsigned worker)
{
    (void)worker;
    plain_ctx *c = p;
    size_t off = row * c->im->width;
    gs_ref_integral_row(c->im->pixels + off, c->out32 + off, c->im->width, 8, 32);
    return 0;
}

typedef struct copy_ctx {
    const uint8_t *src;
    uint8_t *dst;
    size_t bytes, chunk;
} copy_ctx;

static int copy_chunk(void *p, size_t i, unsigned worker)
{
    (void)worker;
    copy_ctx *c = p;
    size_t off = i * c->chunk, n = c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
    memcpy(c->dst + off, c->src + off, n);
    return 0;
}

/* The median of n values (sorted in place). */
static double median_sorted(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return v[n / 2];
}

/* Seconds of one run of `what`. */
#define TIME_ONCE(result, what)                                    \
    do {                                                           \
        double t0_ = now_s();                                      \
        what;                                                      \
        (result) = now_s() - t0_;                                  \
    } while (0)

/* Median seconds of BENCH_REPEATS runs of `what`. */
#define TIME_MEDIAN(result, what)                                  \
    do {                                                           \
        double t_[BENCH_REPEATS];                                  \
        what; /* warm-up */                                        \
        for (int r_ = 0; r_ < BENCH_REPEATS; ++r_) TIME_ONCE(t_[r_], what); \
        (result) = median_sorted(t_, BENCH_REPEATS);               \
    } while (0)

/* Interleaved rounds for the ratios against the compiler's loop. */
#define PAIRED_ROUNDS 9

/* The median of PAIRED_ROUNDS values, left in their order. */
static double median_of(const double *v)
{
    double c[PAIRED_ROUNDS];
    memcpy(c, v, sizeof c);
    return median_sorted(c, PAIRED_ROUNDS);
}

/* One ratio taken per round: its values and range. */
typedef struct paired_ratio {
    double v[PAIRED_ROUNDS];
    int n;
    double lo, hi;
} paired_ratio;

static void paired_add(paired_ratio *p, double x)
{
    if (p->n == 0 || x < p->lo) p->lo = x;
    if (p->n == 0 || x > p->hi) p->hi = x;
    p->v[p->n++] = x;
}

int main(int argc, char **argv)
{
    uint32_t side = argc > 1 ? (uint32_t)atoi(argv[1]) : 8192;
    unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : gs_cpu_count();
    /* --no-axes leaves out the axes section, whose whole-image reference checks take most
     * of a run at 8192 (minutes), for a short call on a borrowed machine. */
    const int axes_section = !(argc > 3 && strcmp(argv[3], "--no-axes") == 0);
    bench_image im = {side, side, malloc((size_t)side * side)};
    size_t px = (size_t)side * side;
    uint8_t *out = malloc(px), *out2 = malloc(px);
    uint32_t *out32 = malloc(px * 4), *out32b = malloc(px * 4);
    float **scratch = malloc(threads * sizeof *scratch);
    for (unsigned t = 0; t < threads; ++t) scratch[t] = malloc(2 * (size_t)side * sizeof(float));
    fill_photo_like(&im);
    gs_cpu_workspace ws = {0};
    gs_rows strip = {side, side, 8, 8, im.pixels, side, out, side};
    gs_rows strip32 = {side, side, 8, 32, im.pixels, side, out32, (size_t)side * 4};

    double t_copy, t_plain3, t_fast3, t_plain_int, t_fast_int, t_fast_2d;
    copy_ctx cc = {im.pixels, out2, px, 1 << 20};
    TIME_MEDIAN(t_copy, gs_parallel_for(threads, (px + cc.chunk - 1) / cc.chunk, copy_chunk, &cc));
    plain_ctx pc = {&im, out2, 3, scratch, out32b};
    TIME_MEDIAN(t_plain3, gs_parallel_for(threads, side, plain_smooth_row, &pc));
    TIME_MEDIAN(t_fast3, gs_cpu_smooth_strip(&strip, 3, threads, NULL, &ws));
    int same3 = memcmp(out, out2, px) == 0;
    TIME_MEDIAN(t_plain_int, gs_parallel_for(threads, side, plain_integral_row, &pc));
    TIME_MEDIAN(t_fast_int, gs_cpu_integral_rows_strip(&strip32, threads, NULL));
    int same_int = memcmp(out32, out32b, px * 4) == 0;
    uint32_t *cols = calloc(side, 8);
    strip32.out_bits = gs_integral_2d_bits(8, side, side);
    uint8_t *out2d = malloc(px * (strip32.out_bits / 8));
    strip32.dst = out2d, strip32.dst_stride = (size_t)side * (strip32.out_bits / 8);
    TIME_MEDIAN(t_fast_2d, (memset(cols, 0, side * 8), gs_cpu_integral_2d_strip(&strip32, cols, threads, NULL)));

    double gpx = px / 1e9;
    printf("CPU benchmark: %ux%u u8, %u threads, median of %d runs\n", side, side, threads, BENCH_REPEATS);
    printf("%-34s %10s %10s %s\n", "work", "ms", "Gpx/s", "ratio");
    printf("%-34s %10.2f %10.2f (%.1f GB/s read+write)\n", "anchor: memcpy", t_copy * 1e3, gpx / t_copy, 2 * px / t_copy / 1e9);
    printf("%-34s %10.2f %10.2f\n", "anchor: plain loop smooth K=3", t_plain3 * 1e3, gpx / t_plain3);
    printf("%-34s %10.2f %10.2f %.2fx plain, %.2fx memcpy time, target 8 Gpx/s: %.2f %s\n",
           "gsmooth smooth K=3", t_fast3 * 1e3, gpx / t_fast3, t_plain3 / t_fast3, t_fast3 / t_copy,
           gpx / t_fast3 / 8.0, same3 ? "(bytes match plain)" : "(MISMATCH)");
    printf("%-34s %10.2f %10.2f\n", "anchor: plain loop integral rows", t_plain_int * 1e3, gpx / t_plain_int);
    printf("%-34s %10.2f %10.2f %.2fx plain, target 5 Gpx/s: %.2f %s\n", "gsmooth integral rows",
           t_fast_int * 1e3, gpx / t_fast_int, t_plain_int / t_fast_int, gpx / t_fast_int / 5.0,
           same_int ? "(bytes match plain)" : "(MISMATCH)");
    printf("%-34s %10.2f %10.2f\n", "gsmooth integral 2d", t_fast_2d * 1e3, gpx / t_fast_2d);

#ifdef GS_HAVE_COMPILER_LOOP
    /* The compiler's own loop (compiler_loop.c: plain C, -O3 -march=native, OpenMP over
     * rows), exact too, and how each scales from 1 thread to `threads`. On a shared machine
     * a slow spell lasts seconds, so each ratio is taken within a round that times both
     * sides back to back (gsmooth, the loop, each at `threads` and at 1 thread), and the
     * median over PAIRED_ROUNDS rounds is printed with the rounds' range. */
    double cl3[PAIRED_ROUNDS], fast3[PAIRED_ROUNDS], cl3_1[PAIRED_ROUNDS], fast3_1[PAIRED_ROUNDS];
    double cl_int[PAIRED_ROUNDS], fast_int[PAIRED_ROUNDS], cl_int_1[PAIRED_ROUNDS],
        fast_int_1[PAIRED_ROUNDS], copy_n[PAIRED_ROUNDS], copy_1[PAIRED_ROUNDS];
    paired_ratio vs_cl3 = {0}, vs_cl_int = {0}, sc_fast3 = {0}, sc_cl3 = {0}, sc_fast_int = {0},
                 sc_cl_int = {0}, sc_copy = {0};
    int same_cl3 = 1, same_cl_int = 1;
    /* gsmooth held to AVX2 meets the loop as an AVX2-only machine's compiler builds it */
    const char *isa_cap = getenv("GSMOOTH_CPU_ISA");
    const int avx2_loop = isa_cap && strcmp(isa_cap, "avx2") == 0;
    int (*const loop_smooth)(const uint8_t *, uint8_t *, int, int, int, int) =
        avx2_loop ? compiler_loop_smooth_avx2 : compiler_loop_smooth;
    void (*const loop_integral)(const uint8_t *, uint32_t *, int, int, int) =
        avx2_loop ? compiler_loop_integral_rows_avx2 : compiler_loop_integral_rows;
    strip32.out_bits = 32, strip32.dst = out32, strip32.dst_stride = (size_t)side * 4;
    loop_smooth(im.pixels, out2, (int)side, (int)side, 3, (int)threads); /* warm-up */
    for (int r = 0; r < PAIRED_ROUNDS; ++r) {
        TIME_ONCE(fast3[r], gs_cpu_smooth_strip(&strip, 3, threads, NULL, &ws));
        TIME_ONCE(cl3[r], loop_smooth(im.pixels, out2, (int)side, (int)side, 3, (int)threads));
        same_cl3 &= memcmp(out, out2, px) == 0;
        TIME_ONCE(fast3_1[r], gs_cpu_smooth_strip(&strip, 3, 1, NULL, &ws));
        TIME_ONCE(cl3_1[r], loop_smooth(im.pixels, out2, (int)side, (int)side, 3, 1));
        TIME_ONCE(fast_int[r], gs_cpu_integral_rows_strip(&strip32, threads, NULL));
        TIME_ONCE(cl_int[r], loop_integral(im.pixels, out32b, (int)side, (int)side, (int)threads));
        same_cl_int &= memcmp(out32, out32b, px * 4) == 0;
        TIME_ONCE(fast_int_1[r], gs_cpu_integral_rows_strip(&strip32, 1, NULL));
        TIME_ONCE(cl_int_1[r], loop_integral(im.pixels, out32b, (int)side, (int)side, 1));
        /* the memory's own scaling: a kernel at the memory's rate scales no better */
        TIME_ONCE(copy_n[r], gs_parallel_for(threads, (px + cc.chunk - 1) / cc.chunk, copy_chunk, &cc));
        TIME_ONCE(copy_1[r], gs_parallel_for(1, (px + cc.chunk - 1) / cc.chunk, copy_chunk, &cc));
        paired_add(&sc_copy, copy_1[r] / copy_n[r]);
        paired_add(&vs_cl3, cl3[r] / fast3[r]);
        paired_add(&vs_cl_int, cl_int[r] / fast_int[r]);
        paired_add(&sc_fast3, fast3_1[r] / fast3[r]);
        paired_add(&sc_cl3, cl3_1[r] / cl3[r]);
        paired_add(&sc_fast_int, fast_int_1[r] / fast_int[r]);
        paired_add(&sc_cl_int, cl_int_1[r] / cl_int[r]);
    }
    printf("\nthe compiler's own loop%s (%u threads, same run; %d interleaved rounds, medians, "
           "each ratio taken within a round)\n",
           avx2_loop ? ", built without AVX-512" : "", threads, PAIRED_ROUNDS);
    printf("%-34s %10.2f %10.2f gsmooth %.2fx it [%.2f-%.2f] (target >= 1.6x) %s\n",
           "anchor: compiler loop smooth K=3", median_of(cl3) * 1e3, gpx / median_of(cl3),
           median_of(vs_cl3.v), vs_cl3.lo, vs_cl3.hi,
           same_cl3 ? "(bytes match gsmooth)" : "(MISMATCH)");
    printf("%-34s %10.2f %10.2f gsmooth %.2fx it [%.2f-%.2f] (target >= 1.1x); memcpy time x%.2f %s\n",
           "anchor: compiler loop integral rows", median_of(cl_int) * 1e3, gpx / median_of(cl_int),
           median_of(vs_cl_int.v), vs_cl_int.lo, vs_cl_int.hi, median_of(fast_int) / t_copy,
           same_cl_int ? "(bytes match gsmooth)" : "(MISMATCH)");
    printf("%-34s 1 thread %.2f ms, %u threads %.2f ms: %.2fx [%.2f-%.2f] (target >= 1.8x from 1 to 2)\n",
           "scaling: gsmooth smooth K=3", median_of(fast3_1) * 1e3, threads, median_of(fast3) * 1e3,
           median_of(sc_fast3.v), sc_fast3.lo, sc_fast3.hi);
    printf("%-34s 1 thread %.2f ms, %u threads %.2f ms: %.2fx [%.2f-%.2f]\n", "scaling: compiler loop K=3",
           median_of(cl3_1) * 1e3, threads, median_of(cl3) * 1e3, median_of(sc_cl3.v), sc_cl3.lo,
           sc_cl3.hi);
    printf("%-34s 1 thread %.2f ms, %u threads %.2f ms: %.2fx [%.2f-%.2f]\n", "scaling: gsmooth integral rows",
           median_of(fast_int_1) * 1e3, threads, median_of(fast_int) * 1e3, median_of(sc_fast_int.v),
           sc_fast_int.lo, sc_fast_int.hi);
    printf("%-34s 1 thread %.2f ms, %u threads %.2f ms: %.2fx [%.2f-%.2f]\n", "scaling: compiler loop integral",
           median_of(cl_int_1) * 1e3, threads, median_of(cl_int) * 1e3, median_of(sc_cl_int.v),
           sc_cl_int.lo, sc_cl_int.hi);
    printf("%-34s 1 thread %.2f ms, %u threads %.2f ms: %.2fx [%.2f-%.2f] (the memory's own)\n",
           "scaling: memcpy", median_of(copy_1) * 1e3, threads, median_of(copy_n) * 1e3,
           median_of(sc_copy.v), sc_copy.lo, sc_copy.hi);
    if (!same_cl3 || !same_cl_int) same3 = 0;
#endif

    /* Linearity: time per pixel per pass should stay flat as K and the size grow. */
    /* Time is a fixed cost per pixel (load, convert, store) plus a cost per pass: the
     * last column, the increment per extra pass, is what must stay flat in K. */
    printf("\nlinearity (gsmooth smooth, %u threads)\n%-24s %10s %14s %18s\n", threads, "case",
           "ms", "ns/px/pass", "ns/px per +1 pass");
    static const uint32_t ks[] = {1, 3, 10, 30};
    double t_prev = 0;
    for (size_t i = 0; i < sizeof ks / sizeof *ks; ++i) {
        double t;
        TIME_MEDIAN(t, gs_cpu_smooth_strip(&strip, ks[i], threads, NULL, &ws));
        char name[64];
        snprintf(name, sizeof name, "%ux%u K=%u", side, side, ks[i]);
        if (i == 0) printf("%-24s %10.2f %14.4f %18s\n", name, t * 1e3, t * 1e9 / px / ks[i], "-");
        else
            printf("%-24s %10.2f %14.4f %18.4f\n", name, t * 1e3, t * 1e9 / px / ks[i],
                   (t - t_prev) * 1e9 / px / (ks[i] - ks[i - 1]));
        t_prev = t;
    }
    for (uint32_t sub = side / 4; sub < side; sub *= 2) {
        gs_rows part = strip;
        part.width = part.rows = sub;
        double t;
        TIME_MEDIAN(t, gs_cpu_smooth_strip(&part, 3, threads, NULL, &ws));
        char name[64];
        snprintf(name, sizeof name, "%ux%u K=3", sub, sub);
        printf("%-24s %10.2f %14.4f\n", name, t * 1e3, t * 1e9 / ((double)sub * sub) / 3);
    }

    if (!axes_section) return same3 && same_int ? 0 : 1;

    /* --axis: down the columns (y) and rows then columns (xy), the image as one window, beside
     * the rows (x) in the same run; each checked against the whole-image reference. */
    printf("\naxes (gsmooth smooth, %u threads, the image as one window)\n%-24s %10s %10s %s\n",
           threads, "axis", "ms", "Gpx/s", "time / x time");
    gs_cpu_window_space space = {0};
    int same_axes = 1;
    static const struct { const char *name; uint32_t axes; } axes_list[] = {
        {"x", GS_AXIS_X}, {"y", GS_AXIS_Y}, {"xy", GS_AXIS_X | GS_AXIS_Y}};
    static const uint32_t axes_iters[] = {3, 40};
    for (size_t k = 0; k < sizeof axes_iters / sizeof *axes_iters; ++k) {
        double t_x = 0;
        for (size_t i = 0; i < sizeof axes_list / sizeof *axes_list; ++i) {
            double t;
            TIME_MEDIAN(t, gs_cpu_smooth_window(&strip, 0, 0, axes_list[i].axes, axes_iters[k],
                                                threads, NULL, &ws, &space));
            if (i == 0) t_x = t;
            gs_ref_smooth_image(im.pixels, side, out2, side, side, side, 8, axes_iters[k],
                                axes_list[i].axes);
            const int same = memcmp(out, out2, px) == 0;
            same_axes &= same;
            char name[64];
            snprintf(name, sizeof name, "%s K=%u", axes_list[i].name, axes_iters[k]);
            printf("%-24s %10.2f %10.2f %.2f %s\n", name, t * 1e3, gpx / t, t / t_x,
                   same ? "(bytes match the reference)" : "(MISMATCH)");
        }
    }
    gs_cpu_window_space_release(&space);
    return same3 && same_int && same_axes ? 0 : 1;
}
