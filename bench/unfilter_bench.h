/* unfilter_bench.h: the PNG unfilter timed per filter and pixel size, beside a memcpy. */

#ifndef GS_UNFILTER_BENCH_H
#define GS_UNFILTER_BENCH_H

/* Print the table to stdout: ns a byte for every unfilter variant this CPU runs, and a
 * memcpy of the same bytes, on synthetic filtered rows. Returns 0, or 1 when out of memory
 * or a variant's bytes differ from the reference's. */
int gs_unfilter_bench_print(void);

#endif /* GS_UNFILTER_BENCH_H */
