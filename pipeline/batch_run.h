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
    const char *relative_to;     /* NULL: <name> is the input's basename; else its path
                                    relative to this directory (gs_batch_output_path) */
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

/* How a batch names its outputs: the same for the collision table and for each file. */
typedef struct gs_batch_naming {
    const char *dir;  /* the output directory */
    const char *root; /* NULL: outputs by basename; else an absolute, lexically normal path
                         (gs_path_absolute) that outputs keep their path below */
    const char *cwd;  /* absolute: what relative inputs are taken against (with root) */
    gs_mode mode;     /* smoothing keeps exactly written names; integrals are .npy */
    int float_out;    /* smoothing to float32: names kept only where the format stores
                         float32; other inputs become .tif */
} gs_batch_naming;

/* gs_batch_output_path's results. */
#define GS_BATCH_NAME_OK 0
#define GS_BATCH_NAME_UNFIT (-1)   /* no name can be formed, or it does not fit `size` */
#define GS_BATCH_NAME_OUTSIDE (-2) /* the input does not lie below naming->root */

/* The output path of `input` under `naming` into `out` (`size` bytes): a GS_BATCH_NAME_*. */
int gs_batch_output_path(const gs_batch_naming *naming, const char *input, char *out, size_t size);

/* `path` made absolute against `cwd` (itself absolute) with "." , ".." and repeated or
 * trailing slashes resolved by the text alone (symlinks are not followed, as `realpath -s`):
 * 0, or -1 when it does not fit `size`. */
int gs_path_absolute(const char *cwd, const char *path, char *out, size_t size);

/* Create `dir` and every missing directory above it, as `mkdir -p` does (mode 0777 less
 * the umask). Safe when other processes create the same ones at once: a directory that
 * appears meanwhile is success. GS_ERR_IO naming the component that is not a directory
 * or could not be made. */
gs_status gs_make_dirs(const char *dir, char *err, size_t err_size);

/* Process this shard's inputs into request->out_dir. */
void gs_batch_run(gs_backend_pool *pool, const gs_batch_request *request,
                  const gs_batch_events *events, gsmooth_batch_result *result);

#endif /* GS_BATCH_RUN_H */
