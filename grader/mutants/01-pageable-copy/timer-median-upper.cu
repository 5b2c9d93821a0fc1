/* timer-median-upper.cu - planted wrong lab 01: a timer whose median is the sorted sample at index reps/2, which is
 * the upper of the two middle runs when reps is even (the median is their mean). Every test used an odd reps.
 * target: timer.median_after_warmup
 * Everything else is the reference solution (its own internal calls keep the reference timer).
 */
#include <stdlib.h>

#include "labs/01-pageable-copy/lab.h"
#define lab_time_gpu reference_lab_time_gpu
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_time_gpu

/* by_value - qsort order of doubles */
static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    double ms[1024];
    xl_timing one;
    if (!work || !out || warmup < 0 || reps < 1 || reps > 1024)
        return -1;
    for (int i = 0; i < reps; i++) { /* each run timed alone, the warm-ups before the first */
        if (reference_lab_time_gpu(work, ctx, stream, i == 0 ? warmup : 0, 1, &one) != 0)
            return -1;
        ms[i] = one.median_ms;
    }
    qsort(ms, reps, sizeof *ms, by_value);
    out->median_ms = ms[reps / 2]; /* the mistake: right for odd reps only */
    out->min_ms = ms[0];
    out->max_ms = ms[reps - 1];
    out->reps = reps;
    return 0;
}
