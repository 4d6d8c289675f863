/* main.c: the gsmooth command: parses options, lists backends, runs one file or a batch, and is the only place that prints or exits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend_session.h"
#include "batch.h"
#include "options.h"
#include "pipeline.h"
#include "png_tuning.h"
#include "status.h"
#include "temp_files.h"

/* Batch workers print too: one lock keeps lines whole and guards progress_shown. */
static pthread_mutex_t stderr_lock = PTHREAD_MUTEX_INITIALIZER;
static int progress_shown; /* a progress line is on screen (batch, terminal) */

/* Call with stderr_lock held. */
static void end_progress_line(void)
{
    if (progress_shown) fputs("\r\033[K", stderr);
    progress_shown = 0;
}

static void print_line(const char *prefix, const char *file, const char *message)
{
    pthread_mutex_lock(&stderr_lock);
    end_progress_line();
    if (file) fprintf(stderr, "gsmooth: %s%s: %s\n", prefix, file, message);
    else fprintf(stderr, "gsmooth: %s%s\n", prefix, message);
    pthread_mutex_unlock(&stderr_lock);
}

static void print_note(const char *file, const char *message) { print_line("note: ", file, message); }
static void print_message(const char *line) { print_line("note: ", NULL, line); }
static void print_error(const char *message) { print_line("", NULL, message); }

static void print_times(const char *file, const gs_phase_times *t)
{
    char line[512];
    snprintf(line, sizeof line,
             "decode %.2f ms, upload %.2f ms, kernel %.2f ms, download %.2f ms, encode %.2f ms, "
             "total %.2f ms",
             t->decode / 1e6, t->upload / 1e6, t->kernel / 1e6, t->download / 1e6,
             t->encode / 1e6, t->total / 1e6);
    print_line("time: ", file, line);
}

/* "[####      ] 12/64 files  45.3 MB/s  ETA 0:07" on one terminal line. */
static void print_progress(unsigned done, unsigned total, uint64_t bytes, double elapsed,
                           double eta)
{
    enum { BAR = 24 };
    char bar[BAR + 1];
    unsigned filled = total ? done * BAR / total : BAR;
    for (unsigned i = 0; i < BAR; ++i) bar[i] = i < filled ? '#' : ' ';
    bar[BAR] = '\0';
    double mbs = elapsed > 0 ? bytes / elapsed / 1e6 : 0;
    unsigned e = (unsigned)(eta + 0.5);
    pthread_mutex_lock(&stderr_lock);
    fprintf(stderr, "\r[%s] %u/%u files  %.1f MB/s  ETA %u:%02u\033[K", bar, done, total, mbs,
            e / 60, e % 60);
    progress_shown = 1;
    pthread_mutex_unlock(&stderr_lock);
}

static void list_backends(gs_backend_list *list, int verbose)
{
    if (list->count == 0) {
        printf("no backends found\n");
        return;
    }
    for (size_t i = 0; i < list->count; ++i) {
        gs_backend *b = &list->items[i];
        gs_backend_probe(b);
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

static int run_batch(gs_session *session, const gs_options *o)
{
    struct stat sb;
    if (stat(o->out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "gsmooth: %s: output directory does not exist\n", o->out_dir);
        return 1;
    }
    int show_progress = isatty(STDERR_FILENO) && (o->progress || !o->quiet);
    gs_batch_events events = {print_error, print_times, show_progress ? print_progress : NULL,
                              o->quiet ? NULL : print_note};
    gs_batch_result r;
    gs_batch_run(session, &events, &r);
    pthread_mutex_lock(&stderr_lock);
    end_progress_line();
    pthread_mutex_unlock(&stderr_lock);
    if (!o->quiet || r.failed)
        fprintf(stderr, "gsmooth: %u file%s, %u done, %u failed, %.2f s, %.1f files/s\n", r.files,
                r.files == 1 ? "" : "s", r.done, r.failed, r.elapsed_s,
                r.elapsed_s > 0 ? r.done / r.elapsed_s : 0.0);
    return r.failed ? 1 : 0;
}

static int run_single(gs_session *session, const gs_options *o)
{
    /* Deflate on as many threads as the kernel; without --threads, the encoder's default
     * (GSMOOTH_PNG_THREADS, else one per core). */
    if (o->threads) gs_png_set_threads(o->threads);
    gs_worker w;
    gs_worker_init(&w, session, o->threads);
    gs_job job = {o, gs_worker_select, &w, o->quiet ? NULL : print_note};
    gs_phase_times t;
    char err[1024];
    gs_status st = gs_pipeline_run(&job, o->inputs[0], o->output, &t, err, sizeof err);
    if (st != GS_OK) print_error(err[0] ? err : gs_status_str(st));
    else if (o->time) print_times(o->inputs[0], &t);
    gs_worker_release(&w);
    return gs_status_exit_code(st);
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
    if (o.png_level >= 0) gs_png_set_level(o.png_level, NULL, 0); /* validated by the parser */

    gs_session session;
    st = gs_session_open(&session, &o, print_message, err, sizeof err);
    if (st != GS_OK) {
        print_error(err);
        return gs_status_exit_code(st);
    }
    int code;
    if (o.action == GS_ACTION_LIST) {
        list_backends(&session.list, o.verbose);
        code = 0;
    } else {
        code = o.out_dir ? run_batch(&session, &o) : run_single(&session, &o);
    }
    gs_session_close(&session);
    return code;
}
