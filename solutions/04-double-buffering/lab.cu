/* lab.cu - lab 04 (double-buffering): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit
 * labs/04-double-buffering/lab.cu, which has the same contract (lab.h).
 *
 * Design: slot k = i % depth owns a pinned host buffer, a device buffer, a device result and a stream.
 * Everything of batch i goes on its slot's stream, so the stream's order alone keeps the device buffer
 * safe (batch i + depth's copy in queues behind batch i's kernel). The host buffer is the one the stream
 * cannot guard: an event recorded right after the copy in says when the host may write it again.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/04-double-buffering/lab.h"

#define MAX_DEPTH 8

struct lab_pipe {
    int depth;
    size_t max_items;
    uint32_t *host[MAX_DEPTH];        /* pinned: the copy engine reads it while the host works */
    uint32_t *dev[MAX_DEPTH];
    lab_result *dev_result[MAX_DEPTH];
    cudaStream_t stream[MAX_DEPTH];
    cudaEvent_t host_free[MAX_DEPTH]; /* recorded after the copy in of host[k]: host[k] may be refilled */
};

/* ok - 1 when err is cudaSuccess; otherwise clears it, says what failed, 0 */
static int ok(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return 1;
    cudaGetLastError();
    fprintf(stderr, "lab_pipe_create: %s: %s\n", what, cudaGetErrorString(err));
    return 0;
}

extern "C" lab_pipe *lab_pipe_create(size_t max_items, int depth)
{
    if (max_items == 0 || depth < 1 || depth > MAX_DEPTH) {
        fprintf(stderr, "lab_pipe_create: need max_items >= 1 and depth 1 to %d (got %zu, %d)\n", MAX_DEPTH, max_items,
                depth);
        return NULL;
    }
    lab_pipe *p = (lab_pipe *)calloc(1, sizeof *p);
    if (!p) {
        fprintf(stderr, "lab_pipe_create: out of memory\n");
        return NULL;
    }
    p->depth = depth;
    p->max_items = max_items;
    size_t bytes; /* a buffer's: past 2^64 it becomes a size no allocation can give (out of memory) */
    if (__builtin_mul_overflow(max_items, sizeof(uint32_t), &bytes))
        bytes = SIZE_MAX;
    for (int k = 0; k < depth; k++) {
        if (!ok(cudaMallocHost(&p->host[k], bytes), "pinning a host buffer") ||
            !ok(cudaMalloc(&p->dev[k], bytes), "a device buffer") ||
            !ok(cudaMalloc(&p->dev_result[k], sizeof(lab_result)), "a device result") ||
            !ok(cudaStreamCreateWithFlags(&p->stream[k], cudaStreamNonBlocking), "a stream") ||
            !ok(cudaEventCreateWithFlags(&p->host_free[k], cudaEventDisableTiming), "an event")) {
            lab_pipe_destroy(p);
            return NULL;
        }
    }
    return p;
}

extern "C" int lab_pipe_run(lab_pipe *p, const lab_job *j)
{
    if (!p || !j || !j->produce || !j->compute || !j->results || j->batches < 0 ||
        j->items == 0 || j->items > p->max_items) {
        fprintf(stderr, "lab_pipe_run: bad arguments\n");
        return -1;
    }
    for (int i = 0; i < j->batches; i++) {
        int k = i % p->depth;
        XL_CHECK(cudaEventSynchronize(p->host_free[k])); /* batch i - depth's copy has read host[k] */
        j->produce(p->host[k], j->items, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync(p->dev[k], p->host[k], j->items * sizeof(uint32_t), cudaMemcpyHostToDevice,
                                 p->stream[k]));
        XL_CHECK(cudaEventRecord(p->host_free[k], p->stream[k]));
        j->compute(p->dev[k], j->items, p->dev_result[k], i, p->stream[k], j->ctx);
        XL_CHECK(cudaMemcpyAsync(&j->results[i], p->dev_result[k], sizeof(lab_result), cudaMemcpyDeviceToHost,
                                 p->stream[k]));
    }
    for (int k = 0; k < p->depth; k++)
        XL_CHECK(cudaStreamSynchronize(p->stream[k])); /* this pipe's streams only */
    return 0;
}

extern "C" void lab_pipe_destroy(lab_pipe *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->depth; k++) {
        if (p->stream[k])
            XL_CHECK(cudaStreamSynchronize(p->stream[k]));
        if (p->host_free[k])
            XL_CHECK(cudaEventDestroy(p->host_free[k]));
        if (p->stream[k])
            XL_CHECK(cudaStreamDestroy(p->stream[k]));
        XL_CHECK(cudaFree(p->dev[k]));          /* cudaFree(NULL) does nothing */
        XL_CHECK(cudaFree(p->dev_result[k]));
        XL_CHECK(cudaFreeHost(p->host[k]));
    }
    free(p);
}
