/* at-alloc-pageable-first.cu - planted wrong lab 06: "pinned from the start" that fills an ordinary buffer
 * first and copies it over, so two buffers exist at once.
 * target: peak.at_alloc
 */
#include "labs/06-pinning/lab.h"
#define lab_pin_at_alloc reference_lab_pin_at_alloc
#include "solutions/06-pinning/lab.cu"
#undef lab_pin_at_alloc

extern "C" int lab_pin_at_alloc(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    int rc = lab_pin_by_copy(bytes, fill, ctx, out); /* the mistake */
    if (rc == 0)
        out->method = LAB_AT_ALLOC;
    return rc;
}
