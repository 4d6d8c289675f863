/* options.h: the command line and environment, parsed into the library's option structs. */
#ifndef GS_OPTIONS_H
#define GS_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "gsmooth/gsmooth.h"

typedef enum gs_action { GS_ACTION_RUN, GS_ACTION_HELP, GS_ACTION_VERSION, GS_ACTION_LIST } gs_action;

/* Most --threads: more CPU threads than this per file never helps row work. */
#define GS_MAX_THREADS_OPTION 256u
/* Most --files-from/--files0-from options on one command line. */
#define GS_MAX_LIST_OPTIONS 64

/* One --files-from (separator '\n') or --files0-from ('\0'), in command-line order. */
typedef struct gs_list_option {
    const char *path; /* "-": standard input */
    char separator;
} gs_list_option;

/* Most --max-pixels: 2^40, far above any image a machine holds. */
#define GS_MAX_PIXELS_OPTION (UINT64_C(1) << 40)

typedef struct gs_options {
    gs_action action;          /* what main should do */
    gsmooth_context_options context; /* --backend (or GSMOOTH_BACKEND), --plugin-dir,
                                  --threads, --devices (or GSMOOTH_DEVICES) */
    const char *devices_from;  /* where context.devices came from: "--devices" or the variable */
    gsmooth_file_options file; /* --integral, --iters, --axis, --depth, --max-pixels,
                                  --compression (or GSMOOTH_PNG_LEVEL), --skip-existing, and
                                  deflate threads (--threads, else GSMOOTH_PNG_THREADS) */
    unsigned jobs;             /* --jobs: files in flight in batch mode; 0 = automatic */
    int quiet;                 /* --quiet: no notes */
    int progress;              /* --progress[=SECONDS] */
    double progress_seconds;   /* its SECONDS: the least time between two plain progress lines
                                  when stderr is no terminal (GS_PROGRESS_SECONDS without one) */
    int time;                  /* --time: phase timings */
    const char *sigma;         /* --sigma as written (file.iters holds its passes), or NULL */
    int verbose;               /* -v (with --list-backends) */
    const char *out_dir;       /* -o DIR: batch mode */
    const char *relative_to;   /* --relative-to ROOT: outputs keep their path below ROOT */
    char **inputs;             /* input paths (argv slice) */
    int input_count;           /* how many */
    const char *output;        /* single-file mode output path */
    gs_list_option lists[GS_MAX_LIST_OPTIONS]; /* --files-from, --files0-from */
    unsigned list_count;
    uint32_t shard_index, shard_count; /* --shard I/N; 0/1 without it */
    const char *manifest;      /* --manifest FILE, or NULL */
} gs_options;

/* Parse argv (and GSMOOTH_BACKEND). GSMOOTH_ERR_USAGE with a one-line reason on any misuse. */
gsmooth_status gs_options_parse(int argc, char **argv, gs_options *out, char *err, size_t err_size);

/* --shard's "I/N" (0 <= I < N) into its numbers; GSMOOTH_ERR_USAGE with the reason. */
gsmooth_status gs_shard_parse(const char *text, uint32_t *index, uint32_t *count, char *err,
                              size_t err_size);

/* --sigma S's passes, round(3 S^2 / 2); GSMOOTH_ERR_USAGE with the reason. */
gsmooth_status gs_sigma_passes(const char *text, uint32_t *passes, char *err, size_t err_size);

/* The --help text. */
void gs_options_print_help(FILE *to);

#endif /* GS_OPTIONS_H */
