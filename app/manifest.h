/* manifest.h: --manifest: one JSON line per input, appended whole with one write, so a task killed mid-run leaves only whole lines. */
#ifndef GS_MANIFEST_H
#define GS_MANIFEST_H

#include <stddef.h>

#include "gsmooth/gsmooth.h"

typedef struct gs_manifest {
    int fd;           /* opened for appending */
    const char *path; /* for messages */
    int failed;       /* a write failed: nothing more is appended */
} gs_manifest;

/* Open (create, or append to) `path`, making its directory as `mkdir -p` would. */
gsmooth_status gs_manifest_open(gs_manifest *m, const char *path, char *err, size_t err_size);

/* Append the record of one outcome: {"input", "output", "status", "error", "width",
 * "height", "bits", "backend", "ms"}; unknown values are null. Paths that are not UTF-8
 * keep their bytes as \udcXX escapes (Python's surrogateescape: os.fsencode gives the
 * bytes back). GSMOOTH_OK, or GSMOOTH_ERR_IO with the cause (callers serialise calls). */
gsmooth_status gs_manifest_write(gs_manifest *m, const gsmooth_file_outcome *o, char *err, size_t err_size);

/* Sync and close; GSMOOTH_ERR_IO if that fails. */
gsmooth_status gs_manifest_close(gs_manifest *m, char *err, size_t err_size);

/* The JSON string for `s` (quotes included) into `out` of `size` bytes (6 x strlen + 3
 * always suffices); returns the length written. */
size_t gs_json_string(const char *s, char *out, size_t size);

#endif /* GS_MANIFEST_H */
