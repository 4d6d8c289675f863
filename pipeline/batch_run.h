/* batch_run.h: many files on a pool of workers, one shard of a list, past failures. */
#ifndef GS_BATCH_RUN_H
#define GS_BATCH_RUN_H

#include <stdint.h>

#include "backend_pool.h"
#include "input_list.h"
#include "pipeline.h"

/* What a batch is asked to do. */
typedef struct gs_batch_request {
    gs_work work;                /* what to compute for each file */
    int compression;             /* the outputs' level; negative: the default */
    unsigned encode_threads;     /* deflate threads per output; 0: the threads per file */
    const gs_input_list *inputs; /* the full list; the shard picks this task's part */
    gs_shard shard;              /* {0, 1}: all of it */
    const char *out_dir;         /* each result goes to out_dir/<name> */
    unsigned jobs;               /* files in flight; 0 = automatic */
    unsigned threads;            /* CPU threads per file; 0 = cores / jobs */
    int skip_existing;           /* an input whose output exists is skipped */
} gs_batch_request;

/* What the batch tells its caller (it never prints): the public callbacks of
 * gsmooth_batch_options, and the notes. finished and progress are serialised (never two at
 * once); note comes from the workers' pipelines at any time. */
typedef struct gs_batch_events {
    void (*finished)(void *user, const gsmooth_file_outcome *outcome); /* each input of the shard */
    void (*progress)(void *user, unsigned done, unsigned total, uint64_t bytes_done,
                     double elapsed_s, double eta_s);                 /* after each file */
    void *user;                                                      /* for finished, progress */
    gs_note_fn note;                                                 /* per-file notes, or NULL */
    void *note_user;                                                 /* for note */
} gs_batch_events;

/* Files in flight and CPU threads per file: --jobs/--threads, else one file per core
 * with the cores split between them, never more jobs than files. */
void gs_batch_plan(unsigned files, unsigned jobs_opt, unsigned threads_opt, unsigned cores,
                   unsigned *jobs, unsigned *threads);

/* The output path of `input` in `dir` for `mode` (batch naming); -1 if it does not fit. */
int gs_batch_output_path(const char *dir, const char *input, gs_mode mode, char *out, size_t size);

/* Process this shard's inputs into request->out_dir. */
void gs_batch_run(gs_backend_pool *pool, const gs_batch_request *request,
                  const gs_batch_events *events, gsmooth_batch_result *result);

#endif /* GS_BATCH_RUN_H */
