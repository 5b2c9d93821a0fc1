/* timer-mean.cu - planted wrong lab 01: a timer that reports the mean of its runs as the median.
 * target: timer.median_after_warmup
 * Everything else is the reference solution (its own internal calls keep the reference timer).
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_time_gpu reference_lab_time_gpu
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_time_gpu

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    xl_timing one;
    double sum = 0;
    if (reps < 1 || !out)
        return -1;
    for (int i = 0; i < reps; i++) { /* each run timed alone, warm-ups before the first */
        if (reference_lab_time_gpu(work, ctx, stream, i == 0 ? warmup : 0, 1, &one) != 0)
            return -1;
        sum += one.median_ms;
        out->min_ms = i == 0 || one.min_ms < out->min_ms ? one.min_ms : out->min_ms;
        out->max_ms = i == 0 || one.max_ms > out->max_ms ? one.max_ms : out->max_ms;
    }
    out->median_ms = sum / reps; /* the mistake: one slow run moves the mean */
    out->reps = reps;
    return 0;
}
