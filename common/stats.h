/* stats.h - medians, spreads and the latency/bandwidth fit, for measured times.
 *
 * Part of xferlab's common library; pure CPU code with unit tests.
 * Bandwidth is decimal GB/s throughout the kit: bytes * 1e-6 / ms.
 */
#ifndef XL_STATS_H
#define XL_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A summary of repeated timings of one operation. */
typedef struct {
    double median_ms; /* median of reps, device time */
    double min_ms;    /* fastest rep */
    double max_ms;    /* slowest rep */
    int reps;         /* how many timed runs (warm-up excluded) */
} xl_timing;

/* xl_summarize - fills t from n samples (ms); the samples are left unchanged; n >= 1 */
void xl_summarize(const double *samples_ms, int n, xl_timing *t);

/* xl_median - median of n values (mean of the middle two when n is even); 0 when n == 0 */
double xl_median(const double *v, int n);

/* xl_gbps - decimal GB/s for bytes moved in ms; 0 when ms <= 0 */
double xl_gbps(double bytes, double ms);

/* xl_fit_latency_bw - fits T(n) = L + n/B to points (bytes[i], ms[i]) by least squares on
 * relative error (weights 1/T^2, so small sizes count as much as large ones).
 * Returns 0 with *latency_us and *bandwidth_gbps set; -1 when fewer than two distinct
 * sizes, a non-positive time, or a fit with no positive slope. */
int xl_fit_latency_bw(const double *bytes, const double *ms, int n, double *latency_us,
                      double *bandwidth_gbps);

#ifdef __cplusplus
}
#endif

#endif
