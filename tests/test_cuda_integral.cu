/* test_cuda_integral.cu: gs_cuda_integral_2d on device memory in tall strips. */
/*
 * Hundreds of bands of tiles, as a CUDA tensor from Python gives it, where the plugin's host
 * chunks give 16384-pixel rows 128 at a time (256 for 32-bit sums), against the C
 * reference byte for byte, the carry row included (exit 77, a skip, without a CUDA device).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_device_or_skip.h"
#include "cuda_kernels.h"
#include "reference.h"
#include "round_up.h"

/* An image cut into calls of `first` rows and then the rest (0: one call), each call
 * continuing from the carry row the one before left. */
typedef struct {
    uint32_t width, rows, in_bits, out_bits, first;
} table_case;

/* Tiles of 512 columns and 64 rows (32 of 16-bit input), 32 stripes at 16384 pixels: 16384 x
 * 2500 is 40 bands of them, 1000 x 40000 625 bands two tiles wide; 8-bit sums over 2500
 * rows wrap 32 bits; the widths not a multiple of 16 end in a partial lane, those not a
 * multiple of 512 in a partial tile; the first call's rows leave the carry the rest
 * continue from. A launch takes at most 256 bands (16384 rows of u8, 8192 of u16): 600 x
 * 70000 takes five, 520 x 66000 nine and then one. The cases share one scratch, grown as
 * they need, in this order. */
static const table_case kCases[] = {
    {300, 20, 8, 64, 0},       {16384, 2500, 8, 64, 0},   {16384, 2500, 8, 32, 700},
    {12000, 2200, 16, 64, 0},  {4100, 9000, 8, 64, 0},    {16384, 2112, 16, 32, 0},
    {1000, 40000, 8, 32, 33},  {16383, 1500, 16, 64, 1499}, {600, 70000, 8, 32, 0},
    {520, 66000, 16, 64, 65537},
};

static uint32_t next_random(uint32_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 17, *x ^= *x << 5;
    return *x;
}

/* Rows of `c` on the device against the reference; returns the mismatches (rows or carry
 * words), -1 on a CUDA error or out of memory. */
static long table_mismatches(const table_case *c, gs_cuda_integral_scratch *scratch)
{
    const size_t in_row = (size_t)c->width * (c->in_bits / 8), out_row = (size_t)c->width * (c->out_bits / 8);
    const size_t in_pitch = gs_round_up(in_row, 256), out_pitch = gs_round_up(out_row, 256);
    uint8_t *in = (uint8_t *)malloc(in_row * c->rows), *want = (uint8_t *)malloc(out_row * c->rows);
    uint8_t *got = (uint8_t *)malloc(out_pitch * c->rows), *sums = (uint8_t *)calloc(1, out_row);
    uint8_t *carry = (uint8_t *)malloc(out_row);
    if (!in || !want || !got || !sums || !carry) {
        free(in), free(want), free(got), free(sums), free(carry);
        return -1;
    }
    uint32_t seed = 0x9e3779b9u ^ c->width ^ (c->rows << 7) ^ c->in_bits;
    for (size_t i = 0; i < in_row * c->rows; ++i) in[i] = (uint8_t)(next_random(&seed) >> 24);
    for (uint32_t y = 0; y < c->rows; ++y)
        gs_ref_integral_2d_row(in + (size_t)y * in_row, want + (size_t)y * out_row, sums, c->width,
                               c->in_bits, c->out_bits);

    void *d_in = NULL, *d_out = NULL, *d_carry = NULL;
    cudaError_t e = cudaMalloc(&d_in, in_pitch * c->rows);
    if (e == cudaSuccess) e = cudaMalloc(&d_out, out_pitch * c->rows);
    if (e == cudaSuccess) e = cudaMalloc(&d_carry, out_row);
    if (e == cudaSuccess) e = cudaMemset(d_carry, 0, out_row);
    if (e == cudaSuccess) e = cudaMemset(d_out, 0xa5, out_pitch * c->rows);
    if (e == cudaSuccess)
        e = cudaMemcpy2D(d_in, in_pitch, in, in_row, in_row, c->rows, cudaMemcpyHostToDevice);
    for (uint32_t y = 0; e == cudaSuccess && y < c->rows;) {
        const uint32_t n = y == 0 && c->first ? c->first : c->rows - y;
        e = gs_cuda_integral_2d((const char *)d_in + (size_t)y * in_pitch, in_pitch,
                                (char *)d_out + (size_t)y * out_pitch, out_pitch, c->width, n,
                                c->in_bits, c->out_bits, d_carry, scratch, 0);
        y += n;
    }
    if (e == cudaSuccess) e = cudaMemcpy(got, d_out, out_pitch * c->rows, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(carry, d_carry, out_row, cudaMemcpyDeviceToHost);
    long bad = 0;
    for (uint32_t y = 0; e == cudaSuccess && y < c->rows; ++y) {
        if (memcmp(got + (size_t)y * out_pitch, want + (size_t)y * out_row, out_row) == 0) continue;
        if (bad++ == 0) {
            uint32_t x = 0;
            while (memcmp(got + (size_t)y * out_pitch + (size_t)x * (c->out_bits / 8),
                          want + (size_t)y * out_row + (size_t)x * (c->out_bits / 8), c->out_bits / 8) == 0)
                ++x;
            printf("integral 2d %ux%u %u->%u (first call %u rows): row %u differs from x %u\n",
                   c->width, c->rows, c->in_bits, c->out_bits, c->first, y, x);
        }
    }
    if (e == cudaSuccess && memcmp(carry, sums, out_row) != 0) {
        printf("integral 2d %ux%u %u->%u: the carry row is not the table's last row\n", c->width,
               c->rows, c->in_bits, c->out_bits);
        ++bad;
    }
    if (e != cudaSuccess) fprintf(stderr, "integral 2d: %s\n", cudaGetErrorString(e));
    cudaFree(d_in), cudaFree(d_out), cudaFree(d_carry);
    free(in), free(want), free(got), free(sums), free(carry);
    return e == cudaSuccess ? bad : -1;
}

int main(void)
{
    if (gs_cuda_device_or_skip() != 0) return GS_SKIP_CODE;
    int failed = 0;
    gs_cuda_integral_scratch scratch = {0};
    for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; ++i) {
        const long bad = table_mismatches(&kCases[i], &scratch);
        if (bad != 0) ++failed;
        printf("%ux%u %u->%u: %s\n", kCases[i].width, kCases[i].rows, kCases[i].in_bits,
               kCases[i].out_bits, bad == 0 ? "same bytes" : bad < 0 ? "error" : "DIFFERS");
    }
    /* The launch tags' end: the case's first call takes the last tag (epoch 2^31 - 1, tag
     * 0xffffffff), its second the wrap (the scratch zeroed, epoch 1 again). */
    const table_case wrap = {16384, 2500, 8, 32, 700};
    scratch.launches = 0x7ffffffeu;
    const long wrap_bad = table_mismatches(&wrap, &scratch);
    if (wrap_bad != 0 || scratch.launches != 1) ++failed;
    printf("%ux%u %u->%u across the tags' wrap: %s (launches now %u)\n", wrap.width, wrap.rows,
           wrap.in_bits, wrap.out_bits, wrap_bad == 0 ? "same bytes" : wrap_bad < 0 ? "error" : "DIFFERS",
           scratch.launches);
    /* A wrap must clear what launches long before it published under the same tags: a table
     * at epoch 1 on a fresh scratch, then, the tags spent (as if 2^31 - 2 launches on other
     * tiles had come between), a table of other pixels over the same tiles at epoch 1 again.
     * Without the clear its look-backs find the first table's words. */
    gs_cuda_integral_scratch_free(&scratch);
    const table_case first = {16384, 2500, 8, 32, 0}, again = {16384, 2400, 8, 32, 0};
    long stale_bad = table_mismatches(&first, &scratch);
    scratch.launches = 0x7fffffffu;
    if (stale_bad == 0) stale_bad = table_mismatches(&again, &scratch);
    if (stale_bad != 0 || scratch.launches != 1) ++failed;
    printf("%ux%u then %ux%u at epoch 1 again after the wrap: %s\n", first.width, first.rows,
           again.width, again.rows,
           stale_bad == 0 ? "same bytes" : stale_bad < 0 ? "error" : "DIFFERS");
    gs_cuda_integral_scratch_free(&scratch);
    printf("%d of %zu cases differ\n", failed, sizeof kCases / sizeof kCases[0] + 2);
    return failed ? 1 : 0;
}
