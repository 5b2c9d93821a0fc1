/* copy-small-no-wait.cu - planted wrong lab 01: small host-to-device copies (up to 64 KiB) go through a pinned
 * buffer of its own with cudaMemcpyAsync on the legacy stream, and lab_copy returns without waiting for them. The
 * grader read each result with cudaMemcpy, which runs after them on the same stream, so it always saw the data
 * (and the next copy never found the staging buffer still in use).
 * target: copy.h2d_exact
 */
#include <string.h>

#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    static void *staging; /* 64 KiB, pinned once */
    if (dir != LAB_H2D || bytes == 0 || bytes > 65536 || !dst || !src)
        return reference_lab_copy(dst, src, bytes, dir);
    if (!staging)
        XL_CHECK(cudaMallocHost(&staging, 65536));
    memcpy(staging, src, bytes);
    XL_CHECK(cudaMemcpyAsync(dst, staging, bytes, cudaMemcpyHostToDevice, 0));
    return 0; /* the mistake: the copy may not even have started */
}
