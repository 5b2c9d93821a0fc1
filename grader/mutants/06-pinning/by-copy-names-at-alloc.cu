/* by-copy-names-at-alloc.cu - planted wrong lab 06: "pin by copy" works, but names its buffer LAB_AT_ALLOC (both
 * come from cudaMallocHost, so lab_unpin happens to release it right), and out->method no longer says how the
 * data was pinned.
 * target: pin.by_copy
 */
#include "labs/06-pinning/lab.h"
#define lab_pin_by_copy reference_lab_pin_by_copy
#include "solutions/06-pinning/lab.cu"
#undef lab_pin_by_copy

extern "C" int lab_pin_by_copy(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    int rc = reference_lab_pin_by_copy(bytes, fill, ctx, out);
    if (rc == 0)
        out->method = LAB_AT_ALLOC; /* the mistake */
    return rc;
}
