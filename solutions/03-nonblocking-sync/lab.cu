/* lab.cu - lab 03 (the non-blocking sync bug): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit
 * labs/03-nonblocking-sync/lab.cu, which starts with both races in it.
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
    cudaEvent_t copied;
    XL_CHECK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    j->gpu_work(j->stream, j->ctx);
    XL_CHECK(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, j->stream));
    XL_CHECK(cudaEventRecord(copied, j->stream)); /* after the copy: it completes when host holds the data */
    j->host_work(j->ctx);                         /* runs while the GPU works */
    XL_CHECK(cudaEventSynchronize(copied));       /* the narrowest wait, and only where the data is needed */
    j->consume(j->host, j->bytes, j->ctx);
    XL_CHECK(cudaEventDestroy(copied));
    return 0;
}

extern "C" void *lab_fetch_buffer(size_t bytes)
{
    void *p = NULL;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) { /* pinned: the copy can run while the host works */
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
    cudaEvent_t read_done; /* the last copy has finished reading host */
    XL_CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));
    for (int i = 0; i < j->n; i++) {
        if (i > 0)
            XL_CHECK(cudaEventSynchronize(read_done)); /* host still belongs to copy i-1 until then */
        j->fill(j->host, j->bytes, i, j->ctx);
        j->gpu_work(j->stream, i, j->ctx);
        XL_CHECK(cudaMemcpyAsync((char *)j->dev + (size_t)i * j->bytes, j->host, j->bytes, cudaMemcpyHostToDevice,
                                 j->stream));
        XL_CHECK(cudaEventRecord(read_done, j->stream));
    }
    XL_CHECK(cudaEventSynchronize(read_done)); /* the caller may reuse host once we return */
    XL_CHECK(cudaEventDestroy(read_done));
    return 0;
}
