/* pincount.c - tests of common/pincount: pinned memory counted at the CUDA calls. Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "common/gpu.h"
#include "common/pincount.h"

Test(pincount, counts_allocations_and_registrations_until_released)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    xl_pinned start = xl_pinned_now();
    void *a, *b, *c = aligned_alloc(4096, 1 << 20);
    cr_assert(c != NULL);
    cr_assert(cudaMallocHost(&a, 4096) == cudaSuccess);
    cr_assert(cudaHostAlloc(&b, 8192, cudaHostAllocDefault) == cudaSuccess);
    cr_assert(cudaHostRegister(c, 1 << 20, cudaHostRegisterDefault) == cudaSuccess);
    xl_pinned mid = xl_pinned_now();
    cr_assert(mid.allocations == start.allocations + 2 && mid.alloc_bytes == start.alloc_bytes + 12288,
              "two allocations of 12 KiB in all: counted %ld, %zu bytes more", mid.allocations - start.allocations,
              mid.alloc_bytes - start.alloc_bytes);
    cr_assert(mid.registrations == start.registrations + 1 && mid.reg_bytes == start.reg_bytes + (1 << 20));
    cr_assert(cudaHostRegister(c, 1 << 20, cudaHostRegisterDefault) != cudaSuccess, "a second registration fails");
    cudaGetLastError();
    cr_assert(xl_pinned_now().registrations == mid.registrations, "a failed call is not counted");
    cr_assert(cudaFreeHost(a) == cudaSuccess && cudaFreeHost(b) == cudaSuccess);
    cr_assert(cudaHostUnregister(c) == cudaSuccess);
    xl_pinned end = xl_pinned_now();
    cr_assert(end.allocations == start.allocations && end.alloc_bytes == start.alloc_bytes &&
                  end.registrations == start.registrations && end.reg_bytes == start.reg_bytes,
              "released memory is no longer counted");
    free(c);
}
