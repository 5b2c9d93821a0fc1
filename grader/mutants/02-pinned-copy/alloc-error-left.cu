/* alloc-error-left.cu - planted wrong lab 02: returns NULL when pinning fails, but leaves the CUDA error
 * pending, so the next unrelated check reports it.
 * target: alloc.failure_is_clean
 */
#include <stdio.h>

#include "labs/02-pinned-copy/lab.h"
#define lab_pinned_alloc reference_lab_pinned_alloc
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pinned_alloc

extern "C" void *lab_pinned_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0 || cudaMallocHost(&p, bytes) != cudaSuccess) { /* the mistake: no cudaGetLastError() */
        fprintf(stderr, "lab_pinned_alloc: cannot pin %zu bytes\n", bytes);
        return NULL;
    }
    return p;
}
