/* options.h: the command line and environment, parsed into the library's option structs. */
#ifndef GS_OPTIONS_H
#define GS_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gsmooth/gsmooth.h"

typedef enum gs_action {
    GS_ACTION_RUN, GS_ACTION_HELP, GS_ACTION_VERSION, GS_ACTION_LIST, GS_ACTION_COMPLETION
} gs_action;

/* The shells --completion writes a script for. */
typedef enum gs_shell { GS_SHELL_BASH = 1, GS_SHELL_ZSH } gs_shell;

/* One name an option's value may be ("xy" for --axis). The parser and the completion
 * scripts read the same tables, so a shell offers exactly the names the parser takes. */
typedef struct gs_named_value {
    const char *name;
    int value; /* what the parser sets; 0 where the library reads the name */
} gs_named_value;

/* What a shell completes as an option's value. */
typedef enum gs_value_kind {
    GS_VALUE_NONE,   /* no value: the kind of an option with no_argument only */
    GS_VALUE_CHOICE, /* one of `choices` */
    GS_VALUE_NUMBER, /* a number: nothing to offer */
    GS_VALUE_TEXT,   /* other text (--shard I/N): nothing to offer */
    GS_VALUE_FILE,   /* a file name */
    GS_VALUE_DIR,    /* a directory */
    GS_VALUE_PLUGIN, /* one of `choices`, or a plugin's path (*.so) */
} gs_value_kind;

/* One option: getopt_long's entry (an option with a short form has its letter as the
 * value) and what its value is. Every option with an argument states its kind: the
 * completion scripts are made from this table, and refuse an option without one. */
typedef struct gs_option_spec {
    struct option getopt;
    gs_value_kind value;
    const gs_named_value *choices; /* GS_VALUE_CHOICE, GS_VALUE_PLUGIN: ends with {NULL} */
    const char *metavar;           /* the value's name ("K", "DIR"), or NULL */
    const char *about;             /* a few words, for shells that show them */
} gs_option_spec;

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
    gs_shell completion;       /* --completion SHELL */
} gs_options;

/* The options gs_options_parse takes: `*count` entries, in --help's order. */
const gs_option_spec *gs_options_table(size_t *count);

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
