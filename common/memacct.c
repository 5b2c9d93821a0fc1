/* memacct.c - VmRSS / VmHWM / VmLck from /proc/self/status (see memacct.h). */
#include "memacct.h"

#include <stdio.h>
#include <string.h>

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
