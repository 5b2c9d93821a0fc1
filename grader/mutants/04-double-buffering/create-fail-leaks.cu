/* create-fail-leaks.cu - planted wrong lab 04: when an allocation fails half way, lab_pipe_create returns NULL
 * without releasing what the earlier slots got. The old grader never made a create fail.
 * target: pipe.arguments
 */
#include "labs/04-double-buffering/lab.h"
#define lab_pipe_create reference_lab_pipe_create
#include "solutions/04-double-buffering/lab.cu"
#undef lab_pipe_create

extern "C" lab_pipe *lab_pipe_create(size_t max_items, int depth)
{
    if (max_items == 0 || depth < 1 || depth > MAX_DEPTH)
        return NULL;
    lab_pipe *p = (lab_pipe *)calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->depth = depth;
    p->max_items = max_items;
    size_t bytes = max_items * sizeof(uint32_t);
    for (int k = 0; k < depth; k++) {
        if (!ok(cudaMallocHost(&p->host[k], bytes), "pinning a host buffer") ||
            !ok(cudaMalloc(&p->dev[k], bytes), "a device buffer") ||
            !ok(cudaMalloc(&p->dev_result[k], sizeof(lab_result)), "a device result") ||
            !ok(cudaStreamCreateWithFlags(&p->stream[k], cudaStreamNonBlocking), "a stream") ||
            !ok(cudaEventCreateWithFlags(&p->host_free[k], cudaEventDisableTiming), "an event")) {
            free(p); /* the mistake: the slots allocated so far stay allocated */
            return NULL;
        }
    }
    return p;
}
