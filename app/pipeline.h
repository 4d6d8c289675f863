/* pipeline.h: one file through decode -> backend strips -> encode, with bounded memory. */
#ifndef GS_PIPELINE_H
#define GS_PIPELINE_H

#include <stdint.h>

#include "gsmooth/gsmooth_plugin.h"
#include "options.h"
#include "status.h"

/* Where the time of one file went, in nanoseconds. */
typedef struct gs_phase_times {
    uint64_t decode, upload, kernel, download, encode, total;
} gs_phase_times;

/* Callback for notes about a file (colour converted, alpha dropped, ...). */
typedef void (*gs_note_fn)(const char *file, const char *message);

/* Picks the backend once the image header is known: `work` is pixels x passes. */
typedef gs_status (*gs_select_fn)(void *ctx, uint64_t work, const gs_plugin_desc **backend,
                                  gs_plugin_instance **instance, char *err, size_t err_size);

/* What a pipeline run needs besides the file names. */
typedef struct gs_job {
    const gs_options *options;       /* mode, iters, depth, max_pixels */
    gs_select_fn select;             /* backend choice */
    void *select_ctx;                /* its context */
    gs_note_fn note;                 /* may be NULL */
} gs_job;

/* Process `input` into `output`. The output appears only if everything succeeded; an
 * existing output is left untouched on failure. err gets one line that starts with the
 * name of the file concerned (input or output) and says the cause. */
gs_status gs_pipeline_run(const gs_job *job, const char *input, const char *output,
                          gs_phase_times *times, char *err, size_t err_size);

/* The GS_OP_* bit a mode needs. */
uint32_t gs_mode_op(gs_mode mode);

#endif /* GS_PIPELINE_H */
