/* items-from-pipe.cu - planted wrong lab 04: lab_pipe_run copies and computes the pipe's max_items per batch
 * instead of the job's items, so a job with fewer items than the pipe holds is computed over stale data. The old
 * grader always ran jobs of exactly the pipe's size.
 * target: results.exact
 */
#include "labs/04-double-buffering/lab.h"
#define lab_pipe_run reference_lab_pipe_run
#include "solutions/04-double-buffering/lab.cu"
#undef lab_pipe_run

extern "C" int lab_pipe_run(lab_pipe *p, const lab_job *j)
{
    if (!p || !j || !j->produce || !j->compute || !j->results || j->batches < 0 ||
        j->items == 0 || j->items > p->max_items)
        return -1;
    size_t n = p->max_items; /* the mistake: the pipe's size, not the job's */
    for (int i = 0; i < j->batches; i++) {
        int k = i % p->depth;
        XL_CHECK(cudaEventSynchronize(p->host_free[k]));
        j->produce(p->host[k], j->items, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync(p->dev[k], p->host[k], n * sizeof(uint32_t), cudaMemcpyHostToDevice, p->stream[k]));
        XL_CHECK(cudaEventRecord(p->host_free[k], p->stream[k]));
        j->compute(p->dev[k], n, p->dev_result[k], i, p->stream[k], j->ctx);
        XL_CHECK(cudaMemcpyAsync(&j->results[i], p->dev_result[k], sizeof(lab_result), cudaMemcpyDeviceToHost,
                                 p->stream[k]));
    }
    for (int k = 0; k < p->depth; k++)
        XL_CHECK(cudaStreamSynchronize(p->stream[k]));
    return 0;
}
