/* test_cuda_arith.cu: the exhaustive device proof that the registers smoothing's fast arithmetic gives the bits of stencil_math.h's formulas for every reachable input (exit 77, a skip, without a CUDA device). */
#include <cuda_runtime.h>
#include <stdio.h>

#include "cuda_kernels.h"

/* ctest's SKIP_RETURN_CODE for this test. */
#define SKIP_CODE 77

int main(void)
{
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        printf("skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return SKIP_CODE;
    }
    unsigned long long *d_mismatches = NULL, mismatches = 0;
    if ((e = cudaMalloc(&d_mismatches, sizeof *d_mismatches)) == cudaSuccess &&
        (e = cudaMemset(d_mismatches, 0, sizeof *d_mismatches)) == cudaSuccess &&
        (e = gs_cuda_check_fast_arith(d_mismatches, 0)) == cudaSuccess &&
        (e = cudaMemcpy(&mismatches, d_mismatches, sizeof mismatches, cudaMemcpyDeviceToHost)) ==
            cudaSuccess)
        printf("fast arithmetic vs stencil_math.h, every float s in [0, 3 x 65535] and every "
               "quantized v in [0, 65535]: %llu mismatches\n", mismatches);
    cudaFree(d_mismatches);
    if (e != cudaSuccess) {
        fprintf(stderr, "test_cuda_arith: %s\n", cudaGetErrorString(e));
        return 1;
    }
    printf("%d passed, %d failed\n", mismatches == 0, mismatches != 0);
    return mismatches == 0 ? 0 : 1;
}
