/* fit-unweighted.cu - planted wrong lab 01: ordinary least squares on T, so the large sizes
 * decide everything and the latency comes out wrong on noisy data.
 * target: fit.synthetic
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_fit reference_lab_fit
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_fit

extern "C" int lab_fit(const lab_point *pts, int n, double *latency_us, double *bandwidth_gbps)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    if (n < 2)
        return -1;
    for (int i = 0; i < n; i++) {
        double x = (double)pts[i].bytes, y = pts[i].t.median_ms;
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    double s = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    if (!(s > 0))
        return -1;
    *latency_us = (sy - s * sx) / n * 1e3;
    *bandwidth_gbps = 1e-6 / s;
    return 0;
}
