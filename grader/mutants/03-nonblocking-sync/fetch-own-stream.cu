/* fetch-own-stream.cu - planted wrong lab 03: lab_fetch runs gpu_work and the copy on a stream of its own and
 * waits for that stream, ignoring job->stream, so it runs ahead of the work the caller queued there (the old
 * grader queued nothing there, and gave it full points).
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
    cudaStream_t own; /* the mistake: not job->stream */
    XL_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
    j->gpu_work(own, j->ctx);
    XL_CHECK(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, own));
    j->host_work(j->ctx);
    XL_CHECK(cudaStreamSynchronize(own));
    j->consume(j->host, j->bytes, j->ctx);
    XL_CHECK(cudaStreamDestroy(own));
    return 0;
}
