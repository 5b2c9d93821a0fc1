/* memlog.h - a record of the unified-memory calls and kernel launches a piece of code makes, in order.
 *
 * Part of xferlab's common library, beside copylog.h. Programs linked with the kit's --wrap flags (the Makefile's
 * WRAP) pass cudaMemPrefetchAsync (and CUDA 12's cudaMemPrefetchAsync_v2, CUDA 13's cudaMemPrefetchBatchAsync),
 * cudaMemAdvise (and CUDA 12's cudaMemAdvise_v2), cudaMemset and cudaMemsetAsync (and their 2D forms) and every
 * <<< >>> launch (__cudaPushCallConfiguration) through
 * common/memlog.c; while a record is open each is appended with its range, location and stream, so that a grader can
 * check what a student's code prefetched, advised and launched, where and in which order, without reading its source.
 * CUDA 12's int device is recorded as a location: cudaCpuDeviceId as {cudaMemLocationTypeHost, 0}, an ordinal d as
 * {cudaMemLocationTypeDevice, d}. A launch made with cudaLaunchKernel directly is not seen. The code recorded needs
 * no change.
 */
#ifndef XL_MEMLOG_H
#define XL_MEMLOG_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XL_MEM_PREFETCH = 1,   /* cudaMemPrefetchAsync (or its _v2) */
    XL_MEM_PREFETCH_BATCH, /* cudaMemPrefetchBatchAsync (CUDA 13): one record a call, ptr/bytes of its first range */
    XL_MEM_ADVISE,         /* cudaMemAdvise (or its _v2) */
    XL_MEM_LAUNCH,         /* a <<< >>> launch */
    XL_MEM_SET             /* cudaMemset, cudaMemsetAsync, cudaMemset2D or cudaMemset2DAsync */
} xl_mem_kind;

/* One call as asked for. */
typedef struct {
    xl_mem_kind kind;
    const void *ptr;          /* prefetch, advise, set: the range as asked (before the driver rounds it to pages; a 2D
                               * set: pitch x height bytes) */
    size_t bytes;
    int loc_type, loc_id;     /* prefetch: where to; advise: the location passed (enum cudaMemLocationType values) */
    int advice;               /* advise: enum cudaMemoryAdvise */
    unsigned long long flags; /* prefetch: as passed */
    cudaStream_t stream;      /* prefetch, launch, set (NULL for cudaMemset and cudaMemset2D) */
    unsigned grid, block;     /* launch: gridDim.x * y * z and blockDim.x * y * z */
    int copies_before;        /* xl_copylog_count() when it was asked: places it among an open copy record */
    cudaError_t result;       /* what the runtime returned (launch: cudaSuccess, the launch's error comes later) */
} xl_mem_rec;

/* xl_memlog_start - from now on appends every prefetch, advice and launch to recs (up to max; later ones are counted
 * only) */
void xl_memlog_start(xl_mem_rec *recs, int max);

/* xl_memlog_stop - closes the record; returns how many calls were made since the start */
int xl_memlog_stop(void);

/* xl_memlog_count - how many calls were made since the start, the record still open (0 when closed) */
int xl_memlog_count(void);

/* xl_mem_kind_name - "prefetch", "batch prefetch", "advice", "launch" or "memset" */
const char *xl_mem_kind_name(xl_mem_kind kind);

#ifdef __cplusplus
}
#endif

#endif
