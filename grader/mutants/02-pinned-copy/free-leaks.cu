/* free-leaks.cu - planted wrong lab 02: lab_pinned_free forgets to release the memory.
 * target: leaks.none
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_pinned_free reference_lab_pinned_free
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pinned_free

extern "C" void lab_pinned_free(void *buf)
{
    (void)buf; /* the mistake: every pinned buffer stays pinned until the process ends */
}
