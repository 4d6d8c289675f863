/* report.h: everything the command prints: errors, notes, timings and progress (a batch's files, one file's rows) on stderr (whole lines, safe from any thread), and the backend list on stdout. */
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "gsmooth/gsmooth.h"

/* Format one line into a caller's error buffer (truncating) and return `status`. */
gsmooth_status gs_app_fail(char *err, size_t err_size, gsmooth_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The exit code for a status: 0 for success, 2 for a usage error, 1 for the others. */
int gs_exit_code(gsmooth_status status);

/* "gsmooth: <message>": one error line. */
void gs_report_error(const char *message);

/* "gsmooth: note: <file>: <message>" (a gs_note_fn). */
void gs_report_note(void *user, const char *file, const char *message);

/* "gsmooth: note: <line>": a note about the run, not one file. */
void gs_report_message(void *user, const char *line);

/* "gsmooth: time: <file>: decode ... total ..." for --time. */
void gs_report_times(const char *file, const gsmooth_file_result *t);

/* Least seconds between two plain progress lines, without --progress=SECONDS: a log of a
 * day's job stays a few thousand lines, and a stalled one shows within the interval. */
#define GS_PROGRESS_SECONDS 10.0
/* On a terminal, without --progress, one file's rows show once it has run this long: a
 * quick file prints nothing. */
#define GS_ROWS_BAR_AFTER_SECONDS 2.0

/* Set how progress shows for this run and say whether to show it at all: asked
 * (--progress), or on a terminal unless quiet. On a terminal a bar is redrawn in place;
 * elsewhere (a log, a pipe) plain lines at least `seconds` apart, and one at the end. */
int gs_report_progress_setup(double seconds, int asked, int quiet);

/* A batch file failed: the plain progress lines count the failures. */
void gs_report_file_failed(void);

/* Batch progress (a gsmooth_batch_options.progress): the bar, or a line when one is due:
 * "gsmooth: progress: 12/64 files, 1 failed, 3.1 files/s, 45.3 MB/s, ETA 0:07". */
void gs_report_progress(void *user, unsigned done, unsigned total, uint64_t bytes, double elapsed,
                        double eta);

/* One file's rows (a gsmooth_file_options.progress; user: the input's name): the bar, or
 * "gsmooth: progress: in.png: 40960/131072 rows (31%), ETA 0:42" when due and at the end. */
void gs_report_rows(void *user, uint64_t rows_done, uint64_t rows_total, double elapsed_s);

/* The end of the progress: the bar cleared so the next line starts clean or, off a
 * terminal, the batch's last state as a final line. */
void gs_report_end_progress(void);

/* "gsmooth: N files, D done, F failed, S s, R files/s". */
void gs_report_batch_summary(const gsmooth_batch_result *r);

/* The --list-backends table on stdout (probing each plugin a context found); verbose adds
 * the details. */
void gs_report_backends(gsmooth_context *ctx, int verbose);

#endif /* GS_REPORT_H */
