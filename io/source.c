/* source.c: where a reader's bytes come from: a file, a stream or memory. */
/* A regular file is read with read(2) through a buffer and is seekable; a stream (standard
 * input, a pipe, a FIFO, a device) is read front to back in bounded memory, its first bytes
 * kept so detection can read them again; or a buffer in memory. */

#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes one read(2) into a file's or a stream's buffer asks for. A read of at least this
 * many bytes with nothing buffered goes straight into the caller's memory: one copy out of
 * the page cache, not two (stdio's buffer did two, ~10% of the fast PNG reader's inflating
 * thread on a gigapixel file: docs/performance.md). */
#define SOURCE_BUFFER_SIZE ((size_t)64 << 10)
/* The most one read(2) asks for: some systems refuse counts past INT_MAX; callers loop. */
#define READ_MAX ((size_t)1 << 30)
/* A stream's first bytes kept for rewinding: detection reads 32 and goes back; stb_image
 * reads a header (a few hundred bytes) twice before decoding. Going back further is
 * refused: memory stays bounded whatever the input's size. */
#define STREAM_REPLAY_MAX ((size_t)64 << 10)
/* Bytes skipped per read when skipping forward in a stream. */
#define SKIP_CHUNK ((size_t)4 << 10)

/* Keep what a stream just delivered while the replay has room (a file seeks instead). */
static void remember(gs_source *src, const unsigned char *bytes, size_t n)
{
    if (src->fd < 0 || src->replay_full || n == 0) return;
    size_t keep = STREAM_REPLAY_MAX - src->replay_len < n ? STREAM_REPLAY_MAX - src->replay_len : n;
    if (!src->replay && !(src->replay = malloc(STREAM_REPLAY_MAX))) keep = 0;
    if (keep) memcpy(src->replay + src->replay_len, bytes, keep);
    src->replay_len += keep;
    src->replay_pos = src->replay_len;
    if (keep < n) src->replay_full = 1;
}

/* The descriptor a file or a stream is read from. */
static int source_fd(const gs_source *src) { return src->file >= 0 ? src->file : src->fd; }

/* A file or a stream: bytes being replayed (streams only), else what the buffer holds,
 * else one read(2), into the buffer or, for a large read, straight into `buf`. */
static size_t buffered_read_some(gs_source *src, unsigned char *buf, size_t n)
{
    if (src->replay_pos < src->replay_len) {
        size_t take = src->replay_len - src->replay_pos < n ? src->replay_len - src->replay_pos : n;
        memcpy(buf, src->replay + src->replay_pos, take);
        src->replay_pos += take;
        return take;
    }
    if (src->in_pos == src->in_len) {
        if (src->at_eof || src->read_errno) return 0;
        const int direct = n >= SOURCE_BUFFER_SIZE;
        const size_t want = !direct ? SOURCE_BUFFER_SIZE : n < READ_MAX ? n : READ_MAX;
        ssize_t got;
        do got = read(source_fd(src), direct ? buf : src->in, want);
        while (got < 0 && errno == EINTR);
        if (got <= 0) {
            if (got < 0) src->read_errno = errno;
            else src->at_eof = 1;
            return 0;
        }
        if (direct) {
            remember(src, buf, (size_t)got);
            return (size_t)got;
        }
        src->in_pos = 0;
        src->in_len = (size_t)got;
    }
    size_t take = src->in_len - src->in_pos < n ? src->in_len - src->in_pos : n;
    memcpy(buf, src->in + src->in_pos, take);
    src->in_pos += take;
    remember(src, buf, take);
    return take;
}

size_t gs_source_read_some(gs_source *src, void *buf, size_t n)
{
    if (n == 0) return 0;
    if (src->fd >= 0 || src->file >= 0) return buffered_read_some(src, buf, n);
    size_t left = src->size - src->pos;
    if (n > left) n = left;
    memcpy(buf, src->data + src->pos, n);
    src->pos += n;
    return n;
}

size_t gs_source_read(gs_source *src, void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t got = gs_source_read_some(src, (unsigned char *)buf + done, n - done);
        if (got == 0) break;
        done += got;
    }
    return done;
}

/* Bytes a stream can give right now without waiting for its writer. */
static int stream_ready(gs_source *src)
{
    if (src->replay_pos < src->replay_len || src->in_pos < src->in_len) return 1;
    if (src->at_eof || src->read_errno) return 1; /* the answer (end) is known: no wait */
    struct pollfd p = {src->fd, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
}

size_t gs_source_read_head(gs_source *src, void *buf, size_t n, size_t need)
{
    if (src->fd < 0) return gs_source_read(src, buf, n);
    size_t done = gs_source_read(src, buf, need < n ? need : n);
    while (done < n && done >= need && stream_ready(src)) {
        size_t got = gs_source_read_some(src, (unsigned char *)buf + done, n - done);
        if (got == 0) break;
        done += got;
    }
    return done;
}

/* Where a file's next byte is: the descriptor's offset less what the buffer still holds. */
static off_t file_position(const gs_source *src)
{
    off_t at = lseek(src->file, 0, SEEK_CUR);
    return at < 0 ? at : at - (off_t)(src->in_len - src->in_pos);
}

/* Move a file's next byte to `at`, dropping what the buffer holds. */
static int file_seek(gs_source *src, off_t at)
{
    src->in_pos = src->in_len = 0;
    src->at_eof = 0;
    return lseek(src->file, at, SEEK_SET) == at ? 0 : -1;
}

int64_t gs_source_tell(gs_source *src)
{
    if (src->file >= 0) return (int64_t)file_position(src);
    return src->fd >= 0 ? -1 : (int64_t)src->pos;
}

size_t gs_source_skip(gs_source *src, size_t n)
{
    if (src->file >= 0) { /* a regular file: seek, but never past its end */
        struct stat sb;
        const off_t here = file_position(src);
        if (here < 0 || fstat(src->file, &sb) != 0) return 0;
        size_t left = sb.st_size > here ? (size_t)(sb.st_size - here) : 0;
        size_t step = n < left ? n : left;
        if (file_seek(src, here + (off_t)step) != 0) return 0;
        return step;
    }
    if (src->fd < 0) { /* memory */
        size_t step = n < src->size - src->pos ? n : src->size - src->pos;
        src->pos += step;
        return step;
    }
    unsigned char scratch[SKIP_CHUNK];
    size_t done = 0;
    while (done < n) {
        size_t got = gs_source_read_some(src, scratch, n - done < sizeof scratch ? n - done : sizeof scratch);
        if (got == 0) break;
        done += got;
    }
    return done;
}

int gs_source_at_end(gs_source *src)
{
    if (src->fd >= 0 || src->file >= 0) {
        if (src->replay_pos < src->replay_len || src->in_pos < src->in_len) return 0;
        const size_t kept = src->replay_len;
        const int was_full = src->replay_full;
        unsigned char c;
        if (buffered_read_some(src, &c, 1) == 0) return 1;
        /* Give the byte back: it sits at the front of the buffer just filled. */
        src->in_pos--;
        src->replay_len = src->replay_pos = kept;
        src->replay_full = was_full;
        return 0;
    }
    return src->pos >= src->size;
}

gs_status gs_source_rewind(gs_source *src, char *err, size_t err_size)
{
    if (src->fd >= 0) {
        if (src->replay_full)
            return gs_fail(err, err_size, GS_ERR_FORMAT,
                           "the decoder needs to go back more than %zu KiB in a stream",
                           STREAM_REPLAY_MAX >> 10);
        src->replay_pos = 0;
        return GS_OK;
    }
    if (src->file < 0) {
        src->pos = 0;
        return GS_OK;
    }
    if (file_seek(src, 0) != 0)
        return gs_fail(err, err_size, GS_ERR_IO, "cannot seek: %s", strerror(errno));
    return GS_OK;
}

void gs_source_from_memory(gs_source *src, unsigned char *data, size_t size)
{
    memset(src, 0, sizeof *src);
    src->fd = src->file = -1;
    src->data = data;
    src->size = size;
}

/* A regular file or a stream on `fd` (owned: closed with the source). */
static gs_status buffered_open(int fd, int regular, gs_source *src, char *err, size_t err_size)
{
    src->in = malloc(SOURCE_BUFFER_SIZE);
    if (!src->in) {
        close(fd);
        return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    }
    if (regular) src->file = fd;
    else src->fd = fd;
    return GS_OK;
}

gs_status gs_source_open(const char *path, gs_source *src, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    struct stat sb;
    int fd;

    memset(src, 0, sizeof *src);
    src->fd = src->file = -1;
    /* Standard input is a duplicate, so closing the source leaves descriptor 0 alone. */
    fd = strcmp(path, "-") == 0 ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gs_fail(err, err_size, GS_ERR_IO, "cannot open: %s", strerror(errno));

    if (fstat(fd, &sb) != 0) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot stat: %s", strerror(errno));
        goto cleanup;
    }
    if (S_ISDIR(sb.st_mode)) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "is a directory, not an image file");
        goto cleanup;
    }
    /* A pipe, FIFO, device or socket is a stream: front to back. */
    rc = buffered_open(fd, S_ISREG(sb.st_mode), src, err, err_size);
    fd = -1;

cleanup:
    if (fd >= 0) close(fd);
    return rc;
}

void gs_source_close(gs_source *src)
{
    if (src->file >= 0) close(src->file);
    if (src->fd >= 0) close(src->fd);
    free(src->in);
    free(src->replay);
    memset(src, 0, sizeof *src);
    src->fd = src->file = -1;
}
