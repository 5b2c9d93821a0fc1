/* lab.cu - lab 02 (pinned copy): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit
 * labs/02-pinned-copy/lab.cu, which has the same contract (lab.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/02-pinned-copy/lab.h"

/* ===== Part A: pinned buffers ===== */

extern "C" void *lab_pinned_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0) {
        fprintf(stderr, "lab_pinned_alloc: 0 bytes requested\n");
        return NULL;
    }
    cudaError_t err = cudaMallocHost(&p, bytes); /* page-locked: the copy engines can DMA from it directly */
    if (err != cudaSuccess) {
        cudaGetLastError(); /* the failure is handled here: do not leave it for the next check to find */
        fprintf(stderr, "lab_pinned_alloc: cannot pin %zu bytes: %s\n", bytes, cudaGetErrorString(err));
        return NULL;
    }
    return p;
}

extern "C" void lab_pinned_free(void *buf)
{
    if (buf)
        XL_CHECK(cudaFreeHost(buf));
}

/* ===== Part B: copies ===== */

extern "C" int lab_pinned_copy(void *dst, const void *src, size_t bytes, lab_dir dir, cudaStream_t stream)
{
    if (bytes == 0)
        return 0;
    if (!dst || !src || (dir != LAB_H2D && dir != LAB_D2H)) {
        fprintf(stderr, "lab_pinned_copy: NULL buffer or bad direction\n");
        return -1;
    }
    XL_CHECK(cudaMemcpyAsync(dst, src, bytes, dir == LAB_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                             stream));
    XL_CHECK(cudaStreamSynchronize(stream)); /* this stream only: other streams keep working */
    return 0;
}

/* ===== Part C: the pool ===== */

struct lab_pool {
    int count;    /* buffers in the pool */
    int free_n;   /* how many are free: free_buf[0 .. free_n-1] */
    void **all;   /* every buffer, for destroy */
    void **free_buf;
};

extern "C" void lab_pool_destroy(lab_pool *pool)
{
    if (!pool)
        return;
    for (int i = 0; pool->all && i < pool->count; i++)
        lab_pinned_free(pool->all[i]);
    free(pool->all);
    free(pool->free_buf);
    free(pool);
}

extern "C" lab_pool *lab_pool_create(size_t bytes, int count)
{
    if (bytes == 0 || count < 1) {
        fprintf(stderr, "lab_pool_create: need bytes >= 1 and count >= 1 (got %zu, %d)\n", bytes, count);
        return NULL;
    }
    lab_pool *p = (lab_pool *)calloc(1, sizeof *p);
    if (!p || !(p->all = (void **)calloc(count, sizeof(void *))) ||
        !(p->free_buf = (void **)calloc(count, sizeof(void *)))) {
        fprintf(stderr, "lab_pool_create: out of memory for a pool of %d buffers\n", count);
        lab_pool_destroy(p);
        return NULL;
    }
    for (int i = 0; i < count; i++) {
        if (!(p->all[i] = lab_pinned_alloc(bytes))) {
            lab_pool_destroy(p);
            return NULL;
        }
        p->count++;
        p->free_buf[p->free_n++] = p->all[i];
    }
    return p;
}

extern "C" void *lab_pool_get(lab_pool *pool)
{
    return pool && pool->free_n > 0 ? pool->free_buf[--pool->free_n] : NULL;
}

extern "C" void lab_pool_put(lab_pool *pool, void *buf)
{
    if (pool && buf && pool->free_n < pool->count)
        pool->free_buf[pool->free_n++] = buf;
}

extern "C" int lab_loop_naive(void *dev, size_t bytes, int n, lab_produce_fn produce, void *ctx, cudaStream_t stream)
{
    for (int i = 0; i < n; i++) {
        void *buf = lab_pinned_alloc(bytes); /* pinning costs far more than the copy */
        if (!buf)
            return -1;
        produce(buf, bytes, i, ctx);
        int rc = lab_pinned_copy((char *)dev + (size_t)i * bytes, buf, bytes, LAB_H2D, stream);
        lab_pinned_free(buf);
        if (rc != 0)
            return -1;
    }
    return 0;
}

extern "C" int lab_loop_pooled(lab_pool *pool, void *dev, size_t bytes, int n, lab_produce_fn produce, void *ctx,
                               cudaStream_t stream)
{
    for (int i = 0; i < n; i++) {
        void *buf = lab_pool_get(pool); /* pinned once, reused every time */
        if (!buf) {
            fprintf(stderr, "lab_loop_pooled: the pool has no free buffer\n");
            return -1;
        }
        produce(buf, bytes, i, ctx);
        int rc = lab_pinned_copy((char *)dev + (size_t)i * bytes, buf, bytes, LAB_H2D, stream);
        lab_pool_put(pool, buf);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* ===== Part D: the round trip ===== */

extern "C" int lab_round_trip(void *host_out, const void *host_in, void *dev, size_t bytes, cudaStream_t stream)
{
    if (!host_out || !host_in || !dev) {
        fprintf(stderr, "lab_round_trip: NULL buffer\n");
        return -1;
    }
    /* both copies in one stream: the second starts after the first, and one wait covers both */
    XL_CHECK(cudaMemcpyAsync(dev, host_in, bytes, cudaMemcpyHostToDevice, stream));
    XL_CHECK(cudaMemcpyAsync(host_out, dev, bytes, cudaMemcpyDeviceToHost, stream));
    XL_CHECK(cudaStreamSynchronize(stream));
    return 0;
}
