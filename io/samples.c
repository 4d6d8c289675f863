/* samples.c: what every reader applies to the samples it decodes. */
/* Colour to gray (BT.601, libjpeg's fixed point) and the --max-pixels limit. */

#include "io_internal.h"

#include <string.h>

/* One loop body for both sample widths, so 8-bit and 16-bit cannot drift apart. */
#define DEFINE_ROW_TO_GRAY(name, type)                                                   \
    static void name(type *dst, const type *src, uint32_t width, unsigned channels)     \
    {                                                                                    \
        if (channels < 3) { /* gray or gray+alpha: keep the gray sample */              \
            for (uint32_t x = 0; x < width; x++) dst[x] = src[(size_t)x * channels];    \
            return;                                                                      \
        }                                                                                \
        for (uint32_t x = 0; x < width; x++) {                                           \
            const type *p = src + (size_t)x * channels;                                  \
            dst[x] = (type)gs_luma(p[0], p[1], p[2]);                                    \
        }                                                                                \
    }

DEFINE_ROW_TO_GRAY(row_to_gray8, uint8_t)
DEFINE_ROW_TO_GRAY(row_to_gray16, uint16_t)

void gs_row_to_gray(void *dst, const void *src, uint32_t width, unsigned channels,
                    unsigned bits)
{
    if (channels == 1) {
        memcpy(dst, src, (size_t)width * (bits / 8));
        return;
    }
    if (bits == 16)
        row_to_gray16(dst, src, width, channels);
    else
        row_to_gray8(dst, src, width, channels);
}

gs_status gs_check_pixels(uint32_t width, uint32_t height, uint64_t max_pixels, char *err,
                          size_t err_size)
{
    /* Both factors are below 2^32, so the product cannot wrap in 64 bits. */
    uint64_t pixels = (uint64_t)width * height;
    if (pixels <= max_pixels) return GS_OK;
    return gs_fail(err, err_size, GS_ERR_TOO_LARGE,
                   "%ux%u is %llu pixels, over the pixel limit of %llu (max_pixels; --max-pixels)", width, height,
                   (unsigned long long)pixels, (unsigned long long)max_pixels);
}
