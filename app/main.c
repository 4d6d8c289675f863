/* main.c: the gsmooth command: parses options, then lists backends, runs one file or runs a batch; the only place that exits, with the code gs_status_exit_code gives. */
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend_session.h"
#include "batch.h"
#include "options.h"
#include "pipeline.h"
#include "png_tuning.h"
#include "report.h"
#include "status.h"
#include "temp_files.h"

static gs_status run_batch(gs_session *session, const gs_options *o)
{
    struct stat sb;
    if (stat(o->out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        char err[GS_ERR_SIZE];
        gs_status rc = gs_fail(err, sizeof err, GS_ERR_IO, "%s: output directory does not exist",
                               o->out_dir);
        gs_report_error(err);
        return rc;
    }
    int show_progress = isatty(STDERR_FILENO) && (o->progress || !o->quiet);
    gs_batch_events events = {gs_report_error, gs_report_times,
                              show_progress ? gs_report_progress : NULL,
                              o->quiet ? NULL : gs_report_note};
    gs_batch_request request = {o->work, o->inputs, (unsigned)o->input_count, o->out_dir, o->jobs,
                                o->threads, o->time};
    gs_batch_result r;
    gs_batch_run(session, &request, &events, &r);
    gs_report_end_progress();
    if (!o->quiet || r.failed) gs_report_batch_summary(&r);
    /* Each failure was reported with its own cause; the run as a whole failed at run time. */
    return r.failed ? GS_ERR_IO : GS_OK;
}

static gs_status run_single(gs_session *session, const gs_options *o)
{
    /* Deflate on as many threads as the kernel; without --threads, the encoder's default
     * (GSMOOTH_PNG_THREADS, else one per core). */
    if (o->threads) gs_png_set_threads(o->threads);
    gs_worker w;
    gs_worker_init(&w, session, o->threads);
    gs_job job = {o->work, gs_worker_select, &w, o->quiet ? NULL : gs_report_note};
    gs_phase_times t;
    char err[GS_ERR_SIZE];
    gs_status rc = gs_pipeline_run(&job, o->inputs[0], o->output, &t, err, sizeof err);
    if (rc != GS_OK) gs_report_error(err[0] ? err : gs_status_str(rc));
    else if (o->time) gs_report_times(o->inputs[0], &t);
    gs_worker_release(&w);
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

    rc = gs_session_open(&session, o.backend, o.plugin_dir, o.quiet ? NULL : gs_report_message,
                         err, sizeof err);
    if (rc != GS_OK) {
        gs_report_error(err);
        return gs_status_exit_code(rc);
    }
    if (o.action == GS_ACTION_LIST) gs_report_backends(&session.list, o.verbose);
    else rc = o.out_dir ? run_batch(&session, &o) : run_single(&session, &o);
    gs_session_close(&session);
    return gs_status_exit_code(rc);
}
