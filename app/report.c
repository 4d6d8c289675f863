/* report.c: what the command prints: one lock keeps lines whole when batch workers report at once, and a progress line is cleared before any other line. */
#include "report.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Width of the progress bar, in characters. */
#define PROGRESS_BAR_WIDTH 24

/* Longest duration a progress line writes, in seconds (a rate near zero gives an ETA
 * beyond any real job). */
#define MAX_SHOWN_SECONDS 1e8

/* Batch workers print too: one lock keeps lines whole and guards progress_shown and the
 * progress state. */
static pthread_mutex_t stderr_lock = PTHREAD_MUTEX_INITIALIZER;
static int progress_shown; /* a progress bar is on screen (terminal) */

/* How progress shows (gs_report_progress_setup), and the batch's last state for its final
 * line off a terminal. */
static struct {
    int terminal;        /* stderr is a terminal: a bar redrawn in place */
    int asked;           /* --progress was given */
    double seconds;      /* least time between two plain lines */
    double next_line_s;  /* elapsed seconds from which the next plain line is due */
    unsigned failed;     /* batch files failed so far */
    int batch_seen;      /* a batch progress call came: the end repeats its state */
    unsigned done, total; /* its files finished, of total */
    uint64_t bytes;      /* its input bytes done */
    double elapsed;      /* its seconds so far */
} progress = {0, 0, GS_PROGRESS_SECONDS, GS_PROGRESS_SECONDS, 0, 0, 0, 0, 0, 0};

/* Call with stderr_lock held. */
static void end_progress_line(void)
{
    if (progress_shown) fputs("\r\033[K", stderr);
    progress_shown = 0;
}

/* Text with its control bytes shown as \n, \t or \xNN: a file name from a NUL-separated
 * list may hold a newline, and every message must stay one line. */
static void put_visible(const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
        if (*c == '\n') fputs("\\n", stderr);
        else if (*c == '\t') fputs("\\t", stderr);
        else if (*c < 0x20 || *c == 0x7f) fprintf(stderr, "\\x%02x", *c);
        else fputc(*c, stderr);
    }
}

static void print_line(const char *prefix, const char *file, const char *message)
{
    pthread_mutex_lock(&stderr_lock);
    end_progress_line();
    fprintf(stderr, "gsmooth: %s", prefix);
    if (file) {
        put_visible(file);
        fputs(": ", stderr);
    }
    put_visible(message);
    fputc('\n', stderr);
    pthread_mutex_unlock(&stderr_lock);
}

gsmooth_status gs_app_fail(char *err, size_t err_size, gsmooth_status status, const char *fmt, ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

int gs_exit_code(gsmooth_status status) { return status == GSMOOTH_OK ? 0 : status == GSMOOTH_ERR_USAGE ? 2 : 1; }

void gs_report_error(const char *message) { print_line("", NULL, message); }
void gs_report_note(void *user, const char *file, const char *message)
{
    (void)user;
    print_line("note: ", file, message);
}
void gs_report_message(void *user, const char *line)
{
    (void)user;
    print_line("note: ", NULL, line);
}

void gs_report_times(const char *file, const gsmooth_file_result *t)
{
    char line[GSMOOTH_ERR_SIZE];
    snprintf(line, sizeof line,
             "decode %.2f ms, upload %.2f ms, kernel %.2f ms, download %.2f ms, encode %.2f ms, "
             "total %.2f ms",
             t->decode_ns / 1e6, t->upload_ns / 1e6, t->kernel_ns / 1e6, t->download_ns / 1e6,
             t->encode_ns / 1e6, t->total_ns / 1e6);
    print_line("time: ", file, line);
}

int gs_report_progress_setup(double seconds, int asked, int quiet)
{
    pthread_mutex_lock(&stderr_lock);
    progress.terminal = isatty(STDERR_FILENO);
    progress.asked = asked;
    progress.seconds = seconds > 0 ? seconds : GS_PROGRESS_SECONDS;
    progress.next_line_s = progress.seconds;
    const int show = asked || (progress.terminal && !quiet);
    pthread_mutex_unlock(&stderr_lock);
    return show;
}

void gs_report_file_failed(void)
{
    pthread_mutex_lock(&stderr_lock);
    progress.failed++;
    pthread_mutex_unlock(&stderr_lock);
}

/* Call with stderr_lock held: whether a plain line is due `elapsed` seconds into the run;
 * if so the next one is due an interval later, so lines are never closer than that. */
static int line_due(double elapsed)
{
    if (elapsed < progress.next_line_s) return 0;
    progress.next_line_s = elapsed + progress.seconds;
    return 1;
}

/* Seconds as M:SS, or H:MM:SS from an hour on. */
static void format_duration(char *buf, size_t size, double seconds)
{
    unsigned long s = seconds > 0 ? (unsigned long)((seconds < MAX_SHOWN_SECONDS ? seconds : MAX_SHOWN_SECONDS) + 0.5) : 0;
    if (s >= 3600) snprintf(buf, size, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
    else snprintf(buf, size, "%lu:%02lu", s / 60, s % 60);
}

/* The bar's text for done of total: '#' for the part done. */
static void fill_bar(char bar[PROGRESS_BAR_WIDTH + 1], uint64_t done, uint64_t total)
{
    uint64_t filled = total ? done * PROGRESS_BAR_WIDTH / total : PROGRESS_BAR_WIDTH;
    for (unsigned i = 0; i < PROGRESS_BAR_WIDTH; ++i) bar[i] = i < filled ? '#' : ' ';
    bar[PROGRESS_BAR_WIDTH] = '\0';
}

/* Call with stderr_lock held: the batch's stored state as one plain line. */
static void put_batch_line(const char *eta)
{
    const double e = progress.elapsed;
    fprintf(stderr, "gsmooth: progress: %u/%u files, %u failed, %.1f files/s, %.1f MB/s, ETA %s\n",
            progress.done, progress.total, progress.failed, e > 0 ? progress.done / e : 0.0,
            e > 0 ? progress.bytes / e / 1e6 : 0.0, eta);
}

/* On a terminal "[####      ] 12/64 files  45.3 MB/s  ETA 0:07", redrawn in place. */
void gs_report_progress(void *user, unsigned done, unsigned total, uint64_t bytes, double elapsed,
                        double eta)
{
    (void)user;
    char bar[PROGRESS_BAR_WIDTH + 1], eta_text[32];
    fill_bar(bar, done, total);
    format_duration(eta_text, sizeof eta_text, eta);
    pthread_mutex_lock(&stderr_lock);
    progress.batch_seen = 1;
    progress.done = done, progress.total = total, progress.bytes = bytes, progress.elapsed = elapsed;
    if (progress.terminal) {
        fprintf(stderr, "\r[%s] %u/%u files  %.1f MB/s  ETA %s\033[K", bar, done, total,
                elapsed > 0 ? bytes / elapsed / 1e6 : 0.0, eta_text);
        progress_shown = 1;
    } else if (done < total && line_due(elapsed)) { /* the end prints the last state */
        put_batch_line(eta_text);
    }
    pthread_mutex_unlock(&stderr_lock);
}

void gs_report_rows(void *user, uint64_t rows_done, uint64_t rows_total, double elapsed_s)
{
    const char *file = user;
    char bar[PROGRESS_BAR_WIDTH + 1], eta_text[32];
    fill_bar(bar, rows_done, rows_total);
    format_duration(eta_text, sizeof eta_text,
                    rows_done ? elapsed_s * (double)(rows_total - rows_done) / (double)rows_done : 0);
    const unsigned percent = rows_total ? (unsigned)(rows_done * 100 / rows_total) : 100;
    const unsigned long long done = rows_done, total = rows_total;
    pthread_mutex_lock(&stderr_lock);
    if (progress.terminal && (progress.asked || elapsed_s >= GS_ROWS_BAR_AFTER_SECONDS)) {
        fprintf(stderr, "\r[%s] %3u%%  ", bar, percent);
        put_visible(file);
        fprintf(stderr, "  %llu/%llu rows  ETA %s\033[K", done, total, eta_text);
        progress_shown = 1;
    } else if (!progress.terminal && (rows_done == rows_total || line_due(elapsed_s))) {
        fputs("gsmooth: progress: ", stderr);
        put_visible(file);
        fprintf(stderr, ": %llu/%llu rows (%u%%), ETA %s\n", done, total, percent, eta_text);
    }
    pthread_mutex_unlock(&stderr_lock);
}

void gs_report_end_progress(void)
{
    pthread_mutex_lock(&stderr_lock);
    end_progress_line();
    if (!progress.terminal && progress.batch_seen) put_batch_line("0:00");
    progress.batch_seen = 0;
    pthread_mutex_unlock(&stderr_lock);
}

void gs_report_batch_summary(const gsmooth_batch_result *r)
{
    char line[GSMOOTH_ERR_SIZE];
    snprintf(line, sizeof line, "%u file%s, %u done, %u failed, %u skipped, %.2f s, %.1f files/s",
             r->files, r->files == 1 ? "" : "s", r->done, r->failed, r->skipped, r->elapsed_s,
             r->elapsed_s > 0 ? r->done / r->elapsed_s : 0.0);
    print_line("", NULL, line);
}

void gs_report_backends(gsmooth_context *ctx, int verbose)
{
    const size_t count = gsmooth_context_backend_count(ctx);
    if (count == 0) {
        printf("no backends found\n");
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        gsmooth_backend_info b = {.struct_size = sizeof b};
        char err[GSMOOTH_ERR_SIZE];
        if (gsmooth_context_backend(ctx, i, &b, err, sizeof err) != GSMOOTH_OK) continue;
        if (b.load_error) {
            if (verbose) printf("(failed)  %s\n  error: %s\n", b.path, b.load_error);
            continue;
        }
        printf("%-8s %-8s %-11s %s\n", b.name, b.version, b.available ? "available" : "unavailable",
               b.description);
        if (!verbose) continue;
        printf("  path:   %s\n  ABI:    %u.%u\n  ops:    %s\n  depths: %s%s\n  probe:  %s\n", b.path,
               b.abi_major, b.abi_minor, b.operations, b.takes_8_bit ? "8 " : "",
               b.takes_16_bit ? "16" : "", b.probe);
        if (b.devices) printf("  devices: %u\n", b.devices);
    }
}
