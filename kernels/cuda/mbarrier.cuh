/* mbarrier.cuh: shared-memory addresses and the mbarrier operations (PTX). */
#ifndef GS_CUDA_MBARRIER_CUH
#define GS_CUDA_MBARRIER_CUH

#include <stdint.h>

/* A shared-memory pointer as the 32-bit address PTX's shared:: forms take. */
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* Set up the barrier at `bar` to complete a phase when `count` arrivals are in. */
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/* Retire the barrier before its shared memory is reused or the block ends. */
__device__ __forceinline__ void mbar_inval(uint32_t bar)
{
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

/* Arrive (release: this thread's shared writes become visible to the phase's waiters). */
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* Wait until the phase of parity `parity` (0 or 1) completes (acquire). */
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

#endif /* GS_CUDA_MBARRIER_CUH */
