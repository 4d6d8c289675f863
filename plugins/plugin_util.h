/* plugin_util.h: what gsmooth's own plugins share: error helper, strip checks. */
/* Not part of the ABI: third-party plugins need only gsmooth_plugin.h. */

#ifndef GS_PLUGIN_UTIL_H
#define GS_PLUGIN_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "gsmooth/gsmooth_plugin.h"

/* Write one formatted line into the caller's buffer (if any) and return `prc`. */
static inline gs_plugin_status gs_plugin_fail(char *err, size_t err_size, gs_plugin_status prc,
                                              const char *fmt, ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return prc;
}

/* GS_PLUGIN_OK, or the status and one line in err: null pointers, a struct from another
 * ABI, an empty strip, depths the operation cannot take, strides shorter than a row. */
static inline gs_plugin_status gs_strip_check(const gs_strip *s, int integral, char *err,
                                              size_t err_size)
{
    const char *why = NULL;
    gs_plugin_status prc = GS_PLUGIN_ERR_INVALID;
    if (!s || !s->src || !s->dst) why = "null strip or buffer";
    else if (s->struct_size < sizeof(gs_strip) || s->abi_major != GS_PLUGIN_ABI_MAJOR)
        why = "strip struct from another ABI";
    else if (s->width == 0 || s->rows == 0) why = "empty strip";
    else if (s->in_bits != 8 && s->in_bits != 16 && s->in_bits != 32)
        why = "input depth must be 8 or 16 bits, or 32 (float32)", prc = GS_PLUGIN_ERR_UNSUPPORTED;
    else if (integral ? (s->in_bits == 32 ? s->out_bits != 64 : s->out_bits != 32 && s->out_bits != 64)
                      : s->out_bits != s->in_bits && s->out_bits != 32)
        why = "unsupported output depth", prc = GS_PLUGIN_ERR_UNSUPPORTED;
    else if (s->src_stride < (size_t)s->width * (s->in_bits / 8) ||
             s->dst_stride < (size_t)s->width * (s->out_bits / 8))
        why = "stride shorter than a row";
    return why ? gs_plugin_fail(err, err_size, prc, "%s", why) : GS_PLUGIN_OK;
}

/* The checks of gs_strip_check for smoothing, and those of a smooth_axes call: known axes,
 * at least one; passes within the limit; a window of at most GS_PLUGIN_MAX_WINDOW_ROWS. */
static inline gs_plugin_status gs_window_check(const gs_strip *s, uint32_t axes,
                                               uint32_t halo_above, uint32_t halo_below,
                                               uint32_t iters, char *err, size_t err_size)
{
    gs_plugin_status prc = gs_strip_check(s, 0, err, err_size);
    if (prc != GS_PLUGIN_OK) return prc;
    if (axes == 0 || (axes & ~(GS_AXIS_X | GS_AXIS_Y)) != 0)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "unknown axes 0x%x", axes);
    if (iters > GS_PLUGIN_MAX_ITERS)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "iterations above %u",
                              GS_PLUGIN_MAX_ITERS);
    if ((uint64_t)halo_above + s->rows + halo_below > GS_PLUGIN_MAX_WINDOW_ROWS)
        return gs_plugin_fail(err, err_size, GS_PLUGIN_ERR_INVALID, "window taller than 2^31 rows");
    return GS_PLUGIN_OK;
}

#endif /* GS_PLUGIN_UTIL_H */
