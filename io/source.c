/* source.c: where a reader's bytes come from: a regular file, streamed and seekable, or standard input and other streams, read whole into memory. */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* First allocation when reading a stream whole; it doubles from there. */
#define SLURP_INITIAL_SIZE ((size_t)64 * 1024)

size_t gs_source_read(gs_source *src, void *buf, size_t n)
{
    if (!src->fp) {
        size_t left = src->size - src->pos;
        if (n > left) n = left;
        memcpy(buf, src->data + src->pos, n);
        src->pos += n;
        return n;
    }
    errno = 0;
    size_t got = fread(buf, 1, n, src->fp);
    if (got < n && ferror(src->fp)) src->read_errno = errno ? errno : EIO;
    return got;
}

/* Read all of `fd` into memory: stdin and pipes cannot seek back after detection, and
 * stb_image has no streaming anyway. */
static gs_status slurp(int fd, gs_source *src, char *err, size_t err_size)
{
    unsigned char *buf = NULL;
    size_t cap = 0, len = 0;
    gs_status rc = GS_OK;

    for (;;) {
        if (len == cap) {
            if (cap > SIZE_MAX / 2) {
                rc = gs_fail(err, err_size, GS_ERR_TOO_LARGE, "input is too large to hold in memory");
                goto cleanup;
            }
            size_t new_cap = cap ? cap * 2 : SLURP_INITIAL_SIZE;
            unsigned char *grown = realloc(buf, new_cap);
            if (!grown) {
                rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory reading the input (%zu bytes so far)", len);
                goto cleanup;
            }
            buf = grown;
            cap = new_cap;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0) {
            if (errno == EINTR) continue;
            rc = gs_fail(err, err_size, GS_ERR_IO, "read failed: %s", strerror(errno));
            goto cleanup;
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    src->data = buf;
    src->size = len;
    buf = NULL;

cleanup:
    free(buf);
    return rc;
}

gs_status gs_source_open(const char *path, gs_source *src, char *err, size_t err_size)
{
    if (strcmp(path, "-") == 0) return slurp(STDIN_FILENO, src, err, err_size);

    gs_status rc = GS_OK;
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gs_fail(err, err_size, GS_ERR_IO, "cannot open: %s", strerror(errno));

    if (fstat(fd, &sb) != 0) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot stat: %s", strerror(errno));
        goto cleanup;
    }
    if (S_ISDIR(sb.st_mode)) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "is a directory, not an image file");
        goto cleanup;
    }
    if (!S_ISREG(sb.st_mode)) { /* FIFO, device, socket: cannot seek, read it whole */
        rc = slurp(fd, src, err, err_size);
        goto cleanup;
    }
    src->fp = fdopen(fd, "rb");
    if (!src->fp) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot open: %s", strerror(errno));
        goto cleanup;
    }
    fd = -1; /* the FILE owns it now */

cleanup:
    if (fd >= 0) close(fd);
    return rc;
}

gs_status gs_source_rewind(gs_source *src, char *err, size_t err_size)
{
    if (!src->fp) {
        src->pos = 0;
        return GS_OK;
    }
    if (fseek(src->fp, 0, SEEK_SET) != 0)
        return gs_fail(err, err_size, GS_ERR_IO, "cannot seek: %s", strerror(errno));
    return GS_OK;
}

void gs_source_close(gs_source *src)
{
    if (src->fp) fclose(src->fp);
    free(src->data);
    memset(src, 0, sizeof *src);
}
