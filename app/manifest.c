/* manifest.c: --manifest's JSON Lines: escaping (UTF-8 kept, other bytes as Python's surrogateescape), one whole line per write(2), appended. */
#define _GNU_SOURCE
#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
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

size_t gs_json_string(const char *str, char *out, size_t size)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(out + n, n < size ? size - n : 0, __VA_ARGS__))
    PUT("\"");
    while (*s) {
        size_t len = utf8_sequence(s);
        if (len == 0) PUT("\\udc%02x", *s++); /* not UTF-8: keep the byte */
        else if (*s == '"' || *s == '\\') PUT("\\%c", *s++);
        else if (*s == '\n') PUT("\\n"), ++s;
        else if (*s == '\t') PUT("\\t"), ++s;
        else if (*s < 0x20) PUT("\\u%04x", *s++);
        else PUT("%.*s", (int)len, (const char *)s), s += len;
    }
    PUT("\"");
#undef PUT
    return n;
}

gs_status gs_manifest_open(gs_manifest *m, const char *path, char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    m->path = path;
    m->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (m->fd < 0)
        return gs_fail(err, err_size, GS_ERR_IO, "%s: cannot open the manifest: %s", path, strerror(errno));
    return GS_OK;
}

static const char *status_word(gs_file_status s)
{
    return s == GS_FILE_OK ? "ok" : s == GS_FILE_SKIPPED ? "skipped" : "failed";
}

gs_status gs_manifest_write(gs_manifest *m, const gs_file_outcome *o, char *err, size_t err_size)
{
    const char *texts[] = {o->input, o->output ? o->output : "", o->error ? o->error : "",
                           o->facts.backend ? o->facts.backend : ""};
    size_t size = 256;
    for (size_t i = 0; i < sizeof texts / sizeof *texts; ++i) size += 6 * strlen(texts[i]) + 3;
    char *line = malloc(size);
    if (!line) return gs_fail(err, err_size, GS_ERR_NOMEM, "%s: out of memory for a record", m->path);
    size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(line + n, size - n, __VA_ARGS__))
#define STRING(s) (n += gs_json_string((s), line + n, size - n))
    PUT("{\"input\":");
    STRING(o->input);
    PUT(",\"output\":");
    if (o->output) STRING(o->output);
    else PUT("null");
    PUT(",\"status\":\"%s\",\"error\":", status_word(o->status));
    if (o->error) STRING(o->error);
    else PUT("null");
    if (o->facts.width) PUT(",\"width\":%u,\"height\":%u,\"bits\":%u", o->facts.width, o->facts.height, o->facts.bits);
    else PUT(",\"width\":null,\"height\":null,\"bits\":null");
    PUT(",\"backend\":");
    if (o->facts.backend) STRING(o->facts.backend);
    else PUT("null");
    PUT(",\"ms\":%.3f}\n", o->ms);
#undef PUT
#undef STRING
    /* One write: with O_APPEND a line lands whole, after every earlier one. */
    gs_status rc = GS_OK;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(m->fd, line + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            rc = gs_fail(err, err_size, GS_ERR_IO, "%s: cannot write the manifest: %s", m->path,
                         strerror(w < 0 ? errno : EIO));
            break;
        }
        done += (size_t)w;
    }
    free(line);
    return rc;
}

gs_status gs_manifest_close(gs_manifest *m, char *err, size_t err_size)
{
    if (m->fd < 0) return GS_OK;
    int sync_failed = fsync(m->fd) != 0 && errno != EINVAL; /* EINVAL: a pipe or a device */
    int e = errno;
    int close_failed = close(m->fd) != 0;
    if (close_failed) e = errno;
    m->fd = -1;
    if (sync_failed || close_failed)
        return gs_fail(err, err_size, GS_ERR_IO, "%s: cannot write the manifest: %s", m->path, strerror(e));
    return GS_OK;
}
