/* cuda_device_or_skip.h: the device tests' first step: no device, skip. */
/* With no CUDA device, say so in one line and give ctest's skip code. */

#ifndef GS_CUDA_DEVICE_OR_SKIP_H
#define GS_CUDA_DEVICE_OR_SKIP_H

#include <cuda_runtime.h>
#include <stdio.h>

/* ctest's SKIP_RETURN_CODE for the device tests. */
#define GS_SKIP_CODE 77

/* 0 when a CUDA device is there; else prints "skipped: no CUDA device (why)" and returns
 * GS_SKIP_CODE, for main to return. */
static inline int gs_cuda_device_or_skip(void)
{
    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if (e == cudaSuccess && devices > 0) return 0;
    printf("skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return GS_SKIP_CODE;
}

#endif /* GS_CUDA_DEVICE_OR_SKIP_H */
