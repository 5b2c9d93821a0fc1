/* timing.h - the kit's timer for asynchronous GPU work: CUDA events, warm-up, median.
 *
 * Part of xferlab's common library. This is the kit's own measurement that
 * graders compare a student's figures with, in the same run.
 */
#ifndef XL_TIMING_H
#define XL_TIMING_H

#include <cuda_runtime_api.h>

#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Work to be timed: enqueues (or does) one run of the operation on stream. */
typedef void (*xl_work_fn)(cudaStream_t stream, void *ctx);

/* xl_time_gpu - runs work warmup times untimed, then reps times, each on an idle stream between two events
 * recorded on it (read when all runs are done); fills out with the median, min and max in ms. reps <= 1024. */
void xl_time_gpu(xl_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out);

/* One copy, the kit's reference operation, as a work function's context. */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    enum cudaMemcpyKind kind;
} xl_copy_job;

/* xl_memcpy_work - xl_work_fn: cudaMemcpy of *(xl_copy_job *)ctx, on the legacy default stream; work queued on
 * stream afterwards (a timer's stop event) waits for the copy, which cudaMemcpy may leave running on return */
void xl_memcpy_work(cudaStream_t stream, void *ctx);

/* xl_memcpy_async_work - xl_work_fn: cudaMemcpyAsync of *(xl_copy_job *)ctx on stream (not waited for) */
void xl_memcpy_async_work(cudaStream_t stream, void *ctx);

/* xl_time_interleaved - times two operations fairly: one warm-up each, then rounds runs of each, alternating,
 * so that drift in the machine hits both alike; fills *a and *b (median, min, max of rounds runs) */
void xl_time_interleaved(xl_work_fn work_a, void *ctx_a, xl_work_fn work_b, void *ctx_b, cudaStream_t stream,
                         int rounds, xl_timing *a, xl_timing *b);

/* xl_now_ms - a monotonic host clock in ms, for host-side work */
double xl_now_ms(void);

/* xl_sleep_ms - sleeps ms (nanosleep, resumed after a signal); nothing for ms <= 0 */
void xl_sleep_ms(double ms);

#ifdef __cplusplus
}
#endif

#endif
