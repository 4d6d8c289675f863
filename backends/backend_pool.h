/* backend_pool.h: the plugins found for one run, and each worker thread's own backend instances. */
#ifndef GS_BACKEND_POOL_H
#define GS_BACKEND_POOL_H

#include <pthread.h>

#include "plugin_loader.h"

/* Most devices one run spreads over (--devices). */
#define GS_MAX_DEVICES 64
/* Instances one worker may hold at once: the backend asked for on each device it uses,
 * and the CPU for auto. */
#define GS_MAX_LIVE_BACKENDS (GS_MAX_DEVICES + 1)

/* --devices: which devices of a backend that has them (ABI 1.2) a run uses. */
typedef struct gs_device_choice {
    int all;                         /* "all": every device the backend reports */
    uint32_t count;                  /* else the listed ordinals; 0 = the plugin's choice */
    int32_t ordinals[GS_MAX_DEVICES];
} gs_device_choice;

/* "all" or "0,1,..." (distinct ordinals, at most GS_MAX_DEVICES); GS_ERR_USAGE otherwise. */
gs_status gs_device_choice_parse(const char *text, gs_device_choice *out, char *err, size_t err_size);

/* Shared by all workers; read-only once opened, except the note flag under its lock. */
typedef struct gs_backend_pool {
    const char *backend;               /* auto, a plugin name, or a path to a .so */
    gs_device_choice devices;          /* --devices */
    gs_backend_list list;              /* discovered plugins */
    void (*message)(void *user, const char *line); /* prints a note line; NULL: not wanted */
    void *message_user;                /* passed to message */
    pthread_mutex_t lock;              /* guards probes of the list and noted_fallback */
    int noted_fallback;                /* the auto fallback note was printed once */
} gs_backend_pool;

typedef struct gs_live_backend {
    gs_backend *backend;          /* chosen backend (in the list or the worker's scratch) */
    int32_t device;               /* the device its instance runs on; -1: plugin's choice */
    uint32_t memory;              /* GS_MEMORY_HOST, or GS_MEMORY_DEVICE: strips in device memory */
    gs_plugin_instance *instance; /* its instance, created on first use */
} gs_live_backend;

/* One worker's state: an instance is used by one thread at a time (the ABI's rule): the
 * worker's own, or one runner of its image (gs_instances_runner, from the runner's thread). */
typedef struct gs_instances {
    gs_backend_pool *pool;
    unsigned threads;             /* CPU threads per file for this worker's instances */
    gs_backend explicit_path;     /* a --backend PATH.so, loaded per worker */
    unsigned device_workers;      /* batch: workers sharing the devices (0: not a batch worker) */
    unsigned device_index;        /* batch: this worker's index among them */
    pthread_mutex_t lock;         /* guards live[]: runners create their instances at once */
    pthread_cond_t created;       /* an instance being created is ready (or failed) */
    gs_live_backend live[GS_MAX_LIVE_BACKENDS];
} gs_instances;

/* Discover the plugins (plugin_dir first, may be NULL) for jobs that ask for `backend`. */
gs_status gs_backend_pool_open(gs_backend_pool *s, const char *backend, const char *plugin_dir,
                          void (*message)(void *user, const char *line), char *err, size_t err_size);
void gs_backend_pool_close(gs_backend_pool *s);

void gs_instances_init(gs_instances *w, gs_backend_pool *s, unsigned threads);
void gs_instances_release(gs_instances *w); /* destroys its instances */

/* Batch workers: `workers` of them share the chosen devices, and this is worker `index`.
 * With at least as many workers as devices, each runs its files on one device (index
 * modulo their number), so files spread over the devices; with fewer, worker k takes
 * devices k, k + workers, ... as its runners, so no device idles. Without this call a worker
 * offers every chosen device as a runner (gs_instances_runners): one image spreads over them. */
void gs_instances_share_devices(gs_instances *w, unsigned index, unsigned workers);

/* A gs_select_fn (pipeline.h): choose the backend that implements `ops` for `work` and
 * return this worker's instance of it. */
gs_status gs_instances_select(void *worker, uint32_t ops, uint64_t work,
                           const gs_plugin_desc **backend, gs_plugin_instance **instance,
                           char *err, size_t err_size);

/* A gs_runners_fn (pipeline.h): how many instances of `backend` (the one select chose) this
 * worker can run at once, one per device: 1 for a backend without devices. */
unsigned gs_instances_runners(void *worker, const gs_plugin_desc *backend);

/* A gs_runner_fn (pipeline.h): this worker's instance of `backend` for runner `runner` (0 is the
 * one select gave), created on first use; runners may ask at once, from their threads. */
gs_status gs_instances_runner(void *worker, unsigned runner, const gs_plugin_desc *backend,
                         gs_plugin_instance **instance, char *err, size_t err_size);

/* Library callers with data already in device memory: this worker's device-memory instance
 * (ABI 1.3) on `device`, of the pool's backend (auto: the first that takes `memories`,
 * GS_MEMORY_DEVICE and maybe GS_MEMORY_STREAM, and can run here), created on first use. */
gs_status gs_instances_device_memory(gs_instances *w, uint32_t ops, uint32_t memories, int32_t device,
                                  const gs_plugin_desc **backend, gs_plugin_instance **instance,
                                  char *err, size_t err_size);

#endif /* GS_BACKEND_POOL_H */
