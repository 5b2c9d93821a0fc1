/* copy-stream-no-wait.cu - planted wrong lab 04: a copy stream and a compute stream, the host buffers
 * guarded by events, but a copy in never waits for the kernel still reading its device buffer.
 * target: hazard.device_reuse
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/04-double-buffering/lab.h"

struct lab_pipe {
    int depth;
    size_t max_items;
    uint32_t *host[8], *dev[8];
    lab_result *dev_result[8];
    cudaStream_t copy, compute;
    cudaEvent_t copied[8];
};

extern "C" lab_pipe *lab_pipe_create(size_t max_items, int depth)
{
    if (max_items == 0 || depth < 1 || depth > 8)
        return NULL;
    lab_pipe *p = (lab_pipe *)calloc(1, sizeof *p);
    p->depth = depth;
    p->max_items = max_items;
    for (int k = 0; k < depth; k++) {
        XL_CHECK(cudaMallocHost(&p->host[k], max_items * sizeof(uint32_t)));
        XL_CHECK(cudaMalloc(&p->dev[k], max_items * sizeof(uint32_t)));
        XL_CHECK(cudaMalloc(&p->dev_result[k], sizeof(lab_result)));
        XL_CHECK(cudaEventCreateWithFlags(&p->copied[k], cudaEventDisableTiming));
    }
    XL_CHECK(cudaStreamCreateWithFlags(&p->copy, cudaStreamNonBlocking));
    XL_CHECK(cudaStreamCreateWithFlags(&p->compute, cudaStreamNonBlocking));
    return p;
}

extern "C" int lab_pipe_run(lab_pipe *p, const lab_job *j)
{
    if (!p || !j || j->batches < 0 || j->items > p->max_items)
        return -1;
    for (int i = 0; i < j->batches; i++) {
        int k = i % p->depth;
        XL_CHECK(cudaEventSynchronize(p->copied[k])); /* the host buffer is guarded... */
        j->produce(p->host[k], j->items, i, j->ctx);
        /* ...but this copy does not wait for batch i - depth's kernel, still reading dev[k]: the mistake */
        XL_CHECK(cudaMemcpyAsync(p->dev[k], p->host[k], j->items * sizeof(uint32_t), cudaMemcpyHostToDevice, p->copy));
        XL_CHECK(cudaEventRecord(p->copied[k], p->copy));
        XL_CHECK(cudaStreamWaitEvent(p->compute, p->copied[k], 0));
        j->compute(p->dev[k], j->items, p->dev_result[k], i, p->compute, j->ctx);
        XL_CHECK(cudaMemcpyAsync(&j->results[i], p->dev_result[k], sizeof(lab_result), cudaMemcpyDeviceToHost,
                                 p->compute));
    }
    XL_CHECK(cudaStreamSynchronize(p->copy));
    XL_CHECK(cudaStreamSynchronize(p->compute));
    return 0;
}

extern "C" void lab_pipe_destroy(lab_pipe *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->depth; k++) {
        XL_CHECK(cudaFreeHost(p->host[k]));
        XL_CHECK(cudaFree(p->dev[k]));
        XL_CHECK(cudaFree(p->dev_result[k]));
        XL_CHECK(cudaEventDestroy(p->copied[k]));
    }
    XL_CHECK(cudaStreamDestroy(p->copy));
    XL_CHECK(cudaStreamDestroy(p->compute));
    free(p);
}
