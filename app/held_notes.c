/* held_notes.c: a file's notes held until it ends: printed if it succeeds, dropped if not. */
#include "held_notes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* One held note; the list keeps arrival order. Batch workers note at once, so a lock. */
typedef struct held {
    struct held *next;
    char *file, *message;
} held;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static held *first, **last = &first;

void gs_held_note(const char *file, const char *message)
{
    held *h = malloc(sizeof *h);
    char *f = strdup(file), *m = strdup(message);
    if (!h || !f || !m) {
        free(h), free(f), free(m);
        gs_report_note(NULL, file, message);
        return;
    }
    *h = (held){NULL, f, m};
    pthread_mutex_lock(&lock);
    *last = h, last = &h->next;
    pthread_mutex_unlock(&lock);
}

void gs_held_notes_release(const char *file, int succeeded)
{
    held *mine = NULL, **mine_last = &mine;
    pthread_mutex_lock(&lock);
    for (held **p = &first; *p;) {
        held *h = *p;
        if (!file || strcmp(h->file, file) == 0) {
            *p = h->next;
            h->next = NULL, *mine_last = h, mine_last = &h->next;
        } else {
            p = &h->next;
        }
    }
    last = &first;
    while (*last) last = &(*last)->next;
    pthread_mutex_unlock(&lock);
    while (mine) {
        held *h = mine;
        mine = h->next;
        if (succeeded) gs_report_note(NULL, h->file, h->message);
        free(h->file), free(h->message), free(h);
    }
}
