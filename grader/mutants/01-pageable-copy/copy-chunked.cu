/* copy-chunked.cu - planted wrong lab 01: correct, but copies in 4 KiB pieces, one call each.
 * Every call pays the copy's fixed cost: far below the link's rate.
 * target: copy.pageable_speed
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    const size_t piece = 4096;
    for (size_t off = 0; off < bytes; off += piece) {
        size_t n = bytes - off < piece ? bytes - off : piece;
        if (reference_lab_copy((char *)dst + off, (const char *)src + off, n, dir) != 0)
            return -1;
    }
    return bytes == 0 || (dst && src) ? 0 : -1;
}
