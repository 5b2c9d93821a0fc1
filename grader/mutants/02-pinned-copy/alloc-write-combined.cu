/* alloc-write-combined.cu - planted wrong lab 02: pinned buffers allocated write-combined ("faster transfers"). They
 * are page-locked, so every "is it pinned?" check passed, but the host reads them many times slower than ordinary
 * memory.
 * target: alloc.pinned
 */
#include <stdio.h>

#include "labs/02-pinned-copy/lab.h"
#define lab_pinned_alloc reference_lab_pinned_alloc
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pinned_alloc

extern "C" void *lab_pinned_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        return NULL;
    cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocWriteCombined); /* the mistake */
    if (err != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "lab_pinned_alloc: cannot pin %zu bytes: %s\n", bytes, cudaGetErrorString(err));
        return NULL;
    }
    return p;
}
