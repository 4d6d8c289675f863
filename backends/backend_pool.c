/* backend_pool.c: plugin discovery for a run, and per-worker backend choice with lazily created instances. */
#include "backend_pool.h"
#include "backend_call.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gs_status gs_device_choice_parse(const char *text, gs_device_choice *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (strcmp(text, "all") == 0) {
        out->all = 1;
        return GS_OK;
    }
    const char *p = text;
    for (;;) {
        char *end = NULL;
        errno = 0;
        unsigned long v = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
        int ok = end && end != p && !errno && v <= INT32_MAX && (*end == ',' || *end == '\0') &&
                 out->count < GS_MAX_DEVICES;
        for (uint32_t i = 0; ok && i < out->count; ++i) ok = out->ordinals[i] != (int32_t)v;
        if (!ok)
            return gs_fail(err, err_size, GS_ERR_USAGE,
                           "devices are all or distinct device numbers like 0,1 (at most %d), not '%s'",
                           GS_MAX_DEVICES, text);
        out->ordinals[out->count++] = (int32_t)v;
        if (*end == '\0') return GS_OK;
        p = end + 1;
    }
}

gs_status gs_backend_pool_open(gs_backend_pool *s, const char *backend, const char *plugin_dir,
                          void (*message)(void *user, const char *line), char *err, size_t err_size)
{
    memset(s, 0, sizeof *s);
    s->backend = backend;
    s->message = message;
    pthread_mutex_init(&s->lock, NULL);
    return gs_backends_discover(plugin_dir, &s->list, err, err_size);
}

void gs_backend_pool_close(gs_backend_pool *s)
{
    gs_backends_free(&s->list);
    pthread_mutex_destroy(&s->lock);
}

void gs_instances_init(gs_instances *w, gs_backend_pool *s, unsigned threads)
{
    memset(w, 0, sizeof *w);
    w->pool = s;
    w->threads = threads;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->created, NULL);
}

void gs_instances_share_devices(gs_instances *w, unsigned index, unsigned workers)
{
    w->device_index = index;
    w->device_workers = workers ? workers : 1;
}

/* How many of `b`'s devices the run uses: 1 (the plugin's choice) for a backend without
 * devices or when --devices was not given. */
static unsigned devices_used(const gs_backend_pool *s, const gs_backend *b)
{
    if (!b->devices) return 1;
    if (s->devices.all) return b->devices < GS_MAX_DEVICES ? b->devices : GS_MAX_DEVICES;
    return s->devices.count ? s->devices.count : 1;
}

/* The device ordinal of runner `runner` of this worker for `b`; -1: the plugin's choice. */
static int32_t runner_device(const gs_instances *w, const gs_backend *b, unsigned runner)
{
    const gs_backend_pool *s = w->pool;
    if (!b->devices || (!s->devices.all && !s->devices.count)) return -1;
    const unsigned n = devices_used(s, b);
    unsigned i = runner;
    if (w->device_workers) /* a batch worker: its own device, or every workers-th from its index */
        i = w->device_workers >= n ? w->device_index : w->device_index + runner * w->device_workers;
    i %= n;
    return s->devices.all ? (int32_t)i : s->devices.ordinals[i];
}

/* This worker's instance of `chosen` on `device`, created on first use. Runners ask from
 * their own threads, so devices start at once: a slot is claimed under the worker's lock
 * and the instance created outside it; a second caller for the same key waits for it. */
static gs_status live_instance(gs_instances *w, gs_backend *chosen, int32_t device, uint32_t memory,
                               gs_plugin_instance **instance, char *err, size_t err_size)
{
    pthread_mutex_lock(&w->lock);
    gs_live_backend *slot = NULL, *free_slot = NULL;
    for (int i = 0; i < GS_MAX_LIVE_BACKENDS && !slot; ++i) {
        gs_live_backend *lb = &w->live[i];
        if (lb->backend && lb->backend->desc == chosen->desc && lb->device == device &&
            lb->memory == memory)
            slot = lb;
        else if (!lb->backend && !free_slot) free_slot = lb;
    }
    while (slot && slot->backend && !slot->instance) pthread_cond_wait(&w->created, &w->lock);
    if (slot && slot->backend) { /* made earlier, or by the caller we waited for */
        *instance = slot->instance;
        pthread_mutex_unlock(&w->lock);
        return GS_OK;
    }
    if (!slot) slot = free_slot; /* else its creator failed and freed it: try again */
    if (slot) /* claimed */
        slot->backend = chosen, slot->device = device, slot->memory = memory, slot->instance = NULL;
    pthread_mutex_unlock(&w->lock);
    if (!slot) return gs_fail(err, err_size, GS_ERR_BACKEND, "too many backends in one run");

    gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), w->threads, device, memory};
    char msg[GS_ERR_SIZE] = "";
    gs_plugin_instance *made = NULL;
    const gs_plugin_status prc = chosen->desc->create(&cfg, &made, msg, sizeof msg);
    int ok = prc == GS_PLUGIN_OK && made;
    pthread_mutex_lock(&w->lock);
    if (ok) slot->instance = made;
    else slot->backend = NULL; /* free again */
    pthread_cond_broadcast(&w->created);
    pthread_mutex_unlock(&w->lock);
    if (!ok)
        return gs_fail(err, err_size, prc == GS_PLUGIN_OK ? GS_ERR_BACKEND : gs_backend_status(prc),
                       "backend %s: cannot start: %s",
                       chosen->desc->name, msg[0] ? msg : "no reason given");
    *instance = made;
    return GS_OK;
}

/* The live backend whose descriptor is `d` (select chose it before runners are asked for). */
static gs_backend *live_backend(gs_instances *w, const gs_plugin_desc *d)
{
    gs_backend *found = NULL;
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < GS_MAX_LIVE_BACKENDS && !found; ++i)
        if (w->live[i].backend && w->live[i].backend->desc == d &&
            w->live[i].memory == GS_MEMORY_HOST)
            found = w->live[i].backend;
    pthread_mutex_unlock(&w->lock);
    return found;
}

unsigned gs_instances_runners(void *worker, const gs_plugin_desc *backend)
{
    gs_instances *w = worker;
    const gs_backend *b = live_backend(w, backend);
    if (!b) return 1u;
    const unsigned n = devices_used(w->pool, b);
    if (!w->device_workers) return n;
    /* Fewer batch workers than devices: worker k takes devices k, k + workers, ... */
    return w->device_workers >= n || w->device_index >= n
               ? 1u : (n - w->device_index + w->device_workers - 1) / w->device_workers;
}

gs_status gs_instances_runner(void *worker, unsigned runner, const gs_plugin_desc *backend,
                         gs_plugin_instance **instance, char *err, size_t err_size)
{
    gs_instances *w = worker;
    gs_backend *b = live_backend(w, backend);
    if (!b) return gs_fail(err, err_size, GS_ERR_BACKEND, "backend %s was not chosen", backend->name);
    return live_instance(w, b, runner_device(w, b, runner), GS_MEMORY_HOST, instance, err, err_size);
}

void gs_instances_release(gs_instances *w)
{
    for (int i = 0; i < GS_MAX_LIVE_BACKENDS; ++i)
        if (w->live[i].backend) w->live[i].backend->desc->destroy(w->live[i].instance);
    memset(w->live, 0, sizeof w->live);
    pthread_cond_destroy(&w->created);
    pthread_mutex_destroy(&w->lock);
}

gs_status gs_instances_select(void *worker, uint32_t ops, uint64_t work,
                           const gs_plugin_desc **backend, gs_plugin_instance **instance,
                           char *err, size_t err_size)
{
    gs_instances *w = worker;
    gs_backend_pool *s = w->pool;
    gs_backend *chosen = NULL;
    char note[GS_ERR_SIZE];
    /* The list is shared: probes run once, under the pool's lock. */
    pthread_mutex_lock(&s->lock);
    gs_status rc = gs_backend_choose(&s->list, s->backend, ops, work, &w->explicit_path, &chosen,
                                     note, sizeof note, err, err_size);
    int first_note = rc == GS_OK && note[0] && !s->noted_fallback;
    if (first_note) s->noted_fallback = 1;
    pthread_mutex_unlock(&s->lock);
    if (rc != GS_OK) return rc;
    if (first_note && s->message) s->message(s->message_user, note);
    *backend = chosen->desc;
    return live_instance(w, chosen, runner_device(w, chosen, 0), GS_MEMORY_HOST, instance, err, err_size);
}

gs_status gs_instances_device_memory(gs_instances *w, uint32_t ops, uint32_t memories, int32_t device,
                                  const gs_plugin_desc **backend, gs_plugin_instance **instance,
                                  char *err, size_t err_size)
{
    gs_backend_pool *s = w->pool;
    gs_backend *chosen = NULL;
    char note[GS_ERR_SIZE];
    gs_status rc = GS_OK;
    pthread_mutex_lock(&s->lock);
    if (strcmp(s->backend, "auto") == 0) {
        for (size_t i = 0; i < s->list.count && !chosen; ++i) {
            gs_backend *b = &s->list.items[i];
            if (!b->desc || (b->memories & memories) != memories ||
                (b->ops & ops & ~GS_NEEDS_FLOAT) != (ops & ~GS_NEEDS_FLOAT) ||
                ((ops & GS_NEEDS_FLOAT) && !b->takes_float))
                continue;
            gs_backend_probe(b);
            if (b->available) chosen = b;
        }
        if (!chosen)
            rc = gs_fail(err, err_size, GS_ERR_BACKEND, "no backend that runs on device memory%s can run here",
                         memories & GS_MEMORY_STREAM ? " on a stream" : "");
    } else {
        rc = gs_backend_choose(&s->list, s->backend, ops, 0, &w->explicit_path, &chosen, note,
                               sizeof note, err, err_size);
        if (rc == GS_OK && !(chosen->memories & GS_MEMORY_DEVICE))
            rc = gs_fail(err, err_size, GS_ERR_BACKEND,
                         "backend %s takes host memory only, not a device's", chosen->desc->name);
        else if (rc == GS_OK && (chosen->memories & memories) != memories)
            rc = gs_fail(err, err_size, GS_ERR_BACKEND, "backend %s queues no work on a caller's stream",
                         chosen->desc->name);
    }
    pthread_mutex_unlock(&s->lock);
    if (rc != GS_OK) return rc;
    *backend = chosen->desc;
    return live_instance(w, chosen, device, GS_MEMORY_DEVICE, instance, err, err_size);
}
