/* lab.cu - lab 01 (pageable copy): YOUR CODE. This is the only file you edit.
 *
 * Implement the functions declared in lab.h (read it first: it is the contract
 * the grader checks), part by part. Build and look at your figures with
 *     make run LAB=01
 * and grade with
 *     make grade LAB=01
 * Wrap every CUDA call in XL_CHECK(...): a failure then says where and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "labs/01-pageable-copy/lab.h"

/* not_done - the message every unfinished function prints */
static int not_done(const char *fn)
{
    fprintf(stderr, "%s: not implemented yet (see the TODO in labs/01-pageable-copy/lab.cu)\n", fn);
    return -1;
}

/* ===== Part A: timing ===== */

extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps,
                            xl_timing *out)
{
    /* TODO (A):
     * 1. Check the arguments (see lab.h); return -1 if they are wrong.
     * 2. Create two events (cudaEventCreate).
     * 3. Call work(stream, ctx) warmup times, then wait for the stream.
     * 4. reps times: record the start event on stream, call work, record the stop event,
     *    WAIT for the stop event (cudaEventSynchronize), read cudaEventElapsedTime.
     * 5. Destroy the events; summarize the samples with xl_summarize (common/stats.h).
     * Ask yourself: what would you measure if you skipped the wait in step 4? */
    (void)work, (void)ctx, (void)stream, (void)warmup, (void)reps, (void)out;
    return not_done("lab_time_gpu");
}

/* ===== Part B: copying ===== */

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    /* TODO (B): copy bytes from src to dst with cudaMemcpy in the direction dir.
     * Handle bytes == 0 and the bad arguments exactly as lab.h says. */
    (void)dst, (void)src, (void)bytes, (void)dir;
    return not_done("lab_copy");
}

/* ===== Part C: the sweep ===== */

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out,
                         int max_points)
{
    /* TODO (C):
     * 1. Count the sizes min_bytes, 2*min_bytes, ... <= max_bytes; check the arguments.
     * 2. Allocate one host buffer (malloc) and one device buffer (cudaMalloc) of the
     *    largest size, and write something into the host buffer before timing: why?
     * 3. For each size, time lab_copy with your lab_time_gpu (one warm-up, reps runs).
     *    The work function gets a context pointer: put dst, src, bytes and dir in a struct.
     *    cudaMemcpy runs on the legacy default stream, so time on stream 0.
     * 4. Free both buffers; return the number of points. */
    (void)dir, (void)min_bytes, (void)max_bytes, (void)reps, (void)out, (void)max_points;
    return not_done("lab_sweep");
}

extern "C" int lab_write_csv(const char *path, const lab_point *h2d, const lab_point *d2h, int n)
{
    /* TODO (C): write the header and the rows exactly as lab.h says (fopen, fprintf, fclose;
     * check that fclose succeeded). xl_gbps in common/stats.h computes GB/s. */
    (void)path, (void)h2d, (void)d2h, (void)n;
    return not_done("lab_write_csv");
}

/* ===== Part D: the fit ===== */

extern "C" int lab_fit(const lab_point *pts, int n, double *latency_us, double *bandwidth_gbps)
{
    /* TODO (D): fit T = L + s * bytes with weights w = 1/T^2 (weighted least squares):
     *   minimize sum w * (L + s*x - T)^2 over L and s; solve the 2x2 normal equations
     *   using sums of w, w*x, w*T, w*x*x, w*x*T. Then B = 1/s. Mind the units:
     *   T in ms and x in bytes give s in ms/byte; L in us = L_ms * 1e3; GB/s = 1e-6 / s. */
    (void)pts, (void)n, (void)latency_us, (void)bandwidth_gbps;
    return not_done("lab_fit");
}
