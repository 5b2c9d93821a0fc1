/* delay.cu - the delay kernel (see delay.h). */
#include "check.h"
#include "delay.h"
#include "gputime.cuh"

static __global__ void delay_kernel(uint64_t ns)
{
    xl_gpu_spin_ns(ns);
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

extern "C" void xl_hang(cudaStream_t stream)
{
    int *flag;
    XL_CHECK(cudaMalloc(&flag, sizeof *flag));
    XL_CHECK(cudaMemsetAsync(flag, 0, sizeof *flag, stream));
    hang_kernel<<<1, 1, 0, stream>>>(flag);
    XL_CHECK_LAUNCH();
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
