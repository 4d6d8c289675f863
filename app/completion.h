/* completion.h: the bash and zsh completion scripts, written from the options table the parser uses. */
#ifndef GS_COMPLETION_H
#define GS_COMPLETION_H

#include <stddef.h>
#include <stdio.h>

#include "gsmooth/gsmooth.h"
#include "options.h"

/* Write `shell`'s completion script for gs_options_table() to `to`. GSMOOTH_ERR_IO when
 * the write fails; GSMOOTH_ERR_INTERNAL, naming the option, when an option's entry cannot
 * be completed (a value without a kind, a choice a shell would need quoted). */
gsmooth_status gs_completion_write(FILE *to, gs_shell shell, char *err, size_t err_size);

#endif /* GS_COMPLETION_H */
