/* usable_cpus.h: how many CPUs this process may run on. */
/* Its affinity mask (what Slurm, taskset, cgroup cpusets and Kubernetes CPU sets grant),
 * not every CPU of the node. */

#ifndef GS_USABLE_CPUS_H
#define GS_USABLE_CPUS_H

#ifndef _GNU_SOURCE
#error "usable_cpus.h needs _GNU_SOURCE (sched_getaffinity) defined before any include"
#endif
#include <sched.h>
#include <unistd.h>

/* CPUs in the calling thread's affinity mask; the online count if the mask cannot be
 * read; at least 1. */
static inline unsigned gs_usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return (unsigned)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

#endif /* GS_USABLE_CPUS_H */
