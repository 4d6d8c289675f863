/* status.h: the status codes inside, their names, and the helper that fills error buffers. */
#ifndef GS_STATUS_H
#define GS_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#include "gsmooth/gsmooth.h"

/* Bytes of every buffer that holds one error or note line (a file name and a cause). */
#define GS_ERR_SIZE 1024

/* The public status codes (gsmooth.h) are the one vocabulary inside too; the command line
 * exits 2 for a usage error and 1 for the others. */
typedef gsmooth_status gs_status;
#define GS_OK GSMOOTH_OK
#define GS_ERR_USAGE GSMOOTH_ERR_USAGE         /* a bad argument: exit 2 */
#define GS_ERR_IO GSMOOTH_ERR_IO               /* cannot open, read, write, rename */
#define GS_ERR_FORMAT GSMOOTH_ERR_FORMAT       /* not an image, corrupt or truncated, unsupported */
#define GS_ERR_TOO_LARGE GSMOOTH_ERR_TOO_LARGE /* over the pixel limit, or size overflow */
#define GS_ERR_NOMEM GSMOOTH_ERR_NOMEM         /* allocation failed */
#define GS_ERR_BACKEND GSMOOTH_ERR_BACKEND     /* plugin could not be loaded, refused, or failed */
#define GS_ERR_COUNT (GSMOOTH_ERR_BACKEND + 1)

/* Short text for a status ("I/O error", ...). Never NULL. */
const char *gs_status_str(gs_status status);

/* Format one line into a caller-owned error buffer (truncating) and return `status`. */
gs_status gs_fail(char *err, size_t err_size, gs_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* GS_STATUS_H */
