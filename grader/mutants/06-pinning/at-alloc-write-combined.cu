/* at-alloc-write-combined.cu - planted wrong lab 06: "pinned from the start" allocates write-combined memory,
 * which the host reads many times slower than ordinary memory, though the caller reads its data.
 * target: pin.at_alloc
 */
#include "labs/06-pinning/lab.h"
#define lab_pin_at_alloc reference_lab_pin_at_alloc
#include "solutions/06-pinning/lab.cu"
#undef lab_pin_at_alloc

extern "C" int lab_pin_at_alloc(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    void *p = NULL;
    if (!out || !fill || bytes == 0)
        return failed(out, "lab_pin_at_alloc", "need bytes > 0, a fill and an out", cudaSuccess);
    cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocWriteCombined); /* the mistake */
    if (err != cudaSuccess)
        return failed(out, "lab_pin_at_alloc", "cannot allocate pinned memory", err);
    fill(p, bytes, ctx);
    *out = (lab_pinned){p, bytes, LAB_AT_ALLOC, p, bytes};
    return 0;
}
