/* devmem.c - tests of common/devmem: memory prepared by the helpers is ready for a non-blocking stream at once,
 * even with the legacy stream held up by a delay (the race that a bare cudaMemset loses every time).
 * Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/delay.h"
#include "common/devmem.h"
#include "common/gpu.h"

#define BYTES ((size_t)(8u << 20) + 3) /* awkward, and large enough that a copy takes a while */
#define HOLD_NS 200000000ull          /* 200 ms of GPU time queued on the legacy stream first */

/* seen_by_other_stream - BYTES of dev as a new non-blocking stream copies them at once, in a malloc'd buffer */
static unsigned char *seen_by_other_stream(const void *dev)
{
    cudaStream_t s;
    unsigned char *got = malloc(BYTES);
    cr_assert(got != NULL);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    cr_assert(cudaMemcpyAsync(got, dev, BYTES, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(cudaStreamDestroy(s) == cudaSuccess);
    return got;
}

/* need_gpu - skips the test with the probe's reason when there is no GPU */
static void need_gpu(void)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
}

Test(devmem, a_fill_is_done_for_every_stream_when_it_returns)
{
    need_gpu();
    void *dev = NULL;
    cr_assert(cudaMalloc(&dev, BYTES) == cudaSuccess);
    xl_dev_fill(dev, 0x5A, BYTES);
    xl_delay(cudaStreamLegacy, HOLD_NS); /* a fill queued behind this would still be waiting */
    xl_dev_fill(dev, XL_POISON_BYTE, BYTES);
    cr_assert(cudaStreamQuery(cudaStreamLegacy) == cudaSuccess, "nothing is left queued on the legacy stream");
    unsigned char *got = seen_by_other_stream(dev);
    size_t bad = 0;
    cr_assert(xl_check_poison(got, BYTES, &bad) == 0, "byte %zu is 0x%02x, not the fill", bad, got[bad]);
    free(got);
    cudaFree(dev);
}

Test(devmem, an_upload_is_done_for_every_stream_when_it_returns)
{
    need_gpu();
    void *dev = NULL;
    unsigned char *want = malloc(BYTES); /* pageable: the kind cudaMemcpy returns early from */
    cr_assert(want != NULL && cudaMalloc(&dev, BYTES) == cudaSuccess);
    xl_fill_random(want, BYTES, xl_fresh_seed());
    xl_dev_fill(dev, XL_POISON_BYTE, BYTES);
    xl_delay(cudaStreamLegacy, HOLD_NS);
    xl_dev_upload(dev, want, BYTES);
    cr_assert(cudaStreamQuery(cudaStreamLegacy) == cudaSuccess, "nothing is left queued on the legacy stream");
    unsigned char *got = seen_by_other_stream(dev);
    size_t bad = 0;
    cr_assert(xl_compare(got, want, BYTES, &bad) == 0, "byte %zu of %zu differs", bad, BYTES);
    free(got);
    free(want);
    cudaFree(dev);
}
