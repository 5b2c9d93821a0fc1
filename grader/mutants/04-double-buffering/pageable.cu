/* pageable.cu - planted wrong lab 04: the host buffers come from malloc, so every copy in is staged by
 * the driver and blocks the host.
 * target: pipe.buffers
 */
#include <stdlib.h>

#include <cuda_runtime_api.h>

/* pageable_alloc - malloc in cudaMallocHost's clothes */
static cudaError_t pageable_alloc(void **p, size_t bytes)
{
    *p = malloc(bytes);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* pageable_free - free in cudaFreeHost's clothes */
static cudaError_t pageable_free(void *p)
{
    free(p);
    return cudaSuccess;
}

#include "labs/04-double-buffering/lab.h"
#include "common/check.h"
#define cudaMallocHost(p, bytes) pageable_alloc((void **)(p), bytes) /* the mistake */
#define cudaFreeHost(p) pageable_free(p)
#include "solutions/04-double-buffering/lab.cu"
