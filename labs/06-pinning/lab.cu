/* lab.cu - lab 06 (pin at allocation, pin later, pin in place): YOUR CODE. This is the only file you edit.
 *
 * Read lab.h (the contract) and the handout (README.md). Write the three ways to get data into pinned
 * memory, the registration of memory the caller has, the matching release, and the break-even count.
 * Check it with `make run LAB=06` (time, peak memory and copy rate of each way) and `make grade LAB=06`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "labs/06-pinning/lab.h"

/* not_yet - what every function says until you write it */
static int not_yet(const char *fn, lab_pinned *out)
{
    fprintf(stderr, "%s: not written yet (labs/06-pinning/lab.cu)\n", fn);
    if (out)
        memset(out, 0, sizeof *out);
    return -1;
}

extern "C" int lab_pin_at_alloc(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    (void)bytes, (void)fill, (void)ctx;
    /* TODO (a): pinned memory first, then fill it */
    return not_yet("lab_pin_at_alloc", out);
}

extern "C" int lab_pin_by_copy(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    (void)bytes, (void)fill, (void)ctx;
    /* TODO (b): fill ordinary memory, copy it into new pinned memory, free the ordinary memory */
    return not_yet("lab_pin_by_copy", out);
}

extern "C" int lab_pin_in_place(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    (void)bytes, (void)fill, (void)ctx;
    /* TODO (c): fill ordinary memory, then pin that same memory (cudaHostRegister). Which alignment and
     * size does pinning work in? */
    return not_yet("lab_pin_in_place", out);
}

extern "C" int lab_register(void *data, size_t bytes, lab_pinned *out)
{
    (void)data, (void)bytes;
    /* TODO: pin [data, data + bytes) in place; data may not be page-aligned */
    return not_yet("lab_register", out);
}

extern "C" void lab_unpin(lab_pinned *b)
{
    /* TODO: the release that matches b->method (what must happen before memory from malloc is freed?) */
    (void)b;
}

extern "C" long lab_breakeven(double pin_ms, size_t bytes, double pinned_gbps, double pageable_gbps)
{
    (void)pin_ms, (void)bytes, (void)pinned_gbps, (void)pageable_gbps;
    /* TODO: the smallest n with n * (pageable time - pinned time) >= pin_ms (see lab.h) */
    return -2;
}
