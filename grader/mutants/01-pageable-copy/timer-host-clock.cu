/* timer-host-clock.cu - planted wrong lab 01: a timer that waits for the GPU but reads the host clock, from the
 * call of the work to the end of a stream wait. Work already queued on the stream when a run starts is counted in
 * that run; with warm-ups (each waited for) nothing was queued, so no test saw it.
 * target: timer.waits_for_gpu
 * Everything else is the reference solution (its own internal calls keep the reference timer).
 */
#include "common/timing.h"
#include "labs/01-pageable-copy/lab.h"
#define lab_time_gpu reference_lab_time_gpu
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_time_gpu

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    double samples[1024];
    if (!work || !out || warmup < 0 || reps < 1 || reps > 1024)
        return -1;
    for (int i = 0; i < warmup; i++) { /* each warm-up run waited for */
        work(stream, ctx);
        XL_CHECK(cudaStreamSynchronize(stream));
    }
    for (int i = 0; i < reps; i++) {
        double t0 = xl_now_ms(); /* the mistake: a host clock, started at the call */
        work(stream, ctx);
        XL_CHECK(cudaStreamSynchronize(stream));
        samples[i] = xl_now_ms() - t0;
    }
    xl_summarize(samples, reps, out);
    return 0;
}
