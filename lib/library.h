/* library.h: libgsmooth's context as its source files share it: the backend pool, the instances that run its backends, and the call lock. */
#ifndef GS_LIBRARY_H
#define GS_LIBRARY_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>

#include "backend_pool.h"
#include "gsmooth/gsmooth.h"
#include "pipeline.h"
#include "status.h"

struct gsmooth_context {
    pthread_mutex_t call;          /* held for the length of each call (the header's rule) */
    gs_backend_pool pool;               /* the plugins found, the backend asked for, devices */
    gs_instances instances;         /* the instances, made on first use, kept until destroy */
    char backend[PATH_MAX];        /* the pool's backend name (it points here) */
    void (*note)(void *user, const char *file, const char *message);
    void *note_user;
};

/* Versioned structs (gsmooth.h, "Versioning"): the smallest size taken is where the last
 * field of the oldest layout still taken ends. Fields appended later lie past it, so a
 * caller built against that layout keeps working; sizeof would refuse it. */
#define GS_END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
#define GS_MIN_CONTEXT_OPTIONS GS_END_OF(gsmooth_context_options, note_user)
#define GS_MIN_FILE_OPTIONS GS_END_OF(gsmooth_file_options, max_pixels)
#define GS_MIN_BACKEND_INFO GS_END_OF(gsmooth_backend_info, device_memory)
#define GS_MIN_FILE_RESULT GS_END_OF(gsmooth_file_result, total_ns)
#define GS_MIN_BATCH_RESULT GS_END_OF(gsmooth_batch_result, bytes)
/* The batch options as 0.3 laid them out (0.2's held the file options by value). */
#define GS_MIN_BATCH_OPTIONS GS_END_OF(gsmooth_batch_options, user)

/* The batch options of version 0.2, kept only for their size: a struct_size equal to it
 * is refused, since its fields lie elsewhere. Fields appended to gsmooth_batch_options
 * must not make it exactly this size (a padding field would keep them apart). */
typedef struct gs_batch_options_0_2 {
    uint32_t struct_size;
    struct {
        uint32_t struct_size, kind, iters, axes, depth;
        uint64_t max_pixels;
    } file;
    const char *out_dir;
    unsigned jobs;
    uint32_t shard_index, shard_count;
    int skip_existing;
    void (*finished)(void *, const void *);
    void (*progress)(void *, unsigned, unsigned, uint64_t, double, double);
    void *user;
} gs_batch_options_0_2;
_Static_assert(sizeof(gsmooth_batch_options) != sizeof(gs_batch_options_0_2),
               "batch options of 0.3 and later must not have 0.2's size: it is refused");

/* Options in: `given` (its first field its struct_size, at least min_size) copied over
 * `dst` (`size` bytes, holding the defaults) up to the smaller size. */
gs_status gs_struct_in(void *dst, size_t size, const void *given, size_t min_size, const char *what,
                       char *err, size_t err_size);

/* A result to fill: its struct_size at least min_size. */
gs_status gs_struct_out_check(const void *dst, size_t min_size, const char *what, char *err,
                              size_t err_size);

/* A result out: `full` (`size` bytes) copied into `dst` up to dst's struct_size, which stays. */
void gs_struct_out(void *dst, const void *full, size_t size);

/* Passes and axes of a smoothing call, in the library's words when out of range. */
gs_status gs_check_smoothing(uint32_t iters, uint32_t axes, char *err, size_t err_size);

/* File options as given (NULL: the defaults) into `full`, checked; the pipeline's work
 * and encoder settings for them. GS_ERR_USAGE in the library's words. `batch_threads`: the
 * deflate threads a batch gives each file when encode_threads is 0 (0: not a batch). */
gs_status gs_file_options_in(const gsmooth_file_options *given, gsmooth_file_options *full, char *err,
                             size_t err_size);
void gs_work_of(const gsmooth_file_options *o, gs_work *w);
gs_encode_settings gs_encode_of(const gsmooth_file_options *o, unsigned batch_threads);


/* A gs_note_fn: the context's note callback, when it has one. */
void gs_context_note(void *context, const char *file, const char *message);

#endif /* GS_LIBRARY_H */
