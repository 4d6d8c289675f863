/* background_sync.c: fdatasync of a file on a thread of its own while the file is still being written. */
#include "background_sync.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

struct gs_background_sync {
    pthread_t thread;
    pthread_mutex_t lock;    /* guards asked, stopping, error */
    pthread_cond_t changed;  /* asked or stopping was set */
    int fd;                  /* the file being written */
    int asked;               /* an fdatasync is wanted */
    int stopping;            /* the thread should end */
    int error;               /* errno of the first failed fdatasync, 0 if none */
};

static void *sync_main(void *arg)
{
    gs_background_sync *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->asked && !s->stopping) pthread_cond_wait(&s->changed, &s->lock);
        if (!s->asked) break; /* stopping, and every ask has run */
        s->asked = 0;
        pthread_mutex_unlock(&s->lock);
        const int failed = fdatasync(s->fd) != 0 ? errno : 0;
        pthread_mutex_lock(&s->lock);
        if (failed && !s->error) s->error = failed;
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* A thread that waits on the disk only: no signal is delivered to it (an interrupt is
 * handled on the threads that do the work, as before it existed). */
static int start_thread(gs_background_sync *s)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    const int rc = pthread_create(&s->thread, NULL, sync_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void gs_background_sync_ask(gs_background_sync **sp, int fd)
{
    gs_background_sync *s = *sp;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) return;
        s->fd = fd;
        if (pthread_mutex_init(&s->lock, NULL) != 0) {
            free(s);
            return;
        }
        if (pthread_cond_init(&s->changed, NULL) != 0) {
            pthread_mutex_destroy(&s->lock);
            free(s);
            return;
        }
        if (start_thread(s) != 0) {
            pthread_cond_destroy(&s->changed);
            pthread_mutex_destroy(&s->lock);
            free(s);
            return;
        }
        *sp = s;
    }
    pthread_mutex_lock(&s->lock);
    s->asked = 1;
    pthread_cond_signal(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

int gs_background_sync_end(gs_background_sync **sp)
{
    gs_background_sync *s = *sp;
    if (!s) return 0;
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    pthread_cond_signal(&s->changed);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    const int error = s->error;
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->lock);
    free(s);
    *sp = NULL;
    return error;
}
