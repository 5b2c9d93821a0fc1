/* timing.c - event timing with warm-up and median (see timing.h). */
#include "timing.h"

#include <errno.h>
#include <time.h>

#include "check.h"
#include "trace.h"

void xl_time_gpu(xl_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps, xl_timing *out)
{
    cudaEvent_t ev[2 * 1024]; /* a start and a stop per run, read once all runs are done */
    double samples[1024];
    if (reps < 1 || reps > 1024 || warmup < 0)
        xl_fail("xl_time_gpu: reps must be 1..1024 and warmup >= 0 (got %d, %d)", reps, warmup);
    XL_RANGE_PUSH("xl_time_gpu");
    for (int i = 0; i < 2 * reps; i++)
        XL_CHECK(cudaEventCreate(&ev[i]));
    for (int i = -warmup; i < reps; i++) {
        XL_CHECK(cudaStreamSynchronize(stream)); /* each run starts on an idle stream, as a single one would */
        if (i >= 0)
            XL_CHECK(cudaEventRecord(ev[2 * i], stream));
        work(stream, ctx);
        if (i >= 0)
            XL_CHECK(cudaEventRecord(ev[2 * i + 1], stream));
    }
    XL_CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < reps; i++) {
        float ms;
        XL_CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        samples[i] = ms;
    }
    for (int i = 0; i < 2 * reps; i++)
        XL_CHECK(cudaEventDestroy(ev[i]));
    XL_RANGE_POP();
    xl_summarize(samples, reps, out);
}

void xl_memcpy_work(cudaStream_t stream, void *ctx)
{
    xl_copy_job *c = ctx;
    XL_CHECK(cudaMemcpy(c->dst, c->src, c->bytes, c->kind));
    if (stream != 0 && stream != cudaStreamLegacy) { /* the timer's stop event goes on stream: it must wait too */
        cudaEvent_t done;
        XL_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        XL_CHECK(cudaEventRecord(done, cudaStreamLegacy));
        XL_CHECK(cudaStreamWaitEvent(stream, done, 0));
        XL_CHECK(cudaEventDestroy(done));
    }
}

void xl_memcpy_async_work(cudaStream_t stream, void *ctx)
{
    xl_copy_job *c = ctx;
    XL_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, c->kind, stream));
}

void xl_time_interleaved(xl_work_fn work_a, void *ctx_a, xl_work_fn work_b, void *ctx_b, cudaStream_t stream,
                         int rounds, xl_timing *a, xl_timing *b)
{
    double ms_a[1024], ms_b[1024];
    xl_timing t;
    if (rounds < 1 || rounds > 1024)
        xl_fail("xl_time_interleaved: rounds must be 1..1024 (got %d)", rounds);
    for (int i = 0; i < rounds; i++) {
        xl_time_gpu(work_a, ctx_a, stream, i == 0, 1, &t);
        ms_a[i] = t.median_ms;
        xl_time_gpu(work_b, ctx_b, stream, i == 0, 1, &t);
        ms_b[i] = t.median_ms;
    }
    xl_summarize(ms_a, rounds, a);
    xl_summarize(ms_b, rounds, b);
}

double xl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

void xl_sleep_ms(double ms)
{
    if (!(ms > 0))
        return;
    long long ns = (long long)(ms * 1e6);
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
