/* cpushare.h - did other processes keep this process's cores busy? Read from /proc/stat, less this process's own
 * CPU time.
 *
 * Part of xferlab's common library (Linux). Pure host code. A speed figure of host work spread over threads says
 * little when other work held the cores: on the H100 machine's 16 cores, lab 07's reference packed 1024 pieces
 * there and back in 0.36 to 0.51 ms beside 4 spinning processes, and in 0.69 to 3.2 ms beside 6. Graders ask this,
 * as they ask gpushare.h of the GPU, before they call a low figure a failure.
 */
#ifndef XL_CPUSHARE_H
#define XL_CPUSHARE_H

#ifdef __cplusplus
extern "C" {
#endif

/* A moment's counters: take two with xl_cpu_mark_now, then ask xl_cpu_others of the time between. */
typedef struct {
    double wall_s; /* a monotonic clock */
    double busy_s; /* the time the cores this process may run on were busy, added up over them (user, nice, system,
                    * irq, softirq and steal: the host of a virtual machine taking the core counts as busy) */
    double self_s; /* this process's own CPU time, all threads */
    int cpus;      /* how many cores busy_s is over (this process's affinity mask) */
    int ok;        /* 1 when every counter could be read */
} xl_cpu_mark;

/* xl_cpu_mark_now - the counters now; m->ok is 0 (and the mark useless) when /proc/stat or the affinity mask cannot
 * be read */
void xl_cpu_mark_now(xl_cpu_mark *m);

/* The shortest time between two marks that xl_cpu_others judges: the counters tick 100 times a second on each
 * core, so over 16 cores a window of 0.1 s is known to about 0.2 cores, one of 10 ms not at all. */
#define XL_CPU_WINDOW_S 0.1

/* xl_cpu_others - how many cores, on average, something other than this process kept busy between the marks from
 * and to (to taken later); at least 0. -1 when a mark is not ok or they are less than XL_CPU_WINDOW_S apart. */
double xl_cpu_others(const xl_cpu_mark *from, const xl_cpu_mark *to);

/* xl_cpu_busy_ticks - the busy ticks in text, the contents of /proc/stat, of the cores c < n with mine[c] not 0, and
 * into *cpus how many such "cpuN" lines it counted; -1 when it counted none (for the unit tests; xl_cpu_mark_now
 * reads the file) */
long long xl_cpu_busy_ticks(const char *text, const unsigned char *mine, int n, int *cpus);

#ifdef __cplusplus
}
#endif

#endif
