/* no_entry.c: a test shared object without the gsmooth entry symbol. */
int gs_not_a_plugin(void);
int gs_not_a_plugin(void) { return 42; }
