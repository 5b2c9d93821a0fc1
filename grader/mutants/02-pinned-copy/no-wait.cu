/* no-wait.cu - planted wrong lab 02: queues the copy and returns without waiting for it.
 * target: copy.h2d_exact copy.d2h_exact
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_pinned_copy reference_lab_pinned_copy
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pinned_copy

extern "C" int lab_pinned_copy(void *dst, const void *src, size_t bytes, lab_dir dir, cudaStream_t stream)
{
    if (bytes == 0)
        return 0;
    if (!dst || !src)
        return -1;
    XL_CHECK(cudaMemcpyAsync(dst, src, bytes, dir == LAB_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                             stream));
    return 0; /* the mistake: the data is not there yet */
}
