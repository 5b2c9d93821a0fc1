/* send-event-per-batch.cu - planted wrong lab 03: lab_send creates a new event for every batch and destroys only
 * the last one, so each call leaves n - 1 events behind.
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
    cudaEvent_t read_done = NULL;
    for (int i = 0; i < j->n; i++) {
        if (i > 0)
            XL_CHECK(cudaEventSynchronize(read_done));
        j->fill(j->host, j->bytes, i, j->ctx);
        j->gpu_work(j->stream, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync((char *)j->dev + (size_t)i * j->bytes, j->host, j->bytes, cudaMemcpyHostToDevice,
                                 j->stream));
        XL_CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming)); /* the mistake: a new one each time */
        XL_CHECK(cudaEventRecord(read_done, j->stream));
    }
    if (read_done) {
        XL_CHECK(cudaEventSynchronize(read_done));
        XL_CHECK(cudaEventDestroy(read_done));
    }
    return 0;
}
