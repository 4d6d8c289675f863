/* temp_files.c: a lock-free table of temporary file paths, unlinked on interrupt. */
/* An async-signal-safe handler unlinks them. */

#define _GNU_SOURCE
#include "temp_files.h"

#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* Temporary files alive at once: one per file in flight (--jobs), with room to spare. */
#define GS_TEMP_SLOTS 256

typedef struct temp_slot {
    atomic_int state;    /* 0 free, 1 being filled, 2 live (the handler unlinks it) */
    char path[PATH_MAX]; /* valid while state is 2 */
} temp_slot;

static temp_slot slots[GS_TEMP_SLOTS];

int gs_temp_remember(const char *path)
{
    size_t n = strlen(path);
    if (n >= PATH_MAX) return -1;
    for (int i = 0; i < GS_TEMP_SLOTS; ++i) {
        int expected = 0;
        if (!atomic_compare_exchange_strong(&slots[i].state, &expected, 1)) continue;
        memcpy(slots[i].path, path, n + 1);
        atomic_store(&slots[i].state, 2); /* published only once the path is complete */
        return i;
    }
    return -1;
}

void gs_temp_forget(int slot)
{
    if (slot >= 0 && slot < GS_TEMP_SLOTS) atomic_store(&slots[slot].state, 0);
}

static void on_signal(int sig)
{
    /* Only async-signal-safe calls here: unlink, signal, raise. */
    for (int i = 0; i < GS_TEMP_SLOTS; ++i)
        if (atomic_load(&slots[i].state) == 2) unlink(slots[i].path);
    signal(sig, SIG_DFL);
    raise(sig);
}

void gs_temp_install_signal_cleanup(void)
{
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask); /* no second signal runs the handler twice at once */
    for (size_t i = 0; i < sizeof signals / sizeof *signals; ++i) sigaction(signals[i], &sa, NULL);
}
