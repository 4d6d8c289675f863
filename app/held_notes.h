/* held_notes.h: a file's notes held until it ends, so that a failure prints one line. */
#ifndef GS_HELD_NOTES_H
#define GS_HELD_NOTES_H

/* Hold a note about `file` (safe from any thread). Notes that cannot be held for want of
 * memory are printed at once. */
void gs_held_note(const char *file, const char *message);

/* The file `file` ended: print its held notes in order if it succeeded, drop them if not.
 * NULL: every note still held. */
void gs_held_notes_release(const char *file, int succeeded);

#endif /* GS_HELD_NOTES_H */
