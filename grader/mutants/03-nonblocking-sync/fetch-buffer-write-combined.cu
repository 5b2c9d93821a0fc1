/* fetch-buffer-write-combined.cu - planted wrong lab 03: the fetch buffer is pinned, but write-combined
 * (cudaHostAllocWriteCombined): fine for the GPU to write, many times slower for the host, which reads it
 * (consume). The old grader checked only that it was pinned.
 * target: fetch.pinned_destination
 */
#include <stdio.h>

#include "labs/03-nonblocking-sync/lab.h"
#define lab_fetch_buffer reference_lab_fetch_buffer
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_fetch_buffer

extern "C" void *lab_fetch_buffer(size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocWriteCombined) != cudaSuccess) { /* the mistake */
        cudaGetLastError();
        fprintf(stderr, "lab_fetch_buffer: cannot pin %zu bytes\n", bytes);
        return NULL;
    }
    return p;
}
