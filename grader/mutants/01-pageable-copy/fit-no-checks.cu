/* fit-no-checks.cu - planted wrong lab 01: the fit checks only the number of points; a time of 0 or less, or times
 * that fall with the size, give a "fit" with an infinite or negative bandwidth and return 0.
 * target: fit.synthetic
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_fit reference_lab_fit
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_fit

extern "C" int lab_fit(const lab_point *pts, int n, double *latency_us, double *bandwidth_gbps)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    if (n < 2)
        return -1;
    for (int i = 0; i < n; i++) { /* the mistake: no check of y, nor of the slope below */
        double x = (double)pts[i].bytes, y = pts[i].t.median_ms, w = 1.0 / (y * y);
        sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    double s = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
    *latency_us = (sy - s * sx) / sw * 1e3;
    *bandwidth_gbps = 1e-6 / s;
    return 0;
}
