/* in-place-no-unregister.cu - planted wrong lab 06: memory pinned in place is freed without
 * cudaHostUnregister, so its pages stay registered with the driver.
 * target: leaks.cycles
 */
#include "labs/06-pinning/lab.h"
#define lab_unpin reference_lab_unpin
#include "solutions/06-pinning/lab.cu"
#undef lab_unpin

extern "C" void lab_unpin(lab_pinned *b)
{
    if (b && b->base && b->method == LAB_IN_PLACE) {
        free(b->base); /* the mistake: never unregistered */
        memset(b, 0, sizeof *b);
        return;
    }
    reference_lab_unpin(b);
}
