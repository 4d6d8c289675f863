/* scratch_dir.c: temporary directories made with mkdtemp, removed depth first. */
#define _XOPEN_SOURCE 700 /* nftw, FTW_PHYS */
#include "scratch_dir.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Paths gs_test_path_in keeps live at once. */
#define GS_PATH_RING 16

/* nftw's descriptors at once: the trees are a few levels deep. */
#define GS_TREE_FDS 16

static int failures;

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    if (remove(path) != 0) ++failures;
    return 0; /* go on: remove what can be */
}

int gs_test_remove_tree(const char *dir)
{
    failures = 0;
    if ((nftw(dir, remove_entry, GS_TREE_FDS, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT) ||
        failures) {
        fprintf(stderr, "could not remove %s\n", dir);
        return -1;
    }
    return 0;
}

int gs_test_make_dir(char *buf, size_t size, const char *parent, const char *prefix)
{
    if (parent == NULL) {
        const char *tmpdir = getenv("TMPDIR");
        parent = tmpdir && *tmpdir ? tmpdir : "/tmp";
    }
    const int n = snprintf(buf, size, "%s/%sXXXXXX", parent, prefix);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(buf) ? 0 : -1;
}

const char *gs_test_path_in(const char *dir, const char *name)
{
    static char ring[GS_PATH_RING][PATH_MAX];
    static unsigned next;
    char joined[PATH_MAX];
    const int n = snprintf(joined, sizeof joined, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof joined) {
        fprintf(stderr, "path too long: %s/%s\n", dir, name);
        abort();
    }
    char *p = ring[next++ % GS_PATH_RING];
    memcpy(p, joined, (size_t)n + 1);
    return p;
}
