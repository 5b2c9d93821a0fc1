/* lab.cu - lab 02 (pinned copy): YOUR CODE. This is the only file you edit.
 *
 * Implement the functions declared in lab.h (read it first: it is the contract the grader
 * checks). Look at your figures with `make run LAB=02` and grade with `make grade LAB=02`.
 * Wrap every CUDA call in XL_CHECK(...), except where lab.h asks you to handle a failure yourself.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/02-pinned-copy/lab.h"

/* not_done - the message every unfinished function prints */
static int not_done(const char *fn)
{
    fprintf(stderr, "%s: not implemented yet (see the TODO in labs/02-pinned-copy/lab.cu)\n", fn);
    return -1;
}

/* ===== Part A: pinned buffers ===== */

extern "C" void *lab_pinned_alloc(size_t bytes)
{
    /* TODO (A): cudaMallocHost (or cudaHostAlloc with cudaHostAllocDefault: not write-combined, which the host
     * reads many times slower). If it fails: print one line, clear the error with
     * cudaGetLastError(), return NULL. Do not use XL_CHECK here: a failure is an answer, not a crash. */
    (void)bytes;
    not_done("lab_pinned_alloc");
    return NULL;
}

extern "C" void lab_pinned_free(void *buf)
{
    /* TODO (A): cudaFreeHost; NULL does nothing */
    (void)buf;
}

/* ===== Part B: copies ===== */

extern "C" int lab_pinned_copy(void *dst, const void *src, size_t bytes, lab_dir dir, cudaStream_t stream)
{
    /* TODO (B): cudaMemcpyAsync on stream, then wait for that stream (not the whole device). */
    (void)dst, (void)src, (void)bytes, (void)dir, (void)stream;
    return not_done("lab_pinned_copy");
}

/* ===== Part C: the pool ===== */

struct lab_pool {
    int count; /* TODO (C): what else does a pool need to remember? */
};

extern "C" lab_pool *lab_pool_create(size_t bytes, int count)
{
    /* TODO (C): allocate count pinned buffers now; on any failure free what you got and return NULL. */
    (void)bytes, (void)count;
    not_done("lab_pool_create");
    return NULL;
}

extern "C" void *lab_pool_get(lab_pool *pool)
{
    (void)pool; /* TODO (C): hand out a free buffer, or NULL; never allocate here */
    return NULL;
}

extern "C" void lab_pool_put(lab_pool *pool, void *buf)
{
    (void)pool, (void)buf; /* TODO (C) */
}

extern "C" void lab_pool_destroy(lab_pool *pool)
{
    (void)pool; /* TODO (C): free every buffer (those still taken too), then the pool */
}

extern "C" int lab_loop_naive(void *dev, size_t bytes, int n, lab_produce_fn produce, void *ctx, cudaStream_t stream)
{
    /* TODO (C): for each batch: lab_pinned_alloc, produce, lab_pinned_copy to dev + i * bytes, lab_pinned_free */
    (void)dev, (void)bytes, (void)n, (void)produce, (void)ctx, (void)stream;
    return not_done("lab_loop_naive");
}

extern "C" int lab_loop_pooled(lab_pool *pool, void *dev, size_t bytes, int n, lab_produce_fn produce, void *ctx,
                               cudaStream_t stream)
{
    /* TODO (C): the same loop, with buffers from the pool. How much faster is it, and why? */
    (void)pool, (void)dev, (void)bytes, (void)n, (void)produce, (void)ctx, (void)stream;
    return not_done("lab_loop_pooled");
}

/* ===== Part D: the round trip ===== */

extern "C" int lab_round_trip(void *host_out, const void *host_in, void *dev, size_t bytes, cudaStream_t stream)
{
    /* TODO (D): host_in -> dev -> host_out, both copies async on stream, one wait at the end.
     * Do not bounce through a malloc'd buffer: both host buffers are already pinned. */
    (void)host_out, (void)host_in, (void)dev, (void)bytes, (void)stream;
    return not_done("lab_round_trip");
}
