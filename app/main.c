/* main.c: the gsmooth command: a client of gsmooth.h alone, and the only place that exits. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "completion.h"
#include "gsmooth/gsmooth.h"
#include "held_notes.h"
#include "manifest.h"
#include "options.h"
#include "report.h"

/* What main does with each finished input: errors and times on stderr, the manifest. */
typedef struct outcome_sink {
    const gs_options *options;
    gs_manifest *manifest;     /* NULL without --manifest */
    int manifest_failed;       /* a record could not be written (reported once) */
} outcome_sink;

static void on_finished(void *ctx, const gsmooth_file_outcome *o)
{
    outcome_sink *sink = ctx;
    gs_held_notes_release(o->input, o->status != GSMOOTH_FILE_FAILED);
    if (o->output) gs_held_notes_release(o->output, o->status != GSMOOTH_FILE_FAILED);
    if (o->status == GSMOOTH_FILE_FAILED) gs_report_error(o->error), gs_report_file_failed();
    if (o->status == GSMOOTH_FILE_OK && sink->options->time) gs_report_times(o->input, o->result);
    char err[GSMOOTH_ERR_SIZE];
    if (sink->manifest && gs_manifest_write(sink->manifest, o, err, sizeof err) != GSMOOTH_OK &&
        !sink->manifest_failed++)
        gs_report_error(err);
}

/* libgsmooth's notes: about a file, held until it ends (a file that fails prints only its
 * error), or about the run (a backend fallback), printed at once. */
static void library_note(void *user, const char *file, const char *message)
{
    if (file) gs_held_note(file, message);
    else gs_report_message(user, message);
}

/* The library context for the options: backend, plugins, threads, devices, notes. A bad
 * device list is the library's to find; the message says which setting held it. */
static gsmooth_status open_context(const gs_options *o, gsmooth_context **ctx)
{
    char err[GSMOOTH_ERR_SIZE];
    gsmooth_context_options co = o->context;
    if (o->action == GS_ACTION_LIST) co.devices = NULL; /* the list shows every device */
    co.note = o->quiet ? NULL : library_note;
    gsmooth_status rc = gsmooth_context_create(&co, ctx, err, sizeof err);
    if (rc == GSMOOTH_ERR_USAGE && co.devices && strncmp(err, "devices", 7) == 0) {
        char line[2 * GSMOOTH_ERR_SIZE];
        if (strcmp(o->devices_from, "--devices") == 0) snprintf(line, sizeof line, "--devices: %s", err);
        else snprintf(line, sizeof line, "%s=%s: %s", o->devices_from, co.devices, err);
        gs_report_error(line);
    } else if (rc != GSMOOTH_OK) {
        gs_report_error(err);
    }
    return rc;
}

/* Positional inputs, then each list in command-line order. */
static gsmooth_status gather_inputs(const gs_options *o, gsmooth_inputs *list, char *err, size_t err_size)
{
    for (int i = 0; i < o->input_count; ++i) {
        gsmooth_status rc = gsmooth_inputs_add(list, o->inputs[i], err, err_size);
        if (rc != GSMOOTH_OK) return rc;
    }
    for (unsigned i = 0; i < o->list_count; ++i) {
        gsmooth_status rc = gsmooth_inputs_read(list, o->lists[i].path, o->lists[i].separator,
                                                      err, err_size);
        if (rc != GSMOOTH_OK) return rc;
    }
    return GSMOOTH_OK;
}

static gsmooth_status run_batch(gsmooth_context *ctx, const gs_options *o, outcome_sink *sink)
{
    char err[GSMOOTH_ERR_SIZE];
    gsmooth_inputs *list = gsmooth_inputs_create();
    if (!list) {
        gs_report_error("out of memory for the list of inputs");
        return GSMOOTH_ERR_NOMEM;
    }
    gsmooth_status rc = gather_inputs(o, list, err, sizeof err);
    if (rc != GSMOOTH_OK) {
        gs_report_error(err);
        gsmooth_inputs_destroy(list);
        return rc;
    }
    gsmooth_batch_options bo;
    gsmooth_batch_options_init(&bo);
    bo.file = &o->file;
    bo.out_dir = o->out_dir;
    bo.relative_to = o->relative_to;
    bo.jobs = o->jobs;
    bo.shard_index = o->shard_index, bo.shard_count = o->shard_count;
    bo.finished = on_finished;
    bo.progress = gs_report_progress_setup(o->progress_seconds, o->progress, o->quiet) ? gs_report_progress : NULL;
    bo.user = sink;
    gsmooth_batch_result r = {.struct_size = sizeof r};
    rc = gsmooth_batch(ctx, &bo, list, &r, err, sizeof err);
    gs_report_end_progress();
    gsmooth_inputs_destroy(list);
    if (rc != GSMOOTH_OK && !r.failed) { /* refused before any file: the cause is the whole story */
        gs_report_error(err);
        return rc;
    }
    /* Each failure was reported with its own cause; the summary counts them. */
    if (!o->quiet || r.failed) gs_report_batch_summary(&r);
    return rc;
}

static gsmooth_status run_single(gsmooth_context *ctx, const gs_options *o, outcome_sink *sink)
{
    gsmooth_file_result result = {.struct_size = sizeof result};
    gsmooth_file_outcome out = {.struct_size = sizeof out, .input = o->inputs[0], .output = o->output,
                                .status = GSMOOTH_FILE_OK, .result = &result};
    char err[GSMOOTH_ERR_SIZE] = "";
    gsmooth_file_options fo = o->file;
    if (gs_report_progress_setup(o->progress_seconds, o->progress, o->quiet))
        fo.progress = gs_report_rows, fo.progress_user = o->inputs[0];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gsmooth_status rc = gsmooth_file(ctx, &fo, o->inputs[0], o->output, &result, err, sizeof err);
    gs_report_end_progress();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out.ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    if (rc == GSMOOTH_OK && result.skipped) {
        out.status = GSMOOTH_FILE_SKIPPED;
        if (!o->quiet) gs_report_note(NULL, o->output, "exists: skipped (--skip-existing)");
    }
    if (rc != GSMOOTH_OK) {
        if (!err[0]) snprintf(err, sizeof err, "%s", gsmooth_status_name(rc));
        out.status = GSMOOTH_FILE_FAILED, out.error = err;
    }
    on_finished(sink, &out);
    return rc;
}

int main(int argc, char **argv)
{
    gs_options o;
    char err[GSMOOTH_ERR_SIZE];
    gsmooth_status rc = gs_options_parse(argc, argv, &o, err, sizeof err);
    if (rc != GSMOOTH_OK) {
        gs_report_error(err);
        return gs_exit_code(rc);
    }
    if (o.action == GS_ACTION_HELP) {
        gs_options_print_help(stdout);
        return gs_exit_code(GSMOOTH_OK);
    }
    if (o.action == GS_ACTION_COMPLETION) {
        rc = gs_completion_write(stdout, o.completion, err, sizeof err);
        if (rc != GSMOOTH_OK) gs_report_error(err);
        return gs_exit_code(rc);
    }
    if (o.action == GS_ACTION_VERSION) {
        uint32_t abi_major, abi_minor;
        gsmooth_plugin_abi_version(&abi_major, &abi_minor);
        printf("gsmooth %s (plugin ABI %u.%u)\n", gsmooth_version(), abi_major, abi_minor);
        return gs_exit_code(GSMOOTH_OK);
    }
    gsmooth_remove_temporaries_on_signals(); /* an interrupted run leaves no temporary file */
    /* A reader of standard output that goes away (`gsmooth in.png - | head -c 100`): the
     * write fails with EPIPE and gsmooth says so in one line and exits 1, instead of
     * dying silently of SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);

    /* Image bytes on a terminal are garbage to the reader and may upset it (as gzip
     * refuses): standard output must be a pipe or a file. */
    if (o.action == GS_ACTION_RUN && !o.out_dir && strcmp(o.output, "-") == 0 && isatty(STDOUT_FILENO)) {
        gs_report_error("refusing to write image data to a terminal: redirect standard output, or "
                        "name an output file");
        return gs_exit_code(GSMOOTH_ERR_USAGE);
    }
    if (o.sigma && (!o.quiet || o.time)) {
        char line[128];
        snprintf(line, sizeof line, "--sigma %s is %u passes (K = round(3 sigma^2 / 2))", o.sigma,
                 o.file.iters);
        gs_report_message(NULL, line);
    }
    gsmooth_context *ctx = NULL;
    rc = open_context(&o, &ctx);
    if (rc != GSMOOTH_OK) return gs_exit_code(rc);
    if (o.action == GS_ACTION_LIST) {
        gs_report_backends(ctx, o.verbose);
        gsmooth_context_destroy(ctx);
        return gs_exit_code(rc);
    }
    gs_manifest manifest;
    outcome_sink sink = {&o, NULL, 0};
    if (o.manifest) {
        rc = gs_manifest_open(&manifest, o.manifest, err, sizeof err);
        if (rc != GSMOOTH_OK) {
            gs_report_error(err);
            gsmooth_context_destroy(ctx);
            return gs_exit_code(rc);
        }
        sink.manifest = &manifest;
    }
    rc = o.out_dir ? run_batch(ctx, &o, &sink) : run_single(ctx, &o, &sink);
    gs_held_notes_release(NULL, 1); /* a note under another name than its file's: not lost */
    if (sink.manifest && gs_manifest_close(sink.manifest, err, sizeof err) != GSMOOTH_OK) {
        if (!sink.manifest_failed++) gs_report_error(err);
    }
    if (rc == GSMOOTH_OK && sink.manifest_failed) rc = GSMOOTH_ERR_IO; /* the record is part of the job */
    gsmooth_context_destroy(ctx);
    return gs_exit_code(rc);
}
