/* send-device-sync.cu - planted wrong lab 03: lab_send is correct but waits for the whole device.
 * target: send.narrow_wait
 */
#include "labs/03-nonblocking-sync/lab.h"
#define lab_send reference_lab_send
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_send

extern "C" int lab_send(const lab_send_job *j)
{
    for (int i = 0; i < j->n; i++) {
        j->fill(j->host, j->bytes, i, j->ctx);
        j->gpu_work(j->stream, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync((char *)j->dev + (size_t)i * j->bytes, j->host, j->bytes, cudaMemcpyHostToDevice,
                                 j->stream));
        XL_CHECK(cudaDeviceSynchronize()); /* the mistake: every stream, every batch */
    }
    return 0;
}
