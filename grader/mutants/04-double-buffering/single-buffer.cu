/* single-buffer.cu - planted wrong lab 04: correct, but one buffer whatever the depth, so the host waits
 * for every copy in and every copy in waits for the kernel before it.
 * target: pipe.buffers
 */
#include "labs/04-double-buffering/lab.h"
#define lab_pipe_create reference_lab_pipe_create
#include "solutions/04-double-buffering/lab.cu"
#undef lab_pipe_create

extern "C" lab_pipe *lab_pipe_create(size_t max_items, int depth)
{
    if (depth < 1 || depth > 8)
        return NULL;
    return reference_lab_pipe_create(max_items, 1); /* the mistake: no second buffer */
}
