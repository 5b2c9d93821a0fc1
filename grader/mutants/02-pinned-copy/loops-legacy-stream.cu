/* loops-legacy-stream.cu - planted wrong lab 02: both loops copy on the legacy stream 0 instead of the stream they
 * are given (each copy waited for). The batches arrive, but not in order with the caller's stream: work queued
 * there before the loop may overwrite them.
 * target: pool.loops_exact
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_loop_naive reference_lab_loop_naive
#define lab_loop_pooled reference_lab_loop_pooled
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_loop_naive
#undef lab_loop_pooled

extern "C" int lab_loop_naive(void *dev, size_t bytes, int n, lab_produce_fn produce, void *ctx, cudaStream_t stream)
{
    (void)stream;
    return reference_lab_loop_naive(dev, bytes, n, produce, ctx, 0); /* the mistake */
}

extern "C" int lab_loop_pooled(lab_pool *pool, void *dev, size_t bytes, int n, lab_produce_fn produce, void *ctx,
                               cudaStream_t stream)
{
    (void)stream;
    return reference_lab_loop_pooled(pool, dev, bytes, n, produce, ctx, 0); /* the mistake */
}
