/* tracecopy.c - puts every cudaMemcpyAsync and cudaMemcpyBatchAsync on a timeline, with no change to the code
 * that calls it.
 *
 * Part of xferlab's common library (see xl_timeline_trace_copies in timeline.h). A program linked with
 * -Xlinker --wrap=cudaMemcpyAsync calls __wrap_cudaMemcpyAsync below instead of the runtime's (and likewise
 * cudaMemcpyBatchAsync, from CUDA 12.8 on); while tracing is off it only notes the call in the open copy record
 * (copylog.h) and passes it on. While on, it records an event before and after the copy on the copy's stream, so
 * the copy's GPU start and end land on the timeline (two event records: a few microseconds each); a batch is one
 * span, named by the direction of its first copy, with all its bytes.
 */
#include <cuda_runtime_api.h>

#include "copylog.h"
#include "delay.h"
#include "timeline.h"

cudaError_t __real_cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                                   cudaStream_t stream);

static xl_timeline *traced;  /* NULL: tracing off */
static const char *traced_run;

void xl_timeline_trace_copies(xl_timeline *t, const char *run)
{
    if (t)
        xl_timeline_new_lanes(t);
    traced = t;
    traced_run = run;
}

/* kind_name - a copy's direction as the timeline names it */
static const char *kind_name(enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToDevice: return "H2D";
    case cudaMemcpyDeviceToHost: return "D2H";
    case cudaMemcpyDeviceToDevice: return "D2D";
    default: return "copy";
    }
}

/* __wrap_cudaMemcpyAsync - cudaMemcpyAsync, noted in the open copy record (copylog.h), held first when
 * xl_copylog_hold names it, and recorded as a GPU span while tracing is on; same result */
cudaError_t __wrap_cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    xl_copylog_note(dst, src, bytes, kind, stream, 1);
    uint64_t hold = xl_copylog_hold_due(dst, src, kind);
    if (hold)
        xl_delay(stream, hold);
    if (!traced)
        return __real_cudaMemcpyAsync(dst, src, bytes, kind, stream);
    int id = xl_timeline_gpu_begin(traced, stream, traced_run, xl_timeline_lane(traced, stream), kind_name(kind));
    cudaError_t e = __real_cudaMemcpyAsync(dst, src, bytes, kind, stream);
    xl_timeline_gpu_end(traced, id, stream);
    xl_timeline_bytes(traced, id, bytes);
    return e;
}

#if defined(CUDART_VERSION) && CUDART_VERSION >= 12080
/* ===== cudaMemcpyBatchAsync (CUDA 12.8 on; 13.0 dropped its failIdx argument) ===== */

#if CUDART_VERSION >= 13000
#define BATCH_PARAMS                                                                                  \
    void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,                    \
        struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream
#define BATCH_ARGS dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream
#else
#define BATCH_PARAMS                                                                                  \
    void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,                    \
        struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, cudaStream_t stream
#define BATCH_ARGS dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, stream
#endif

cudaError_t __real_cudaMemcpyBatchAsync(BATCH_PARAMS);

/* batch_bytes - the bytes of a batch's copies added up (sizes may be NULL: 0) */
static size_t batch_bytes(const size_t *sizes, size_t count)
{
    size_t bytes = 0;
    for (size_t k = 0; sizes && k < count; k++)
        bytes += sizes[k];
    return bytes;
}

/* unordered - 1 when one of the numAttrs attributes lets its copies read their sources out of stream order */
static int unordered(const struct cudaMemcpyAttributes *attrs, size_t numAttrs)
{
    for (size_t k = 0; attrs && k < numAttrs; k++)
        if (attrs[k].srcAccessOrder != cudaMemcpySrcAccessOrderStream)
            return 1;
    return 0;
}

/* __wrap_cudaMemcpyBatchAsync - cudaMemcpyBatchAsync, noted in the open copy record (xl_copylog_batches) and
 * recorded as one GPU span while tracing is on; same result */
cudaError_t __wrap_cudaMemcpyBatchAsync(BATCH_PARAMS)
{
    xl_copylog_note_batch(sizes, count, stream, unordered(attrs, numAttrs));
    if (!traced || count == 0 || !dsts || !srcs)
        return __real_cudaMemcpyBatchAsync(BATCH_ARGS);
    xl_copy_rec first = {dsts[0], srcs[0], 0, cudaMemcpyDefault, stream, 1, 0};
    int id = xl_timeline_gpu_begin(traced, stream, traced_run, xl_timeline_lane(traced, stream),
                                   kind_name(xl_copy_dir(&first)));
    cudaError_t e = __real_cudaMemcpyBatchAsync(BATCH_ARGS);
    xl_timeline_gpu_end(traced, id, stream);
    xl_timeline_bytes(traced, id, batch_bytes(sizes, count));
    return e;
}
#endif
