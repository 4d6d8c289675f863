/* status.c: status names and the one error-formatting helper. */
#include "status.h"

#include <stdio.h>

static const char *const status_text[GS_ERR_COUNT] = {
    [GS_OK] = "success",
    [GS_ERR_USAGE] = "usage error",
    [GS_ERR_IO] = "I/O error",
    [GS_ERR_FORMAT] = "bad image data",
    [GS_ERR_TOO_LARGE] = "image too large",
    [GS_ERR_NOMEM] = "out of memory",
    [GS_ERR_BACKEND] = "backend error",
};

const char *gs_status_str(gs_status status)
{
    if ((int)status < 0 || status >= GS_ERR_COUNT) return "unknown error";
    return status_text[status];
}

gs_status gs_fail(char *err, size_t err_size, gs_status status, const char *fmt, ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return status;
}
