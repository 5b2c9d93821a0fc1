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

#ifdef __cplusplus
}
#endif

#endif
