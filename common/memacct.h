/* memacct.h - this process's resident memory now and at its peak (Linux /proc).
 *
 * Part of xferlab's common library; pure CPU code with unit tests. VmRSS is what
 * is resident now, VmHWM the peak since start or since xl_mem_reset_peak().
 */
#ifndef XL_MEMACCT_H
#define XL_MEMACCT_H

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

#ifdef __cplusplus
}
#endif

#endif
