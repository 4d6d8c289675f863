/* pipeline.h: one file through decode -> backend strips -> encode, with bounded memory; what to compute and how the backend is chosen come from the caller. */
#ifndef GS_PIPELINE_H
#define GS_PIPELINE_H

#include <stdint.h>

#include "backend_call.h" /* gs_work: what to compute */
#include "encode_settings.h"
#include "gsmooth/gsmooth_plugin.h"
#include "status.h"

/* Where the time of one file went, in nanoseconds. */
typedef struct gs_phase_times {
    uint64_t decode, upload, kernel, download, encode, total;
} gs_phase_times;

/* What a run learnt about its file, for the manifest: zero and NULL until known. */
typedef struct gs_image_facts {
    uint32_t width, height; /* image size */
    uint32_t bits;          /* input sample depth: 8 or 16 */
    const char *backend;    /* name of the backend that ran it (static) */
} gs_image_facts;

/* Callback for notes about a file (colour converted, alpha dropped, ...). */
typedef void (*gs_note_fn)(void *user, const char *file, const char *message);

/* Picks the backend once the image header is known: it must implement the GS_OP_* bits
 * `ops`; `work` is the work's size (gs_work_size). */
typedef gs_status (*gs_select_fn)(void *ctx, uint32_t ops, uint64_t work,
                                  const gs_plugin_desc **backend, gs_plugin_instance **instance,
                                  char *err, size_t err_size);

/* After select: how many instances of the chosen backend can run strips at once (one
 * per device), and the one for runner `runner` (runner 0 is select's). */
typedef unsigned (*gs_runners_fn)(void *ctx, const gs_plugin_desc *backend);
typedef gs_status (*gs_runner_fn)(void *ctx, unsigned runner, const gs_plugin_desc *backend,
                                gs_plugin_instance **instance, char *err, size_t err_size);

/* Most runners one image's strips spread over. */
#define GS_MAX_RUNNERS 64u

/* What a pipeline run needs besides the file names. */
typedef struct gs_job {
    gs_work work;        /* what to compute */
    gs_encode_settings encode; /* how the output is compressed */
    gs_select_fn select; /* backend choice */
    void *select_ctx;    /* its context, also runners' and runner's */
    gs_note_fn note;     /* may be NULL */
    gs_runners_fn runners;   /* NULL: one runner. Strips spread over the runners, except for the 2d
                            integral (its column sums go strip to strip) */
    gs_runner_fn runner;     /* with runners */
    void *note_user;     /* passed to note */
    /* Rows written of the image's height, and seconds since the run began: after each
     * strip is written, on the writing thread (NULL: none). The last call has every row. */
    void (*progress)(void *user, uint64_t rows_done, uint64_t rows_total, double elapsed_s);
    void *progress_user; /* passed to progress */
} gs_job;

/* A file's facts and times as the public result says them (either may be NULL). */
void gs_file_result_of(const gs_image_facts *facts, const gs_phase_times *t, gsmooth_file_result *r);

/* Process `input` into `output`. The output appears only if everything succeeded; an
 * existing output is left untouched on failure. err gets one line that starts with the
 * name of the file concerned (input or output) and says the cause. `facts` (may be NULL)
 * gets what was learnt, on failure too. */
gs_status gs_pipeline_run(const gs_job *job, const char *input, const char *output,
                          gs_phase_times *times, gs_image_facts *facts, char *err, size_t err_size);

#endif /* GS_PIPELINE_H */
