/* copy-halves-whole-mib.cu - planted wrong lab 01: copies of 32 MiB or more that are a whole number of MiB move only
 * their first half. Every checked size had an odd tail; the speed test's 64 MiB copies were timed but their bytes
 * never read, so they scored twice the rate.
 * target: copy.pageable_speed
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    if (bytes >= (32u << 20) && bytes % (1u << 20) == 0)
        bytes /= 2; /* the mistake */
    return reference_lab_copy(dst, src, bytes, dir);
}
