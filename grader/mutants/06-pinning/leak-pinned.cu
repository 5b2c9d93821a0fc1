/* leak-pinned.cu - planted wrong lab 06: lab_unpin forgets to free memory pinned at allocation.
 * target: leaks.cycles
 */
#include "labs/06-pinning/lab.h"
#define lab_unpin reference_lab_unpin
#include "solutions/06-pinning/lab.cu"
#undef lab_unpin

extern "C" void lab_unpin(lab_pinned *b)
{
    if (b && b->method == LAB_AT_ALLOC) {
        memset(b, 0, sizeof *b); /* the mistake: cudaFreeHost never called */
        return;
    }
    reference_lab_unpin(b);
}
