/* synclog.h - a record of the waits and stream orderings a piece of code asks for, in order: cudaDeviceSynchronize,
 * cudaStreamSynchronize, cudaEventSynchronize, cudaStreamWaitEvent, cudaEventRecord (and cudaEventRecordWithFlags),
 * with the thread that asked.
 *
 * Part of xferlab's common library, beside copylog.h and memlog.h. Programs linked with the kit's --wrap flags (the
 * Makefile's WRAP) pass these calls through common/synclog.c; while a record is open each call is appended to it,
 * so a grader can say which wait was wrong ("cudaDeviceSynchronize in lab_run_pipelined, after batch 3's copy")
 * without timing it. The record is shared by all threads (common/reclog.h). The code recorded needs no change.
 */
#ifndef XL_SYNCLOG_H
#define XL_SYNCLOG_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XL_SYNC_DEVICE = 1, /* cudaDeviceSynchronize */
    XL_SYNC_STREAM,     /* cudaStreamSynchronize */
    XL_SYNC_EVENT,      /* cudaEventSynchronize */
    XL_SYNC_WAIT_EVENT, /* cudaStreamWaitEvent */
    XL_SYNC_RECORD      /* cudaEventRecord, cudaEventRecordWithFlags */
} xl_sync_kind;

/* One call as asked for. */
typedef struct {
    xl_sync_kind kind;
    cudaStream_t stream;   /* STREAM, WAIT_EVENT, RECORD; else 0 */
    cudaEvent_t event;     /* EVENT, WAIT_EVENT, RECORD; else NULL */
    long tid;              /* the thread that asked (xl_tid) */
    int copies_before;     /* xl_copylog_count() when it was asked */
    int launches_before;   /* xl_memlog_count() when it was asked */
    cudaError_t result;    /* what the call returned */
    unsigned int stream_flags; /* stream's flags as asked (cudaStreamGetFlags): cudaStreamDefault for the legacy
                                * stream and a blocking one (ordered after the legacy stream's work),
                                * cudaStreamNonBlocking; ~0u when it is not a stream */
} xl_sync_rec;

/* xl_synclog_delay_after_record - arms a one-shot hold: the first cudaEventRecord (or cudaEventRecordWithFlags) on
 * stream (0 and cudaStreamLegacy name one stream) asked once at least after_copies copies are in the open copy
 * record (common/copylog.h) is followed, before the call returns, by ns of GPU work on that stream (xl_delay): work
 * other than the recorder's, queued right behind its event. A wait on the event is not held up by it; a wait on the
 * whole stream is. Whether a record is open or not; ns 0 disarms it. Returns nothing; xl_synclog_delay_fired says
 * whether it happened. */
void xl_synclog_delay_after_record(cudaStream_t stream, int after_copies, unsigned long long ns);
/* xl_synclog_delay_fired - 1 when the hold armed last was queued */
int xl_synclog_delay_fired(void);

/* xl_synclog_start - from now on appends every such call to recs (up to max; later ones are counted only) */
void xl_synclog_start(xl_sync_rec *recs, int max);
/* xl_synclog_stop - closes the record; how many calls were asked for since the start */
int xl_synclog_stop(void);
/* xl_synclog_count - how many calls were asked for since the start, the record still open (0 when closed) */
int xl_synclog_count(void);
/* xl_sync_name - the call's name for a message: "cudaDeviceSynchronize", ... */
const char *xl_sync_name(xl_sync_kind kind);

#ifdef __cplusplus
}
#endif

#endif
