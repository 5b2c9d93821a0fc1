/* timing.c - tests of common/timing: a copy timed on a stream other than its own is timed to its end.
 * Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "common/delay.h"
#include "common/gpu.h"
#include "common/timing.h"

#define HOLD_NS 100000000ull /* 100 ms of GPU time on the legacy stream, ahead of the copy */

Test(timing, a_legacy_copy_timed_on_a_nonblocking_stream_is_timed_to_its_end)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    void *a = NULL, *b = NULL;
    cudaStream_t s;
    xl_timing t;
    cr_assert(cudaMalloc(&a, 4096) == cudaSuccess && cudaMalloc(&b, 4096) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    xl_copy_job c = {b, a, 4096, cudaMemcpyDeviceToDevice}; /* cudaMemcpy returns before it runs */
    xl_delay(cudaStreamLegacy, HOLD_NS);                     /* so the copy ends 100 ms from now */
    xl_time_gpu(xl_memcpy_work, &c, s, 0, 1, &t);
    cr_assert(t.median_ms >= 0.9 * HOLD_NS / 1e6, "timed %.3f ms: the stop did not wait for the copy", t.median_ms);
    cr_assert(cudaStreamDestroy(s) == cudaSuccess);
    cudaFree(a);
    cudaFree(b);
}
