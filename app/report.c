/* report.c: what the command prints: one lock keeps lines whole when batch workers report at once, and a progress line is cleared before any other line. */
#include "report.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Width of the progress bar, in characters. */
#define PROGRESS_BAR_WIDTH 24

/* Batch workers print too: one lock keeps lines whole and guards progress_shown. */
static pthread_mutex_t stderr_lock = PTHREAD_MUTEX_INITIALIZER;
static int progress_shown; /* a progress line is on screen (batch, terminal) */

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

/* "[####      ] 12/64 files  45.3 MB/s  ETA 0:07" on one terminal line. */
void gs_report_progress(void *user, unsigned done, unsigned total, uint64_t bytes, double elapsed,
                        double eta)
{
    (void)user;
    char bar[PROGRESS_BAR_WIDTH + 1];
    unsigned filled = total ? done * PROGRESS_BAR_WIDTH / total : PROGRESS_BAR_WIDTH;
    for (unsigned i = 0; i < PROGRESS_BAR_WIDTH; ++i) bar[i] = i < filled ? '#' : ' ';
    bar[PROGRESS_BAR_WIDTH] = '\0';
    double mbs = elapsed > 0 ? bytes / elapsed / 1e6 : 0;
    unsigned e = (unsigned)(eta + 0.5);
    pthread_mutex_lock(&stderr_lock);
    fprintf(stderr, "\r[%s] %u/%u files  %.1f MB/s  ETA %u:%02u\033[K", bar, done, total, mbs,
            e / 60, e % 60);
    progress_shown = 1;
    pthread_mutex_unlock(&stderr_lock);
}

void gs_report_end_progress(void)
{
    pthread_mutex_lock(&stderr_lock);
    end_progress_line();
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
