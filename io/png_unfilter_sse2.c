/* png_unfilter_sse2.c: the SIMD unfilter for SSE2, the x86-64 baseline. */

#if defined(__x86_64__)
#define GS_UNFILTER_NAME "sse2"
#define GS_UNFILTER_TABLE gs_png_unfilter_isa_sse2
#include "png_unfilter_simd.inc"
#endif
