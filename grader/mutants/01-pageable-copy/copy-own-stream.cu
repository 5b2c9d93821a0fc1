/* copy-own-stream.cu - planted wrong lab 01: lab_copy on a non-blocking stream of its own, waited for. Each copy is
 * complete when it returns, but it no longer runs in order with the legacy stream: work queued there before the
 * call (a kernel that writes the source, a copy into the destination) may come after it.
 * target: copy.h2d_exact copy.d2h_exact
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    static cudaStream_t mine; /* made once, kept */
    if (bytes == 0)
        return 0;
    if (!dst || !src || (dir != LAB_H2D && dir != LAB_D2H))
        return -1;
    if (!mine)
        XL_CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking)); /* the mistake */
    XL_CHECK(cudaMemcpyAsync(dst, src, bytes, dir == LAB_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                             mine));
    XL_CHECK(cudaStreamSynchronize(mine));
    return 0;
}
