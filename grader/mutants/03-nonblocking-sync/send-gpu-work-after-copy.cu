/* send-gpu-work-after-copy.cu - planted wrong lab 03: lab_send enqueues batch i's copy before gpu_work(i), not
 * after it. The old grader's gpu_work only kept the GPU busy, so the order could not be seen.
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
    cudaEvent_t read_done;
    XL_CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));
    for (int i = 0; i < j->n; i++) {
        if (i > 0)
            XL_CHECK(cudaEventSynchronize(read_done));
        j->fill(j->host, j->bytes, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync((char *)j->dev + (size_t)i * j->bytes, j->host, j->bytes, cudaMemcpyHostToDevice,
                                 j->stream));
        XL_CHECK(cudaEventRecord(read_done, j->stream));
        j->gpu_work(j->stream, i, j->ctx); /* the mistake: after the copy */
    }
    XL_CHECK(cudaEventSynchronize(read_done));
    XL_CHECK(cudaEventDestroy(read_done));
    return 0;
}
