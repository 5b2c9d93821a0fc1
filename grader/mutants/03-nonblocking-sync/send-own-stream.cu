/* send-own-stream.cu - planted wrong lab 03: lab_send makes its own stream for the batches instead of using
 * job->stream, so they land before the work the caller queued there (the old grader queued nothing there, and
 * gave it full points).
 * target: send.correct_under_delay
 */
#include "labs/03-nonblocking-sync/lab.h"
#define lab_send reference_lab_send
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_send

extern "C" int lab_send(const lab_send_job *j)
{
    if (!j || !j->gpu_work || !j->fill || !j->host || !j->dev || j->n < 0)
        return -1;
    cudaStream_t own; /* the mistake: not job->stream */
    cudaEvent_t read_done;
    XL_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
    XL_CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));
    for (int i = 0; i < j->n; i++) {
        if (i > 0)
            XL_CHECK(cudaEventSynchronize(read_done));
        j->fill(j->host, j->bytes, i, j->ctx);
        j->gpu_work(own, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync((char *)j->dev + (size_t)i * j->bytes, j->host, j->bytes, cudaMemcpyHostToDevice,
                                 own));
        XL_CHECK(cudaEventRecord(read_done, own));
    }
    XL_CHECK(cudaEventSynchronize(read_done));
    XL_CHECK(cudaEventDestroy(read_done));
    XL_CHECK(cudaStreamDestroy(own));
    return 0;
}
