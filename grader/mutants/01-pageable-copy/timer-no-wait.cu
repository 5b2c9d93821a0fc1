/* timer-no-wait.cu - planted wrong lab 01: a host-clock timer that never waits for the GPU.
 * target: timer.waits_for_gpu
 * Everything else is the reference solution (its own internal calls keep the reference timer).
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_time_gpu reference_lab_time_gpu
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_time_gpu

#include "common/timing.h"

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    double samples[1024];
    if (!work || !out || warmup < 0 || reps < 1 || reps > 1024)
        return -1;
    for (int i = 0; i < warmup; i++)
        work(stream, ctx);
    for (int i = 0; i < reps; i++) {
        double t0 = xl_now_ms();
        work(stream, ctx); /* only enqueued: the GPU is still busy when the clock is read */
        samples[i] = xl_now_ms() - t0;
    }
    XL_CHECK(cudaStreamSynchronize(stream));
    xl_summarize(samples, reps, out);
    return 0;
}
