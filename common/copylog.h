/* copylog.h - a record of every copy a piece of code asks for: cudaMemcpy and cudaMemcpyAsync, in order, and
 * the cudaMemcpyBatchAsync calls beside them.
 *
 * Part of xferlab's common library. Programs linked with the kit's --wrap flags (see the Makefile's WRAP)
 * pass these calls through the kit (common/copylog.c, common/tracecopy.c); while a record is open each copy
 * is appended to it with its stream and size, so a grader can check what a student's code copied (how many
 * bytes, which way, on which stream) without reading its source. A cudaMemcpyBatchAsync (CUDA 12.8 on) is not
 * a record: it is counted apart (xl_copylog_batches), so that code which checks the records sees only the
 * copies it knows. The code recorded needs no change.
 */
#ifndef XL_COPYLOG_H
#define XL_COPYLOG_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

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

/* xl_copylog_hold - the n-th cudaMemcpyAsync from host to device asked for from now on (0 first; counted whether
 * a record is open or not) first waits ns on its stream (xl_delay queued ahead of it): code that writes the copy's
 * host source again before the copy has read it is then wrong every time, not sometimes. n < 0 ends it. */
void xl_copylog_hold(int n, uint64_t ns);

/* xl_copylog_hold_due - for the wrappers: the wait in ns for the async copy about to be passed on (0: none), which
 * counts it when it goes from host to device */
uint64_t xl_copylog_hold_due(void *dst, const void *src, enum cudaMemcpyKind kind);

/* What the cudaMemcpyBatchAsync calls of one record asked for. */
typedef struct {
    int calls;            /* cudaMemcpyBatchAsync calls */
    size_t copies;        /* the copies they carried: their counts added up */
    size_t bytes;         /* the bytes they carried: their sizes added up */
    cudaStream_t stream;  /* the first call's stream (0 when there was none) */
    int other_streams;    /* calls made on another stream than the first call's */
    int unordered;        /* calls that let a copy read its source out of stream order: an attribute whose
                           * srcAccessOrder is not cudaMemcpySrcAccessOrderStream */
} xl_batch_log;

/* xl_copylog_batches - the cudaMemcpyBatchAsync calls asked for from the last xl_copylog_start on: until its
 * xl_copylog_stop, or until now while the record is open (kept after the stop, until the next start); all zero
 * before the first start */
xl_batch_log xl_copylog_batches(void);

/* xl_copylog_note_batch - notes one cudaMemcpyBatchAsync of count copies of sizes[k] bytes (sizes may be NULL:
 * 0 bytes counted) on stream in the open record, if any; unordered: 1 when its attributes let a copy read its
 * source out of stream order (called by the kit's wrapper) */
void xl_copylog_note_batch(const size_t *sizes, size_t count, cudaStream_t stream, int unordered);

/* xl_copy_dir - the copy's real direction: cudaMemcpyHostToDevice, DeviceToHost, DeviceToDevice or
 * HostToHost, from its kind, or from the pointers when the kind is cudaMemcpyDefault */
enum cudaMemcpyKind xl_copy_dir(const xl_copy_rec *r);

#ifdef __cplusplus
}
#endif

#endif
