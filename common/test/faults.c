/* faults.c - tests of common/faults: the armed create fails as if out of memory, once, and is not counted.
 * Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "common/faults.h"
#include "common/gpu.h"
#include "common/pincount.h"
#include "common/rescount.h"

Test(faults, the_nth_create_fails_once_with_the_runtimes_error)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    cudaFree(NULL); /* the context, before anything is counted */
    xl_resources r0 = xl_resources_now();
    xl_pinned p0 = xl_pinned_now();
    void *a = NULL, *b = NULL, *h = NULL;
    cudaStream_t s = NULL;
    xl_fail_create_after(2); /* two succeed, the third fails */
    cr_assert(cudaMalloc(&a, 4096) == cudaSuccess && cudaStreamCreate(&s) == cudaSuccess);
    cr_assert(!xl_fault_fired(), "nothing failed yet");
    cr_assert(cudaMallocHost(&h, 4096) == cudaErrorMemoryAllocation, "the third create fails as out of memory");
    cr_assert(xl_fault_fired(), "the failure is reported as fired");
    cr_assert(cudaGetLastError() == cudaErrorMemoryAllocation, "the runtime's last error is the shortage");
    cr_assert(cudaGetLastError() == cudaSuccess, "and it is not sticky");
    cr_assert(xl_pinned_now().allocations == p0.allocations, "the failed pinned allocation is not counted");
    cr_assert(cudaMalloc(&b, 4096) == cudaSuccess, "it fails once: the next create succeeds");
    cr_assert(xl_resources_now().dev_allocations == r0.dev_allocations + 2 && xl_resources_now().streams == r0.streams + 1);
    xl_fail_create_after(0);
    xl_fail_create_after(-1); /* armed, then disarmed: nothing fails */
    cudaEvent_t e;
    cr_assert(cudaEventCreate(&e) == cudaSuccess && !xl_fault_fired(), "disarmed: the next create succeeds");
    cudaEventDestroy(e);
    cudaFree(a);
    cudaFree(b);
    cudaStreamDestroy(s);
}
