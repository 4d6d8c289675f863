/* fits_setup.c: cfitsio's process-wide set-up, run once before any thread opens a FITS file. */
/*
 * cfitsio sets up its global lock and drivers on the first open, behind a flag it reads
 * with no lock: two threads opening their first files at once (a batch with several files
 * in flight) race on that set-up (ThreadSanitizer: pthread_mutex_init of cfitsio's
 * Fitsio_Lock in one thread against its pthread_mutex_lock in another). Running it once
 * under pthread_once makes every later open see it done.
 */
#include "io_internal.h"

#include <fitsio.h>
#include <pthread.h>

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int setup_status; /* cfitsio's status from fits_init_cfitsio, 0 when it succeeded */

static void setup(void) { setup_status = fits_init_cfitsio(); }

int gs_fits_setup(void)
{
    pthread_once(&setup_once, setup);
    return setup_status;
}
