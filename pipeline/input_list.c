/* input_list.c: the batch's list of inputs: an arena of paths read from argv and from list files in linear time, and --shard's I/N. */
#include "input_list.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes read from a list file at a time. */
#define LIST_CHUNK (64u << 10)

void gs_input_list_init(gs_input_list *l) { memset(l, 0, sizeof *l); }

void gs_input_list_free(gs_input_list *l)
{
    free(l->bytes);
    free(l->starts);
    memset(l, 0, sizeof *l);
}

gs_status gs_input_list_add(gs_input_list *l, const char *path, size_t len, char *err, size_t err_size)
{
    if (l->count == GS_MAX_INPUTS)
        return gs_fail(err, err_size, GS_ERR_TOO_LARGE, "more than %u inputs", GS_MAX_INPUTS);
    if (l->count == l->starts_cap) {
        uint32_t cap = l->starts_cap ? (l->starts_cap > GS_MAX_INPUTS / 2 ? GS_MAX_INPUTS : l->starts_cap * 2) : 256;
        size_t *s = realloc(l->starts, (size_t)cap * sizeof *s);
        if (!s) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for the list of inputs");
        l->starts = s, l->starts_cap = cap;
    }
    if (len + 1 > l->cap - l->used) {
        size_t cap = l->cap ? l->cap : 4096;
        while (len + 1 > cap - l->used) {
            if (cap > SIZE_MAX / 2)
                return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for the list of inputs");
            cap *= 2;
        }
        char *b = realloc(l->bytes, cap);
        if (!b) return gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory for the list of inputs");
        l->bytes = b, l->cap = cap;
    }
    memcpy(l->bytes + l->used, path, len);
    l->bytes[l->used + len] = '\0';
    l->starts[l->count++] = l->used;
    l->used += len + 1;
    return GS_OK;
}

/* An entry that ended at a separator or at the end of the file: added unless empty. */
static gs_status take_entry(gs_input_list *l, const char *list_path, char separator,
                            const char *entry, size_t len, uint64_t line, char *err, size_t err_size)
{
    if (len == 0) return GS_OK;
    if (separator == '\n' && memchr(entry, '\0', len))
        return gs_fail(err, err_size, GS_ERR_FORMAT,
                       "%s: line %llu holds a NUL byte (a list of NUL-separated names: --files0-from)",
                       list_path, (unsigned long long)line);
    char msg[GS_ERR_SIZE];
    gs_status rc = gs_input_list_add(l, entry, len, msg, sizeof msg);
    return rc == GS_OK ? GS_OK : gs_fail(err, err_size, rc, "%s: %s", list_path, msg);
}

gs_status gs_input_list_read(gs_input_list *l, const char *list_path, char separator, char *err,
                             size_t err_size)
{
    const int from_stdin = strcmp(list_path, "-") == 0;
    FILE *fp = from_stdin ? stdin : fopen(list_path, "rb");
    if (!fp) return gs_fail(err, err_size, GS_ERR_IO, "%s: cannot open the list: %s", list_path, strerror(errno));
    gs_status rc = GS_OK;
    /* `pending` holds the unfinished entry carried from one chunk to the next. */
    char *chunk = malloc(LIST_CHUNK), *pending = NULL;
    size_t pending_len = 0, pending_cap = 0;
    uint64_t line = 1;
    if (!chunk) {
        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    for (;;) {
        size_t n = fread(chunk, 1, LIST_CHUNK, fp);
        if (n == 0) break;
        size_t from = 0;
        for (;;) {
            const char *sep = memchr(chunk + from, separator, n - from);
            size_t len = sep ? (size_t)(sep - (chunk + from)) : n - from;
            if (!sep || pending_len) { /* the entry goes on past this chunk, or began before it */
                if (pending_len + len > pending_cap) {
                    size_t cap = pending_cap ? pending_cap : 256;
                    while (cap < pending_len + len) cap *= 2;
                    char *p = realloc(pending, cap);
                    if (!p) {
                        rc = gs_fail(err, err_size, GS_ERR_NOMEM, "out of memory");
                        goto cleanup;
                    }
                    pending = p, pending_cap = cap;
                }
                if (len) memcpy(pending + pending_len, chunk + from, len);
                pending_len += len;
                if (!sep) break;
                rc = take_entry(l, list_path, separator, pending, pending_len, line, err, err_size);
                pending_len = 0;
            } else {
                rc = take_entry(l, list_path, separator, chunk + from, len, line, err, err_size);
            }
            if (rc != GS_OK) goto cleanup;
            ++line;
            from = (size_t)(sep - chunk) + 1;
        }
    }
    if (ferror(fp)) {
        rc = gs_fail(err, err_size, GS_ERR_IO, "%s: cannot read the list: %s", list_path, strerror(errno ? errno : EIO));
        goto cleanup;
    }
    rc = take_entry(l, list_path, separator, pending, pending_len, line, err, err_size);

cleanup:
    free(chunk);
    free(pending);
    if (!from_stdin) fclose(fp);
    return rc;
}
