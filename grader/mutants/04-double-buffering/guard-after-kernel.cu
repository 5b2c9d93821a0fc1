/* guard-after-kernel.cu - planted wrong lab 04: the "host buffer free" event is recorded after the kernel
 * (just before the copy of the result back) instead of right after the copy in. Every result is right, but
 * the host cannot refill a buffer until its batch has computed, so producing never overlaps that kernel.
 * target: pipe.early_refill
 */
#include <cuda_runtime_api.h>

static cudaEvent_t late_event; /* the guard asked for, recorded at the next copy back instead */

/* late_record - remembers the event; nothing is recorded yet */
static cudaError_t late_record(cudaEvent_t event)
{
    late_event = event;
    return cudaSuccess;
}

/* copy_recording_late - cudaMemcpyAsync; before a copy back, records the remembered event on its stream */
static cudaError_t copy_recording_late(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
{
    if (kind == cudaMemcpyDeviceToHost && late_event) {
        cudaError_t err = cudaEventRecord(late_event, s);
        late_event = NULL;
        if (err != cudaSuccess)
            return err;
    }
    return cudaMemcpyAsync(dst, src, bytes, kind, s);
}

#include "labs/04-double-buffering/lab.h"
#include "common/check.h"
#define cudaEventRecord(event, stream) late_record(event)                                  /* the mistake */
#define cudaMemcpyAsync(dst, src, bytes, kind, stream) copy_recording_late(dst, src, bytes, kind, stream)
#include "solutions/04-double-buffering/lab.cu"
