/* timer-checks-late.cu - planted wrong lab 01: a timer that runs the warm-ups before it checks reps (the check sits
 * where the samples are stored), so a bad reps still runs the work. No test passed a bad argument.
 * target: timer.median_after_warmup
 * Everything else is the reference solution (its own internal calls keep the reference timer).
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_time_gpu reference_lab_time_gpu
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_time_gpu

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    if (!work || !out || warmup < 0)
        return -1;
    for (int i = 0; i < warmup; i++) /* the mistake: work done before reps is checked */
        work(stream, ctx);
    XL_CHECK(cudaStreamSynchronize(stream));
    if (reps < 1 || reps > 1024)
        return -1;
    return reference_lab_time_gpu(work, ctx, stream, 0, reps, out);
}
