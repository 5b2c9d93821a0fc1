/* lab.cu - lab 05 (multi-stream pipelining): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit
 * labs/05-stream-pipelining/lab.cu, which has the same contract (lab.h).
 *
 * Each stream owns one device buffer in and one out. Chunk c goes on stream c mod S, so the stream's order
 * alone keeps its buffers safe: chunk c + S's copy in queues behind chunk c's copy out. Depth-first issues
 * chunk after chunk; breadth-first issues a round of S chunks stage by stage (never more than S at once, or
 * a copy in would overwrite a buffer whose kernel has not run yet).
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/05-stream-pipelining/lab.h"

#define MAX_STREAMS 32

struct lab_pipeline {
    int streams;
    size_t chunk_items;
    cudaStream_t s[MAX_STREAMS]; /* non-blocking: they neither wait for nor hold up the legacy default stream */
    uint32_t *din[MAX_STREAMS], *dout[MAX_STREAMS];
};

extern "C" void *lab_host_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) { /* pinned: copies from and to it can overlap */
        cudaGetLastError();
        fprintf(stderr, "lab_host_alloc: cannot pin %zu bytes\n", bytes);
        return NULL;
    }
    return p;
}

extern "C" void lab_host_free(void *p)
{
    if (p)
        XL_CHECK(cudaFreeHost(p));
}

extern "C" lab_pipeline *lab_pipeline_create(size_t chunk_items, int streams)
{
    if (chunk_items == 0 || streams < 1 || streams > MAX_STREAMS) {
        fprintf(stderr, "lab_pipeline_create: need chunk_items >= 1 and 1 to %d streams\n", MAX_STREAMS);
        return NULL;
    }
    lab_pipeline *p = (lab_pipeline *)calloc(1, sizeof *p);
    if (!p) {
        fprintf(stderr, "lab_pipeline_create: out of memory\n");
        return NULL;
    }
    p->streams = streams;
    p->chunk_items = chunk_items;
    size_t bytes; /* a chunk's: past 2^64 it becomes a size no allocation can give (out of memory) */
    if (__builtin_mul_overflow(chunk_items, sizeof(uint32_t), &bytes))
        bytes = SIZE_MAX;
    for (int i = 0; i < streams; i++) {
        if (cudaStreamCreateWithFlags(&p->s[i], cudaStreamNonBlocking) != cudaSuccess ||
            cudaMalloc(&p->din[i], bytes) != cudaSuccess ||
            cudaMalloc(&p->dout[i], bytes) != cudaSuccess) {
            cudaGetLastError();
            fprintf(stderr, "lab_pipeline_create: out of device memory for %d streams of %zu words\n", streams,
                    chunk_items);
            lab_pipeline_destroy(p);
            return NULL;
        }
    }
    return p;
}

/* copy_in, compute, copy_out - one stage of chunk c on its stream */
static void copy_in(lab_pipeline *p, const uint32_t *in, size_t items, size_t c)
{
    int s = (int)(c % (size_t)p->streams);
    size_t first = c * p->chunk_items, n = items - first < p->chunk_items ? items - first : p->chunk_items;
    XL_CHECK(cudaMemcpyAsync(p->din[s], in + first, n * sizeof(uint32_t), cudaMemcpyHostToDevice, p->s[s]));
}
static void compute(lab_pipeline *p, size_t items, size_t c, const lab_kernel *k)
{
    int s = (int)(c % (size_t)p->streams);
    size_t first = c * p->chunk_items, n = items - first < p->chunk_items ? items - first : p->chunk_items;
    k->launch(p->din[s], p->dout[s], n, p->s[s], k->ctx);
}
static void copy_out(lab_pipeline *p, uint32_t *out, size_t items, size_t c)
{
    int s = (int)(c % (size_t)p->streams);
    size_t first = c * p->chunk_items, n = items - first < p->chunk_items ? items - first : p->chunk_items;
    XL_CHECK(cudaMemcpyAsync(out + first, p->dout[s], n * sizeof(uint32_t), cudaMemcpyDeviceToHost, p->s[s]));
}

extern "C" int lab_pipeline_run(lab_pipeline *p, const uint32_t *in, uint32_t *out, size_t items, lab_order order,
                                const lab_kernel *k)
{
    if (!p || !k || !k->launch || (items && (!in || !out)) || (order != LAB_DEPTH_FIRST && order != LAB_BREADTH_FIRST)) {
        fprintf(stderr, "lab_pipeline_run: bad arguments\n");
        return -1;
    }
    size_t chunks = (items + p->chunk_items - 1) / p->chunk_items;
    if (order == LAB_DEPTH_FIRST) {
        for (size_t c = 0; c < chunks; c++) {
            copy_in(p, in, items, c);
            compute(p, items, c, k);
            copy_out(p, out, items, c);
        }
    } else {
        for (size_t round = 0; round < chunks; round += (size_t)p->streams) {
            size_t end = round + (size_t)p->streams < chunks ? round + (size_t)p->streams : chunks;
            for (size_t c = round; c < end; c++)
                copy_in(p, in, items, c);
            for (size_t c = round; c < end; c++)
                compute(p, items, c, k);
            for (size_t c = round; c < end; c++)
                copy_out(p, out, items, c);
        }
    }
    for (int i = 0; i < p->streams; i++)
        XL_CHECK(cudaStreamSynchronize(p->s[i])); /* this pipeline's streams, not the device */
    return 0;
}

extern "C" void lab_pipeline_destroy(lab_pipeline *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->streams; i++) {
        if (p->s[i]) {
            XL_CHECK(cudaStreamSynchronize(p->s[i]));
            XL_CHECK(cudaStreamDestroy(p->s[i]));
        }
        XL_CHECK(cudaFree(p->din[i]));
        XL_CHECK(cudaFree(p->dout[i]));
    }
    free(p);
}
