/* backend_session.h: the plugins found for one run, and each worker thread's own backend instances. */
#ifndef GS_BACKEND_SESSION_H
#define GS_BACKEND_SESSION_H

#include <pthread.h>

#include "plugin_loader.h"

/* Backends one worker may hold at once: the one asked for, and the CPU for auto. */
#define GS_MAX_LIVE_BACKENDS 2

/* Shared by all workers; read-only once opened, except the note flag under its lock. */
typedef struct gs_session {
    const char *backend;               /* auto, a plugin name, or a path to a .so */
    gs_backend_list list;              /* discovered plugins */
    void (*message)(const char *line); /* prints a note line; NULL: notes are not wanted */
    pthread_mutex_t lock;              /* guards probes of the list and noted_fallback */
    int noted_fallback;                /* the auto fallback note was printed once */
} gs_session;

typedef struct gs_live_backend {
    gs_backend *backend;          /* chosen backend (in the list or the worker's scratch) */
    gs_plugin_instance *instance; /* its instance, created on first use */
} gs_live_backend;

/* One thread's state: instances are never shared between threads (the ABI's rule). */
typedef struct gs_worker {
    gs_session *session;
    unsigned threads;             /* CPU threads per file for this worker's instances */
    gs_backend explicit_path;     /* a --backend PATH.so, loaded per worker */
    gs_live_backend live[GS_MAX_LIVE_BACKENDS];
} gs_worker;

/* Discover the plugins (plugin_dir first, may be NULL) for jobs that ask for `backend`. */
gs_status gs_session_open(gs_session *s, const char *backend, const char *plugin_dir,
                          void (*message)(const char *line), char *err, size_t err_size);
void gs_session_close(gs_session *s);

void gs_worker_init(gs_worker *w, gs_session *s, unsigned threads);
void gs_worker_release(gs_worker *w); /* destroys its instances */

/* A gs_select_fn (pipeline.h): choose the backend that implements `ops` for `work` and
 * return this worker's instance of it. */
gs_status gs_worker_select(void *worker, uint32_t ops, uint64_t work,
                           const gs_plugin_desc **backend, gs_plugin_instance **instance,
                           char *err, size_t err_size);

#endif /* GS_BACKEND_SESSION_H */
