/* send-no-wait.cu - planted wrong lab 03: the mirror bug, left in lab_send: the host refills its buffer
 * while the previous copy may still be reading it.
 * target: send.correct_under_delay
 */
#include "labs/03-nonblocking-sync/lab.h"
#define lab_send reference_lab_send
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_send

extern "C" int lab_send(const lab_send_job *j)
{
    for (int i = 0; i < j->n; i++) {
        j->fill(j->host, j->bytes, i, j->ctx); /* the mistake: no wait for the copy of batch i-1 */
        j->gpu_work(j->stream, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync((char *)j->dev + (size_t)i * j->bytes, j->host, j->bytes, cudaMemcpyHostToDevice,
                                 j->stream));
    }
    XL_CHECK(cudaStreamSynchronize(j->stream));
    return 0;
}
