/* timer-warmup-at-least-one.cu - planted wrong lab 01: a timer that always runs at least one warm-up ("the first
 * run is never trustworthy"), so warmup = 0 calls the work reps + 1 times. Every test passed warmup >= 1.
 * target: timer.waits_for_gpu
 * Everything else is the reference solution (its own internal calls keep the reference timer).
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_time_gpu reference_lab_time_gpu
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_time_gpu

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    if (warmup == 0)
        warmup = 1; /* the mistake: the contract says exactly warmup untimed runs */
    return reference_lab_time_gpu(work, ctx, stream, warmup, reps, out);
}
