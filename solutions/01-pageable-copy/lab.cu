/* lab.cu - lab 01 (pageable copy): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit
 * labs/01-pageable-copy/lab.cu, which has the same contract (lab.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "labs/01-pageable-copy/lab.h"

/* ===== Part A: timing ===== */

/* lab_time_gpu - see lab.h: events around each run, the stop event waited for, median kept */
extern "C" int lab_time_gpu(lab_work_fn work, void *ctx, cudaStream_t stream, int warmup, int reps,
                            xl_timing *out)
{
    if (!work || !out || warmup < 0 || reps < 1 || reps > 1024) {
        fprintf(stderr, "lab_time_gpu: need work, out, warmup >= 0 and 1 <= reps <= 1024\n");
        return -1;
    }
    double samples_ms[1024];
    cudaEvent_t start, stop;
    XL_CHECK(cudaEventCreate(&start));
    XL_CHECK(cudaEventCreate(&stop));

    for (int i = 0; i < warmup; i++) /* first runs pay for lazy setup: keep them out */
        work(stream, ctx);
    XL_CHECK(cudaStreamSynchronize(stream));

    for (int i = 0; i < reps; i++) {
        float ms = 0;
        XL_CHECK(cudaEventRecord(start, stream));
        work(stream, ctx);
        XL_CHECK(cudaEventRecord(stop, stream));
        XL_CHECK(cudaEventSynchronize(stop)); /* the GPU may still be working: wait */
        XL_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples_ms[i] = ms;
    }
    XL_CHECK(cudaEventDestroy(start));
    XL_CHECK(cudaEventDestroy(stop));
    xl_summarize(samples_ms, reps, out); /* median, min, max: one slow run does not move the median */
    return 0;
}

/* ===== Part B: copying ===== */

/* lab_copy - see lab.h: cudaMemcpy from pageable memory returns once the data has been staged */
extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    if (bytes == 0)
        return 0;
    if (!dst || !src || (dir != LAB_H2D && dir != LAB_D2H)) {
        fprintf(stderr, "lab_copy: NULL buffer or bad direction\n");
        return -1;
    }
    XL_CHECK(cudaMemcpy(dst, src, bytes, dir == LAB_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
    return 0;
}

/* ===== Part C: the sweep ===== */

/* What one timed run copies. */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    lab_dir dir;
} copy_job;

/* run_copy - lab_work_fn that does one copy (cudaMemcpy runs on the legacy default stream) */
static void run_copy(cudaStream_t stream, void *ctx)
{
    (void)stream;
    copy_job *j = (copy_job *)ctx;
    if (lab_copy(j->dst, j->src, j->bytes, j->dir) != 0)
        xl_fail("lab_sweep: lab_copy failed");
}

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out,
                         int max_points)
{
    if (min_bytes == 0 || max_bytes < min_bytes || !out || (dir != LAB_H2D && dir != LAB_D2H)) {
        fprintf(stderr, "lab_sweep: need 0 < min_bytes <= max_bytes and a direction\n");
        return -1;
    }
    int n = 0;
    for (size_t b = min_bytes; b <= max_bytes && b >= min_bytes; b *= 2)
        n++;
    if (n > max_points) {
        fprintf(stderr, "lab_sweep: %d sizes do not fit in %d points\n", n, max_points);
        return -1;
    }
    size_t largest = min_bytes << (n - 1);
    void *host = malloc(largest), *dev = NULL;
    if (!host) {
        fprintf(stderr, "lab_sweep: cannot allocate %zu bytes of host memory\n", largest);
        return -1;
    }
    memset(host, 1, largest); /* touch every page: untouched pages would be faulted in during timing */
    XL_CHECK(cudaMalloc(&dev, largest));
    XL_CHECK(cudaMemset(dev, 1, largest));

    for (int i = 0; i < n; i++) {
        copy_job job = {dir == LAB_H2D ? dev : host, dir == LAB_H2D ? host : dev, min_bytes << i, dir};
        out[i].bytes = job.bytes;
        if (lab_time_gpu(run_copy, &job, 0, 1, reps, &out[i].t) != 0) {
            n = -1;
            break;
        }
    }
    XL_CHECK(cudaFree(dev));
    free(host);
    return n;
}

/* write_rows - one CSV row per point */
static void write_rows(FILE *f, const char *dir, const lab_point *p, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "%s,%zu,%.9g,%.9g,%.9g,%.9g\n", dir, p[i].bytes, p[i].t.median_ms, p[i].t.min_ms,
                p[i].t.max_ms, xl_gbps((double)p[i].bytes, p[i].t.median_ms));
}

extern "C" int lab_write_csv(const char *path, const lab_point *h2d, const lab_point *d2h, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "lab_write_csv: cannot write %s\n", path);
        return -1;
    }
    fprintf(f, "direction,bytes,median_ms,min_ms,max_ms,gbps\n");
    write_rows(f, "H2D", h2d, n);
    write_rows(f, "D2H", d2h, n);
    if (fclose(f) != 0) {
        fprintf(stderr, "lab_write_csv: writing %s failed\n", path);
        return -1;
    }
    return 0;
}

/* ===== Part D: the fit ===== */

/* lab_fit - see lab.h: weighted least squares, weight 1/T^2, on T = L + s*n with s = 1/B */
extern "C" int lab_fit(const lab_point *pts, int n, double *latency_us, double *bandwidth_gbps)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    if (n < 2) {
        fprintf(stderr, "lab_fit: need at least 2 points to fit a line, got %d\n", n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        double x = (double)pts[i].bytes, y = pts[i].t.median_ms;
        if (!(y > 0)) {
            fprintf(stderr, "lab_fit: point %d (%zu bytes) has a time of %g ms; times must be positive\n", i,
                    pts[i].bytes, y);
            return -1;
        }
        double w = 1.0 / (y * y);
        sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    double s = (sw * sxy - sx * sy) / (sw * sxx - sx * sx); /* ms per byte */
    if (!(s > 0)) {
        fprintf(stderr, "lab_fit: the times do not grow with the size, so no positive bandwidth fits\n");
        return -1;
    }
    *latency_us = (sy - s * sx) / sw * 1e3;
    *bandwidth_gbps = 1e-6 / s;
    return 0;
}
