/* scratch_dir.h: making, naming paths in and removing a suite's temporary directories. */
/* Shared by the suites that write files: each makes its directory and removes it, in main
 * as well as in teardown, since a forked test that fails never reaches its teardown. */

#ifndef GS_TEST_SCRATCH_DIR_H
#define GS_TEST_SCRATCH_DIR_H

#include <stddef.h>

/* Make a new directory `parent`/`prefix`XXXXXX (mkdtemp; parent NULL: $TMPDIR, else /tmp)
 * and put its path in buf. Returns 0, or -1 with errno set (ENAMETOOLONG: buf too small). */
int gs_test_make_dir(char *buf, size_t size, const char *parent, const char *prefix);

/* DIR/NAME in one of a ring of 16 buffers, so several can be live at once (dir may itself be
 * an earlier result: it is joined in a local buffer first). A path of PATH_MAX or more is a
 * fault of the suite: it says so on stderr and aborts (a forked test then fails). */
const char *gs_test_path_in(const char *dir, const char *name);

/* Remove `dir` and everything below it, depth first, without following symbolic links (a
 * test may leave a link to a file outside). Returns 0, or -1 if anything stayed, saying so on
 * stderr (it removes what it can). A directory that does not exist is already removed: 0. */
int gs_test_remove_tree(const char *dir);

#endif /* GS_TEST_SCRATCH_DIR_H */
