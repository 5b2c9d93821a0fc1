/* delay.h - a kernel that keeps the GPU busy for a set time, to make races certain.
 *
 * Part of xferlab's common library. Graders put a delay ahead of a copy so that
 * code which reads a result without waiting is wrong every time, not sometimes,
 * and give timers an operation of known duration.
 */
#ifndef XL_DELAY_H
#define XL_DELAY_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xl_delay - enqueues on stream one thread that spins for ns nanoseconds of GPU time; checked */
void xl_delay(cudaStream_t stream, uint64_t ns);

/* xl_hang - enqueues a kernel that never ends (only for planted mutants and grader tests) */
void xl_hang(cudaStream_t stream);

/* xl_one_block_per_sm - launch shape for a kernel that must occupy the whole GPU, as a heavy kernel does:
 * *blocks is the multiprocessor count, *smem the most dynamic shared memory a block may have, which this
 * sets as the kernel's limit; with it no second block (of this launch or another) fits on a multiprocessor,
 * so two such kernels on different streams run one after the other. Checked. */
void xl_one_block_per_sm(const void *kernel, int *blocks, int *smem);

#ifdef __cplusplus
}
#endif

#endif
