/* fetch-skips-host-work.cu - planted wrong lab 03: lab_fetch never calls host_work. It is correct and fast (the
 * overlap test's T is then the GPU work alone, an overlap of 1), and the old grader, which counted only consume,
 * gave it full points.
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
    /* the mistake: host_work is left out */
    XL_CHECK(cudaEventSynchronize(copied));
    j->consume(j->host, j->bytes, j->ctx);
    XL_CHECK(cudaEventDestroy(copied));
    return 0;
}
