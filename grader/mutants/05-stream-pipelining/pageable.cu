/* pageable.cu - planted wrong lab 05: the array in and out lives in malloc'd memory, so every copy goes
 * through the driver's staging buffer and blocks the host: the streams cannot overlap the copies.
 * target: pipeline.pinned_host speed.depth_first
 */
#include <stdlib.h>

#include "labs/05-stream-pipelining/lab.h"
#define lab_host_alloc reference_lab_host_alloc
#define lab_host_free reference_lab_host_free
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_host_alloc
#undef lab_host_free

extern "C" void *lab_host_alloc(size_t bytes)
{
    return malloc(bytes); /* the mistake */
}

extern "C" void lab_host_free(void *p)
{
    free(p);
}
