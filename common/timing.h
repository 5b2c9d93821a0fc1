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

/* xl_time_gpu - runs work warmup times untimed, then reps times, each between two events
 * recorded on stream and waited for; fills out with the median, min and max in ms. reps <= 1024. */
void xl_time_gpu(xl_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out);

/* xl_now_ms - a monotonic host clock in ms, for host-side work */
double xl_now_ms(void);

#ifdef __cplusplus
}
#endif

#endif
