/* delay.cu - the delay kernel (see delay.h). */
#include <string.h>
#include <time.h>

#include "check.h"
#include "delay.h"
#include "gputime.cuh"

static __global__ void delay_kernel(uint64_t ns)
{
    xl_gpu_spin_ns(ns);
}

static __global__ void delay_released_kernel(uint64_t ns, const volatile unsigned *release)
{
    uint64_t start = xl_gpu_now_ns();
    while (*release == 0 && xl_gpu_now_ns() - start < ns) {
    }
}

static __global__ void hang_kernel(volatile int *never)
{
    while (*never == 0) {
    }
}

extern "C" void xl_delay(cudaStream_t stream, uint64_t ns)
{
    delay_kernel<<<1, 1, 0, stream>>>(ns);
    XL_CHECK_LAUNCH();
}

extern "C" void xl_delay_released(cudaStream_t stream, uint64_t ns, const volatile unsigned *release)
{
    delay_released_kernel<<<1, 1, 0, stream>>>(ns, release);
    XL_CHECK_LAUNCH();
}

extern "C" void xl_hang(cudaStream_t stream)
{
    int *flag;
    XL_CHECK(cudaMalloc(&flag, sizeof *flag));
    XL_CHECK(cudaMemsetAsync(flag, 0, sizeof *flag, stream));
    hang_kernel<<<1, 1, 0, stream>>>(flag);
    XL_CHECK_LAUNCH();
}

#define FILL_MAX_BLOCKS 1024 /* multiprocessors xl_fill_gpu can hold (an H100 has 132) */

static __global__ void fill_kernel(uint64_t ns, volatile unsigned char *started)
{
    extern __shared__ unsigned char held[]; /* all a block may have: no other block fits beside it */
    if (threadIdx.x == 0) {
        held[0] = 1;
        started[blockIdx.x] = held[0]; /* a plain store into pinned host memory, seen by the host */
        __threadfence_system();
    }
    xl_gpu_spin_ns(ns);
}

/* all_started - 1 when the first blocks flags of started are set */
static int all_started(const volatile unsigned char *started, int blocks)
{
    for (int b = 0; b < blocks; b++)
        if (!started[b])
            return 0;
    return 1;
}

extern "C" int xl_fill_gpu(cudaStream_t stream, uint64_t ns)
{
    static unsigned char *started; /* pinned, read by the host while the kernel runs; kept for the process */
    if (!started)
        XL_CHECK(cudaHostAlloc((void **)&started, FILL_MAX_BLOCKS, cudaHostAllocMapped));
    int blocks, smem;
    xl_one_block_per_sm((const void *)fill_kernel, &blocks, &smem);
    if (blocks > FILL_MAX_BLOCKS)
        return -1;
    memset(started, 0, (size_t)blocks);
    fill_kernel<<<blocks, 32, smem, stream>>>(ns, started);
    XL_CHECK_LAUNCH();
    cudaError_t e = cudaStreamQuery(stream); /* submits the launch now */
    if (e != cudaErrorNotReady)
        XL_CHECK(e);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!all_started(started, blocks)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 1000000000L)
            return -1;
    }
    return 0;
}

extern "C" void xl_one_block_per_sm(const void *kernel, int *blocks, int *smem)
{
    static int sms, optin;
    if (!sms) {
        int dev;
        XL_CHECK(cudaGetDevice(&dev));
        XL_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        XL_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    }
    XL_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    *blocks = sms;
    *smem = optin;
}
