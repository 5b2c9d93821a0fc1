/* tracecopy.c - puts every cudaMemcpyAsync on a timeline, with no change to the code that calls it.
 *
 * Part of xferlab's common library (see xl_timeline_trace_copies in timeline.h). A program linked with
 * -Xlinker --wrap=cudaMemcpyAsync calls __wrap_cudaMemcpyAsync below instead of the runtime's; while
 * tracing is off it only passes the call on. While on, it records an event before and after the copy on
 * the copy's stream, so the copy's GPU start and end land on the timeline (two event records: a few
 * microseconds each).
 */
#include <cuda_runtime_api.h>

#include "copylog.h"
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

/* __wrap_cudaMemcpyAsync - cudaMemcpyAsync, noted in the open copy record (copylog.h) and recorded as a GPU span
 * while tracing is on; same result */
cudaError_t __wrap_cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    xl_copylog_note(dst, src, bytes, kind, stream, 1);
    if (!traced)
        return __real_cudaMemcpyAsync(dst, src, bytes, kind, stream);
    int id = xl_timeline_gpu_begin(traced, stream, traced_run, xl_timeline_lane(traced, stream), kind_name(kind));
    cudaError_t e = __real_cudaMemcpyAsync(dst, src, bytes, kind, stream);
    xl_timeline_gpu_end(traced, id, stream);
    xl_timeline_bytes(traced, id, bytes);
    return e;
}
