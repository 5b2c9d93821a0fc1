/* depth-limit-4.cu - planted wrong lab 04: lab_pipe_create refuses depths above 4 ("four buffers are plenty"),
 * though lab.h allows 1 to 8. The old grader tried depths 1 to 4, then 0 and 9.
 * target: pipe.buffers results.exact
 */
#include <stdio.h>

#include "labs/04-double-buffering/lab.h"
#define lab_pipe_create reference_lab_pipe_create
#include "solutions/04-double-buffering/lab.cu"
#undef lab_pipe_create

extern "C" lab_pipe *lab_pipe_create(size_t max_items, int depth)
{
    if (depth > 4) { /* the mistake */
        fprintf(stderr, "lab_pipe_create: depth 1 to 4\n");
        return NULL;
    }
    return reference_lab_pipe_create(max_items, depth);
}
