/* wait-before-host-work.cu - planted wrong lab 03: correct, but waits before the host work, so the
 * host and the GPU take turns instead of working at the same time.
 * target: fetch.overlap
 */
#include "labs/03-nonblocking-sync/lab.h"
#define lab_fetch reference_lab_fetch
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_fetch

extern "C" int lab_fetch(const lab_fetch_job *j)
{
    j->gpu_work(j->stream, j->ctx);
    XL_CHECK(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, j->stream));
    XL_CHECK(cudaStreamSynchronize(j->stream)); /* the mistake: too early */
    j->host_work(j->ctx);
    j->consume(j->host, j->bytes, j->ctx);
    return 0;
}
