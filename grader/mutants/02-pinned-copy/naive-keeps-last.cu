/* naive-keeps-last.cu - planted wrong lab 02: the naive loop frees each batch's buffer at the start of the next
 * batch, and forgets the last one: one pinned buffer stays allocated after every call.
 * target: pool.loops_exact
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_loop_naive reference_lab_loop_naive
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_loop_naive

extern "C" int lab_loop_naive(void *dev, size_t bytes, int n, lab_produce_fn produce, void *ctx, cudaStream_t stream)
{
    void *prev = NULL;
    for (int i = 0; i < n; i++) {
        void *buf = lab_pinned_alloc(bytes);
        if (!buf)
            return -1;
        lab_pinned_free(prev); /* the previous batch is on the device by now */
        prev = buf;
        produce(buf, bytes, i, ctx);
        if (lab_pinned_copy((char *)dev + (size_t)i * bytes, buf, bytes, LAB_H2D, stream) != 0)
            return -1;
    }
    return 0; /* the mistake: prev is never freed */
}
