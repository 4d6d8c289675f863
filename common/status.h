/* status.h: the one status enum, its messages, the error-buffer size and its helper. */
#ifndef GS_STATUS_H
#define GS_STATUS_H

#include <stdarg.h>
#include <stddef.h>

/* Bytes of every buffer that holds one error or note line (a file name and a cause). */
#define GS_ERR_SIZE 1024

typedef enum gs_status {
    GS_OK = 0,
    GS_ERR_USAGE,     /* bad command line: exit 2 */
    GS_ERR_IO,        /* cannot open, read, write, rename */
    GS_ERR_FORMAT,    /* not an image, corrupt or truncated data, unsupported variant */
    GS_ERR_TOO_LARGE, /* over --max-pixels or size arithmetic overflow */
    GS_ERR_NOMEM,     /* allocation failed */
    GS_ERR_BACKEND,   /* plugin could not be loaded, refused, or failed */
    GS_ERR_COUNT
} gs_status;

/* Short text for a status ("I/O error", ...). Never NULL. */
const char *gs_status_str(gs_status status);

/* Exit code for a status: 0 for GS_OK, 2 for GS_ERR_USAGE, 1 otherwise. */
int gs_status_exit_code(gs_status status);

/* Format one line into a caller-owned error buffer (truncating) and return `status`. */
gs_status gs_fail(char *err, size_t err_size, gs_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* GS_STATUS_H */
