/* write-combined.cu - planted wrong lab 05: lab_host_alloc gives write-combined pinned memory; copies run at full
 * speed, but the host reads `out` many times slower than ordinary memory.
 * target: pipeline.pinned_host
 */
#include "labs/05-stream-pipelining/lab.h"
#define lab_host_alloc reference_lab_host_alloc
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_host_alloc

extern "C" void *lab_host_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocWriteCombined) != cudaSuccess) { /* the mistake */
        cudaGetLastError();
        return NULL;
    }
    return p;
}
