/* grade.h - xferlab's grading model on top of Criterion: points, tokens, reports.
 *
 * Course staff only; students do not edit graders. Each lab's grader declares
 * its lab with XL_LAB and its tests with XL_TEST, which adds to a Criterion
 * test: the points, whether it needs a GPU, and a completion token. A test
 * earns its points only when Criterion reports it PASSED *and* its body ran to
 * the end (Criterion reports a test whose code calls exit(0) as PASSED).
 * After the run the grader prints one line per test and the lab's total, and
 * writes results.json (Gradescope's format) and points.tsv into
 * $XL_RESULTS_DIR when that is set.
 */
#ifndef XL_GRADE_H
#define XL_GRADE_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

/* What the grading model knows about a test besides Criterion's own fields. */
typedef struct {
    int points;             /* earned only on a complete pass */
    int kind;               /* XL_CPU, XL_GPU, XL_TIMED, XL_GPU2 or XL_TIMED2 (bits: XL_GPU needs a GPU, XL_ALONE is
                             * graded alone, XL_TWO_GPUS needs two) */
    const char *visibility; /* Gradescope: "visible", "hidden", "after_due_date" */
    double timeout_s;       /* how long the test may run: its own timer ends it then (xl_test_begin) */
} xl_test_meta;

/* How much longer than its own timer Criterion lets a test run before it stops it. A test ends itself when its time
 * is up; Criterion's timeout is kept only for code that stops the timer, because when it fires, Criterion 2.4's runner
 * can crash (a double free in its timeout thread: 2 of 200 gradings of a grader with a hanging test, 4 at once on
 * 2 cores), losing every test's result. Criterion counts from the test process's start, the test's own timer from
 * when it holds the GPU lock (xl_test_begin): with tests run at once, the grader adds the longest wait for the lock
 * to Criterion's timeout (allow_lock_waits in grade.c), so that waiting never uses up this margin. */
#define XL_TIMEOUT_BACKSTOP_S 30

/* A test's kind. XL_GPU: skipped with one line when there is no GPU. XL_TIMED: a GPU test that makes a speed or
 * timed check (xl_ratio_check, xl_timed_check); a grading runs such tests with the GPU to itself (their process holds
 * the grading's GPU lock alone, the other GPU tests share it), and make test grades them apart from other gradings
 * (XL_LIST_TIMED=1 lists them); a check made in a test not declared XL_ALONE fails it. XL_ALONE alone: the grading
 * model's own timed checks, of planted figures, with no GPU. XL_CPU tests take no lock. */
#define XL_CPU 0
#define XL_GPU 1
#define XL_ALONE 2
#define XL_TIMED (XL_GPU | XL_ALONE)
/* XL_TWO_GPUS: a test that needs a second GPU (peer access, copies between two devices). On a host with exactly one
 * it is skipped with one line starting "needs 2 GPUs" before any CUDA context is made (a context costs 0.3 s a test
 * process); with none, it is skipped as any GPU test is. The points table's GPU column says "2 GPUs". A test is one
 * kind or the other whole: no test has a two-GPU part. */
#define XL_TWO_GPUS 4
#define XL_GPU2 (XL_GPU | XL_TWO_GPUS)
#define XL_TIMED2 (XL_TIMED | XL_TWO_GPUS)
/* The line an XL_TWO_GPUS test is skipped with on a host with one GPU; the test scripts know it by its start. */
#define XL_NEEDS_2_GPUS "needs 2 GPUs, this host has 1: peer access needs a second GPU (graded on hosts such as " \
                        "nvidia-h200-x2)"

/* XL_LAB - names the lab this grader grades, e.g. XL_LAB("01", "pageable-copy") */
#define XL_LAB(id, slug)                                                     \
    const char *const xl_lab_id = id;                                        \
    const char *const xl_lab_slug = slug

/* XL_LAB_SWITCHES_DEVICES - in a grader whose lab's contract lets its functions change the current device on the
 * caller's thread (lab 09: they must put it back): every other lab's tests fail when the code under test calls
 * cudaSetDevice on the thread that called it (common/devlog.h) */
#define XL_LAB_SWITCHES_DEVICES const int xl_lab_switches_devices = 1

/* XL_TEST - a graded test worth pts points, with a one-line description and a timeout (s).
 * Write the body in braces after it, as with Criterion's Test. */
#define XL_TEST(suite, name, pts, kind, desc, timeout_s) XL_TEST_SHOWN(suite, name, pts, kind, "visible", desc, timeout_s)

/* XL_TEST_SHOWN - XL_TEST with Gradescope's visibility: "visible", "hidden" (instructors only) or
 * "after_due_date". Instructors' hidden tests live in grader/hidden/NN-slug.c, which the Makefile links into
 * that lab's graders; the handout's points table lists visible tests only. */
#define XL_TEST_SHOWN(suite, name, pts, kind, vis, desc, timeout_s)                          \
    static void xl_body_##suite##_##name(void);                                              \
    Test(suite, name, .description = desc, .timeout = (timeout_s) + XL_TIMEOUT_BACKSTOP_S,   \
         .data = &(xl_test_meta){pts, kind, vis, timeout_s})                                \
    {                                                                                        \
        xl_test_begin(kind, timeout_s);                                                      \
        xl_body_##suite##_##name();                                                          \
        xl_test_complete(#suite, #name, kind);                                               \
    }                                                                                        \
    static void xl_body_##suite##_##name(void)

/* xl_test_begin - inside a test of this kind (XL_CPU, XL_GPU, ...) that may run timeout_s seconds, first: waits for the
 * grading's GPU lock as its kind takes it (XL_ALONE alone, XL_GPU shared, XL_CPU none), before any CUDA call, and
 * holds it until the process ends; then starts its timer (when it runs out, the test leaves a timeout token and ends
 * its process), routes failed CUDA checks to a test failure, and skips the test with one line when it needs a GPU
 * and there is none */
void xl_test_begin(int kind, double timeout_s);

/* xl_gpu_used - inside a test: notes that it uses device d (kit_use_device calls it), so that a speed check that
 * misses its bar asks about other processes on every device the test used, not only the current one */
void xl_gpu_used(int d);

/* xl_test_complete - inside a test, at its end: fails if the GPU was left with an error, or (unless the grader says
 * XL_LAB_SWITCHES_DEVICES) if the code under test called cudaSetDevice on the test's thread, then writes the completion token that lets the test earn its points */
void xl_test_complete(const char *suite, const char *name, int kind);

/* xl_note - adds a line (printf format) shown with the test's result, pass or fail */
void xl_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* xl_expect_ok - fails the test with a message naming fn when a student function returned rc != 0 */
#define xl_expect_ok(rc, fn) \
    cr_assert(0 == (rc), "%s returned %d, an error (not implemented yet? see its message in the log above)", fn, (int)(rc))

/* A speed test's bar: the one place its number is written. A grader writes it once as a macro
 * (#define PINNED_NEED 90) and builds from it the check (XL_AT_LEAST_PCT(PINNED_NEED)), the test's description
 * ("... at least " XL_STR(PINNED_NEED) "% of the kit's") and so every message. */
typedef struct {
    double value;     /* the bar, as the ratio is measured */
    int at_least;     /* 1: a ratio >= value passes; 0: a ratio <= value passes */
    const char *unit; /* how people read it: "%" (value shown times 100), "x" (a factor) or "" */
} xl_need;
#define XL_STR(x) XL_STR_(x)
#define XL_STR_(x) #x
#define XL_AT_LEAST_PCT(pct) ((xl_need){(pct) / 100.0, 1, "%"})
#define XL_AT_LEAST_X(x) ((xl_need){(x), 1, "x"})
#define XL_AT_LEAST(v) ((xl_need){(v), 1, ""})
#define XL_AT_MOST_X(x) ((xl_need){(x), 0, "x"})
#define XL_AT_MOST(v) ((xl_need){(v), 0, ""})
/* xl_need_text - "need >= 90%" (or "need <= 1.5x", "need >= 0.8") into buf; buf */
const char *xl_need_text(xl_need need, char *buf, size_t len);
/* xl_ratio_check - a speed check measured up to three times: measure() fills *ratio and a line of figures;
 * passes at the first sound attempt that meets need; fails with every attempt's figures. Two sound attempts in a row
 * that miss need by more than XL_FAR_MISS times (the second after a pause of XL_FAR_PAUSE_MS), every attempt so far
 * sound, fail without a third: slow code is not timed three times over (XL_FAR_AT_ONCE=1: the first decides, as
 * make test grades the planted mutants, whose code is known slow). XL_ONE_ATTEMPT=1 measures
 * once (make test, where several gradings share the GPU and a miss is graded again alone). what names the
 * figure for people ("pinned copy speed"); the check is known to the ratio log and make stability by its test's
 * name, suite.name, with "#2", "#3" for a test's second and third checks. */
typedef void (*xl_measure_fn)(void *ctx, double *ratio, char *figures, size_t len);
void xl_ratio_check(xl_measure_fn measure, void *ctx, xl_need need, const char *what);
/* xl_timed_check - a check of one timed figure that is not measured again (how long a call took beside the
 * kit's own kernel; a timer's reading against the kit's): passes when value meets need; otherwise NOT GRADED when
 * another process used the GPU, or kept more than XL_CPU_OTHERS_MAX cores busy since the test began or its last
 * check (its work, not the code under test, may be what was timed), else fails with the message (printf format). Logged like a ratio check's attempt (label names the figure), so make stability gives
 * its margin and make test grades the mutants aimed at it alone. */
void xl_timed_check(double value, xl_need need, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* xl_not_graded - ends the test as NOT GRADED, neither passed nor failed: what could not be measured soundly, why
 * (e.g. "the sweep's times did not grow with the size in 3 tries"), and the figures; it earns nothing in this run
 * and the report says to grade again on an idle GPU. Never returns. */
void xl_not_graded(const char *what, const char *why, const char *figures) __attribute__((noreturn));
/* xl_measure_unsound - inside a measure function: this attempt's figures cannot be trusted (printf format: why,
 * e.g. the kit's own baseline moved between its repetitions, or a result outside physical bounds). Such an
 * attempt never passes and never fails: when no attempt passed and any was unsound, or another process used the
 * GPU during a low one (or kept more than XL_CPU_OTHERS_MAX cores busy), the test is reported NOT GRADED with the
 * reason, and earns nothing in this run. */
void xl_measure_unsound(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* xl_sound_spread - xl_measure_unsound unless max/min of the n > 0 samples of what is at most limit */
void xl_sound_spread(const double *samples, int n, double limit, const char *what);
/* xl_sound_within - xl_measure_unsound unless lo <= v <= hi (v is what) */
void xl_sound_within(double v, double lo, double hi, const char *what);
/* xl_sound_timing - xl_sound_spread of a timing's fastest and slowest repetitions */
void xl_sound_timing(double min_ms, double max_ms, double limit, const char *what);
/* How far the kit's own repetitions of one operation may spread (slowest / fastest) before a measurement is called
 * unsound: copies from pinned memory and GPU work are steady on an idle GPU, copies from pageable memory go
 * through the host's memory and vary more. A sequential baseline against its ideal must exceed it by this factor. */
#define XL_SOUND_SPREAD 2.0
#define XL_SOUND_SPREAD_PAGEABLE 3.0
#define XL_SOUND_SEQ_OVER_IDEAL 1.05
/* How far a sound reading must miss its bar (half of an "at least" bar, twice an "at most" one), in two attempts in a
 * row, the second XL_FAR_PAUSE_MS after the first, to fail without a third. The references' worst first readings
 * in make stability on the H100 and H200 missed by at most 1.24x; but lab 07's packed round trip, the reference's
 * own code, once read 17% against a bar of 70% on an H100 in a sound attempt (its slow mode lasts about a second). */
#define XL_FAR_MISS 2.0
#define XL_FAR_PAUSE_MS 1500
/* The most cores other processes may keep busy, on average, while a speed figure of a GPU test is measured
 * (common/cpushare.h), or half the cores where there are fewer than 4; past it a low figure is not sound. The kit's
 * thread pool leaves XL_POOL_SPARE (2) cores to others; past them host work spread over threads slows several times
 * (cpushare.h's figures), and make class builds the next submissions while one is graded. On an idle H100 machine
 * the attempts of labs 01 to 10 read a median of 0.06 cores, 95% of them at most 1.4 (203 attempts, windows of 30
 * to 150 ms; the counters tick every 10 ms on each core). */
#define XL_CPU_OTHERS_MAX 2.0
/* The most an efficiency (1 = the ideal overlap) can be; above it, a measurement was disturbed. */
#define XL_EFF_MAX 1.2
/* The most a copy of yours can outrun the kit's same copy, measured interleaved. */
#define XL_FASTER_MAX 1.5

#endif
