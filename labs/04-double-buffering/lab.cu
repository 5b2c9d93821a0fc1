/* lab.cu - lab 04 (double-buffering): YOUR CODE. This is the only file you edit.
 *
 * Read lab.h (the contract), baseline.cu (the kit's sequential version: your starting point) and the
 * handout (README.md). Then build a pipeline with depth buffers in rotation, so that the host produces
 * batch i+2 while batch i+1 crosses the bus and batch i computes. Check it with `make run LAB=04`
 * (your pipeline against the baseline, with the efficiency) and `make grade LAB=04`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/04-double-buffering/lab.h"

struct lab_pipe {
    int depth;
    size_t max_items;
    /* TODO: per slot k < depth: a pinned host buffer, a device buffer, a device lab_result, and what
     * you need to know when each may be reused (streams, events). */
};

extern "C" lab_pipe *lab_pipe_create(size_t max_items, int depth)
{
    if (max_items == 0 || depth < 1 || depth > 8) {
        fprintf(stderr, "lab_pipe_create: need max_items >= 1 and depth 1 to 8\n");
        return NULL;
    }
    lab_pipe *p = (lab_pipe *)calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->depth = depth;
    p->max_items = max_items;
    /* TODO: allocate each slot's buffers, streams and events here, once. On any failure, release what
     * was allocated and return NULL. */
    return p;
}

extern "C" int lab_pipe_run(lab_pipe *p, const lab_job *j)
{
    (void)p, (void)j;
    /* TODO: for each batch i, in slot i % depth: wait until the slot's host buffer is free, produce into
     * it, copy it in, compute, copy the result back into j->results[i]. Wait for nothing wider than you
     * need. Before returning, wait until every result has arrived. */
    fprintf(stderr, "lab_pipe_run: not written yet (labs/04-double-buffering/lab.cu)\n");
    return -1;
}

extern "C" void lab_pipe_destroy(lab_pipe *p)
{
    /* TODO: release everything lab_pipe_create allocated */
    free(p);
}
