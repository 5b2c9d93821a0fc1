/* fetch-leaks-event.cu - planted wrong lab 03: lab_fetch creates an event for every fetch and never destroys
 * it, so a program that fetches in a loop holds more events after every call.
 * target: fetch.correct_under_delay
 */
#include "labs/03-nonblocking-sync/lab.h"
#define lab_fetch reference_lab_fetch
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_fetch

extern "C" int lab_fetch(const lab_fetch_job *j)
{
    if (!j || !j->gpu_work || !j->host_work || !j->consume || !j->host || !j->dev)
        return -1;
    cudaEvent_t copied;
    XL_CHECK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    j->gpu_work(j->stream, j->ctx);
    XL_CHECK(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, j->stream));
    XL_CHECK(cudaEventRecord(copied, j->stream));
    j->host_work(j->ctx);
    XL_CHECK(cudaEventSynchronize(copied));
    j->consume(j->host, j->bytes, j->ctx);
    return 0; /* the mistake: no cudaEventDestroy(copied) */
}
