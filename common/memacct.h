/* memacct.h - this process's resident memory now and at its peak (Linux /proc), and which pages of a range are in
 * its page tables (mincore).
 *
 * Part of xferlab's common library; pure CPU code with unit tests. VmRSS is what
 * is resident now, VmHWM the peak since start or since xl_mem_reset_peak().
 */
#ifndef XL_MEMACCT_H
#define XL_MEMACCT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    long rss_kib;    /* VmRSS: resident now, KiB */
    long hwm_kib;    /* VmHWM: peak resident, KiB */
    long locked_kib; /* VmLck: mlock()ed, KiB */
} xl_mem;

/* xl_mem_read - reads /proc/self/status into m; 0, or -1 when it cannot be read */
int xl_mem_read(xl_mem *m);

/* xl_mem_reset_peak - resets VmHWM to the current VmRSS (writes 5 to /proc/self/clear_refs); 0 or -1 */
int xl_mem_reset_peak(void);

/* xl_pages_resident - how many of the pages that [p, p + bytes) covers are in this process's page tables (a page
 * the host has touched and that is not swapped out) into *resident, out of *pages; whole 1: only the pages lying
 * wholly inside the range (a page at either end may be shared with other memory), whole 0: every page it touches.
 * Asks mincore a chunk at a time, allocating nothing. 0, or -1 when mincore cannot tell (*resident then 0). */
int xl_pages_resident(const void *p, size_t bytes, int whole, size_t *resident, size_t *pages);

#ifdef __cplusplus
}
#endif

#endif
