/* timing.c - event timing with warm-up and median (see timing.h). */
#include "timing.h"

#include <time.h>

#include "check.h"
#include "trace.h"

void xl_time_gpu(xl_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    double samples[1024];
    cudaEvent_t start, stop;
    if (reps < 1 || reps > 1024 || warmup < 0)
        xl_fail("xl_time_gpu: reps must be 1..1024 and warmup >= 0 (got %d, %d)", reps, warmup);
    XL_RANGE_PUSH("xl_time_gpu");
    XL_CHECK(cudaEventCreate(&start));
    XL_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; i++)
        work(stream, ctx);
    XL_CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < reps; i++) {
        float ms;
        XL_CHECK(cudaEventRecord(start, stream));
        work(stream, ctx);
        XL_CHECK(cudaEventRecord(stop, stream));
        XL_CHECK(cudaEventSynchronize(stop));
        XL_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples[i] = ms;
    }
    XL_CHECK(cudaEventDestroy(start));
    XL_CHECK(cudaEventDestroy(stop));
    XL_RANGE_POP();
    xl_summarize(samples, reps, out);
}

double xl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
