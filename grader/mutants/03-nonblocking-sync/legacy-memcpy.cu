/* legacy-memcpy.cu - planted wrong lab 03: "fixes" the race with a blocking cudaMemcpy. It runs on the
 * legacy default stream: that does not wait for the job's non-blocking stream (so the result may not be
 * there yet), and it does wait for every blocking stream (so an unrelated kernel holds it up).
 * target: fetch.correct_under_delay fetch.narrow_wait
 */
#include "labs/03-nonblocking-sync/lab.h"
#define lab_fetch reference_lab_fetch
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_fetch

extern "C" int lab_fetch(const lab_fetch_job *j)
{
    j->gpu_work(j->stream, j->ctx);
    j->host_work(j->ctx);
    XL_CHECK(cudaMemcpy(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost)); /* the mistake */
    j->consume(j->host, j->bytes, j->ctx);
    return 0;
}
