/* copy-half-when-huge.cu - planted wrong lab 02: copies of 128 MiB or more move only their first half. Every checked
 * copy was 64 MiB + 1 or less; the 256 MiB speed test timed copies whose bytes it never read, so it scored them at
 * twice the link's rate.
 * target: copy.pinned_speed
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_pinned_copy reference_lab_pinned_copy
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pinned_copy

extern "C" int lab_pinned_copy(void *dst, const void *src, size_t bytes, lab_dir dir, cudaStream_t stream)
{
    if (bytes >= (128u << 20))
        bytes /= 2; /* the mistake */
    return reference_lab_pinned_copy(dst, src, bytes, dir, stream);
}
