/* memacct.c - unit tests of common/memacct (VmRSS, VmHWM and resetting the peak). CPU only. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/memacct.h"

#define MIB (1 << 20)

/* touch - fills p so that the compiler cannot drop the allocation */
static void touch(char *p, size_t n)
{
    memset(p, 1, n);
    __asm__ volatile("" : : "r"(p) : "memory");
}

Test(memacct, touching_memory_raises_rss_and_peak)
{
    xl_mem before, during;
    cr_assert(xl_mem_read(&before) == 0);
    char *p = malloc(64 * MIB);
    touch(p, 64 * MIB);
    cr_assert(xl_mem_read(&during) == 0);
    cr_assert(during.rss_kib - before.rss_kib >= 60 * 1024, "RSS grew by %ld KiB", during.rss_kib - before.rss_kib);
    cr_assert(during.hwm_kib >= during.rss_kib);
    free(p);
}

Test(memacct, reset_brings_the_peak_down_to_now)
{
    xl_mem m;
    char *p = malloc(64 * MIB);
    touch(p, 64 * MIB);
    free(p); /* large blocks go back to the system at once */
    cr_assert(xl_mem_read(&m) == 0);
    cr_assert(m.hwm_kib - m.rss_kib >= 60 * 1024, "the peak should remember the 64 MiB");
    cr_assert(xl_mem_reset_peak() == 0, "writing /proc/self/clear_refs failed");
    cr_assert(xl_mem_read(&m) == 0);
    cr_assert(m.hwm_kib - m.rss_kib < 8 * 1024, "after a reset the peak is %ld KiB above RSS", m.hwm_kib - m.rss_kib);
}
