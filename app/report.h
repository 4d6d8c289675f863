/* report.h: everything the command prints: errors, notes, timings and the batch progress line on stderr (whole lines, safe from any thread), and the backend list on stdout. */
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

/* The batch progress bar, redrawn in place on a terminal. */
void gs_report_progress(void *user, unsigned done, unsigned total, uint64_t bytes, double elapsed,
                        double eta);

/* Clear the progress bar, if one is shown, so the next line starts clean. */
void gs_report_end_progress(void);

/* "gsmooth: N files, D done, F failed, S s, R files/s". */
void gs_report_batch_summary(const gsmooth_batch_result *r);

/* The --list-backends table on stdout (probing each plugin a context found); verbose adds
 * the details. */
void gs_report_backends(gsmooth_context *ctx, int verbose);

#endif /* GS_REPORT_H */
