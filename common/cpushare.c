/* cpushare.c - the busy time of this process's cores, from /proc/stat, and the share of it that was not this
 * process's own (see cpushare.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET */
#endif
#include "cpushare.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "threads.h"

#define MAX_CORES CPU_SETSIZE /* the cores an affinity mask can name (1024 with glibc) */

/* core_ticks - the busy ticks of one "cpuN user nice system idle iowait irq softirq steal ..." line of core N < n
 * with mine[N] set, into *ticks: 1; 0 for any other line (the "cpu" total, intr, a core not in mine) */
static int core_ticks(const char *line, const unsigned char *mine, int n, long long *ticks)
{
    int core, used = 0;
    long long v[8] = {0};
    if (strncmp(line, "cpu", 3) != 0 || sscanf(line + 3, "%d%n", &core, &used) != 1 || used == 0 ||
        core < 0 || core >= n || !mine[core])
        return 0;
    if (sscanf(line + 3 + used, "%lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
               &v[6], &v[7]) < 7)
        return 0; /* steal came with Linux 2.6.11: a line without it is not counted */
    *ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]; /* user nice system irq softirq steal; not idle, iowait */
    return 1;
}

long long xl_cpu_busy_ticks(const char *text, const unsigned char *mine, int n, int *cpus)
{
    long long sum = 0, t;
    *cpus = 0;
    for (const char *line = text; line && *line;) {
        if (core_ticks(line, mine, n, &t)) {
            sum += t;
            ++*cpus;
        }
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : NULL;
    }
    return *cpus ? sum : -1;
}

/* read_busy_ticks - xl_cpu_busy_ticks of /proc/stat, read whole */
static long long read_busy_ticks(const unsigned char *mine, int n, int *cpus)
{
    FILE *f = fopen("/proc/stat", "r");
    char *text = NULL;
    size_t cap = 0;
    long long ticks = -1;
    *cpus = 0;
    if (!f)
        return -1;
    if (getdelim(&text, &cap, '\0', f) > 0) /* the file has no NUL: one read to its end */
        ticks = xl_cpu_busy_ticks(text, mine, n, cpus);
    free(text);
    fclose(f);
    return ticks;
}

void xl_cpu_mark_now(xl_cpu_mark *m)
{
    unsigned char mine[MAX_CORES];
    cpu_set_t set;
    struct timespec ts;
    memset(m, 0, sizeof *m);
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0 || sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    for (int c = 0; c < MAX_CORES; c++)
        mine[c] = CPU_ISSET(c, &set) != 0;
    long long ticks = read_busy_ticks(mine, MAX_CORES, &m->cpus);
    if (ticks < 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    m->wall_s = ts.tv_sec + ts.tv_nsec * 1e-9;
    m->busy_s = (double)ticks / hz;
    m->self_s = xl_cpu_ms_now() * 1e-3;
    m->ok = 1;
}

double xl_cpu_others(const xl_cpu_mark *from, const xl_cpu_mark *to)
{
    double wall = to->wall_s - from->wall_s;
    if (!from->ok || !to->ok || !(wall >= XL_CPU_WINDOW_S))
        return -1;
    double others = (to->busy_s - from->busy_s - (to->self_s - from->self_s)) / wall;
    return others > 0 ? others : 0;
}
