/* baseline.cu - lab 04's sequential baseline: one batch after another, nothing overlapped.
 *
 * The kit's; do not edit. Read it first: your lab_pipe_run does the same four stages per batch, with
 * depth buffers in rotation so that they overlap. The grader measures your pipeline against this one,
 * in the same run.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/04-double-buffering/lab.h"

struct base_pipe {
    uint32_t *host;  /* pinned, max_items */
    uint32_t *dev;   /* max_items */
    lab_result *dev_result;
    cudaStream_t stream;
    size_t max_items;
};

extern "C" base_pipe *base_pipe_create(size_t max_items)
{
    base_pipe *p = (base_pipe *)calloc(1, sizeof *p);
    if (!p || max_items == 0) {
        fprintf(stderr, "base_pipe_create: %s\n", p ? "0 items" : "out of memory");
        free(p);
        return NULL;
    }
    p->max_items = max_items;
    XL_CHECK(cudaMallocHost(&p->host, max_items * sizeof(uint32_t)));
    XL_CHECK(cudaMalloc(&p->dev, max_items * sizeof(uint32_t)));
    XL_CHECK(cudaMalloc(&p->dev_result, sizeof(lab_result)));
    XL_CHECK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
    return p;
}

extern "C" int base_pipe_run(base_pipe *p, const lab_job *j)
{
    if (!p || !j || j->items > p->max_items || j->batches < 0)
        return -1;
    for (int i = 0; i < j->batches; i++) {
        j->produce(p->host, j->items, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync(p->dev, p->host, j->items * sizeof(uint32_t), cudaMemcpyHostToDevice, p->stream));
        j->compute(p->dev, j->items, p->dev_result, i, p->stream, j->ctx);
        XL_CHECK(cudaMemcpyAsync(&j->results[i], p->dev_result, sizeof(lab_result), cudaMemcpyDeviceToHost,
                                 p->stream));
        XL_CHECK(cudaStreamSynchronize(p->stream)); /* everything waits for everything: no overlap at all */
    }
    return 0;
}

extern "C" void base_pipe_destroy(base_pipe *p)
{
    if (!p)
        return;
    XL_CHECK(cudaStreamDestroy(p->stream));
    XL_CHECK(cudaFree(p->dev));
    XL_CHECK(cudaFree(p->dev_result));
    XL_CHECK(cudaFreeHost(p->host));
    free(p);
}
