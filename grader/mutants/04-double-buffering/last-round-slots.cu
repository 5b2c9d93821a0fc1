/* last-round-slots.cu - planted wrong lab 04: at the end lab_pipe_run waits for the slots of the last round only,
 * batches % depth of them (all of them at an exact multiple of the depth), forgetting the slots still busy with
 * the round before. Right at exact multiples, wrong beside them once an earlier batch finishes last.
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
    for (int i = 0; i < j->batches; i++) {
        int k = i % p->depth;
        XL_CHECK(cudaEventSynchronize(p->host_free[k]));
        j->produce(p->host[k], j->items, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync(p->dev[k], p->host[k], j->items * sizeof(uint32_t), cudaMemcpyHostToDevice,
                                 p->stream[k]));
        XL_CHECK(cudaEventRecord(p->host_free[k], p->stream[k]));
        j->compute(p->dev[k], j->items, p->dev_result[k], i, p->stream[k], j->ctx);
        XL_CHECK(cudaMemcpyAsync(&j->results[i], p->dev_result[k], sizeof(lab_result), cudaMemcpyDeviceToHost,
                                 p->stream[k]));
    }
    int last = j->batches % p->depth, used = last ? last : p->depth; /* the mistake: the last round's slots */
    for (int k = 0; k < used && k < j->batches; k++)
        XL_CHECK(cudaStreamSynchronize(p->stream[k]));
    return 0;
}
