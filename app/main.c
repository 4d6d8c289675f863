/* main.c: the gsmooth command: parses options, lists backends, runs one file or a batch, and is the only place that prints or exits. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_io.h"
#include "options.h"
#include "pipeline.h"
#include "plugin_loader.h"
#include "status.h"
#include "temp_files.h"

/* Backends a run may use at once: the one asked for, and the CPU for auto. */
#define GS_MAX_LIVE_BACKENDS 2

typedef struct live_backend {
    gs_backend *backend;          /* chosen backend */
    gs_plugin_instance *instance; /* its instance, created on first use */
} live_backend;

typedef struct run_context {
    const gs_options *options;     /* parsed command line */
    gs_backend_list list;          /* discovered plugins */
    gs_backend explicit_path;      /* a --backend PATH.so */
    live_backend live[GS_MAX_LIVE_BACKENDS];
    int noted_fallback;            /* the auto fallback note was printed */
} run_context;

static void print_note(const char *file, const char *message)
{
    fprintf(stderr, "gsmooth: note: %s: %s\n", file, message);
}

static void print_error(const char *message) { fprintf(stderr, "gsmooth: %s\n", message); }

static gs_status select_backend(void *p, uint64_t work, const gs_plugin_desc **desc,
                                gs_plugin_instance **instance, char *err, size_t err_size)
{
    run_context *rc = p;
    const gs_options *o = rc->options;
    gs_backend *chosen = NULL;
    char note[512];
    gs_status st = gs_backend_choose(&rc->list, o->backend, gs_mode_op(o->mode), work,
                                     &rc->explicit_path, &chosen, note, sizeof note, err,
                                     err_size);
    if (st != GS_OK) return st;
    if (note[0] && !rc->noted_fallback && !o->quiet) {
        fprintf(stderr, "gsmooth: note: %s\n", note);
        rc->noted_fallback = 1;
    }
    for (int i = 0; i < GS_MAX_LIVE_BACKENDS; ++i) {
        live_backend *lb = &rc->live[i];
        if (lb->backend && lb->backend != chosen) continue;
        if (!lb->backend) {
            gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), o->threads, -1};
            char msg[256] = "";
            if (chosen->desc->create(&cfg, &lb->instance, msg, sizeof msg) != GS_PLUGIN_OK)
                return gs_fail(err, err_size, GS_ERR_BACKEND, "backend %s: cannot start: %s",
                               chosen->desc->name, msg[0] ? msg : "no reason given");
            lb->backend = chosen;
        }
        *desc = chosen->desc;
        *instance = lb->instance;
        return GS_OK;
    }
    return gs_fail(err, err_size, GS_ERR_BACKEND, "too many backends in one run");
}

static void list_backends(const run_context *rc, int verbose)
{
    if (rc->list.count == 0) {
        printf("no backends found\n");
        return;
    }
    for (size_t i = 0; i < rc->list.count; ++i) {
        const gs_backend *b = &rc->list.items[i];
        if (!b->desc) {
            if (verbose) printf("(failed)  %s\n  error: %s\n", b->path, b->load_error);
            continue;
        }
        printf("%-8s %-8s %-11s %s\n", b->desc->name, b->desc->version,
               b->available ? "available" : "unavailable", b->desc->description);
        if (!verbose) continue;
        char ops[128];
        gs_ops_text(b->desc->ops, ops, sizeof ops);
        printf("  path:   %s\n  ABI:    %u.%u\n  ops:    %s\n  depths: %s%s\n  probe:  %s\n",
               b->path, b->desc->abi_major, b->desc->abi_minor, ops,
               b->desc->depths & GS_DEPTH_U8 ? "8 " : "",
               b->desc->depths & GS_DEPTH_U16 ? "16" : "", b->probe_msg);
    }
}

static void print_times(const char *file, const gs_phase_times *t)
{
    fprintf(stderr,
            "gsmooth: time: %s: decode %.2f ms, upload %.2f ms, kernel %.2f ms, download %.2f "
            "ms, encode %.2f ms, total %.2f ms\n",
            file, t->decode / 1e6, t->upload / 1e6, t->kernel / 1e6, t->download / 1e6,
            t->encode / 1e6, t->total / 1e6);
}

/* DIR/<input name>; an input whose extension gsmooth cannot write becomes <stem>.png
 * (.npy for integrals to a format other than PNG/PGM). */
static int batch_output_path(const char *dir, const char *input, gs_mode mode, char *out,
                             size_t size)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", input);
    const char *name = basename(copy);
    gs_out_format fmt;
    int writable = gs_out_format_from_path(name, &fmt, NULL, 0) == GS_OK;
    if (mode != GS_MODE_SMOOTH) writable = writable && fmt == GS_OUT_NPY;
    if (writable) return snprintf(out, size, "%s/%s", dir, name) < (int)size ? 0 : -1;
    const char *dot = strrchr(name, '.');
    int stem = dot && dot != name ? (int)(dot - name) : (int)strlen(name);
    return snprintf(out, size, "%s/%.*s.%s", dir, stem, name,
                    mode == GS_MODE_SMOOTH ? "png" : "npy") < (int)size ? 0 : -1;
}

static int run_batch(const gs_job *job, const gs_options *o)
{
    struct stat sb;
    if (stat(o->out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "gsmooth: %s: output directory does not exist\n", o->out_dir);
        return 1;
    }
    int failed = 0;
    int show_progress = o->progress && isatty(STDERR_FILENO);
    for (int i = 0; i < o->input_count; ++i) {
        const char *in = o->inputs[i];
        char out[PATH_MAX], err[1024];
        gs_phase_times t;
        if (show_progress) fprintf(stderr, "\r[%d/%d] %s\033[K", i + 1, o->input_count, in);
        if (strcmp(in, "-") == 0) {
            fprintf(stderr, "%sgsmooth: -: standard input cannot be used in batch mode\n",
                    show_progress ? "\n" : "");
            ++failed;
            continue;
        }
        if (batch_output_path(o->out_dir, in, o->mode, out, sizeof out) != 0) {
            fprintf(stderr, "gsmooth: %s: output path too long\n", in);
            ++failed;
            continue;
        }
        gs_status st = gs_pipeline_run(job, in, out, &t, err, sizeof err);
        if (st != GS_OK) {
            if (show_progress) fputc('\n', stderr);
            print_error(err);
            ++failed;
        } else if (o->time) {
            print_times(in, &t);
        }
    }
    if (show_progress) fputc('\n', stderr);
    if (!o->quiet || failed)
        fprintf(stderr, "gsmooth: %d file%s, %d done, %d failed\n", o->input_count,
                o->input_count == 1 ? "" : "s", o->input_count - failed, failed);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    gs_options o;
    char err[1024];
    gs_status st = gs_options_parse(argc, argv, &o, err, sizeof err);
    if (st != GS_OK) {
        print_error(err);
        return gs_status_exit_code(st);
    }
    if (o.action == GS_ACTION_HELP) {
        gs_options_print_help(stdout);
        return 0;
    }
    if (o.action == GS_ACTION_VERSION) {
        printf("gsmooth %s (plugin ABI %d.%d)\n", GS_VERSION, GS_PLUGIN_ABI_MAJOR,
               GS_PLUGIN_ABI_MINOR);
        return 0;
    }

    gs_temp_install_signal_cleanup(); /* an interrupted run leaves no temporary file */
    static run_context rc; /* large (holds a path buffer); lives for the whole run */
    rc.options = &o;
    st = gs_backends_discover(o.plugin_dir, &rc.list, err, sizeof err);
    if (st != GS_OK) {
        print_error(err);
        return gs_status_exit_code(st);
    }
    if (o.action == GS_ACTION_LIST) {
        list_backends(&rc, o.verbose);
        gs_backends_free(&rc.list);
        return 0;
    }

    gs_job job = {&o, select_backend, &rc, o.quiet ? NULL : print_note};
    int code;
    if (o.out_dir) {
        code = run_batch(&job, &o);
    } else {
        gs_phase_times t;
        st = gs_pipeline_run(&job, o.inputs[0], o.output, &t, err, sizeof err);
        if (st != GS_OK) print_error(err);
        else if (o.time) print_times(o.inputs[0], &t);
        code = gs_status_exit_code(st);
    }
    for (int i = 0; i < GS_MAX_LIVE_BACKENDS; ++i)
        if (rc.live[i].backend) rc.live[i].backend->desc->destroy(rc.live[i].instance);
    gs_backends_free(&rc.list);
    return code;
}
