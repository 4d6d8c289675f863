/* reference.c: the plain C "gold" implementation of smoothing and integrals, written for obviousness, not speed. */
#include "reference.h"

#include <string.h>

#include "stencil_math.h"

static float load_sample(const void *row, uint32_t x, uint32_t bits)
{
    return bits == 16 ? (float)((const uint16_t *)row)[x] : (float)((const uint8_t *)row)[x];
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

void gs_ref_smooth_row(const void *in, void *out, uint32_t width, uint32_t bits,
                       uint32_t iters, float *scratch)
{
    float *a = scratch, *b = scratch + width;
    const float maxval = bits == 16 ? 65535.0f : 255.0f;
    for (uint32_t x = 0; x < width; ++x) a[x] = load_sample(in, x, bits);
    for (uint32_t k = 0; k < iters; ++k) {
        /* Double buffering: each pass reads only the previous one. */
        for (uint32_t x = 0; x < width; ++x) {
            if (width == 1) b[x] = a[x];
            else if (x == 0) b[x] = gs_mean2(a[0], a[1]);
            else if (x == width - 1) b[x] = gs_mean2(a[x - 1], a[x]);
            else b[x] = gs_mean3(a[x - 1], a[x], a[x + 1]);
        }
        float *t = a; a = b; b = t;
    }
    for (uint32_t x = 0; x < width; ++x)
        store_integer(out, x, bits, (uint64_t)gs_quantize(a[x], maxval));
}

void gs_ref_integral_row(const void *in, void *out, uint32_t width, uint32_t in_bits,
                         uint32_t out_bits)
{
    uint64_t sum = 0;
    for (uint32_t x = 0; x < width; ++x) {
        sum += load_integer(in, x, in_bits);
        store_integer(out, x, out_bits, sum);
    }
}

void gs_ref_integral_2d_row(const void *in, void *out, void *column_sums, uint32_t width,
                            uint32_t in_bits, uint32_t out_bits)
{
    uint64_t row_sum = 0;
    for (uint32_t x = 0; x < width; ++x) {
        row_sum += load_integer(in, x, in_bits);
        uint64_t v = load_integer(column_sums, x, out_bits) + row_sum;
        store_integer(out, x, out_bits, v);
        store_integer(column_sums, x, out_bits, v);
    }
}
