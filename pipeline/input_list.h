/* input_list.h: a batch's inputs in one growing arena: positional paths and lists read from files (--files-from, --files0-from), and the positions one shard keeps. */
#ifndef GS_INPUT_LIST_H
#define GS_INPUT_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Most inputs one list holds: positions are kept as 32-bit numbers. */
#define GS_MAX_INPUTS UINT32_MAX

/* Paths back to back, each NUL-terminated, and where each starts: memory is the list's
 * bytes plus 8 bytes a path, growing by doubling (amortised O(1) a path). */
typedef struct gs_input_list {
    char *bytes;        /* the paths */
    size_t used, cap;   /* bytes in use and allocated */
    size_t *starts;     /* start of path j in bytes */
    uint32_t count;     /* paths */
    uint32_t starts_cap;
} gs_input_list;

/* Which positions of the full list a task keeps: j with j mod count == index. */
typedef struct gs_shard {
    uint32_t index, count; /* 0 <= index < count; {0, 1} keeps everything */
} gs_shard;

void gs_input_list_init(gs_input_list *l);
void gs_input_list_free(gs_input_list *l);

/* Append one path of `len` bytes (no NUL among them). */
gs_status gs_input_list_add(gs_input_list *l, const char *path, size_t len, char *err, size_t err_size);

/* Append every path of the list file `list_path` ("-": standard input), split at
 * `separator` ('\n' or '\0'); empty entries are skipped. A newline-separated list with a
 * NUL byte in it is refused, naming the line. */
gs_status gs_input_list_read(gs_input_list *l, const char *list_path, char separator, char *err,
                             size_t err_size);

static inline const char *gs_input_list_at(const gs_input_list *l, uint32_t j)
{
    return l->bytes + l->starts[j];
}

/* How many positions of a list of `total` the shard keeps, and the k-th of them. */
static inline uint32_t gs_shard_size(gs_shard s, uint32_t total)
{
    return total > s.index ? (total - s.index - 1) / s.count + 1 : 0;
}
static inline uint32_t gs_shard_position(gs_shard s, uint32_t k) { return s.index + k * s.count; }


#endif /* GS_INPUT_LIST_H */
