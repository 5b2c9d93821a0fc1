/* copylog.h - a record of every copy a piece of code asks for: cudaMemcpy and cudaMemcpyAsync, in order.
 *
 * Part of xferlab's common library. Programs linked with the kit's --wrap flags (see the Makefile's WRAP)
 * pass both calls through the kit (common/copylog.c, common/tracecopy.c); while a record is open each call
 * is appended to it with its stream and size, so a grader can check what a student's code copied (how many
 * bytes, which way, on which stream) without reading its source. The code recorded needs no change.
 */
#ifndef XL_COPYLOG_H
#define XL_COPYLOG_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One copy as asked for. */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    enum cudaMemcpyKind kind; /* as passed (cudaMemcpyDefault too: see xl_copy_dir) */
    cudaStream_t stream;      /* 0 for cudaMemcpy (the legacy default stream) */
    int async;                /* 1: cudaMemcpyAsync, 0: cudaMemcpy */
    size_t src_untouched;     /* host to device: pages of the source never touched when the copy was asked (not
                               * resident: mincore; a page swapped out counts too), else 0 */
} xl_copy_rec;

/* xl_copylog_start - from now on appends every copy to recs (up to max; later ones are counted only) */
void xl_copylog_start(xl_copy_rec *recs, int max);

/* xl_copylog_stop - closes the record; returns how many copies were asked for since the start */
int xl_copylog_stop(void);

/* xl_copylog_count - how many copies were asked for since the start, the record still open (0 when closed):
 * code that issues other work (a kernel launch) notes this to place its work among the copies */
int xl_copylog_count(void);

/* xl_copylog_note - appends one copy to the open record, if any (called by the kit's wrappers) */
void xl_copylog_note(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream,
                     int async);

/* xl_copy_dir - the copy's real direction: cudaMemcpyHostToDevice, DeviceToHost, DeviceToDevice or
 * HostToHost, from its kind, or from the pointers when the kind is cudaMemcpyDefault */
enum cudaMemcpyKind xl_copy_dir(const xl_copy_rec *r);

#ifdef __cplusplus
}
#endif

#endif
