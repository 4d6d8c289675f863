/* library.h: libgsmooth's context as its source files share it: the backend pool, the instances that run its backends, and the call lock. */
#ifndef GS_LIBRARY_H
#define GS_LIBRARY_H

#include <limits.h>
#include <pthread.h>

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

/* Versioned structs (gsmooth.h, "Versioning"). Their sizes as version 0.2 shipped them:
 * later fields are appended after these, and these stay the smallest sizes taken. */
#define GS_SIZE_0_2_CONTEXT_OPTIONS sizeof(gsmooth_context_options)
#define GS_SIZE_0_2_FILE_OPTIONS sizeof(gsmooth_file_options)
#define GS_SIZE_0_2_BATCH_OPTIONS sizeof(gsmooth_batch_options)
#define GS_SIZE_0_2_BACKEND_INFO sizeof(gsmooth_backend_info)
#define GS_SIZE_0_2_FILE_RESULT sizeof(gsmooth_file_result)
#define GS_SIZE_0_2_BATCH_RESULT sizeof(gsmooth_batch_result)

/* Options in: `given` (its first field its struct_size, at least min_size) copied over
 * `dst` (`size` bytes, holding the defaults) up to the smaller size. */
gs_status gs_struct_in(void *dst, size_t size, const void *given, size_t min_size, const char *what,
                       char *err, size_t err_size);

/* A result to fill: its struct_size at least min_size. */
gs_status gs_struct_out_check(const void *dst, size_t min_size, const char *what, char *err,
                              size_t err_size);

/* A result out: `full` (`size` bytes) copied into `dst` up to dst's struct_size, which stays. */
void gs_struct_out(void *dst, const void *full, size_t size);

/* The public status of an internal one (the values are the same, checked at build). */
gsmooth_status gs_public_status(gs_status rc);

/* Passes and axes of a smoothing call, with the command line's words when out of range. */
gs_status gs_check_smoothing(uint32_t iters, uint32_t axes, char *err, size_t err_size);

/* The pipeline's work for file options (NULL: the defaults); GS_ERR_USAGE with the command
 * line's words. */
gs_status gs_work_of(const gsmooth_file_options *o, gs_work *w, char *err, size_t err_size);

/* A file's facts and times as the public result says them. */
void gs_file_result_of(const gs_image_facts *facts, const gs_phase_times *t, gsmooth_file_result *r);

/* A gs_note_fn: the context's note callback, when it has one. */
void gs_context_note(void *context, const char *file, const char *message);

#endif /* GS_LIBRARY_H */
