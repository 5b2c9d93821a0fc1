/* copy-own-stream.cu - planted wrong lab 02: lab_pinned_copy makes its own non-blocking stream for each copy, waits
 * for that stream and destroys it. The data arrives and nothing else waits, but work the caller queued on its
 * stream before the call is not waited for: the copy may read a source that is not written yet, or land before an
 * earlier write to its destination.
 * target: copy.h2d_exact copy.d2h_exact
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_pinned_copy reference_lab_pinned_copy
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pinned_copy

extern "C" int lab_pinned_copy(void *dst, const void *src, size_t bytes, lab_dir dir, cudaStream_t stream)
{
    cudaStream_t mine;
    (void)stream; /* the mistake */
    if (bytes == 0)
        return 0;
    if (!dst || !src || (dir != LAB_H2D && dir != LAB_D2H))
        return -1;
    XL_CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
    XL_CHECK(cudaMemcpyAsync(dst, src, bytes, dir == LAB_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                             mine));
    XL_CHECK(cudaStreamSynchronize(mine));
    XL_CHECK(cudaStreamDestroy(mine));
    return 0;
}
