/* scratch_dir.c: depth-first removal of a temporary directory tree. */
#define _XOPEN_SOURCE 700 /* nftw, FTW_PHYS */
#include "scratch_dir.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>

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
