/* selftest.c - a grader whose tests misbehave on purpose, to test the grading model itself.
 *
 * Course staff only; run by make test (grader/test/test.sh checks each test's points
 * and message). No GPU needed: it proves that points come only from a test that
 * ran to its end, whatever the code under test does (exit, _exit, abort, crash, hang).
 */
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/check.h"
#include "grader/grade.h"

XL_LAB("00", "grading-model");

XL_TEST(model, passes, 3, XL_CPU, "a test that passes earns its points", 5)
{
    xl_note("a note shown with the result");
    cr_assert(1 + 1 == 2);
}

XL_TEST(model, fails, 2, XL_CPU, "a failed check earns nothing and shows its message", 5)
{
    cr_assert(0, "planted failure 42");
}

XL_TEST(model, calls_exit0, 4, XL_CPU, "exit(0) midway earns nothing", 5)
{
    exit(0);
}

XL_TEST(model, calls__exit0, 4, XL_CPU, "_exit(0) midway earns nothing", 5)
{
    _exit(0);
}

XL_TEST(model, aborts, 1, XL_CPU, "abort() earns nothing", 5)
{
    abort();
}

XL_TEST(model, segfaults, 1, XL_CPU, "a crash earns nothing", 5)
{
    raise(SIGSEGV);
}

XL_TEST(model, hangs, 1, XL_CPU, "a hang is stopped at the timeout and earns nothing", 1)
{
    for (volatile int i = 0;; i++) {
    }
}

XL_TEST(model, cuda_error, 2, XL_CPU, "a failed CUDA check fails the test with file, line and call", 5)
{
    XL_CHECK(cudaErrorInvalidValue);
}

XL_TEST(model, needs_gpu, 5, XL_GPU, "a GPU test without a GPU is skipped with a reason", 5)
{
    cr_assert(1);
}

XL_TEST_SHOWN(model, hidden, 1, XL_CPU, "hidden", "a hidden test counts, marked hidden for Gradescope", 5)
{
    cr_assert(1 + 1 == 2);
}

/* rising - a measurement that reads 0.5 the first time and 0.9 after (figures with a tab and a newline in them) */
static void rising(void *ctx, double *ratio, char *figures, size_t len)
{
    int *calls = ctx;
    *ratio = (*calls)++ ? 0.9 : 0.5;
    snprintf(figures, len, "call\t%d\nof rising", *calls);
}

/* low - a measurement that always reads 0.5 */
static void low(void *ctx, double *ratio, char *figures, size_t len)
{
    (void)ctx;
    *ratio = 0.5;
    snprintf(figures, len, "always 0.5");
}

XL_TEST(model, ratio_retry, 2, XL_ALONE, "a ratio below its threshold is measured again; the second passes", 5)
{
    int calls = 0;
    xl_ratio_check(rising, &calls, XL_AT_LEAST(0.8), "rising");
}

XL_TEST(model, ratio_low, 1, XL_ALONE, "a ratio below its threshold in 3 fresh measurements fails", 5)
{
    xl_ratio_check(low, NULL, XL_AT_LEAST(0.8), "low");
}

/* far - a measurement that always reads 0.3: against a bar of 0.8, more than 2x short */
static void far(void *ctx, double *ratio, char *figures, size_t len)
{
    (void)ctx;
    *ratio = 0.3;
    snprintf(figures, len, "always 0.3");
}

XL_TEST(model, ratio_far, 1, XL_ALONE, "a ratio far below its threshold twice in a row fails, not measured a third time",
        5)
{
    xl_ratio_check(far, NULL, XL_AT_LEAST(0.8), "far");
}

/* low_unsound - a measurement that always reads 0.5 and whose own baseline moved 3x between repetitions */
static void low_unsound(void *ctx, double *ratio, char *figures, size_t len)
{
    static const double baseline[] = {1.0, 3.0, 1.2};
    (void)ctx;
    *ratio = 0.5;
    xl_sound_spread(baseline, 3, 1.5, "the planted baseline");
    snprintf(figures, len, "always 0.5, baseline 1.0 to 3.0 ms");
}

/* impossible_first - reads 1.5 (an efficiency above its bound of 1.2) the first time, then a true 0.9 */
static void impossible_first(void *ctx, double *ratio, char *figures, size_t len)
{
    int *calls = ctx;
    *ratio = (*calls)++ ? 0.9 : 1.5;
    xl_sound_within(*ratio, 0, 1.2, "the planted efficiency");
    snprintf(figures, len, "efficiency %.1f", *ratio);
}

/* not_a_number - a measurement whose ratio is NaN (a time of 0 divided by 0) */
static void not_a_number(void *ctx, double *ratio, char *figures, size_t len)
{
    (void)ctx;
    *ratio = nan("");
    snprintf(figures, len, "0 ms against 0 ms");
}

/* short_of_bar - a measurement that always reads 0.6: short of a bar of 0.8, above half of it */
static void short_of_bar(void *ctx, double *ratio, char *figures, size_t len)
{
    (void)ctx;
    *ratio = 0.6;
    snprintf(figures, len, "always 0.6");
}

XL_TEST(model, ratio_partial, 4, XL_ALONE,
        "a ratio (0.6 against 0.8) and a timed figure (200 against at most 150) short of their bars fail, or earn "
        "part of the points under linear credit (the default), the smaller share of the two",
        5)
{
    xl_ratio_check(short_of_bar, NULL, XL_AT_LEAST(0.8), "short");
    xl_timed_check(200.0, XL_AT_MOST(150.0), "a planted time (ms)", "planted time %.0f ms over its bar", 200.0);
}

XL_TEST(model, ratio_unsound, 2, XL_ALONE, "a low ratio whose measurement is unsound is not graded, not failed", 5)
{
    xl_ratio_check(low_unsound, NULL, XL_AT_LEAST(0.8), "unsound");
}

XL_TEST(model, ratio_impossible_then_true, 2, XL_ALONE, "an impossible figure never passes; the next true one does", 5)
{
    int calls = 0;
    xl_ratio_check(impossible_first, &calls, XL_AT_LEAST(0.8), "impossible");
}

XL_TEST(model, ratio_nan, 1, XL_ALONE, "a ratio that is not a number is not graded", 5)
{
    xl_ratio_check(not_a_number, NULL, XL_AT_LEAST(0.8), "nan");
}

XL_TEST(model, timed_within, 1, XL_ALONE, "a timed figure within its bar passes, both kinds of bar", 5)
{
    xl_timed_check(40.0, XL_AT_MOST(150.0), "a planted time (ms)", "planted time %.0f ms", 40.0);
    xl_timed_check(0.95, XL_AT_LEAST(0.9), "a planted reading", "planted reading %.2f", 0.95);
}

XL_TEST(model, timed_over, 1, XL_ALONE, "a timed figure past its bar, with no other process on the GPU, fails", 5)
{
    xl_timed_check(305.0, XL_AT_MOST(150.0), "a planted time (ms)", "planted time %.0f ms over its bar", 305.0);
}

XL_TEST(model, timed_undeclared, 1, XL_CPU, "a timed check in a test not declared XL_TIMED fails, naming the test", 5)
{
    xl_timed_check(40.0, XL_AT_MOST(150.0), "a planted time (ms)", "planted time %.0f ms", 40.0);
}
