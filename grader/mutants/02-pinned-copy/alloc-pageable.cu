/* alloc-pageable.cu - planted wrong lab 02: "pinned" buffers from malloc, so every cudaMemcpyAsync from
 * them is a pageable copy through the driver's staging buffer.
 * target: alloc.pinned copy.beats_pageable
 */
#include <stdlib.h>

#include "labs/02-pinned-copy/lab.h"
#define lab_pinned_alloc reference_lab_pinned_alloc
#define lab_pinned_free reference_lab_pinned_free
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pinned_alloc
#undef lab_pinned_free

extern "C" void *lab_pinned_alloc(size_t bytes)
{
    return bytes ? malloc(bytes) : NULL; /* the mistake: pageable memory */
}

extern "C" void lab_pinned_free(void *buf)
{
    free(buf);
}
