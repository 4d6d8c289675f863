/* out_file.c: the atomic output file: bytes go to a temporary file beside the target, which is flushed, synced and renamed into place only on commit, and unlinked otherwise ("-" writes to standard output directly). */
#define _GNU_SOURCE /* sync_file_range */
#include "background_sync.h"
#include "io_internal.h"
#include "temp_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The temporary name's suffix (image_io.h): its last TEMP_RANDOM characters are replaced
 * at random (create_exclusive). */
#define TEMP_SUFFIX GS_TEMP_SUFFIX
#define TEMP_RANDOM (sizeof "XXXXXX" - 1)
_Static_assert(sizeof TEMP_SUFFIX > TEMP_RANDOM, "the suffix ends in the random characters");

/* Mode of a newly created file before the umask, as open(O_CREAT, 0666) would give. */
#define NEW_FILE_MODE 0666

/* Bytes of a file's output after which the kernel is asked to start writing them out
 * (Linux's sync_file_range, asynchronous): commit's fsync then waits for the last few MiB
 * only, not the whole file. Left to itself the kernel starts only once a tenth of memory
 * is dirty, so a 374 MB PNG's fsync took 0.35 s of a 3.9 s run (docs/performance.md). */
#define WRITEBACK_STEP ((uint64_t)8 << 20)
/* Bytes of a file's output after which a background thread makes them durable
 * (fdatasync, background_sync.h), so that commit's fsync flushes the last few MiB only:
 * with the write-out above alone, a 374 MB PNG's fsync still took 0.01-0.18 s with both
 * cores idle (the storage's flush); synced every 32 MiB as it grows, 0.004-0.014 s
 * (docs/performance.md). Smaller outputs are synced by commit alone, as before. */
#define DURABLE_STEP ((uint64_t)32 << 20)

/* Tries at a fresh random name before giving up (each collision is 1 in 62^6). */
#define TEMP_ATTEMPTS 100

/* mkstemp, but created with NEW_FILE_MODE so the kernel applies the umask: no umask()
 * dance, which races when batch workers create files at once. */
static int create_exclusive(char *templ)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char *x = templ + strlen(templ) - TEMP_RANDOM; /* the X's that end TEMP_SUFFIX */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)templ;
    for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        for (size_t i = 0; i < TEMP_RANDOM; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u; /* LCG step */
            x[i] = letters[(seed >> 33) % (sizeof letters - 1)];
        }
        int fd = open(templ, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, NEW_FILE_MODE);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Create ".<name>.gsmooth-XXXXXX" next to f->path, so the final rename stays in one file system
 * and is atomic. */
static gs_status temp_create(gs_out_file *f, char *err, size_t err_size)
{
    gs_status rc = GS_OK;
    const char *path = f->path;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0; /* keeps the slash */
    int fd = -1;

    /* An output name near NAME_MAX keeps only the start of its name in the temporary one,
     * so "." + name + suffix still fits a directory entry. */
    size_t base_len = strlen(base);
    const size_t base_max = NAME_MAX - 1 - (sizeof TEMP_SUFFIX - 1);
    if (base_len > base_max) base_len = base_max;
    size_t size = dir_len + 1 + base_len + sizeof TEMP_SUFFIX;
    f->tmp_path = malloc(size);
    if (!f->tmp_path) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    snprintf(f->tmp_path, size, "%.*s.%.*s%s", (int)dir_len, path, (int)base_len, base, TEMP_SUFFIX);

    /* No signal between creating the file and remembering it: the handler must know
     * every temporary file that exists. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    fd = create_exclusive(f->tmp_path);
    if (fd >= 0) f->tmp_slot = gs_temp_remember(f->tmp_path) + 1; /* a full table only loses signal cleanup */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        int e = errno;
        free(f->tmp_path);
        f->tmp_path = NULL; /* nothing was created, nothing to unlink */
        return gs_fail(err, err_size, GS_ERR_IO, "cannot create a file in '%.*s': %s",
                       dir_len ? (int)dir_len : 1, dir_len ? path : ".", strerror(e));
    }
    f->fp = fdopen(fd, "wb");
    if (!f->fp) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "cannot open the temporary file: %s", strerror(errno));
        goto cleanup;
    }
    fd = -1; /* the FILE owns it now */
    gs_file_buffer(f->fp, &f->fp_buffer);

cleanup:
    if (fd >= 0) close(fd); /* gs_out_file_discard unlinks tmp_path */
    return rc;
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

int gs_output_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

gs_status gs_out_file_open(gs_out_file *f, const char *path, char *err, size_t err_size)
{
    struct stat sb;
    char resolved[PATH_MAX];

    memset(f, 0, sizeof *f);
    if (strcmp(path, "-") == 0) {
        f->fp = stdout;
        return GS_OK;
    }
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return gs_fail(err, err_size, GS_ERR_IO, "is a directory; give a file name");
    /* The rename replaces whatever the name points at: never a device or a FIFO (as root,
     * /dev/null would become a file); through a symlink, the target is replaced and the
     * link kept. */
    if (lstat(path, &sb) == 0) {
        if (S_ISLNK(sb.st_mode)) {
            if (!realpath(path, resolved) || stat(resolved, &sb) != 0)
                return gs_fail(err, err_size, GS_ERR_IO, "is a symbolic link to nothing");
            path = resolved;
        }
        if (!S_ISREG(sb.st_mode))
            return gs_fail(err, err_size, GS_ERR_IO,
                           "exists and is not a regular file (use - for standard output)");
    }
    f->path = strdup(path);
    if (!f->path) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
    return temp_create(f, err, err_size);
}

/* Start the kernel writing out what stdio has handed it since the last call. Advice only:
 * a failure here leaves commit's fsync to do all of it. */
static void start_writeback(gs_out_file *f)
{
#if defined(__linux__)
    const int fd = fileno(f->fp);
    const off_t handed = lseek(fd, 0, SEEK_CUR); /* what stdio has written so far */
    if (handed > (off_t)f->writeback_from) {
        (void)sync_file_range(fd, (off_t)f->writeback_from, handed - (off_t)f->writeback_from,
                              SYNC_FILE_RANGE_WRITE);
        f->writeback_from = (uint64_t)handed;
    }
#endif
    if (f->put_bytes - f->durable_from >= DURABLE_STEP) {
        gs_background_sync_ask(&f->durable, fileno(f->fp));
        f->durable_from = f->put_bytes;
    }
    f->writeback_at = f->put_bytes + WRITEBACK_STEP;
}

gs_status gs_out_file_put(gs_out_file *f, const void *buf, size_t n, char *err, size_t err_size)
{
    if (n == 0) return GS_OK;
    errno = 0;
    if (fwrite(buf, 1, n, f->fp) != n)
        return gs_fail(err, err_size, GS_ERR_IO, "write failed: %s", strerror(errno ? errno : EIO));
    f->put_bytes += n;
    if (f->tmp_path && f->put_bytes >= f->writeback_at) start_writeback(f);
    return GS_OK;
}

gs_status gs_out_file_commit(gs_out_file *f, char *err, size_t err_size)
{
    errno = 0;
    if (fflush(f->fp) != 0 || ferror(f->fp))
        return gs_fail(err, err_size, GS_ERR_IO, "write failed: %s", strerror(errno ? errno : EIO));
    if (f->fp == stdout) return GS_OK; /* a pipe cannot be synced, renamed or taken back */

    const int background = gs_background_sync_end(&f->durable);
    if (background != 0)
        return gs_fail(err, err_size, GS_ERR_IO, "cannot sync to disk: %s", strerror(background));
    if (fsync(fileno(f->fp)) != 0)
        return gs_fail(err, err_size, GS_ERR_IO, "cannot sync to disk: %s", strerror(errno));
    FILE *fp = f->fp;
    f->fp = NULL; /* fclose releases it even when it fails */
    const int closed = fclose(fp);
    const int close_errno = errno;
    free(f->fp_buffer);
    f->fp_buffer = NULL;
    if (closed != 0)
        return gs_fail(err, err_size, GS_ERR_IO, "write failed on close: %s", strerror(close_errno));
    if (rename(f->tmp_path, f->path) != 0)
        return gs_fail(err, err_size, GS_ERR_IO, "cannot rename into place: %s", strerror(errno));
    gs_temp_forget(f->tmp_slot - 1);
    f->tmp_slot = 0;
    free(f->tmp_path);
    f->tmp_path = NULL; /* renamed: nothing left to unlink */
    sync_parent_dir(f->path);
    return GS_OK;
}

void gs_out_file_discard(gs_out_file *f)
{
    (void)gs_background_sync_end(&f->durable); /* before its file is closed */
    if (f->fp && f->fp != stdout) fclose(f->fp);
    free(f->fp_buffer); /* after fclose, which flushes through it */
    if (f->tmp_path) {
        unlink(f->tmp_path);
        gs_temp_forget(f->tmp_slot - 1);
    }
    free(f->tmp_path);
    free(f->path);
    memset(f, 0, sizeof *f);
}
