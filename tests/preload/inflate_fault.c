/* inflate_fault.c: an LD_PRELOAD library that makes isal_inflate fail once. */
/* It fails at the call GS_TEST_INFLATE_FAIL_CALL names (1 = the first), so the tests can
 * see the fast PNG reader refuse a valid file and libpng take over. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <isa-l.h>
#include <stdatomic.h>
#include <stdlib.h>

int isal_inflate(struct inflate_state *state);

/* Calls so far, over every thread of the process. */
static atomic_long calls;

int isal_inflate(struct inflate_state *state)
{
    static int (*real)(struct inflate_state *);
    if (!real) real = (int (*)(struct inflate_state *))dlsym(RTLD_NEXT, "isal_inflate");
    const char *at = getenv("GS_TEST_INFLATE_FAIL_CALL");
    long n = atomic_fetch_add(&calls, 1) + 1;
    if (at && atol(at) == n) return ISAL_INVALID_BLOCK;
    return real(state);
}
