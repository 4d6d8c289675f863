/* backend_session.c: plugin discovery for a run, and per-worker backend choice with lazily created instances. */
#include "backend_session.h"

#include <stdio.h>
#include <string.h>

gs_status gs_session_open(gs_session *s, const char *backend, const char *plugin_dir,
                          void (*message)(const char *line), char *err, size_t err_size)
{
    memset(s, 0, sizeof *s);
    s->backend = backend;
    s->message = message;
    pthread_mutex_init(&s->lock, NULL);
    return gs_backends_discover(plugin_dir, &s->list, err, err_size);
}

void gs_session_close(gs_session *s)
{
    gs_backends_free(&s->list);
    pthread_mutex_destroy(&s->lock);
}

void gs_worker_init(gs_worker *w, gs_session *s, unsigned threads)
{
    memset(w, 0, sizeof *w);
    w->session = s;
    w->threads = threads;
}

void gs_worker_release(gs_worker *w)
{
    for (int i = 0; i < GS_MAX_LIVE_BACKENDS; ++i)
        if (w->live[i].backend) w->live[i].backend->desc->destroy(w->live[i].instance);
    memset(w->live, 0, sizeof w->live);
}

gs_status gs_worker_select(void *worker, uint32_t ops, uint64_t work,
                           const gs_plugin_desc **backend, gs_plugin_instance **instance,
                           char *err, size_t err_size)
{
    gs_worker *w = worker;
    gs_session *s = w->session;
    gs_backend *chosen = NULL;
    char note[GS_ERR_SIZE];
    /* The list is shared: probes run once, under the session's lock. */
    pthread_mutex_lock(&s->lock);
    gs_status rc = gs_backend_choose(&s->list, s->backend, ops, work, &w->explicit_path, &chosen,
                                     note, sizeof note, err, err_size);
    int first_note = rc == GS_OK && note[0] && !s->noted_fallback;
    if (first_note) s->noted_fallback = 1;
    pthread_mutex_unlock(&s->lock);
    if (rc != GS_OK) return rc;
    if (first_note && s->message) s->message(note);
    for (int i = 0; i < GS_MAX_LIVE_BACKENDS; ++i) {
        gs_live_backend *lb = &w->live[i];
        if (lb->backend && lb->backend->desc != chosen->desc) continue;
        if (!lb->backend) {
            gs_plugin_config cfg = {GS_ABI_HEADER_INIT(gs_plugin_config), w->threads, -1};
            char msg[GS_ERR_SIZE] = "";
            if (chosen->desc->create(&cfg, &lb->instance, msg, sizeof msg) != GS_PLUGIN_OK)
                return gs_fail(err, err_size, GS_ERR_BACKEND, "backend %s: cannot start: %s",
                               chosen->desc->name, msg[0] ? msg : "no reason given");
            lb->backend = chosen;
        }
        *backend = chosen->desc;
        *instance = lb->instance;
        return GS_OK;
    }
    return gs_fail(err, err_size, GS_ERR_BACKEND, "too many backends in one run");
}
