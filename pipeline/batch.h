/* batch.h: many files on a pool of workers (-o DIR INPUT...), going on past failures. */
#ifndef GS_BATCH_H
#define GS_BATCH_H

#include <stdint.h>

#include "backend_session.h"
#include "pipeline.h"

/* Most files in flight at once (--jobs). */
#define GS_MAX_JOBS 256u

/* What a batch is asked to do. */
typedef struct gs_batch_request {
    gs_work work;              /* what to compute for each file */
    char *const *inputs;       /* input paths */
    unsigned input_count;      /* how many */
    const char *out_dir;       /* each result goes to out_dir/<name> */
    unsigned jobs;             /* files in flight; 0 = automatic */
    unsigned threads;          /* CPU threads per file; 0 = cores / jobs */
    int want_times;            /* report each file's phase times */
} gs_batch_request;

/* What the batch tells its caller (main prints; the batch never does). failed, timed and
 * progress are serialised (never two at once); note comes from the workers' pipelines at
 * any time, so the caller makes printing thread-safe. */
typedef struct gs_batch_events {
    void (*failed)(const char *message);                         /* one file failed */
    void (*timed)(const char *file, const gs_phase_times *t);    /* with want_times */
    void (*progress)(unsigned done, unsigned total, uint64_t bytes_done, double elapsed_s,
                     double eta_s);                               /* after each file */
    gs_note_fn note;                                             /* per-file notes, or NULL */
} gs_batch_events;

typedef struct gs_batch_result {
    unsigned files, done, failed; /* counts */
    double elapsed_s;             /* wall time */
    uint64_t bytes;               /* input bytes of the files done */
} gs_batch_result;

/* Files in flight and CPU threads per file: --jobs/--threads, else one file per core
 * with the cores split between them, never more jobs than files. */
void gs_batch_plan(unsigned files, unsigned jobs_opt, unsigned threads_opt, unsigned cores,
                   unsigned *jobs, unsigned *threads);

/* Process every input of the request into request->out_dir. */
void gs_batch_run(gs_session *session, const gs_batch_request *request,
                  const gs_batch_events *events, gs_batch_result *result);

#endif /* GS_BATCH_H */
