/* pageable-destination.cu - planted wrong lab 03: the fetch buffer comes from malloc, so the copy into
 * it blocks the host until it is done and the host work cannot overlap.
 * target: fetch.pinned_destination fetch.overlap
 */
#include <stdlib.h>

#include "labs/03-nonblocking-sync/lab.h"
#define lab_fetch_buffer reference_lab_fetch_buffer
#define lab_fetch_buffer_free reference_lab_fetch_buffer_free
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_fetch_buffer
#undef lab_fetch_buffer_free

extern "C" void *lab_fetch_buffer(size_t bytes)
{
    return malloc(bytes); /* the mistake: pageable */
}

extern "C" void lab_fetch_buffer_free(void *buf)
{
    free(buf);
}
