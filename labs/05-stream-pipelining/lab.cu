/* lab.cu - lab 05 (multi-stream pipelining): YOUR CODE. This is the only file you edit.
 *
 * Read lab.h (the contract) and the handout (README.md). Split the array into chunks over several
 * streams so that copies in, kernels and copies out of different chunks run at the same time. Check it
 * with `make run LAB=05` (times against the number of streams and the chunk size, and the ideal) and
 * `make grade LAB=05`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/05-stream-pipelining/lab.h"

struct lab_pipeline {
    int streams;
    size_t chunk_items;
    /* TODO: per stream: the stream itself and its device buffers (in and out, chunk_items words each) */
};

extern "C" void *lab_host_alloc(size_t bytes)
{
    return malloc(bytes); /* TODO: can a copy from or to this memory overlap with anything? (lab 02) */
}

extern "C" void lab_host_free(void *p)
{
    free(p);
}

extern "C" lab_pipeline *lab_pipeline_create(size_t chunk_items, int streams)
{
    if (chunk_items == 0 || streams < 1 || streams > 32) {
        fprintf(stderr, "lab_pipeline_create: need chunk_items >= 1 and 1 to 32 streams\n");
        return NULL;
    }
    lab_pipeline *p = (lab_pipeline *)calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->streams = streams;
    p->chunk_items = chunk_items;
    /* TODO: create the streams (which flags?) and allocate each stream's device buffers, once */
    return p;
}

extern "C" int lab_pipeline_run(lab_pipeline *p, const uint32_t *in, uint32_t *out, size_t items, lab_order order,
                                const lab_kernel *k)
{
    (void)p, (void)in, (void)out, (void)items, (void)order, (void)k;
    /* TODO: chunk c = words [c * chunk_items, ...) on stream c % streams: copy in, k->launch, copy out.
     * LAB_DEPTH_FIRST: chunk after chunk. LAB_BREADTH_FIRST: a round of chunks stage by stage. Which
     * buffers can a round reuse safely? Then wait for your streams, and only those. */
    fprintf(stderr, "lab_pipeline_run: not written yet (labs/05-stream-pipelining/lab.cu)\n");
    return -1;
}

extern "C" void lab_pipeline_destroy(lab_pipeline *p)
{
    /* TODO: release everything lab_pipeline_create allocated */
    free(p);
}
