/* backend_call.h: the one way into a backend's operations: what a work needs, the checks, the call and its status. */
#ifndef GS_BACKEND_CALL_H
#define GS_BACKEND_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "gsmooth/gsmooth_plugin.h"
#include "status.h"

typedef enum gs_mode { GS_MODE_SMOOTH, GS_MODE_INTEGRAL_ROWS, GS_MODE_INTEGRAL_2D } gs_mode;
typedef enum gs_depth_choice {
    GS_DEPTH_KEEP = 0,
    GS_DEPTH_TO_8 = 8,
    GS_DEPTH_TO_16 = 16,
    GS_DEPTH_TO_FLOAT = 32 /* float32: the unrounded passes */
} gs_depth_choice;


/* Passes when none are asked for, and the default pixel limit (2^30). */
#define GS_DEFAULT_ITERS 3u
#define GS_DEFAULT_MAX_PIXELS (UINT64_C(1) << 30)

/* What to compute: for each file of a run, or for one call on caller buffers. */
typedef struct gs_work {
    gs_mode mode;          /* smoothing or one of the integrals */
    uint32_t iters;        /* smoothing passes, 0..GS_PLUGIN_MAX_ITERS */
    uint32_t axes;         /* smoothing: GS_AXIS_X (0 means X too), GS_AXIS_Y, or both */
    gs_depth_choice depth; /* output sample depth (smoothing; files only) */
    uint64_t max_pixels;   /* larger headers are refused before any pixel memory (files only) */
} gs_work;

/* The axes smoothing runs along (GS_AXIS_*): rows unless asked otherwise. */
uint32_t gs_work_axes(const gs_work *work);

/* The one GS_OP_* bit the work calls: smoothing that goes down columns needs smooth_axes,
 * smoothing along rows alone smooth_rows. */
uint32_t gs_work_op(const gs_work *work);

/* The work's size for the auto backend choice: pixels x passes, a pass being one sweep of
 * one axis (an integral, or smoothing with no pass, counts one). */
uint64_t gs_work_size(const gs_work *work, uint32_t width, uint32_t height);

/* What a backend choice asks for: gs_work_op, with GS_NEEDS_FLOAT when samples of
 * in_bits (32: float32) or the result (out_float) are float32. */
uint32_t gs_work_needs(const gs_work *work, uint32_t in_bits, int out_float);

/* GS_OK when `desc` implements the work's operation and takes samples of `bits` bits;
 * else GS_ERR_BACKEND and one line in err ("backend NAME does not ..."). Call it once the
 * backend is chosen and before gs_backend_run, which relies on it. */
gs_status gs_backend_takes(const gs_plugin_desc *desc, const gs_work *work, uint32_t bits,
                           char *err, size_t err_size);

/* The one rule from a plugin's status to ours: out of memory stays so; any other failure,
 * a refused argument too (the library checked them first), is the backend's. */
gs_status gs_backend_status(gs_plugin_status prc);

/* One strip through the backend's operation for the work, on `instance`. Smoothing down
 * columns reads `above` and `below` rows of halo around the strip's rows (the strip's src
 * is the window's first row); other operations ignore them. The 2d integral continues from
 * `column_sums` (width values of strip->out_bits, zeros before the first strip) and leaves
 * the strip's last table row there; other operations ignore it.
 * A plugin's failure maps by one rule: GS_PLUGIN_ERR_NOMEM is GS_ERR_NOMEM, anything else
 * GS_ERR_BACKEND (the caller validated the arguments, so a plugin refusing them as invalid
 * is the backend's fault, not the user's), with "backend NAME failed: REASON" in err. */
gs_status gs_backend_run(const gs_plugin_desc *desc, gs_plugin_instance *instance,
                         const gs_work *work, const gs_strip *strip, uint32_t above,
                         uint32_t below, void *column_sums, char *err, size_t err_size);

#endif /* GS_BACKEND_CALL_H */
