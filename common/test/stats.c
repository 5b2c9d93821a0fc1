/* stats.c - unit tests of common/stats (median, summary, GB/s, the latency/bandwidth fit). CPU only. */
#include <criterion/criterion.h>
#include <math.h>

#include "common/buffers.h"
#include "common/stats.h"

Test(stats, median_odd_even_and_unsorted)
{
    double odd[] = {9, 1, 5}, even[] = {4, 1, 3, 2};
    cr_assert_float_eq(xl_median(odd, 3), 5, 1e-12);
    cr_assert_float_eq(xl_median(even, 4), 2.5, 1e-12);
    cr_assert_float_eq(odd[0], 9, 0, "xl_median must not reorder its input");
}

Test(stats, summarize_reports_median_min_max)
{
    double v[] = {2, 30, 2, 9, 2};
    xl_timing t;
    xl_summarize(v, 5, &t);
    cr_assert(t.reps == 5 && t.median_ms == 2 && t.min_ms == 2 && t.max_ms == 30);
}

Test(stats, gbps_is_decimal_gigabytes_per_second)
{
    cr_assert_float_eq(xl_gbps(1e9, 1000), 1.0, 1e-12);
    cr_assert_float_eq(xl_gbps(64 << 20, 0), 0.0, 0, "a zero time gives 0, not infinity");
}

Test(stats, fit_recovers_exact_line)
{
    double bytes[17], ms[17], l, b;
    for (int i = 0; i < 17; i++) {
        bytes[i] = (double)(4096 << i);
        ms[i] = 0.012 + bytes[i] * 1e-6 / 7.25;
    }
    cr_assert(xl_fit_latency_bw(bytes, ms, 17, &l, &b) == 0);
    cr_assert_float_eq(l, 12.0, 1e-6);
    cr_assert_float_eq(b, 7.25, 1e-8);
}

Test(stats, fit_weights_small_sizes_by_relative_error)
{
    /* one large point 20% slow: an unweighted fit would move L by tens of us; this one stays near 10 us */
    double bytes[17], ms[17], l, b;
    for (int i = 0; i < 17; i++) {
        bytes[i] = (double)(4096 << i);
        ms[i] = 0.010 + bytes[i] * 1e-6 / 10.0;
    }
    ms[16] *= 1.2;
    cr_assert(xl_fit_latency_bw(bytes, ms, 17, &l, &b) == 0);
    cr_assert(fabs(l - 10.0) < 2.0, "L = %.2f us", l);
}

Test(stats, fit_rejects_degenerate_input)
{
    double bytes[] = {4096, 4096}, ms[] = {1, 1}, neg[] = {1, -1}, l, b;
    cr_assert(xl_fit_latency_bw(bytes, ms, 2, &l, &b) == -1, "one distinct size cannot be fitted");
    double two[] = {4096, 8192};
    cr_assert(xl_fit_latency_bw(two, neg, 2, &l, &b) == -1, "a negative time is rejected");
    cr_assert(xl_fit_latency_bw(two, ms, 1, &l, &b) == -1, "one point is rejected");
    double falling[] = {2, 1};
    cr_assert(xl_fit_latency_bw(two, falling, 2, &l, &b) == -1, "a falling time gives no positive bandwidth");
}
