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

/* xl_delay_released - xl_delay, ended early once *release is nonzero (pinned host memory the kernel reads, mapped
 * into the device's address space): a stand-in for a long unrelated kernel that need not be waited out. Checked. */
void xl_delay_released(cudaStream_t stream, uint64_t ns, const volatile unsigned *release);

/* xl_hang - enqueues a kernel that never ends (only for planted mutants and grader tests) */
void xl_hang(cudaStream_t stream);

/* xl_one_block_per_sm - launch shape for a kernel that must occupy the whole GPU, as a heavy kernel does:
 * *blocks is the multiprocessor count, *smem the most dynamic shared memory a block may have, which this
 * sets as the kernel's limit; with it no second block (of this launch or another) fits on a multiprocessor,
 * so two such kernels on different streams run one after the other. Checked. */
void xl_one_block_per_sm(const void *kernel, int *blocks, int *smem);

/* xl_fill_gpu - enqueues on stream a kernel that holds every multiprocessor for ns nanoseconds (one block on each,
 * shaped by xl_one_block_per_sm), and returns once every block of it runs: until it ends no block of another kernel
 * can start, while copies still can. 0, or -1 when its blocks did not all start within a second (the GPU busy with
 * other work). Checked. */
int xl_fill_gpu(cudaStream_t stream, uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif
