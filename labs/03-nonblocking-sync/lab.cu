/* lab.cu - lab 03 (the non-blocking sync bug): YOUR CODE. This is the only file you edit.
 *
 * This code compiles, runs, and gives the right answer most of the time on a quiet machine.
 * It has two races. Read lab.h and the handout, then fix lab_fetch and lab_send with the
 * narrowest wait that is correct, without losing the overlap. Check with `make run LAB=03`
 * (it runs your code against a slowed-down GPU) and `make grade LAB=03`.
 */
#include <stdio.h>

#include "common/check.h"
#include "labs/03-nonblocking-sync/lab.h"

/* ===== Part A: device to host ===== */

extern "C" int lab_fetch(const lab_fetch_job *j)
{
    if (!j || !j->gpu_work || !j->host_work || !j->consume || !j->host || !j->dev) {
        fprintf(stderr, "lab_fetch: incomplete job\n");
        return -1;
    }
    j->gpu_work(j->stream, j->ctx);
    XL_CHECK(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, j->stream));
    j->host_work(j->ctx);
    /* TODO (A): host is read below, but has the copy into it finished? Wait for exactly that, here,
     * and for nothing else. (Which CUDA object says "this copy is done"? Where must it be recorded?) */
    j->consume(j->host, j->bytes, j->ctx);
    return 0;
}

extern "C" void *lab_fetch_buffer(size_t bytes)
{
    void *p = NULL;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "lab_fetch_buffer: cannot pin %zu bytes\n", bytes);
        return NULL;
    }
    return p;
}

extern "C" void lab_fetch_buffer_free(void *buf)
{
    if (buf)
        XL_CHECK(cudaFreeHost(buf));
}

/* ===== Part B: host to device ===== */

extern "C" int lab_send(const lab_send_job *j)
{
    if (!j || !j->gpu_work || !j->fill || !j->host || !j->dev || j->n < 0) {
        fprintf(stderr, "lab_send: incomplete job\n");
        return -1;
    }
    for (int i = 0; i < j->n; i++) {
        /* TODO (B): fill overwrites host. Is the previous batch's copy done reading it? */
        j->fill(j->host, j->bytes, i, j->ctx);
        j->gpu_work(j->stream, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync((char *)j->dev + (size_t)i * j->bytes, j->host, j->bytes, cudaMemcpyHostToDevice,
                                 j->stream));
    }
    /* TODO (B): lab.h promises that host is free when this returns. Is it? */
    return 0;
}
