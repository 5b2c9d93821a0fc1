/* device-sync.cu - planted wrong lab 03: correct and overlapped, but waits for the whole device.
 * target: fetch.narrow_wait
 */
#include "labs/03-nonblocking-sync/lab.h"
#define lab_fetch reference_lab_fetch
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_fetch

extern "C" int lab_fetch(const lab_fetch_job *j)
{
    j->gpu_work(j->stream, j->ctx);
    XL_CHECK(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, j->stream));
    j->host_work(j->ctx);
    XL_CHECK(cudaDeviceSynchronize()); /* the mistake: also waits for every other stream's work */
    j->consume(j->host, j->bytes, j->ctx);
    return 0;
}
