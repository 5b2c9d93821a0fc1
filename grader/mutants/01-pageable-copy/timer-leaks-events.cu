/* timer-leaks-events.cu - planted wrong lab 01: a correct timer that never destroys its two events, so every call
 * leaves two events behind (a long sweep leaves hundreds).
 * target: timer.waits_for_gpu timer.median_after_warmup
 * Everything else is the reference solution (its own internal calls keep the reference timer).
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_time_gpu reference_lab_time_gpu
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_time_gpu

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    double samples[1024];
    cudaEvent_t start, stop;
    if (!work || !out || warmup < 0 || reps < 1 || reps > 1024)
        return -1;
    XL_CHECK(cudaEventCreate(&start));
    XL_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; i++)
        work(stream, ctx);
    XL_CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < reps; i++) {
        float ms = 0;
        XL_CHECK(cudaEventRecord(start, stream));
        work(stream, ctx);
        XL_CHECK(cudaEventRecord(stop, stream));
        XL_CHECK(cudaEventSynchronize(stop));
        XL_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples[i] = ms;
    }
    xl_summarize(samples, reps, out); /* the mistake: no cudaEventDestroy */
    return 0;
}
