/* shared-dev-result.cu - planted wrong lab 04: one device result for every slot ("it is only 16 bytes"), so a
 * later batch's kernel can zero and rewrite it before an earlier batch's result has been copied back. The kit's
 * kernels used to run and be copied back in order, so the old grader gave it full points; here an earlier
 * batch's copy back waits until later batches have run.
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
    lab_result *shared = p->dev_result[0]; /* the mistake: every slot's kernel writes here */
    for (int i = 0; i < j->batches; i++) {
        int k = i % p->depth;
        XL_CHECK(cudaEventSynchronize(p->host_free[k]));
        j->produce(p->host[k], j->items, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync(p->dev[k], p->host[k], j->items * sizeof(uint32_t), cudaMemcpyHostToDevice,
                                 p->stream[k]));
        XL_CHECK(cudaEventRecord(p->host_free[k], p->stream[k]));
        j->compute(p->dev[k], j->items, shared, i, p->stream[k], j->ctx);
        XL_CHECK(cudaMemcpyAsync(&j->results[i], shared, sizeof(lab_result), cudaMemcpyDeviceToHost, p->stream[k]));
    }
    for (int k = 0; k < p->depth; k++)
        XL_CHECK(cudaStreamSynchronize(p->stream[k]));
    return 0;
}
