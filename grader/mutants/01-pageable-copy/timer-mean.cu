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
    cudaEvent_t start, stop;
    double sum = 0;
    if (!work || !out || warmup < 0 || reps < 1 || reps > 1024)
        return -1;
    XL_CHECK(cudaEventCreate(&start));
    XL_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; i++)
        work(stream, ctx);
    out->min_ms = 1e30;
    out->max_ms = 0;
    for (int i = 0; i < reps; i++) {
        float ms;
        XL_CHECK(cudaEventRecord(start, stream));
        work(stream, ctx);
        XL_CHECK(cudaEventRecord(stop, stream));
        XL_CHECK(cudaEventSynchronize(stop));
        XL_CHECK(cudaEventElapsedTime(&ms, start, stop));
        sum += ms;
        out->min_ms = ms < out->min_ms ? ms : out->min_ms;
        out->max_ms = ms > out->max_ms ? ms : out->max_ms;
    }
    XL_CHECK(cudaEventDestroy(start));
    XL_CHECK(cudaEventDestroy(stop));
    out->median_ms = sum / reps; /* the mistake: one slow run moves the mean */
    out->reps = reps;
    return 0;
}
