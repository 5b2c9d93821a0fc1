/* event-before-copy.cu - planted wrong lab 03: waits on an event recorded after the kernel but before
 * the copy, so the result is read while it is still being copied.
 * target: fetch.correct_under_delay
 */
#include "labs/03-nonblocking-sync/lab.h"
#define lab_fetch reference_lab_fetch
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_fetch

extern "C" int lab_fetch(const lab_fetch_job *j)
{
    cudaEvent_t e;
    XL_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    j->gpu_work(j->stream, j->ctx);
    XL_CHECK(cudaEventRecord(e, j->stream)); /* the mistake: before the copy */
    XL_CHECK(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, j->stream));
    j->host_work(j->ctx);
    XL_CHECK(cudaEventSynchronize(e));
    j->consume(j->host, j->bytes, j->ctx);
    XL_CHECK(cudaEventDestroy(e));
    return 0;
}
