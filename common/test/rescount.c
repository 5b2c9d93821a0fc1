/* rescount.c - tests of common/rescount: device buffers, streams and events counted at the CUDA calls.
 * Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "common/gpu.h"
#include "common/rescount.h"

Test(rescount, counts_buffers_streams_and_events_until_released)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    xl_resources start = xl_resources_now();
    void *a, *b;
    cudaStream_t s1, s2;
    cudaEvent_t e1, e2;
    cr_assert(cudaMalloc(&a, 4096) == cudaSuccess && cudaMallocManaged(&b, 8192, cudaMemAttachGlobal) == cudaSuccess);
    cr_assert(cudaStreamCreate(&s1) == cudaSuccess && cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) == cudaSuccess);
    cr_assert(cudaEventCreate(&e1) == cudaSuccess && cudaEventCreateWithFlags(&e2, cudaEventDisableTiming) == cudaSuccess);
    xl_resources mid = xl_resources_now();
    cr_assert(mid.dev_allocations == start.dev_allocations + 2 && mid.dev_bytes == start.dev_bytes + 12288,
              "two device buffers of 12 KiB in all: counted %ld, %zu bytes more", mid.dev_allocations - start.dev_allocations,
              mid.dev_bytes - start.dev_bytes);
    cr_assert(mid.streams == start.streams + 2 && mid.events == start.events + 2, "streams %ld, events %ld more",
              mid.streams - start.streams, mid.events - start.events);
    void *huge = NULL;
    cr_assert(cudaMalloc(&huge, (size_t)1 << 50) != cudaSuccess, "1 PiB cannot be allocated");
    cudaGetLastError();
    cr_assert(xl_resources_now().dev_allocations == mid.dev_allocations, "a failed call is not counted");
    cr_assert(cudaFree(a) == cudaSuccess && cudaFree(b) == cudaSuccess && cudaFree(NULL) == cudaSuccess);
    cr_assert(cudaStreamDestroy(s1) == cudaSuccess && cudaStreamDestroy(s2) == cudaSuccess);
    cr_assert(cudaEventDestroy(e1) == cudaSuccess && cudaEventDestroy(e2) == cudaSuccess);
    xl_resources end = xl_resources_now();
    cr_assert(end.dev_allocations == start.dev_allocations && end.dev_bytes == start.dev_bytes &&
                  end.streams == start.streams && end.events == start.events,
              "released resources are no longer counted");
}
