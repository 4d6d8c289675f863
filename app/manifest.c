/* manifest.c: --manifest's JSON Lines: escaping (UTF-8 kept, other bytes as Python's surrogateescape), one whole line per write(2), appended. */
#define _GNU_SOURCE
#include "manifest.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 if the byte there does not
 * start one (overlong forms, surrogates and values past U+10FFFF are not well-formed). */
static size_t utf8_sequence(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!n) return 0;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range (RFC 3629's table) */
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; ++i)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

/* Append printf-style text at out + *n without passing `size`; like snprintf, *n grows by
 * the length wanted even when it does not fit. */
static void put(char *out, size_t size, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *out, size_t size, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + (*n < size ? *n : size), *n < size ? size - *n : 0, fmt, ap);
    va_end(ap);
    if (w > 0) *n += (size_t)w;
}

size_t gs_json_string(const char *str, char *out, size_t size)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = 0;
    put(out, size, &n, "\"");
    while (*s) {
        size_t len = utf8_sequence(s);
        if (len == 0) put(out, size, &n, "\\udc%02x", *s++); /* not UTF-8: keep the byte */
        else if (*s == '"' || *s == '\\') put(out, size, &n, "\\%c", *s++);
        else if (*s == '\n') put(out, size, &n, "\\n"), ++s;
        else if (*s == '\t') put(out, size, &n, "\\t"), ++s;
        else if (*s < 0x20) put(out, size, &n, "\\u%04x", *s++);
        else put(out, size, &n, "%.*s", (int)len, (const char *)s), s += len;
    }
    put(out, size, &n, "\"");
    return n;
}

gsmooth_status gs_manifest_open(gs_manifest *m, const char *path, char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    m->path = path;
    if (strcmp(path, "-") == 0) { /* standard output: the lines as they come */
        m->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
        m->path = "standard output";
    } else {
        /* Its directory is made as -o DIR's is: many array tasks name manifests/m-$ID. */
        const char *slash = strrchr(path, '/');
        if (slash && slash != path) {
            char dir[PATH_MAX];
            if ((size_t)(slash - path) >= sizeof dir)
                return gs_app_fail(err, err_size, GSMOOTH_ERR_IO, "%s: manifest name too long", path);
            memcpy(dir, path, (size_t)(slash - path));
            dir[slash - path] = '\0';
            char why[GSMOOTH_ERR_SIZE];
            if (gsmooth_make_directories(dir, why, sizeof why) != GSMOOTH_OK)
                return gs_app_fail(err, err_size, GSMOOTH_ERR_IO, "%s: cannot open the manifest: %s", path, why);
        }
        m->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    }
    if (m->fd < 0)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_IO, "%s: cannot open the manifest: %s", path, strerror(errno));
    return GSMOOTH_OK;
}

/* A JSON string for `text`, or null when there is none. */
static void put_json(char *out, size_t size, size_t *n, const char *text)
{
    if (text) *n += gs_json_string(text, out + (*n < size ? *n : size), *n < size ? size - *n : 0);
    else put(out, size, n, "null");
}

static const char *status_word(gsmooth_file_status s)
{
    return s == GSMOOTH_FILE_OK ? "ok" : s == GSMOOTH_FILE_SKIPPED ? "skipped" : "failed";
}

gsmooth_status gs_manifest_write(gs_manifest *m, const gsmooth_file_outcome *o, char *err, size_t err_size)
{
    /* After a failed write (a full disk) the file may end in part of a line: nothing more
     * is appended after it, so every line but that last is whole. */
    if (m->failed) return gs_app_fail(err, err_size, GSMOOTH_ERR_IO, "%s: an earlier write failed", m->path);
    const char *texts[] = {o->input, o->output ? o->output : "", o->error ? o->error : "",
                           o->result->backend ? o->result->backend : ""};
    size_t size = 256;
    for (size_t i = 0; i < sizeof texts / sizeof *texts; ++i) size += 6 * strlen(texts[i]) + 3;
    char *line = malloc(size);
    if (!line) return gs_app_fail(err, err_size, GSMOOTH_ERR_NOMEM, "%s: out of memory for a record", m->path);
    size_t n = 0;
    put(line, size, &n, "{\"input\":");
    put_json(line, size, &n, o->input);
    put(line, size, &n, ",\"output\":");
    put_json(line, size, &n, o->output);
    put(line, size, &n, ",\"status\":\"%s\",\"error\":", status_word(o->status));
    put_json(line, size, &n, o->error);
    if (o->result->width)
        put(line, size, &n, ",\"width\":%u,\"height\":%u,\"bits\":%u", o->result->width,
            o->result->height, o->result->bits);
    else
        put(line, size, &n, ",\"width\":null,\"height\":null,\"bits\":null");
    put(line, size, &n, ",\"backend\":");
    put_json(line, size, &n, o->result->backend);
    put(line, size, &n, ",\"ms\":%.3f}\n", o->ms);

    /* One write: with O_APPEND a line lands whole, after every earlier one. */
    gsmooth_status rc = GSMOOTH_OK;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(m->fd, line + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            rc = gs_app_fail(err, err_size, GSMOOTH_ERR_IO, "%s: cannot write the manifest: %s", m->path,
                         strerror(w < 0 ? errno : EIO));
            m->failed = 1;
            break;
        }
        done += (size_t)w;
    }
    free(line);
    return rc;
}

gsmooth_status gs_manifest_close(gs_manifest *m, char *err, size_t err_size)
{
    if (m->fd < 0) return GSMOOTH_OK;
    int sync_failed = fsync(m->fd) != 0 && errno != EINVAL; /* EINVAL: a pipe or a device */
    int e = errno;
    int close_failed = close(m->fd) != 0;
    if (close_failed) e = errno;
    m->fd = -1;
    if (sync_failed || close_failed)
        return gs_app_fail(err, err_size, GSMOOTH_ERR_IO, "%s: cannot write the manifest: %s", m->path, strerror(e));
    return GSMOOTH_OK;
}
