/* stats.c - medians, spreads and the T(n) = L + n/B fit (see stats.h). */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double xl_median(const double *v, int n)
{
    if (n <= 0)
        return 0.0;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        abort();
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

void xl_summarize(const double *samples_ms, int n, xl_timing *t)
{
    t->reps = n;
    t->median_ms = xl_median(samples_ms, n);
    t->min_ms = t->max_ms = n > 0 ? samples_ms[0] : 0.0;
    for (int i = 1; i < n; i++) {
        if (samples_ms[i] < t->min_ms)
            t->min_ms = samples_ms[i];
        if (samples_ms[i] > t->max_ms)
            t->max_ms = samples_ms[i];
    }
}

double xl_gbps(double bytes, double ms)
{
    return ms > 0 ? bytes * 1e-6 / ms : 0.0;
}

int xl_fit_latency_bw(const double *bytes, const double *ms, int n, double *latency_us,
                      double *bandwidth_gbps)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        if (!(ms[i] > 0))
            return -1;
        double w = 1.0 / (ms[i] * ms[i]);
        sw += w;
        sx += w * bytes[i];
        sy += w * ms[i];
        sxx += w * bytes[i] * bytes[i];
        sxy += w * bytes[i] * ms[i];
    }
    double det = sw * sxx - sx * sx;
    if (n < 2 || !(det > 0))
        return -1;
    double slope_ms_per_byte = (sw * sxy - sx * sy) / det;
    if (!(slope_ms_per_byte > 0))
        return -1;
    double l_ms = (sy - slope_ms_per_byte * sx) / sw;
    *latency_us = l_ms * 1e3;
    *bandwidth_gbps = 1e-6 / slope_ms_per_byte;
    return 0;
}
