/* main.c: the gsmooth command: parses options, then lists backends, runs one file (through libgsmooth's API) or runs a batch; the only place that exits, with the code gs_status_exit_code gives. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend_session.h"
#include "batch.h"
#include "gsmooth/gsmooth.h"
#include "image_io.h"
#include "manifest.h"
#include "options.h"
#include "pipeline.h"
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

static void on_finished(void *ctx, const gs_file_outcome *o)
{
    outcome_sink *sink = ctx;
    if (o->status == GS_FILE_FAILED) gs_report_error(o->error);
    if (o->status == GS_FILE_OK && sink->options->time && o->times) gs_report_times(o->input, o->times);
    char err[GS_ERR_SIZE];
    if (sink->manifest && gs_manifest_write(sink->manifest, o, err, sizeof err) != GS_OK &&
        !sink->manifest_failed++)
        gs_report_error(err);
}

/* Positional inputs, then each list in command-line order. */
static gs_status gather_inputs(const gs_options *o, gs_input_list *list, char *err, size_t err_size)
{
    for (int i = 0; i < o->input_count; ++i) {
        gs_status rc = gs_input_list_add(list, o->inputs[i], strlen(o->inputs[i]), err, err_size);
        if (rc != GS_OK) return rc;
    }
    for (unsigned i = 0; i < o->list_count; ++i) {
        gs_status rc = gs_input_list_read(list, o->lists[i].path, o->lists[i].separator, err, err_size);
        if (rc != GS_OK) return rc;
    }
    return GS_OK;
}

static gs_status run_batch(gs_session *session, const gs_options *o, outcome_sink *sink)
{
    char err[GS_ERR_SIZE];
    struct stat sb;
    if (stat(o->out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        gs_status rc = gs_fail(err, sizeof err, GS_ERR_IO, "%s: output directory does not exist",
                               o->out_dir);
        gs_report_error(err);
        return rc;
    }
    gs_input_list list;
    gs_input_list_init(&list);
    gs_status rc = gather_inputs(o, &list, err, sizeof err);
    if (rc != GS_OK) {
        gs_report_error(err);
        gs_input_list_free(&list);
        return rc;
    }
    int show_progress = isatty(STDERR_FILENO) && (o->progress || !o->quiet);
    gs_batch_events events = {on_finished, show_progress ? gs_report_progress : NULL,
                              o->quiet ? NULL : gs_report_note, sink};
    gs_batch_request request = {o->work, &list, o->shard, o->out_dir, o->jobs, o->threads,
                                o->skip_existing};
    gs_batch_result r;
    gs_batch_run(session, &request, &events, &r);
    gs_report_end_progress();
    if (!o->quiet || r.failed) gs_report_batch_summary(&r);
    gs_input_list_free(&list);
    /* Each failure was reported with its own cause; the run as a whole failed at run time. */
    return r.failed ? GS_ERR_IO : GS_OK;
}

/* libgsmooth's notes: about a file, or about the run (a backend fallback). */
static void library_note(void *user, const char *file, const char *message)
{
    if (file) gs_report_note(user, file, message);
    else gs_report_message(user, message);
}

/* One file through libgsmooth's public API (gsmooth.h), as any program would. */
static gs_status run_single(const gs_options *o, outcome_sink *sink)
{
    gs_file_outcome out = {.input = o->inputs[0], .output = o->output, .status = GS_FILE_OK};
    if (o->skip_existing && strcmp(o->output, "-") != 0 && gs_output_exists(o->output)) {
        out.status = GS_FILE_SKIPPED;
        if (!o->quiet) gs_report_note(NULL, o->output, "exists: skipped (--skip-existing)");
        on_finished(sink, &out);
        return GS_OK;
    }
    /* Deflate on as many threads as the kernel; without --threads, the encoder's default
     * (GSMOOTH_PNG_THREADS, else one per core). */
    if (o->threads) gs_png_set_threads(o->threads);
    char err[GS_ERR_SIZE] = "";
    gsmooth_context_options co;
    gsmooth_context_options_init(&co);
    co.backend = o->backend;
    co.plugin_dir = o->plugin_dir;
    co.threads = o->threads;
    co.devices = o->devices_text;
    co.note = o->quiet ? NULL : library_note;
    gsmooth_context *ctx = NULL;
    gs_status rc = (gs_status)gsmooth_context_create(&co, &ctx, err, sizeof err);
    if (rc != GS_OK) {
        gs_report_error(err);
        return rc;
    }
    gsmooth_file_options fo;
    gsmooth_file_options_init(&fo);
    fo.kind = o->work.mode == GS_MODE_INTEGRAL_ROWS ? GSMOOTH_WORK_INTEGRAL_ROWS
              : o->work.mode == GS_MODE_INTEGRAL_2D ? GSMOOTH_WORK_INTEGRAL_2D
                                                    : GSMOOTH_WORK_SMOOTH;
    fo.iters = o->work.iters;
    fo.axes = o->work.axes;
    fo.depth = (uint32_t)o->work.depth;
    fo.max_pixels = o->work.max_pixels;
    gsmooth_file_result fr;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = (gs_status)gsmooth_file(ctx, &fo, o->inputs[0], o->output, &fr, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out.facts = (gs_image_facts){fr.width, fr.height, fr.bits, fr.backend};
    gs_phase_times t = {fr.decode_ns, fr.upload_ns, fr.kernel_ns, fr.download_ns, fr.encode_ns,
                        fr.total_ns};
    out.ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    if (rc != GS_OK) {
        if (!err[0]) snprintf(err, sizeof err, "%s", gs_status_str(rc));
        out.status = GS_FILE_FAILED, out.error = err;
    } else {
        out.times = &t;
    }
    on_finished(sink, &out);
    gsmooth_context_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    gs_options o;
    gs_session session;
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

    /* Listing and batches use the plugin host directly; one file goes through libgsmooth. */
    const int own_session = o.action == GS_ACTION_LIST || o.out_dir;
    if (own_session) {
        rc = gs_session_open(&session, o.backend, o.plugin_dir, o.quiet ? NULL : gs_report_message,
                             err, sizeof err);
        if (rc != GS_OK) {
            gs_report_error(err);
            return gs_status_exit_code(rc);
        }
        session.devices = o.devices;
    }
    if (o.action == GS_ACTION_LIST) {
        gs_report_backends(&session.list, o.verbose);
        gs_session_close(&session);
        return gs_status_exit_code(rc);
    }
    gs_manifest manifest;
    outcome_sink sink = {&o, NULL, 0};
    if (o.manifest) {
        rc = gs_manifest_open(&manifest, o.manifest, err, sizeof err);
        if (rc != GS_OK) {
            gs_report_error(err);
            if (own_session) gs_session_close(&session);
            return gs_status_exit_code(rc);
        }
        sink.manifest = &manifest;
    }
    rc = o.out_dir ? run_batch(&session, &o, &sink) : run_single(&o, &sink);
    if (sink.manifest && gs_manifest_close(sink.manifest, err, sizeof err) != GS_OK) {
        if (!sink.manifest_failed++) gs_report_error(err);
    }
    if (rc == GS_OK && sink.manifest_failed) rc = GS_ERR_IO; /* the record is part of the job */
    if (own_session) gs_session_close(&session);
    return gs_status_exit_code(rc);
}
