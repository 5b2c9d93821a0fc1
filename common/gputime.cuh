/* gputime.cuh - the GPU's own clock, for kernels that must take a set time. Device code only.
 *
 * Part of xferlab's common library; included by .cu files (delay.cu, lab 04's workload).
 */
#ifndef XL_GPUTIME_CUH
#define XL_GPUTIME_CUH

#include <stdint.h>

/* xl_gpu_now_ns - the GPU's global nanosecond timer (%globaltimer; it ticks every microsecond or finer) */
static __device__ __forceinline__ uint64_t xl_gpu_now_ns()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* xl_gpu_spin_ns - the calling thread spins for ns nanoseconds of GPU time */
static __device__ __forceinline__ void xl_gpu_spin_ns(uint64_t ns)
{
    uint64_t start = xl_gpu_now_ns();
    while (xl_gpu_now_ns() - start < ns) {
    }
}

/* xl_block_spin_ns - the whole block waits ns nanoseconds (thread 0 spins; no-op for 0): a kernel's "work"
 * of a set length before it touches memory. Call it from every thread of the block. */
static __device__ __forceinline__ void xl_block_spin_ns(uint64_t ns)
{
    if (ns) {
        if (threadIdx.x == 0)
            xl_gpu_spin_ns(ns);
        __syncthreads();
    }
}

#endif
