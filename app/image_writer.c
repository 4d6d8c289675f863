/* image_writer.c: output format from the file name, and the atomic writer (temporary file in the target directory, renamed into place only on commit). */
#include "image_io_internal.h"
#include "temp_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The temporary name's suffix: six characters replaced at random (create_exclusive). */
#define TEMP_SUFFIX ".XXXXXX"

/* Mode of a newly created file before the umask, as open(O_CREAT, 0666) would give. */
#define NEW_FILE_MODE 0666

static const struct {
    const char *ext; /* with the dot, compared case-insensitively */
    gs_out_format format;
} out_extensions[] = {
    {".png", GS_OUT_PNG}, {".pgm", GS_OUT_PGM}, {".bmp", GS_OUT_BMP}, {".tga", GS_OUT_TGA},
    {".jpg", GS_OUT_JPG}, {".jpeg", GS_OUT_JPG}, {".npy", GS_OUT_NPY},
};

static const struct {
    const char *name;
    int lossless; /* decodes to exactly the samples written */
    gs_status (*open)(gs_writer *writer, char *err, size_t err_size);
} out_formats[] = {
    [GS_OUT_PNG] = {"PNG", 1, gs_write_png_open},
    [GS_OUT_PGM] = {"PGM", 1, gs_write_pgm_open},
    [GS_OUT_BMP] = {"BMP", 1, gs_write_stb_open},
    [GS_OUT_TGA] = {"TGA", 1, gs_write_stb_open},
    [GS_OUT_JPG] = {"JPEG", 0, gs_write_stb_open},
    [GS_OUT_NPY] = {"NPY", 1, gs_write_npy_open},
};
#define OUT_FORMAT_COUNT (sizeof out_formats / sizeof out_formats[0])
_Static_assert(sizeof out_formats / sizeof out_formats[0] == GS_OUT_NPY + 1,
               "every gs_out_format needs a name and an opener");

/* ---- format from the name ---- */

/* "supported: .png .pgm ..." from the table, so the message cannot go stale. */
static void supported_list(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof out_extensions / sizeof out_extensions[0] && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? " " : "", out_extensions[i].ext);
        if (n < 0) break;
        used += (size_t)n;
    }
}

gs_status gs_out_format_from_path(const char *path, gs_out_format *out, char *err,
                                  size_t err_size)
{
    char list[64];
    if (!path || !out) return gs_fail(err, err_size, GS_ERR_USAGE, "gs_out_format_from_path: NULL argument");
    if (strcmp(path, "-") == 0) {
        *out = GS_OUT_PNG; /* standard output carries PNG: lossless, and 16-bit capable */
        return GS_OK;
    }
    supported_list(list, sizeof list);

    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) /* ".png" alone is a hidden file's name, not an extension */
        return gs_fail(err, err_size, GS_ERR_USAGE,
                       "output name has no extension to choose the format (supported: %s)", list);
    for (size_t i = 0; i < sizeof out_extensions / sizeof out_extensions[0]; i++) {
        if (strcasecmp(dot, out_extensions[i].ext) == 0) {
            *out = out_extensions[i].format;
            return GS_OK;
        }
    }
    return gs_fail(err, err_size, GS_ERR_USAGE, "unknown output extension '%s' (supported: %s)",
                   dot, list);
}

const char *gs_out_format_name(gs_out_format fmt)
{
    if ((unsigned)fmt >= OUT_FORMAT_COUNT) return "unknown";
    return out_formats[fmt].name;
}

int gs_out_format_lossless(gs_out_format fmt)
{
    return (unsigned)fmt < OUT_FORMAT_COUNT && out_formats[fmt].lossless;
}

/* ---- the temporary file ---- */

/* Tries at a fresh random name before giving up (each collision is 1 in 62^6). */
#define TEMP_ATTEMPTS 100

/* mkstemp, but created with NEW_FILE_MODE so the kernel applies the umask: no umask()
 * dance, which races when batch workers create files at once. */
static int create_exclusive(char *templ)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char *x = templ + strlen(templ) - (sizeof TEMP_SUFFIX - 2); /* the six X's */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)templ;
    for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        for (int i = 0; i < 6; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u; /* LCG step */
            x[i] = letters[(seed >> 33) % (sizeof letters - 1)];
        }
        int fd = open(templ, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, NEW_FILE_MODE);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Create ".<name>.XXXXXX" next to the output, so the final rename stays in one file
 * system and is atomic. */
static gs_status temp_create(gs_writer *writer, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    const char *path = writer->path;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0; /* keeps the slash */
    int fd = -1;

    size_t size = dir_len + 1 + strlen(base) + sizeof TEMP_SUFFIX;
    writer->tmp_path = malloc(size);
    if (!writer->tmp_path) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    snprintf(writer->tmp_path, size, "%.*s.%s%s", (int)dir_len, path, base, TEMP_SUFFIX);

    /* No signal between creating the file and remembering it: the handler must know
     * every temporary file that exists. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    fd = create_exclusive(writer->tmp_path);
    if (fd >= 0) gs_temp_remember(writer->tmp_path); /* a full table only loses signal cleanup */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        int e = errno;
        free(writer->tmp_path);
        writer->tmp_path = NULL; /* nothing was created, nothing to unlink */
        return gs_fail(err, err_size, GS_ERR_IO, "cannot create a file in '%.*s': %s",
                       dir_len ? (int)dir_len : 1, dir_len ? path : ".", strerror(e));
    }
    writer->fp = fdopen(fd, "wb");
    if (!writer->fp) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot open the temporary file: %s", strerror(errno));
        goto cleanup;
    }
    fd = -1; /* the FILE owns it now */

cleanup:
    if (fd >= 0) close(fd); /* the caller unlinks tmp_path */
    return rc;
}

/* Free everything; an unrenamed temporary file is closed and unlinked. */
static void writer_free(gs_writer *writer)
{
    if (!writer) return;
    if (writer->ops && writer->impl) writer->ops->destroy(writer->impl);
    if (writer->fp && writer->fp != stdout) fclose(writer->fp);
    if (writer->tmp_path) {
        unlink(writer->tmp_path);
        gs_temp_forget(writer->tmp_path);
    }
    free(writer->tmp_path);
    free(writer->path);
    free(writer);
}

/* Make a rename durable: the directory entry lives in the directory. Best effort: some
 * file systems refuse fsync on directories, and the file itself is already safe. */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    if (!dir) return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* ---- public API ---- */

gs_status gs_writer_put(gs_writer *writer, const void *buf, size_t n, char *err, size_t err_size)
{
    if (n == 0) return GS_OK;
    errno = 0;
    if (fwrite(buf, 1, n, writer->fp) == n) return GS_OK;
    return gs_fail(err, err_size, GS_ERR_IO, "write failed: %s", strerror(errno ? errno : EIO));
}

gs_status gs_writer_open(const char *path, gs_out_format fmt, uint32_t width, uint32_t height,
                         uint32_t bits, gs_writer **out, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    gs_writer *writer = NULL;
    struct stat st;

    if (out) *out = NULL;
    if (!path || !out) return gs_fail(err, err_size, GS_ERR_USAGE, "gs_writer_open: NULL argument");
    if ((unsigned)fmt >= OUT_FORMAT_COUNT)
        return gs_fail(err, err_size, GS_ERR_USAGE, "unknown output format %d", (int)fmt);
    if (width == 0 || height == 0)
        return gs_fail(err, err_size, GS_ERR_FORMAT, "cannot write an empty %ux%u image", width, height);

    writer = calloc(1, sizeof *writer);
    if (!writer) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    writer->format = fmt;
    writer->width = width;
    writer->height = height;
    writer->bits = bits;

    if (strcmp(path, "-") == 0) {
        writer->fp = stdout;
    } else {
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = gs_fail(err, err_size, GS_ERR_IO, "is a directory; give a file name");
            goto cleanup;
        }
        /* The rename replaces whatever the name points at: never a device or a FIFO
         * (as root, /dev/null would become a file); through a symlink, the target is
         * replaced and the link kept. */
        char resolved[PATH_MAX];
        if (lstat(path, &st) == 0) {
            if (S_ISLNK(st.st_mode)) {
                if (!realpath(path, resolved) || stat(resolved, &st) != 0) {
                    rc = gs_fail(err, err_size, GS_ERR_IO, "is a symbolic link to nothing");
                    goto cleanup;
                }
                path = resolved;
            }
            if (!S_ISREG(st.st_mode)) {
                rc = gs_fail(err, err_size, GS_ERR_IO,
                             "exists and is not a regular file (use - for standard output)");
                goto cleanup;
            }
        }
        writer->path = strdup(path);
        if (!writer->path) {
            rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        rc = temp_create(writer, err, err_size);
        if (rc != GS_OK) goto cleanup;
    }

    rc = out_formats[fmt].open(writer, err, err_size);
    if (rc != GS_OK) goto cleanup;
    *out = writer;
    writer = NULL;

cleanup:
    writer_free(writer);
    return rc;
}

gs_status gs_writer_write_rows(gs_writer *writer, const void *src, size_t stride, uint32_t rows,
                               char *err, size_t err_size)
{
    if (!writer || (!src && rows))
        return gs_fail(err, err_size, GS_ERR_USAGE, "gs_writer_write_rows: NULL argument");
    if (writer->failed)
        return gs_fail(err, err_size, GS_ERR_IO, "an earlier write to this file failed");
    if (rows > writer->height - writer->rows_written)
        return gs_fail(err, err_size, GS_ERR_USAGE, "%u more rows would exceed the image's %u rows",
                       rows, writer->height);
    size_t row_bytes = (size_t)writer->width * (writer->bits / 8);
    if (rows > 1 && stride < row_bytes)
        return gs_fail(err, err_size, GS_ERR_USAGE, "row stride %zu is below the row size %zu",
                       stride, row_bytes);
    if (rows == 0) return GS_OK;

    gs_status rc = writer->ops->write_rows(writer, src, stride, rows, err, err_size);
    if (rc != GS_OK) {
        writer->failed = 1;
        return rc;
    }
    writer->rows_written += rows;
    return GS_OK;
}

gs_status gs_writer_commit(gs_writer *writer, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    if (!writer) return gs_fail(err, err_size, GS_ERR_USAGE, "gs_writer_commit: NULL writer");

    if (writer->failed) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "an earlier write to this file failed");
        goto cleanup;
    }
    if (writer->rows_written != writer->height) {
        rc = gs_fail(err, err_size, GS_ERR_USAGE, "only %u of %u rows were written",
                     writer->rows_written, writer->height);
        goto cleanup;
    }
    rc = writer->ops->finish(writer, err, err_size);
    if (rc != GS_OK) goto cleanup;

    errno = 0;
    if (fflush(writer->fp) != 0 || ferror(writer->fp)) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "write failed: %s", strerror(errno ? errno : EIO));
        goto cleanup;
    }
    if (writer->fp == stdout) goto cleanup; /* a pipe cannot be synced, renamed or taken back */

    if (fsync(fileno(writer->fp)) != 0) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot sync to disk: %s", strerror(errno));
        goto cleanup;
    }
    FILE *fp = writer->fp;
    writer->fp = NULL; /* fclose releases it even when it fails */
    if (fclose(fp) != 0) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "write failed on close: %s", strerror(errno));
        goto cleanup;
    }
    if (rename(writer->tmp_path, writer->path) != 0) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot rename into place: %s", strerror(errno));
        goto cleanup;
    }
    gs_temp_forget(writer->tmp_path);
    free(writer->tmp_path);
    writer->tmp_path = NULL; /* renamed: nothing left to unlink */
    sync_parent_dir(writer->path);

cleanup:
    writer_free(writer);
    return rc;
}

void gs_writer_abort(gs_writer *writer)
{
    writer_free(writer);
}
