/* copy-drops-tail.cu - planted wrong lab 01: copies in 4-byte words and drops the last 1-3 bytes.
 * target: copy.h2d_exact copy.d2h_exact
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    return reference_lab_copy(dst, src, bytes / 4 * 4, dir); /* the mistake: bytes rounded down */
}
