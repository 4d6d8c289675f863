/* png_unfilter_avx2.c: the SIMD unfilter built for AVX2 (VEX encoding, SSE4.1 blends). */
/* Compiled with -mavx2 where the compiler targets x86-64; chosen at run time only where the
 * CPU has AVX2. */

#if defined(__x86_64__)
#define GS_UNFILTER_NAME "avx2"
#define GS_UNFILTER_TABLE gs_png_unfilter_isa_avx2
#include "png_unfilter_simd.inc"
#endif
