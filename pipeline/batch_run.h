/* batch.h: many files on a pool of workers (-o DIR with inputs from argv and lists), one shard of the list, going on past failures and skipping finished outputs on request. */
#ifndef GS_BATCH_RUN_H
#define GS_BATCH_RUN_H

#include <stdint.h>

#include "backend_pool.h"
#include "input_list.h"
#include "pipeline.h"

/* Most files in flight at once (--jobs). */
#define GS_MAX_JOBS 256u

/* What a batch is asked to do. */
typedef struct gs_batch_request {
    gs_work work;                /* what to compute for each file */
    const gs_input_list *inputs; /* the full list; the shard picks this task's part */
    gs_shard shard;              /* {0, 1}: all of it */
    const char *out_dir;         /* each result goes to out_dir/<name> */
    unsigned jobs;               /* files in flight; 0 = automatic */
    unsigned threads;            /* CPU threads per file; 0 = cores / jobs */
    int skip_existing;           /* an input whose output exists is skipped */
} gs_batch_request;

typedef enum gs_file_status { GS_FILE_OK, GS_FILE_FAILED, GS_FILE_SKIPPED } gs_file_status;

/* What became of one input. */
typedef struct gs_file_outcome {
    const char *input;           /* as listed */
    const char *output;          /* its output path; NULL when none could be formed */
    gs_file_status status;
    const char *error;           /* failed: the one-line cause; otherwise NULL */
    gs_image_facts facts;        /* what the run learnt (zeros when skipped) */
    const gs_phase_times *times; /* ok: where the time went; otherwise NULL */
    double ms;                   /* wall time spent on it */
} gs_file_outcome;

/* What the batch tells its caller (main prints; the batch never does). finished and
 * progress are serialised (never two at once); note comes from the workers' pipelines at
 * any time, so the caller makes printing thread-safe. */
typedef struct gs_batch_events {
    void (*finished)(void *ctx, const gs_file_outcome *outcome); /* each input of the shard */
    void (*progress)(void *ctx, unsigned done, unsigned total, uint64_t bytes_done,
                     double elapsed_s, double eta_s);             /* after each file */
    gs_note_fn note;                                             /* per-file notes, or NULL */
    void *ctx;                                       /* for finished, progress and note */
} gs_batch_events;

typedef struct gs_batch_result {
    unsigned files, done, failed, skipped; /* counts over this shard */
    double elapsed_s;                      /* wall time */
    uint64_t bytes;                        /* input bytes of the files done */
} gs_batch_result;

/* Files in flight and CPU threads per file: --jobs/--threads, else one file per core
 * with the cores split between them, never more jobs than files. */
void gs_batch_plan(unsigned files, unsigned jobs_opt, unsigned threads_opt, unsigned cores,
                   unsigned *jobs, unsigned *threads);

/* The output path of `input` in `dir` for `mode` (batch naming); -1 if it does not fit. */
int gs_batch_output_path(const char *dir, const char *input, gs_mode mode, char *out, size_t size);

/* Process this shard's inputs into request->out_dir. */
void gs_batch_run(gs_backend_pool *pool, const gs_batch_request *request,
                  const gs_batch_events *events, gs_batch_result *result);

#endif /* GS_BATCH_RUN_H */
