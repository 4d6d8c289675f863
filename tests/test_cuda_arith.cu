/* test_cuda_arith.cu: the device proof of the registers smoothing's fast arithmetic. */
/*
 * The three- and two-instruction divisions and the rounding give the bits of
 * stencil_math.h's formulas for every reachable input, and a lone 1 among zeros smoothed for
 * up to 300 passes gives the reference's floats (exit 77, a skip, without a CUDA device).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_device_or_skip.h"
#include "cuda_kernels.h"
#include "reference.h"
#include "round_up.h"

/* A lone 1 (8-bit) or 65535 (16-bit) at `at` among zeros in a row of `width`, smoothed for
 * K passes on the device and left unrounded: from pass 79 some sums fall below 2^-123,
 * where a shortened division rounds differently, and rounded samples would hide it (they
 * round to 0). Every float must equal the reference's. Returns the mismatches, -1 on a
 * CUDA error. */
static long lone_one_mismatches(uint32_t width, uint32_t at, uint32_t bits, uint32_t iters)
{
    const size_t row_bytes = (size_t)width * (bits / 8), pitch = gs_round_up(row_bytes, 256);
    const size_t float_pitch = gs_round_up((size_t)width * 4, 256);
    uint8_t *in = (uint8_t *)calloc(1, row_bytes);
    float *scratch = (float *)malloc(2 * (size_t)width * sizeof(float)), *got = (float *)malloc(width * 4);
    if (bits == 8) in[at] = 1;
    else ((uint16_t *)in)[at] = 65535;
    const float *want = gs_ref_smooth_row_float(in, width, bits, iters, scratch);
    void *d_in = NULL, *d_scr = NULL;
    float *d_out = NULL;
    const size_t scr = gs_cuda_smooth_scratch_bytes(width, 1, iters);
    cudaError_t e = cudaMalloc(&d_in, pitch);
    if (e == cudaSuccess) e = cudaMalloc(&d_out, float_pitch);
    if (e == cudaSuccess && scr) e = cudaMalloc(&d_scr, scr);
    if (e == cudaSuccess) e = cudaMemcpy(d_in, in, row_bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = gs_cuda_smooth_rows_float(d_in, pitch, d_out, float_pitch, width, 1, bits, iters, d_scr, scr, 0);
    if (e == cudaSuccess) e = cudaMemcpy(got, d_out, (size_t)width * 4, cudaMemcpyDeviceToHost);
    long bad = 0;
    for (uint32_t x = 0; e == cudaSuccess && x < width; ++x)
        if (memcmp(&got[x], &want[x], 4) != 0 && bad++ == 0)
            printf("lone one at %u of %u, %u-bit, K=%u: x=%u gave %a, want %a\n", at, width, bits,
                   iters, x, got[x], want[x]);
    cudaFree(d_in), cudaFree(d_out), cudaFree(d_scr);
    free(in), free(scratch), free(got);
    if (e != cudaSuccess) fprintf(stderr, "lone one: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess ? bad : -1;
}

int main(void)
{
    if (gs_cuda_device_or_skip() != 0) return GS_SKIP_CODE;
    cudaError_t e;
    /* [0]: differences where the fast formulas must agree; [1]: the two-instruction
     * division's differences at or below 2^-123, which must exist (else its pass limit
     * would be a guess rather than a bound). */
    unsigned long long *d_counts = NULL, counts[2] = {0, 0};
    if ((e = cudaMalloc(&d_counts, sizeof counts)) == cudaSuccess &&
        (e = cudaMemset(d_counts, 0, sizeof counts)) == cudaSuccess &&
        (e = gs_cuda_check_fast_arith(d_counts, 0)) == cudaSuccess &&
        (e = cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost)) == cudaSuccess)
        printf("fast arithmetic vs stencil_math.h, every float s in [0, 3 x 65535] divided in "
               "three and in two instructions (s = 0 or s > 2^-123), every quantized v in "
               "[0, 65535], and every integer sum N of K = 1..4 passes rounded to N / 3^K: %llu "
               "mismatches; two-instruction misses at or below 2^-123: %llu\n",
               counts[0], counts[1]);
    cudaFree(d_counts);
    if (e != cudaSuccess) {
        fprintf(stderr, "test_cuda_arith: %s\n", cudaGetErrorString(e));
        return 1;
    }
    const int arith_ok = counts[0] == 0 && counts[1] > 0;
    int passed = arith_ok, failed = !arith_ok;
    /* a row wider than a tile, across the short division's end; the same row in one-warp
     * segments (5 to 64 passes), the 1 on a lane's first or last pixel in a warp with no
     * row end, whose pass 1 of 8-bit samples sums their words as integers and takes its
     * neighbours' by shuffles; a 16384-pixel row in relay segments (33 to 78 passes), the 1
     * inside a warp and on the halo lanes' pixels of the first warp (960-991 are also the
     * second warp's lane 0); a one-pixel row, which keeps its value (K = 0: the conversion
     * alone) */
    static const struct { uint32_t width, at, iters; } runs[] = {
        {20011, 9973, 78}, {20011, 9973, 79}, {20011, 9973, 80}, {20011, 9973, 90},
        {20011, 9973, 120}, {20011, 9973, 300}, {20011, 9984, 5}, {20011, 10015, 10},
        {20011, 9984, 40}, {16384, 8191, 33}, {16384, 8191, 78}, {16384, 975, 64},
        {16384, 990, 78}, {1, 0, 0}, {1, 0, 3}};
    for (uint32_t bits = 8; bits <= 16; bits += 8)
        for (size_t i = 0; i < sizeof runs / sizeof *runs; ++i) {
            const long bad = lone_one_mismatches(runs[i].width, runs[i].at, bits, runs[i].iters);
            if (bad == 0) ++passed;
            else ++failed;
        }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
