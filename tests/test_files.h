/* test_files.h: whole-file write and read for the Check suites that drive the binary. */
/* One copy, header-only. */

#ifndef GS_TEST_FILES_H
#define GS_TEST_FILES_H

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Create `p` holding exactly `n` bytes of `data`; fails the current test otherwise. */
static inline void write_file(const char *p, const void *data, size_t n)
{
    FILE *f = fopen(p, "wb");
    ck_assert_msg(f != NULL, "cannot create %s: %s", p, strerror(errno));
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Up to `cap` bytes of `p` into buf; 0 when it cannot be opened. */
static inline size_t read_file(const char *p, void *buf, size_t cap)
{
    FILE *f = fopen(p, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

#endif /* GS_TEST_FILES_H */
