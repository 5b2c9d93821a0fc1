/* fetch-no-wait.cu - planted wrong lab 03: the bug itself, left in lab_fetch (lab_send is fixed).
 * target: fetch.correct_under_delay fetch.overlap
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
    j->consume(j->host, j->bytes, j->ctx); /* the mistake: the copy may not have run yet */
    return 0;
}
