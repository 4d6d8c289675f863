/* spool.c: copies a stream (pipe, FIFO) into an unlinked temporary file, for the readers whose libraries must seek. */

#define _GNU_SOURCE /* O_TMPFILE */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes copied per read of the stream: few system calls, bounded memory. */
#define SPOOL_CHUNK (1u << 20)

/* An unlinked temporary file in $TMPDIR or /tmp: O_TMPFILE where the file system has it,
 * else a named file unlinked at once, so nothing is left behind whatever happens next. */
static int spool_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/gsmooth-spool-XXXXXX", dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) unlink(path);
    return fd;
}

gs_status gs_spool_stream(gs_source *src, uint64_t limit, const char *format, int *fd,
                          uint64_t *size, char *err, size_t err_size)
{
    *fd = -1;
    *size = 0;
    unsigned char *chunk = malloc(SPOOL_CHUNK);
    if (!chunk) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    gs_status rc = GS_OK;
    *fd = spool_file();
    if (*fd < 0) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot make a spool file for a %s stream: %s", format,
                     strerror(errno));
        goto done;
    }
    for (;;) {
        size_t got = gs_source_read_some(src, chunk, SPOOL_CHUNK);
        if (got == 0) break;
        if (*size + got > limit) {
            rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE,
                         "%s stream is over %llu bytes, the spool limit (8 bytes a pixel of "
                         "the pixel limit, plus 64 MiB)", format, (unsigned long long)limit);
            goto done;
        }
        for (size_t put = 0; put < got;) {
            ssize_t w = write(*fd, chunk + put, got - put);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
                rc = gs_fail(err, err_size, GS_ERR_IO, "cannot spool a %s stream: %s", format, strerror(errno));
                goto done;
            }
            put += (size_t)w;
        }
        *size += got;
    }
    if (src->read_errno)
        rc = gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(src->read_errno));
done:
    free(chunk);
    if (rc != GS_OK && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}
