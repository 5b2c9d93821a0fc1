/* alloc-in-loop.cu - planted wrong lab 02: the "pooled" loop pins a fresh buffer for every transfer.
 * target: pool.loop_speed
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_loop_pooled reference_lab_loop_pooled
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_loop_pooled

extern "C" int lab_loop_pooled(lab_pool *pool, void *dev, size_t bytes, int n, lab_produce_fn produce, void *ctx,
                               cudaStream_t stream)
{
    (void)pool; /* the mistake: the pool is there, but each transfer pins its own buffer */
    return lab_loop_naive(dev, bytes, n, produce, ctx, stream);
}
