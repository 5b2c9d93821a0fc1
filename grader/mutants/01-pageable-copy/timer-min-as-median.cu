/* timer-min-as-median.cu - planted wrong lab 01: a timer that reports the fastest run as the median ("the best
 * figure is the true one"). With runs of 2, 2, 2, 9 and 9 ms the median is the minimum, and no test told them apart.
 * target: timer.median_after_warmup
 * Everything else is the reference solution (its own internal calls keep the reference timer).
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_time_gpu reference_lab_time_gpu
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_time_gpu

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    int rc = reference_lab_time_gpu(work, ctx, stream, warmup, reps, out);
    if (rc == 0)
        out->median_ms = out->min_ms; /* the mistake */
    return rc;
}
