/* leaves-error.cu - planted wrong lab 01: copies correctly, then makes a kernel launch that fails
 * (too many threads per block) and never checks it, leaving the error for the caller.
 * target: copy.h2d_exact copy.d2h_exact
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

static __global__ void nothing() {}

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    int rc = reference_lab_copy(dst, src, bytes, dir);
    nothing<<<1, 4096>>>(); /* the mistake: an invalid launch, unchecked */
    return rc;
}
