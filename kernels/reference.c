/* reference.c: the plain C "gold" implementation of smoothing and integrals. */
/* Written for obviousness, not speed. */

#include "reference.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "stencil_math.h"

static float load_sample(const void *row, uint32_t x, uint32_t bits)
{
    if (bits == 32) return ((const float *)row)[x];
    return bits == 16 ? (float)((const uint16_t *)row)[x] : (float)((const uint8_t *)row)[x];
}

/* A result at out_bits: float32 kept (NaN canonical), else rounded and clamped. */
static void store_result(void *row, uint32_t x, uint32_t out_bits, float v)
{
    if (out_bits == 32) {
        const float c = gs_canonical_f32(v);
        memcpy((float *)row + x, &c, sizeof c);
        return;
    }
    const float maxval = out_bits == 16 ? 65535.0f : 255.0f;
    if (out_bits == 16) ((uint16_t *)row)[x] = (uint16_t)gs_quantize(v, maxval);
    else ((uint8_t *)row)[x] = (uint8_t)gs_quantize(v, maxval);
}

static uint64_t load_integer(const void *row, uint32_t x, uint32_t bits)
{
    switch (bits) {
    case 8: return ((const uint8_t *)row)[x];
    case 16: return ((const uint16_t *)row)[x];
    case 32: return ((const uint32_t *)row)[x];
    default: return ((const uint64_t *)row)[x];
    }
}

static void store_integer(void *row, uint32_t x, uint32_t bits, uint64_t v)
{
    switch (bits) {
    case 8: ((uint8_t *)row)[x] = (uint8_t)v; break;
    case 16: ((uint16_t *)row)[x] = (uint16_t)v; break;
    case 32: ((uint32_t *)row)[x] = (uint32_t)v; break;
    default: ((uint64_t *)row)[x] = v; break;
    }
}

/* `iters` passes over n floats spaced `step` apart, starting in a and ping-ponging with b;
 * returns the buffer that holds the result (a or b). */
static float *passes_1d(float *a, float *b, size_t n, size_t step, uint32_t iters)
{
    for (uint32_t k = 0; k < iters; ++k) {
        /* Double buffering: each pass reads only the previous one. */
        for (size_t i = 0; i < n; ++i) {
            const float *c = a + i * step;
            float v;
            if (n == 1) v = c[0];
            else if (i == 0) v = gs_mean2(c[0], c[step]);
            else if (i == n - 1) v = gs_mean2(c[-(ptrdiff_t)step], c[0]);
            else v = gs_mean3(c[-(ptrdiff_t)step], c[0], c[step]);
            b[i * step] = v;
        }
        float *t = a; a = b; b = t;
    }
    return a;
}

const float *gs_ref_smooth_row_float(const void *in, uint32_t width, uint32_t bits, uint32_t iters,
                                     float *scratch)
{
    for (uint32_t x = 0; x < width; ++x) scratch[x] = load_sample(in, x, bits);
    return passes_1d(scratch, scratch + width, width, 1, iters);
}

void gs_ref_smooth_row_to(const void *in, uint32_t in_bits, void *out, uint32_t out_bits,
                          uint32_t width, uint32_t iters, float *scratch)
{
    const float *a = gs_ref_smooth_row_float(in, width, in_bits, iters, scratch);
    for (uint32_t x = 0; x < width; ++x) store_result(out, x, out_bits, a[x]);
}

void gs_ref_smooth_row(const void *in, void *out, uint32_t width, uint32_t bits,
                       uint32_t iters, float *scratch)
{
    gs_ref_smooth_row_to(in, bits, out, bits, width, iters, scratch);
}

int gs_ref_smooth_image(const void *in, size_t in_stride, void *out, size_t out_stride,
                        uint32_t width, uint32_t height, uint32_t bits, uint32_t iters,
                        uint32_t axes)
{
    return gs_ref_smooth_image_to(in, in_stride, bits, out, out_stride, bits, width, height,
                                  iters, axes);
}

int gs_ref_smooth_image_to(const void *in, size_t in_stride, uint32_t bits, void *out,
                           size_t out_stride, uint32_t out_bits, uint32_t width,
                           uint32_t height, uint32_t iters, uint32_t axes)
{
    const size_t n = (size_t)width * height;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return -1;
    }
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x)
            a[(size_t)y * width + x] = load_sample((const uint8_t *)in + y * in_stride, x, bits);
    if (axes & GS_REF_AXIS_X)
        for (uint32_t y = 0; y < height; ++y) {
            float *row = a + (size_t)y * width;
            const float *r = passes_1d(row, b + (size_t)y * width, width, 1, iters);
            if (r != row) memcpy(row, r, width * sizeof *row);
        }
    if (axes & GS_REF_AXIS_Y)
        for (uint32_t x = 0; x < width; ++x) {
            const float *r = passes_1d(a + x, b + x, height, width, iters);
            if (r != a + x)
                for (uint32_t y = 0; y < height; ++y) a[(size_t)y * width + x] = r[(size_t)y * width];
        }
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x)
            store_result((uint8_t *)out + y * out_stride, x, out_bits, a[(size_t)y * width + x]);
    free(a), free(b);
    return 0;
}

/* One float64 result, NaN canonical. */
static void store_f64(void *row, uint32_t x, double v)
{
    const double c = gs_canonical_f64(v);
    memcpy((double *)row + x, &c, sizeof c);
}

void gs_ref_integral_row(const void *in, void *out, uint32_t width, uint32_t in_bits,
                         uint32_t out_bits)
{
    if (in_bits == 32) {
        double sum = -0.0; /* the identity of addition: in[0] comes out as itself */
        for (uint32_t x = 0; x < width; ++x) {
            sum += (double)((const float *)in)[x];
            store_f64(out, x, sum);
        }
        return;
    }
    uint64_t sum = 0;
    for (uint32_t x = 0; x < width; ++x) {
        sum += load_integer(in, x, in_bits);
        store_integer(out, x, out_bits, sum);
    }
}

void gs_ref_integral_2d_row(const void *in, void *out, void *column_sums, uint32_t width,
                            uint32_t in_bits, uint32_t out_bits)
{
    if (in_bits == 32) {
        double row_sum = -0.0;
        for (uint32_t x = 0; x < width; ++x) {
            row_sum += (double)((const float *)in)[x];
            double v;
            memcpy(&v, (const double *)column_sums + x, sizeof v);
            v += row_sum;
            store_f64(out, x, v);
            memcpy((double *)column_sums + x, &v, sizeof v);
        }
        return;
    }
    uint64_t row_sum = 0;
    for (uint32_t x = 0; x < width; ++x) {
        row_sum += load_integer(in, x, in_bits);
        uint64_t v = load_integer(column_sums, x, out_bits) + row_sum;
        store_integer(out, x, out_bits, v);
        store_integer(column_sums, x, out_bits, v);
    }
}
