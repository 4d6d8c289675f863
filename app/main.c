/* main.c: the gsmooth command, a thin user of libgsmooth's public API (gsmooth.h): parses options, then lists backends, runs one file or runs a batch; the only place that exits, with the code gs_status_exit_code gives. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gsmooth/gsmooth.h"
#include "image_io.h"
#include "manifest.h"
#include "options.h"
#include "png_tuning.h"
#include "report.h"
#include "status.h"
#include "temp_files.h"

/* What main does with each finished input: errors and times on stderr, the manifest. */
typedef struct outcome_sink {
    const gs_options *options;
    gs_manifest *manifest;     /* NULL without --manifest */
    int manifest_failed;       /* a record could not be written (reported once) */
} outcome_sink;

static void on_finished(void *ctx, const gsmooth_file_outcome *o)
{
    outcome_sink *sink = ctx;
    if (o->status == GSMOOTH_FILE_FAILED) gs_report_error(o->error);
    if (o->status == GSMOOTH_FILE_OK && sink->options->time) gs_report_times(o->input, &o->result);
    char err[GS_ERR_SIZE];
    if (sink->manifest && gs_manifest_write(sink->manifest, o, err, sizeof err) != GS_OK &&
        !sink->manifest_failed++)
        gs_report_error(err);
}

/* libgsmooth's notes: about a file, or about the run (a backend fallback). */
static void library_note(void *user, const char *file, const char *message)
{
    if (file) gs_report_note(user, file, message);
    else gs_report_message(user, message);
}

/* The library context for the options: backend, plugins, threads, devices, notes. */
static gs_status open_context(const gs_options *o, gsmooth_context **ctx)
{
    char err[GS_ERR_SIZE];
    gsmooth_context_options co;
    gsmooth_context_options_init(&co);
    co.backend = o->backend;
    co.plugin_dir = o->plugin_dir;
    co.threads = o->threads;
    co.devices = o->devices_text;
    co.note = o->quiet ? NULL : library_note;
    gs_status rc = (gs_status)gsmooth_context_create(&co, ctx, err, sizeof err);
    if (rc != GS_OK) gs_report_error(err);
    return rc;
}

/* What to compute for each file, as the library takes it. */
static gsmooth_file_options file_options_of(const gs_options *o)
{
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.kind = o->work.mode == GS_MODE_INTEGRAL_ROWS ? GSMOOTH_WORK_INTEGRAL_ROWS
              : o->work.mode == GS_MODE_INTEGRAL_2D ? GSMOOTH_WORK_INTEGRAL_2D
                                                    : GSMOOTH_WORK_SMOOTH;
    fo.iters = o->work.iters;
    fo.axes = o->work.axes;
    fo.depth = (uint32_t)o->work.depth;
    fo.max_pixels = o->work.max_pixels;
    return fo;
}

/* Positional inputs, then each list in command-line order. */
static gs_status gather_inputs(const gs_options *o, gsmooth_inputs *list, char *err, size_t err_size)
{
    for (int i = 0; i < o->input_count; ++i) {
        gs_status rc = (gs_status)gsmooth_inputs_add(list, o->inputs[i], err, err_size);
        if (rc != GS_OK) return rc;
    }
    for (unsigned i = 0; i < o->list_count; ++i) {
        gs_status rc = (gs_status)gsmooth_inputs_read(list, o->lists[i].path, o->lists[i].separator,
                                                      err, err_size);
        if (rc != GS_OK) return rc;
    }
    return GS_OK;
}

static gs_status run_batch(gsmooth_context *ctx, const gs_options *o, outcome_sink *sink)
{
    char err[GS_ERR_SIZE];
    gsmooth_inputs *list = gsmooth_inputs_create();
    if (!list) {
        gs_report_error("out of memory for the list of inputs");
        return GS_ERR_NOMEM;
    }
    gs_status rc = gather_inputs(o, list, err, sizeof err);
    if (rc != GS_OK) {
        gs_report_error(err);
        gsmooth_inputs_destroy(list);
        return rc;
    }
    gsmooth_batch_options bo;
    gsmooth_batch_options_init(&bo);
    bo.file = file_options_of(o);
    bo.out_dir = o->out_dir;
    bo.jobs = o->jobs;
    bo.shard_index = o->shard.index, bo.shard_count = o->shard.count;
    bo.skip_existing = o->skip_existing;
    bo.finished = on_finished;
    bo.progress = isatty(STDERR_FILENO) && (o->progress || !o->quiet) ? gs_report_progress : NULL;
    bo.user = sink;
    gsmooth_batch_result r = {.struct_size = sizeof r};
    rc = (gs_status)gsmooth_batch(ctx, &bo, list, &r, err, sizeof err);
    gs_report_end_progress();
    gsmooth_inputs_destroy(list);
    if (rc != GS_OK && !r.failed) { /* refused before any file: the cause is the whole story */
        gs_report_error(err);
        return rc;
    }
    /* Each failure was reported with its own cause; the summary counts them. */
    if (!o->quiet || r.failed) gs_report_batch_summary(&r);
    return rc;
}

static gs_status run_single(gsmooth_context *ctx, const gs_options *o, outcome_sink *sink)
{
    gsmooth_file_outcome out = {.struct_size = sizeof out, .input = o->inputs[0], .output = o->output,
                                .status = GSMOOTH_FILE_OK, .result = {.struct_size = sizeof out.result}};
    if (o->skip_existing && strcmp(o->output, "-") != 0 && gs_output_exists(o->output)) {
        out.status = GSMOOTH_FILE_SKIPPED;
        if (!o->quiet) gs_report_note(NULL, o->output, "exists: skipped (--skip-existing)");
        on_finished(sink, &out);
        return GS_OK;
    }
    /* Deflate on as many threads as the kernel; without --threads, the encoder's default
     * (GSMOOTH_PNG_THREADS, else one per core). */
    if (o->threads) gs_png_set_threads(o->threads);
    char err[GS_ERR_SIZE] = "";
    const gsmooth_file_options fo = file_options_of(o);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gs_status rc = (gs_status)gsmooth_file(ctx, &fo, o->inputs[0], o->output, &out.result, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out.ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    if (rc != GS_OK) {
        if (!err[0]) snprintf(err, sizeof err, "%s", gs_status_str(rc));
        out.status = GSMOOTH_FILE_FAILED, out.error = err;
    }
    on_finished(sink, &out);
    return rc;
}

int main(int argc, char **argv)
{
    gs_options o;
    char err[GS_ERR_SIZE];
    gs_status rc = gs_options_parse(argc, argv, &o, err, sizeof err);
    if (rc != GS_OK) {
        gs_report_error(err);
        return gs_status_exit_code(rc);
    }
    if (o.action == GS_ACTION_HELP) {
        gs_options_print_help(stdout);
        return gs_status_exit_code(GS_OK);
    }
    if (o.action == GS_ACTION_VERSION) {
        printf("gsmooth %s (plugin ABI %d.%d)\n", GS_VERSION, GS_PLUGIN_ABI_MAJOR,
               GS_PLUGIN_ABI_MINOR);
        return gs_status_exit_code(GS_OK);
    }
    gs_temp_install_signal_cleanup(); /* an interrupted run leaves no temporary file */
    /* A reader of standard output that goes away (`gsmooth in.png - | head -c 100`): the
     * write fails with EPIPE and gsmooth says so in one line and exits 1, instead of
     * dying silently of SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    if (o.png_level >= 0) gs_png_set_level(o.png_level, NULL, 0); /* validated by the parser */

    gsmooth_context *ctx = NULL;
    rc = open_context(&o, &ctx);
    if (rc != GS_OK) return gs_status_exit_code(rc);
    if (o.action == GS_ACTION_LIST) {
        gs_report_backends(ctx, o.verbose);
        gsmooth_context_destroy(ctx);
        return gs_status_exit_code(rc);
    }
    gs_manifest manifest;
    outcome_sink sink = {&o, NULL, 0};
    if (o.manifest) {
        rc = gs_manifest_open(&manifest, o.manifest, err, sizeof err);
        if (rc != GS_OK) {
            gs_report_error(err);
            gsmooth_context_destroy(ctx);
            return gs_status_exit_code(rc);
        }
        sink.manifest = &manifest;
    }
    rc = o.out_dir ? run_batch(ctx, &o, &sink) : run_single(ctx, &o, &sink);
    if (sink.manifest && gs_manifest_close(sink.manifest, err, sizeof err) != GS_OK) {
        if (!sink.manifest_failed++) gs_report_error(err);
    }
    if (rc == GS_OK && sink.manifest_failed) rc = GS_ERR_IO; /* the record is part of the job */
    gsmooth_context_destroy(ctx);
    return gs_status_exit_code(rc);
}
