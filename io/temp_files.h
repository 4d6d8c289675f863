/* temp_files.h: the registry of temporary output files that a signal must not leave behind. */
#ifndef GS_TEMP_FILES_H
#define GS_TEMP_FILES_H

/* Remember `path` (copied) until gs_temp_forget; returns its slot (0 or more), or -1 if the
 * table is full. */
int gs_temp_remember(const char *path);

/* Stop tracking the path in `slot` (gs_temp_remember's result, after the file was renamed
 * into place or unlinked); -1 is a no-op. By slot, not by path: another thread may be
 * refilling a freed slot's path while this one looks. */
void gs_temp_forget(int slot);

/* On SIGINT, SIGTERM, SIGHUP and SIGQUIT: unlink every remembered file, then die of the
 * same signal with its default action (so the shell sees the usual status). */
void gs_temp_install_signal_cleanup(void);

#endif /* GS_TEMP_FILES_H */
