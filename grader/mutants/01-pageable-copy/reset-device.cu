/* reset-device.cu - planted wrong lab 01: "cleans up" with cudaDeviceReset() after a large copy,
 * which destroys every buffer the caller still holds.
 * target: copy.h2d_exact copy.d2h_exact
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    int rc = reference_lab_copy(dst, src, bytes, dir);
    if (bytes > (1u << 20))
        XL_CHECK(cudaDeviceReset()); /* the mistake */
    return rc;
}
