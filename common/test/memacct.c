/* memacct.c - unit tests of common/memacct (VmRSS, VmHWM and resetting the peak). CPU only. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

Test(memacct, pages_resident_counts_the_touched_pages_of_a_range)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), resident = 9, pages = 9;
    char *m = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(m != MAP_FAILED);
    cr_assert(xl_pages_resident(m, 8 * page, 0, &resident, &pages) == 0 && pages == 8 && resident == 0,
              "a fresh mapping: 8 pages, none resident (got %zu of %zu)", resident, pages);
    m[0] = 1, m[3 * page + 5] = 1, m[7 * page] = 1;
    cr_assert(xl_pages_resident(m, 8 * page, 0, &resident, &pages) == 0 && resident == 3, "3 touched, got %zu", resident);
    cr_assert(xl_pages_resident(m + 1, 7 * page, 0, &resident, &pages) == 0 && pages == 8 && resident == 3,
              "every page the range touches: 8 pages, 3 resident (got %zu of %zu)", resident, pages);
    cr_assert(xl_pages_resident(m + 1, 7 * page, 1, &resident, &pages) == 0 && pages == 6 && resident == 1,
              "only pages wholly inside: 6 pages, 1 resident (got %zu of %zu)", resident, pages);
    cr_assert(xl_pages_resident(m + 1, 10, 1, &resident, &pages) == 0 && pages == 0 && resident == 0,
              "no page wholly inside 10 bytes");
    cr_assert(xl_pages_resident(m, 0, 0, &resident, &pages) == 0 && pages == 0, "0 bytes: no pages");
    cr_assert(munmap(m, 8 * page) == 0);
    cr_assert(xl_pages_resident(m, page, 0, &resident, &pages) == -1 && resident == 0, "an unmapped range: -1");
}
