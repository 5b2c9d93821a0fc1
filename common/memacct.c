/* memacct.c - VmRSS / VmHWM / VmLck from /proc/self/status (see memacct.h). */
#define _DEFAULT_SOURCE /* mincore */
#include "memacct.h"

#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int xl_mem_read(xl_mem *m)
{
    char line[256];
    int found = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    m->rss_kib = m->hwm_kib = m->locked_kib = -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %ld", &m->rss_kib) == 1 || sscanf(line, "VmHWM: %ld", &m->hwm_kib) == 1 ||
            sscanf(line, "VmLck: %ld", &m->locked_kib) == 1)
            found++;
    }
    fclose(f);
    return (m->rss_kib >= 0 && m->hwm_kib >= 0) ? 0 : -1;
}

int xl_mem_reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

int xl_pages_resident(const void *p, size_t bytes, int whole, size_t *resident, size_t *pages)
{
    enum { CHUNK = 4096 }; /* pages per mincore call */
    unsigned char in[CHUNK];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)p, end = start + bytes;
    uintptr_t lo = whole ? (start + page - 1) / page * page : start / page * page;
    uintptr_t hi = whole ? end / page * page : (end + page - 1) / page * page;
    *resident = 0;
    *pages = bytes && hi > lo ? (hi - lo) / page : 0;
    for (uintptr_t at = lo; at < hi && bytes;) {
        size_t n = (hi - at) / page < CHUNK ? (hi - at) / page : CHUNK;
        if (mincore((void *)at, n * page, in) != 0) {
            *resident = 0;
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            *resident += in[i] & 1;
        at += n * page;
    }
    return 0;
}
