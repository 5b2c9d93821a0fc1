/* by-copy-aliases.cu - planted wrong lab 06: "pin by copy" that hands back the ordinary buffer it filled,
 * unpinned, instead of copying it into pinned memory.
 * target: pin.by_copy peak.by_copy
 */
#include "labs/06-pinning/lab.h"
#define lab_pin_by_copy reference_lab_pin_by_copy
#include "solutions/06-pinning/lab.cu"
#undef lab_pin_by_copy

extern "C" int lab_pin_by_copy(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    if (!out || !fill || bytes == 0)
        return failed(out, "lab_pin_by_copy", "bad arguments", cudaSuccess);
    void *tmp = malloc(bytes);
    if (!tmp)
        return failed(out, "lab_pin_by_copy", "out of memory", cudaSuccess);
    fill(tmp, bytes, ctx);
    *out = (lab_pinned){tmp, bytes, LAB_IN_PLACE, NULL, 0}; /* the mistake: no pinned copy at all */
    return 0;
}
