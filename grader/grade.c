/* grade.c - the grading model's runtime (see grade.h): test side and report side.
 *
 * Course staff only. Criterion runs each test in a child process; the child
 * writes a completion token (and its notes) into a private folder named by
 * $XL_TOKEN_DIR; the parent, which never touches CUDA, reads them in its
 * POST_TEST hook and scores the test. The grader's main() is here too.
 * Tests run several at once (XL_GRADE_JOBS); a lock file in the token folder
 * gives each timed test the GPU to itself, and the report is put back in
 * Criterion's order, as if the tests had run one at a time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* FNM_EXTMATCH: Criterion's --filter takes extended globs */
#endif
#include "grade.h"

#include <criterion/internal/ordered-set.h>

#include <cuda_runtime_api.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/check.h"
#include "common/cli.h"
#include "common/cpushare.h"
#include "common/devlog.h"
#include "common/labcalls.h"
#include "common/env.h"
#include "common/gpu.h"
#include "common/gpushare.h"
#include "common/timing.h"
#include "credit.h"
#include "results.h"

extern const char *const xl_lab_id;
extern const char *const xl_lab_slug;

/* ===== Test side (runs in each test's process) ===== */

#define PERTURB_BYTE 0xa5 /* what free() writes over heap memory in a test (mallopt M_PERTURB; malloc: its complement) */

static char current_test[256]; /* "suite.name" of the running test */
static int current_kind;       /* the running test's kind: XL_CPU, XL_GPU, XL_TIMED or XL_ALONE */
static xl_cpu_mark cpu_test;   /* the cores' counters when the test began (xl_test_begin) */
static xl_cpu_mark cpu_since;  /* the cores' counters when the figure being checked began to be measured */

/* token_path - $XL_TOKEN_DIR/<test>.<ext> into buf; 0, or -1 when no token folder is set */
static int token_path(char *buf, size_t len, const char *test, const char *ext)
{
    const char *dir = getenv("XL_TOKEN_DIR");
    if (!dir || !*dir)
        return -1;
    snprintf(buf, len, "%s/%s.%s", dir, test, ext);
    return 0;
}

/* write_token - $XL_TOKEN_DIR/<current test>.<ext> holding text (replaced); quietly nothing without a folder */
static void write_token(const char *ext, const char *text)
{
    char path[1024];
    FILE *f = token_path(path, sizeof path, current_test, ext) == 0 ? fopen(path, "w") : NULL;
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* fail_test - the fail handler for XL_CHECK inside tests: the message fails the test */
static void fail_test(const char *msg)
{
    cr_fatal("%s", msg);
}

void xl_note(const char *fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    if (token_path(path, sizeof path, current_test, "notes") == 0) {
        FILE *f = fopen(path, "a");
        if (f) {
            vfprintf(f, fmt, ap);
            fputc('\n', f);
            fclose(f);
        }
    }
    va_end(ap);
}

static char timeout_token[1024]; /* the token the test's timer leaves when it runs out; "" without a token folder */

/* on_timeout - SIGALRM in a test's process: its time is up; leaves the timeout token and ends the process
 * (async-signal-safe calls only) */
static void on_timeout(int sig)
{
    (void)sig;
    if (timeout_token[0]) {
        int fd = open(timeout_token, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            close(fd);
    }
    _exit(124);
}

/* lock_mode - the grading's GPU lock a test of this kind holds while it runs: LOCK_EX to have the GPU to itself
 * (XL_ALONE), LOCK_SH beside the other GPU tests (XL_GPU), 0 for none (XL_CPU) */
static int lock_mode(int kind)
{
    return (kind & XL_ALONE) ? LOCK_EX : (kind & XL_GPU) ? LOCK_SH : 0;
}

/* open_gpu_lock - the grading's GPU lock, $XL_TOKEN_DIR/gpu.lock, open in this process and left open (a lock goes with
 * the process); -1 without a token folder. Fails the test (a grader error) when it cannot be opened. */
static int open_gpu_lock(void)
{
    char path[1024];
    if (token_path(path, sizeof path, "gpu", "lock") != 0)
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        cr_fatal("grader error: cannot open the GPU lock %s: %s", path, strerror(errno));
    return fd;
}

/* lock_gpu - waits until fd holds the GPU lock as mode, LOCK_SH or LOCK_EX (flock turns a shared lock this process
 * holds into an exclusive one); the seconds it waited. Fails the test (a grader error) when it cannot be taken. */
static double lock_gpu(int fd, int mode)
{
    double t0 = xl_now_ms();
    while (flock(fd, mode) != 0)
        if (errno != EINTR)
            cr_fatal("grader error: cannot lock the GPU lock: %s", strerror(errno));
    return (xl_now_ms() - t0) / 1e3;
}

/* idle_contexts - how many other tests of this grading hold a CUDA context while they wait to have the GPU to
 * themselves (their "idle" tokens): they do no GPU work, so a speed test beside them is not disturbed */
static int idle_contexts(void)
{
    const char *dir = getenv("XL_TOKEN_DIR");
    DIR *d = dir && *dir ? opendir(dir) : NULL;
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        n += len > 5 && strcmp(e->d_name + len - 5, ".idle") == 0;
    }
    if (d)
        closedir(d);
    return n;
}

/* remove_token - removes $XL_TOKEN_DIR/<current test>.<ext>, if there */
static void remove_token(const char *ext)
{
    char path[1024];
    if (token_path(path, sizeof path, current_test, ext) == 0)
        remove(path);
}

static int probe_device = -1; /* the device the probe made this test's context on */

void xl_test_begin(int kind, double timeout_s)
{
    char why[512], waited[32];
    const struct criterion_test *t = criterion_current_test;
    snprintf(current_test, sizeof current_test, "%s.%s", t->category, t->name);
    current_kind = kind;
    /* The GPU lock first: before any CUDA call, and before the test's own timer starts. A GPU test holds it shared.
     * A GPU speed test (XL_TIMED) makes its context while the GPU is shared, where no speed test measures, then waits for
     * the lock alone holding that context idle, an "idle" token saying so: a context costs about 0.3 s, and the
     * speed tests no longer make theirs one after another. */
    int fd = lock_mode(kind) ? open_gpu_lock() : -1, probed = 0;
    double wait_s = fd >= 0 ? lock_gpu(fd, (kind & XL_GPU) ? LOCK_SH : lock_mode(kind)) : 0;
    xl_gpu_info gpu;
    if ((kind & XL_TWO_GPUS) && xl_gpu_count() == 1) /* before the probe: no context for a test that cannot run */
        cr_skip_test("%s", XL_NEEDS_2_GPUS);
    if ((kind & XL_ALONE) && (kind & XL_GPU)) {
        write_token("idle", "");
        probed = xl_gpu_probe(&gpu, why, sizeof why) == 0 ? 1 : -1;
        if (probed > 0 && fd >= 0)
            wait_s += lock_gpu(fd, LOCK_EX);
        remove_token("idle");
    }
    if (wait_s >= 0.001) { /* the report leaves it out of the test's seconds */
        snprintf(waited, sizeof waited, "%.3f", wait_s);
        write_token("waited", waited);
    }
    if (token_path(timeout_token, sizeof timeout_token, current_test, "timeout") != 0)
        timeout_token[0] = '\0';
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_timeout;
    sigemptyset(&sa.sa_mask);
    struct itimerval timer = {{0, 0}, {(time_t)timeout_s, (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6)}};
    if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &timer, NULL) != 0)
        cr_fatal("grader error: cannot start the test's timer: %s", strerror(errno));
    xl_set_fail_handler(fail_test);
    if ((kind & XL_GPU) && !probed)
        probed = xl_gpu_probe(&gpu, why, sizeof why) == 0 ? 1 : -1;
    if (probed < 0)
        cr_skip_test("%s", why);
    if (kind & XL_GPU) {
        probe_device = gpu.device;
        xl_results_device(gpu.name);
    }
    xl_cpu_mark_now(&cpu_test);
    cpu_since = cpu_test; /* a timed check's window starts here, or at the check before it */
    xl_devlog_watch();
    xl_labcalls_reset();
    /* Heap memory freed is overwritten, and memory malloc hands out is not zero: code that reads its own memory after
     * freeing it, or counts on a fresh buffer holding zeros, goes wrong here rather than by luck. Not in a speed test,
     * whose buffers must cost what they cost a student's program (glibc's per-thread cache is off in every test:
     * without_heap_cache). */
    if (!(kind & XL_ALONE))
        mallopt(M_PERTURB, PERTURB_BYTE);
}

/* lab_may_switch - 1 when this lab's grader says XL_LAB_SWITCHES_DEVICES */
extern const int xl_lab_switches_devices __attribute__((weak));
static int lab_may_switch(void)
{
    return &xl_lab_switches_devices && xl_lab_switches_devices;
}

/* expect_no_forbidden_calls - fails the test when the lab's code made a call lab.h forbids (common/labcalls.h): each
 * one touches work and state that are not the lab's */
static void expect_no_forbidden_calls(void)
{
    static const char *const why[XL_LAB_CALLS] = {
        [XL_LAB_DEVICE_SYNC] = "it waits for all of the device's work, the caller's and other streams' too: wait for "
                               "your own work only (cudaStreamSynchronize on your stream, or your event)",
        [XL_LAB_SET_FLAGS] = "it changes how the device behaves for every caller: leave its flags as the caller set "
                             "them",
        [XL_LAB_RESET] = "it destroys every buffer, stream and event on the device, the caller's too",
        [XL_LAB_CACHE_CONFIG] = "it changes the cache split of every kernel on the device, the caller's too: leave "
                                "it as the caller set it (cudaFuncSetCacheConfig sets your own kernel's)",
        [XL_LAB_SET_LIMIT] = "it changes a limit of the whole device for every caller: leave the limits as the "
                             "caller set them",
    };
    for (int c = 0; c < XL_LAB_CALLS; c++) {
        int n = xl_labcalls_count(c);
        cr_assert(n == 0, "your code called %s (%d call%s): %s (lab.h)", xl_labcalls_name(c), n, n == 1 ? "" : "s",
                  why[c]);
    }
}

void xl_test_complete(const char *suite, const char *name, int kind)
{
    char path[1024], test[256];
    if (kind & XL_GPU) {
        cudaError_t err = cudaGetLastError();
        if (err == cudaSuccess)
            err = cudaDeviceSynchronize();
        cr_assert(err == cudaSuccess, "your code left the GPU with an error: %s%s%s",
                  cudaGetErrorString(err), *xl_cuda_hint(err) ? " - " : "", xl_cuda_hint(err));
        int last = -1, sets = xl_devlog_sets(&last);
        cr_assert(sets == 0 || lab_may_switch(),
                  "your code called cudaSetDevice(%d) on the caller's thread (%d call%s): work on the device the "
                  "caller made current and leave it so (lab.h); a thread you start may set its own",
                  last, sets, sets == 1 ? "" : "s");
        expect_no_forbidden_calls();
    }
    snprintf(test, sizeof test, "%s.%s", suite, name);
    if (token_path(path, sizeof path, test, "done") == 0) {
        FILE *f = fopen(path, "w");
        cr_assert(f != NULL, "the grader cannot write its token %s: %s", path, strerror(errno));
        fclose(f);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL); /* done in time */
}

/* append_ratio - appends "check, attempt, ratio, need, at_least, label, figures" to the file at path (NULL: none)
 * as a tab-separated line: check is suite.name[#k], label the figure's name for people (make stability and the
 * report page read the columns; the figures say what made a ratio low, and begin with "NOT SOUND (why)" for an
 * attempt that could not be trusted) */
static void append_ratio(const char *path, const char *check, int attempt, double ratio, xl_need need,
                         const char *label, const char *unsound, const char *figures)
{
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    fprintf(f, "%s\t%d\t%.6g\t%.6g\t%d\t%s\t", check, attempt, ratio, need.value, need.at_least, label);
    if (*unsound)
        fprintf(f, "NOT SOUND (%s) ", unsound);
    for (const char *c = figures; *c; c++) /* one line per measurement, whatever the figures hold */
        fputc(*c == '\t' || *c == '\n' ? ' ' : *c, f);
    fputc('\n', f);
    fclose(f);
}

/* log_ratio - one speed measurement into the ratio log (XL_RATIO_LOG=FILE) and the report's ratios.tsv */
static void log_ratio(const char *check, int attempt, double ratio, xl_need need, const char *label,
                      const char *unsound, const char *figures)
{
    char path[1200];
    append_ratio(getenv("XL_RATIO_LOG"), check, attempt, ratio, need, label, unsound, figures);
    if (xl_results_file("ratios.tsv", path, sizeof path) == 0)
        append_ratio(path, check, attempt, ratio, need, label, unsound, figures);
}

const char *xl_need_text(xl_need need, char *buf, size_t len)
{
    int pct = strcmp(need.unit, "%") == 0;
    snprintf(buf, len, "need %s %g%s", need.at_least ? ">=" : "<=", pct ? 100 * need.value : need.value, need.unit);
    return buf;
}

static char unsound_why[512]; /* why the attempt being measured cannot be trusted; "" while it can */

void xl_measure_unsound(const char *fmt, ...)
{
    if (unsound_why[0]) /* the first reason is the one told */
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(unsound_why, sizeof unsound_why, fmt, ap);
    va_end(ap);
}

void xl_sound_spread(const double *samples, int n, double limit, const char *what)
{
    double lo = samples[0], hi = samples[0];
    for (int i = 1; i < n; i++) {
        lo = fmin(lo, samples[i]);
        hi = fmax(hi, samples[i]);
    }
    if (!(lo > 0) || hi / lo > limit)
        xl_measure_unsound("%s moved from %.3g to %.3g between its repetitions (more than %.2gx)", what, lo, hi, limit);
}

void xl_sound_within(double v, double lo, double hi, const char *what)
{
    if (!(v >= lo && v <= hi))
        xl_measure_unsound("%s came out %.3g, outside what is possible (%.3g to %.3g)", what, v, lo, hi);
}

void xl_sound_timing(double min_ms, double max_ms, double limit, const char *what)
{
    double mm[2] = {min_ms, max_ms};
    xl_sound_spread(mm, 2, limit, what);
}

static unsigned long long used_devices; /* bit d: the test used device d (xl_gpu_used) */

void xl_gpu_used(int d)
{
    if (d >= 0 && d < 64)
        used_devices |= 1ull << d;
}

/* others_unsound - marks the attempt unsound when another process uses the GPU (the current device, and every other
 * device the test used: xl_gpu_used), and tells the report so (a test that does not use the GPU cannot be slowed by
 * one: the grading model's planted figures) */
static void others_unsound(void)
{
    char who[512], line[640] = "";
    int device = 0;
    size_t used = 0;
    if (!(current_kind & XL_GPU))
        return;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    unsigned long long devs = used_devices | (device < 64 ? 1ull << device : 0);
    int many = (devs & (devs - 1)) != 0; /* name the GPU only where the test used more than one */
    for (int d = 0; d < 64; d++) {
        int idle = d == probe_device ? idle_contexts() : 0; /* this grading's speed tests, waiting with a context */
        int n = devs & (1ull << d) ? xl_gpu_others(d, who, sizeof who) : 0;
        if (n - idle <= 0 || used >= sizeof line)
            continue;
        if (many)
            used += snprintf(line + used, sizeof line - used, "%sGPU %d: %s", used ? "; " : "", d, who);
        else
            used += snprintf(line + used, sizeof line - used, "%s", who);
    }
    if (used) {
        xl_measure_unsound("other processes used the GPU at the same time (%s)", line);
        write_token("shared", line);
    }
}

/* cpu_unsound - marks the attempt unsound when other processes kept more than XL_CPU_OTHERS_MAX of this process's
 * cores busy (half of them, where there are fewer than 4) on average since cpu_since, or since the test began where
 * the attempt was shorter than XL_CPU_WINDOW_S (shorter still: not judged). Only a test that uses the GPU: the
 * others are the grading model's, whose planted figures no load changes. */
static void cpu_unsound(void)
{
    if (!(current_kind & XL_GPU))
        return;
    xl_cpu_mark now;
    xl_cpu_mark_now(&now);
    double cores = xl_cpu_others(&cpu_since, &now);
    if (cores < 0)
        cores = xl_cpu_others(&cpu_test, &now);
    if (cores > fmin(XL_CPU_OTHERS_MAX, now.cpus / 2.0))
        xl_measure_unsound("other processes kept %.1f of the %d cores busy, on average, while it was measured", cores,
                           now.cpus);
}

/* meets - 1 when value meets need (at least or at most its value) */
static int meets(double value, xl_need need)
{
    return need.at_least ? value >= need.value : value <= need.value;
}

/* far_miss - 1 when a finite value misses need by more than XL_FAR_MISS times */
static int far_miss(double value, xl_need need)
{
    if (!isfinite(value) || !(need.value > 0))
        return 0;
    return need.at_least ? value < need.value / XL_FAR_MISS : value > need.value * XL_FAR_MISS;
}

/* next_check - the name of this test's next timed check, into check: suite.name, then suite.name#2, #3 ...; fails
 * the test when it is not declared XL_TIMED (make test would grade it beside others) */
static void next_check(char *check, size_t len)
{
    static int checks; /* timed checks made so far in this test's process */
    int alone = (current_kind & XL_ALONE) != 0;
    cr_assert(alone, "grader error: %s makes a speed or timed check but is not declared XL_TIMED", current_test);
    if (++checks > 1)
        snprintf(check, len, "%s#%d", current_test, checks);
    else
        snprintf(check, len, "%s", current_test);
}

void xl_not_graded(const char *what, const char *why, const char *figures)
{
    char text[3072];
    snprintf(text, sizeof text,
             "NOT GRADED: %s could not be measured soundly: %s. It earns nothing in this run and is not a failure: "
             "grade again when the machine is idle (nvidia-smi lists what runs on the GPU, top what keeps the CPU "
             "busy).\n%s",
             what, why, figures);
    write_token("ungraded", text);
    cr_skip_test("not graded: %s", why);
}

/* give_credit - a check whose sound best reading, below its bar, still earns share (0 to 1) of the test's points
 * under linear credit: the smallest share of the test's checks goes to the report as its "credit" token, and the
 * figures are noted */
static void give_credit(const char *what, double share, const char *figures)
{
    static double least = 1; /* this test's process: the smallest share of its checks so far */
    char text[32];
    least = fmin(least, share);
    snprintf(text, sizeof text, "%.6f", least);
    write_token("credit", text);
    xl_note("%s: short of the bar, %.0f%% of the way up from the floor of partial credit, so this check is worth "
            "%.0f%% of the test's points (rounded down to whole points):\n%s", what, 100 * share, 100 * share, figures);
}

void xl_timed_check(double value, xl_need need, const char *label, const char *fmt, ...)
{
    char check[300], figures[64], msg[2048], bar[64], what[320];
    next_check(check, sizeof check);
    unsound_why[0] = '\0';
    int pass = isfinite(value) && meets(value, need); /* not a number: a figure the code under test gave, a fail */
    if (!pass) {
        others_unsound();
        cpu_unsound();
    }
    xl_cpu_mark_now(&cpu_since);
    snprintf(figures, sizeof figures, "%.4g", value);
    log_ratio(check, 1, value, need, label, unsound_why, figures);
    if (pass)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(what, sizeof what, "%s (%s)", label, xl_need_text(need, bar, sizeof bar));
    if (unsound_why[0])
        xl_not_graded(what, unsound_why, msg);
    double share = xl_credit_share(value, need);
    if (share > 0) {
        give_credit(what, share, msg);
        return;
    }
    cr_fatal("%s", msg);
}

void xl_ratio_check(xl_measure_fn measure, void *ctx, xl_need need, const char *name)
{
    char all[2048] = "", figures[512], why[512] = "", check[300], bar[64], what[320];
    next_check(check, sizeof check);
    snprintf(what, sizeof what, "%s (%s)", name, xl_need_text(need, bar, sizeof bar));
    int far = 0, far_row = 0, attempts = xl_env_on("XL_ONE_ATTEMPT") ? 1 : 3;
    int at_once = attempts == 1 || xl_env_on("XL_FAR_AT_ONCE"); /* one far miss decides */
    double best = NAN; /* the sound attempts' best reading */
    for (int attempt = 1; attempt <= attempts && !far; attempt++) {
        double ratio = 0;
        figures[0] = '\0';
        unsound_why[0] = '\0';
        xl_cpu_mark_now(&cpu_since);
        measure(ctx, &ratio, figures, sizeof figures);
        if (!isfinite(ratio))
            xl_measure_unsound("the ratio is not a number");
        int pass = meets(ratio, need);
        if (!pass) {
            others_unsound();
            cpu_unsound();
        }
        log_ratio(check, attempt, ratio, need, name, unsound_why, figures);
        if (pass && !unsound_why[0]) {
            xl_note("%s (attempt %d): %s", what, attempt, figures);
            return;
        }
        size_t used = strlen(all);
        snprintf(all + used, sizeof all - used, "%s  attempt %d: %s%s%s%s", used ? "\n" : "", attempt, figures,
                 unsound_why[0] ? " [not sound: " : "", unsound_why, unsound_why[0] ? "]" : "");
        if (unsound_why[0] && !why[0])
            snprintf(why, sizeof why, "%s", unsound_why);
        if (!unsound_why[0] && isfinite(ratio) && (isnan(best) || (need.at_least ? ratio > best : ratio < best)))
            best = ratio;
        far_row = !why[0] && far_miss(ratio, need) ? far_row + 1 : 0; /* every attempt so far sound */
        far = far_row >= 2 || (far_row == 1 && at_once);
        if (far_row == 1 && !far && attempt < attempts) /* a slow spell of the host, not the code, passes in a second */
            usleep(XL_FAR_PAUSE_MS * 1000);
    }
    if (why[0]) /* the measurement, not the code, is in doubt: neither pass nor fail */
        xl_not_graded(what, why, all);
    double share = xl_credit_share(best, need);
    if (share > 0) {
        give_credit(what, share, all);
        return;
    }
    if (far)
        cr_fatal("%s: missed the threshold by more than %gx in sound measurements (not measured again):\n%s", what,
                 XL_FAR_MISS, all);
    cr_fatal("%s: missed the threshold in %d fresh measurement%s:\n%s", what, attempts, attempts > 1 ? "s" : "", all);
}

/* ===== Report side (runs in the parent; no CUDA here) ===== */

/* One scored test. */
typedef struct {
    char name[256];     /* suite.name */
    char desc[256];     /* Criterion description */
    int score, max;     /* points earned, points possible */
    char status[16];    /* "passed", "partial" (a speed check short of its bar, under linear credit), "failed",
                         * "skipped", "ungraded" (a measurement that could not be trusted) */
    double seconds;     /* how long the test's process ran, as Criterion measured it, less its wait for the GPU lock */
    char visibility[32];
    char output[4096];  /* why it failed or was skipped, and the test's notes */
    char shared[512];   /* the other processes it saw on the GPU during a speed check, or "" */
} scored;

static scored results[128]; /* in the order the tests finished, until order_results */
static int nresults;

/* meta_of - the grading model's fields of test t (XL_TEST), or NULL for a plain Criterion test */
static const xl_test_meta *meta_of(const struct criterion_test *t)
{
    return t->data ? (const xl_test_meta *)t->data->data : NULL;
}

/* shared_with - the other processes on the GPU that the last test in results to see any saw, or "" */
static const char *shared_with(void)
{
    for (int i = nresults - 1; i >= 0; i--)
        if (results[i].shared[0])
            return results[i].shared;
    return "";
}

/* append - appends formatted text to buf (bounded) */
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* read_into - appends the contents of a file to buf; 0 if it existed, -1 if not */
static int read_into(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t used = strlen(buf);
    size_t n = fread(buf + used, 1, len - used - 1, f);
    buf[used + n] = '\0';
    fclose(f);
    return 0;
}

/* score_test - scores one finished test from Criterion's stats and the test's token */
static void score_test(struct criterion_test_stats *st)
{
    if (nresults >= (int)(sizeof results / sizeof results[0]))
        return;
    scored *r = &results[nresults++];
    const struct criterion_test_extra_data *d = st->test->data;
    const xl_test_meta *m = meta_of(st->test);
    char token[1024], notes[1024], waited[1024], wait_text[64] = "";
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s.%s", st->test->category, st->test->name);
    snprintf(r->desc, sizeof r->desc, "%s", d && d->description ? d->description : "");
    snprintf(r->visibility, sizeof r->visibility, "%s", m && m->visibility ? m->visibility : "visible");
    r->max = m ? m->points : 0;
    r->seconds = st->elapsed_time;
    if (token_path(waited, sizeof waited, r->name, "waited") == 0 &&
        read_into(waited, wait_text, sizeof wait_text) == 0) {
        r->seconds = fmax(0, r->seconds - atof(wait_text)); /* its wait for the GPU lock (take_gpu_lock) */
        remove(waited);
    }
    int have_token = token_path(token, sizeof token, r->name, "done") == 0 && access(token, F_OK) == 0;
    char ungraded[1024], shared[1024];
    int is_ungraded = token_path(ungraded, sizeof ungraded, r->name, "ungraded") == 0 && access(ungraded, F_OK) == 0;
    char timeout[1024];
    int out_of_time = token_path(timeout, sizeof timeout, r->name, "timeout") == 0 && access(timeout, F_OK) == 0;
    if (out_of_time)
        remove(timeout);
    if (token_path(shared, sizeof shared, r->name, "shared") == 0 &&
        read_into(shared, r->shared, sizeof r->shared) == 0)
        remove(shared);

    if (st->test_status == CR_STATUS_SKIPPED && is_ungraded) {
        strcpy(r->status, "ungraded");
        read_into(ungraded, r->output, sizeof r->output);
        remove(ungraded);
    } else if (st->test_status == CR_STATUS_SKIPPED) {
        strcpy(r->status, "skipped");
        append(r->output, sizeof r->output, "%s", st->message ? st->message : "skipped");
    } else if (out_of_time || st->timed_out) { /* its own timer, or Criterion's (code that stopped the timer) */
        strcpy(r->status, "failed");
        append(r->output, sizeof r->output,
               "did not finish within %.0f s: your code hangs (a loop that never ends, or a wait for GPU work "
               "that never finishes?)",
               out_of_time && m ? m->timeout_s : d ? d->timeout : 0.0);
    } else if (st->crashed) {
        strcpy(r->status, "failed");
        append(r->output, sizeof r->output, "crashed with signal %d (%s)%s", st->signal, strsignal(st->signal),
               st->signal == SIGABRT ? ": abort() was called, or an assert() in your code failed"
               : st->signal == SIGSEGV ? ": a bad pointer on the host (a device pointer read on the CPU?)"
                                       : "");
    } else if (st->test_status == CR_STATUS_FAILED) {
        strcpy(r->status, "failed");
        for (struct criterion_assert_stats *a = st->asserts; a; a = a->next)
            if (!a->passed)
                append(r->output, sizeof r->output, "%s%s", r->output[0] ? "\n" : "",
                       a->message && *a->message ? a->message : "a check failed");
        if (!r->output[0])
            append(r->output, sizeof r->output, "the test process ended with status %d before its checks finished",
                   st->exit_code);
    } else if (!have_token) {
        strcpy(r->status, "failed");
        append(r->output, sizeof r->output,
               "the test stopped before its checks finished: your code ended the process "
               "(exit(), _exit() or a return from main) with status %d",
               st->exit_code);
    } else {
        char credit[1024], text[64] = "";
        strcpy(r->status, "passed");
        r->score = r->max;
        if (token_path(credit, sizeof credit, r->name, "credit") == 0 && read_into(credit, text, sizeof text) == 0) {
            double share = atof(text); /* below 1: a speed check under its bar, earning part of the points */
            if (share < 1) { /* a share worth less than a point earns none: a failure, its note says how close */
                r->score = (int)floor(r->max * share + 1e-9);
                strcpy(r->status, r->score > 0 ? "partial" : "failed");
            }
            remove(credit);
        }
    }
    if (token_path(notes, sizeof notes, r->name, "notes") == 0) {
        char tmp[2048] = "";
        if (read_into(notes, tmp, sizeof tmp) == 0) {
            size_t n = strlen(tmp);
            if (n && tmp[n - 1] == '\n')
                tmp[n - 1] = '\0';
            append(r->output, sizeof r->output, "%s%s", r->output[0] ? "\n" : "", tmp);
        }
        remove(notes);
    }
    if (have_token)
        remove(token);
}

/* Criterion reports a crashed test through TEST_CRASH, every other one through POST_TEST. */
ReportHook(POST_TEST)(struct criterion_test_stats *st)
{
    score_test(st);
}

ReportHook(TEST_CRASH)(struct criterion_test_stats *st)
{
    score_test(st);
}

/* order_results - puts results in the order of the test set: Criterion's own (suites by name, then their tests by
 * name), the order in which tests finish when they run one at a time. Tests run at once finish in any order; the
 * report, results.json and points.tsv come out the same either way. */
static void order_results(struct criterion_test_set *tests)
{
    static scored sorted[sizeof results / sizeof results[0]];
    char taken[sizeof results / sizeof results[0]] = {0}, id[512];
    int kept = 0; /* (FOREACH_SET names its own n) */
    FOREACH_SET(struct criterion_suite_set *s, tests->suites) {
        if (!s->tests)
            continue;
        FOREACH_SET(struct criterion_test *t, s->tests) {
            snprintf(id, sizeof id, "%s.%s", t->category, t->name);
            for (int i = 0; i < nresults; i++)
                if (!taken[i] && strcmp(results[i].name, id) == 0) {
                    sorted[kept++] = results[i];
                    taken[i] = 1;
                }
        }
    }
    for (int i = 0; i < nresults; i++) /* none expected: a result the set does not name is kept, last */
        if (!taken[i])
            sorted[kept++] = results[i];
    memcpy(results, sorted, (size_t)kept * sizeof *results);
}

/* json_string - writes s to f as a JSON string */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* write_results - results.json (Gradescope) and points.tsv into dir (ungraded: how many tests were not graded);
 * 0 or -1 */
static int write_results(const char *dir, int score, int max, int ungraded)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\n  \"score\": %d,\n  \"max_score\": %d,\n", score, max);
    if (ungraded) {
        char out[1024];
        snprintf(out, sizeof out, "%d speed test%s NOT GRADED: %s Grade again when the GPU is idle.", ungraded,
                 ungraded > 1 ? "s were" : " was", shared_with()[0] ? "other processes used the GPU." :
                 "the GPU's figures could not be trusted.");
        fprintf(f, "  \"output\": ");
        json_string(f, out);
        fprintf(f, ",\n");
    }
    fprintf(f, "  \"tests\": [\n");
    for (int i = 0; i < nresults; i++) {
        scored *r = &results[i];
        fprintf(f, "    {\"name\": ");
        json_string(f, r->name);
        fprintf(f, ", \"score\": %d, \"max_score\": %d, \"status\": \"%s\", \"visibility\": ", r->score, r->max,
                strcmp(r->status, "passed") == 0 ? "passed" : "failed");
        json_string(f, r->visibility);
        fprintf(f, ", \"output\": ");
        char out[4400];
        snprintf(out, sizeof out, "%s%s%s", r->desc, r->output[0] ? "\n" : "", r->output);
        json_string(f, out);
        fprintf(f, "}%s\n", i + 1 < nresults ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (fclose(f) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/points.tsv", dir);
    if (!(f = fopen(path, "w")))
        return -1;
    fprintf(f, "test\tscore\tmax\tstatus\tseconds\n");
    for (int i = 0; i < nresults; i++)
        fprintf(f, "%s\t%d\t%d\t%s\t%.2f\n", results[i].name, results[i].score, results[i].max, results[i].status,
                results[i].seconds);
    return fclose(f) == 0 ? 0 : -1;
}

/* print_report - the per-test table and the lab's total line */
static void print_report(const char *impl)
{
    int score = 0, max = 0, skipped = 0, skipped_pts = 0, ungraded = 0;
    const char *skip_why = "";
    int verbose = xl_env_on("XL_VERBOSE"); /* every test's notes, the passing ones' too */
    printf("\n== lab %s %s%s%s%s ==\n", xl_lab_id, xl_lab_slug, impl ? " (" : "", impl ? impl : "", impl ? ")" : "");
    if (shared_with()[0])
        printf("  The GPU was shared: other processes used it while speed tests ran (%s). A speed test measured "
               "beside them is NOT GRADED rather than failed; grade again when the GPU is idle.\n",
               shared_with());
    for (int i = 0; i < nresults; i++) {
        scored *r = &results[i];
        score += r->score;
        max += r->max;
        skipped += strcmp(r->status, "skipped") == 0;
        skipped_pts += strcmp(r->status, "skipped") == 0 ? r->max : 0;
        if (strcmp(r->status, "skipped") == 0) {
            printf("  [ --/%2d] %-28s SKIPPED\n", r->max, r->name);
            skip_why = r->output;
            continue;
        }
        ungraded += strcmp(r->status, "ungraded") == 0;
        printf("  [%3d/%2d] %-28s %s\n", r->score, r->max, r->name,
               strcmp(r->status, "passed") == 0    ? "ok"
               : strcmp(r->status, "partial") == 0 ? "PARTIAL (a speed check short of its bar)"
               : r->status[0] == 'u'               ? "NOT GRADED"
                                                   : "FAILED");
        if (strcmp(r->status, "passed") != 0 || verbose) {
            char *save, *line, copy[4096];
            snprintf(copy, sizeof copy, "%s", r->output);
            for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                printf("             %s\n", line);
        }
    }
    printf("lab %s %s: %d/%d", xl_lab_id, xl_lab_slug, score, max);
    if (skipped) /* the reason once: make grade says it before its first lab when every lab shares it */
        printf(" (%d of the %d points not graded here: %d test%s skipped%s%s)", skipped_pts, max, skipped,
               skipped > 1 ? "s" : "", xl_env_on("XL_SKIP_REASON_SAID") ? "" : ": ",
               xl_env_on("XL_SKIP_REASON_SAID") ? "" : skip_why);
    if (ungraded)
        printf(" (%d test%s NOT GRADED: the measurement could not be trusted; grade again on an idle GPU)", ungraded,
               ungraded > 1 ? "s" : "");
    printf("\n");
    const char *dir = getenv("XL_RESULTS_DIR");
    if (dir && *dir && write_results(dir, score, max, ungraded) != 0)
        fprintf(stderr, "grader: cannot write results into %s: %s\n", dir, strerror(errno));
}

/* remove_tokens - empties and removes the token folder */
static void remove_tokens(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1024];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* print_timed - the tests declared XL_TIMED (or XL_ALONE), one "suite.name" a line */
static void print_timed(struct criterion_test_set *tests)
{
    FOREACH_SET(struct criterion_suite_set *s, tests->suites) {
        FOREACH_SET(struct criterion_test *t, s->tests) {
            const xl_test_meta *m = meta_of(t);
            if (m && (m->kind & XL_ALONE))
                printf("%s.%s\n", t->category, t->name);
        }
    }
}

/* print_points_table - the lab's visible tests and points as a Markdown table, for the handout (the points of
 * tests students do not see are added up in one line) */
static void print_points_table(struct criterion_test_set *tests)
{
    int total = 0, unseen = 0;
    printf("| test | points | needs a GPU | what it checks |\n|---|---:|:---:|---|\n");
    FOREACH_SET(struct criterion_suite_set *s, tests->suites) {
        FOREACH_SET(struct criterion_test *t, s->tests) {
            const xl_test_meta *m = meta_of(t);
            if (!m)
                continue;
            if (m->visibility && strcmp(m->visibility, "visible") != 0) {
                unseen += m->points;
                continue;
            }
            printf("| `%s.%s` | %d | %s | %s |\n", t->category, t->name, m->points,
                   m->kind & XL_TWO_GPUS ? "2 GPUs" : m->kind & XL_GPU ? "yes" : "no",
                   t->data->description ? t->data->description : "");
            total += m->points;
        }
    }
    if (unseen)
        printf("| tests shown after grading | %d | | |\n", unseen);
    printf("| **total** | **%d** | | |\n", total + unseen);
    if (xl_credit_linear()) {
        char how[256];
        printf("\nSpeed tests: %s.\n", xl_credit_text(how, sizeof how));
    }
}

/* unwritable_output - the first --json=, --xml=, --tap= or --output=KIND: argument in argv whose file cannot be
 * written (the file, or the folder it would be made in), with why in why; NULL when every one can be. Writes
 * nothing. */
static const char *unwritable_output(int argc, char *argv[], char *why, size_t len)
{
    static const char *const opts[] = {"--json=", "--xml=", "--tap=", "--output="};
    for (int i = 1; i < argc; i++)
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
            if (strncmp(argv[i], opts[k], strlen(opts[k])) != 0)
                continue;
            const char *path = argv[i] + strlen(opts[k]);
            if (k == 3) /* --output=KIND:PATH */
                path = strchr(path, ':') ? strchr(path, ':') + 1 : "";
            if (!*path || strcmp(path, "-") == 0) /* Criterion's default file, or the standard output */
                continue;
            if (xl_can_write(path) != 0) {
                snprintf(why, len, "%s", strerror(errno));
                return argv[i];
            }
        }
    return NULL;
}

/* bad_argument - 0 when Criterion would take every argument in argv as meant; else 1 with one line in why about the
 * first that it would not: an unknown option, a missing or empty value, a stray word, a --jobs or --timeout that is
 * not a number, an --output without KIND:FILE (Criterion would print its usage and exit 0, run every test, or stop
 * with no word). Parses a copy of argv with Criterion 2.4's options; Criterion parses argv itself afterwards. */
static int bad_argument(int argc, char *argv[], char *why, size_t len)
{
    static const struct option opts[] = {
        {"verbose", optional_argument, 0, 'b'}, {"quiet", no_argument, 0, 'q'}, {"version", no_argument, 0, 'v'},
        {"tap", optional_argument, 0, 'T'}, {"xml", optional_argument, 0, 'x'}, {"json", optional_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'}, {"list", no_argument, 0, 'l'}, {"ascii", no_argument, 0, 'k'},
        {"jobs", required_argument, 0, 'j'}, {"timeout", required_argument, 0, 't'}, {"fail-fast", no_argument, 0, 'f'},
        {"short-filename", no_argument, 0, 'S'}, {"single", required_argument, 0, 's'},
        {"pattern", required_argument, 0, 'p'}, {"filter", required_argument, 0, 'F'},
        {"always-succeed", no_argument, 0, 'y'}, {"no-early-exit", no_argument, 0, 'z'},
        {"output", required_argument, 0, 'O'}, {"wait", no_argument, 0, 'w'}, {"crash", no_argument, 0, 'c'},
        {"debug", optional_argument, 0, 'd'}, {"debug-transport", required_argument, 0, 'D'},
        {"full-stats", no_argument, 0, 'U'}, {"ignore-warnings", no_argument, 0, 'I'},
        {"color", required_argument, 0, 'C'}, {"encoding", required_argument, 0, 'e'}, {0, 0, 0, 0}};
    const char *hint = "--help lists the options; e.g. --list, --filter='suite/*'";
    char *args[argc + 1], *end;
    memcpy(args, argv, (size_t)argc * sizeof *args);
    args[argc] = NULL;
    int c, bad = 0, saved = opterr;
    opterr = 0;
    optind = 0; /* GNU getopt: start afresh */
    while (!bad && (c = getopt_long(argc, args, ":hvlfj:SqO:wt:", opts, NULL)) != -1) {
        const char *arg = args[optind - 1];
        bad = 1;
        if (c == '?' && optopt && strncmp(arg, "--", 2) != 0)
            snprintf(why, len, "unknown option '-%c' (%s)", optopt, hint);
        else if (c == '?')
            snprintf(why, len, "unknown option '%.100s' (%s)", arg, hint);
        else if (c == ':')
            snprintf(why, len, "%.100s needs a value (%s)", arg, hint);
        else if ((c == 'F' || c == 'p') && !*optarg)
            snprintf(why, len, "--filter needs a pattern, e.g. --filter='suite/*' (--list shows the tests)");
        else if (c == 'O' && !strchr(optarg, ':'))
            snprintf(why, len, "--output needs KIND:FILE, e.g. --output=json:out.json, not '%.100s'", optarg);
        else if ((c == 'j' && (strtol(optarg, &end, 10) < 0 || !*optarg || *end)) ||
                 (c == 't' && (strtod(optarg, &end) < 0 || !*optarg || *end)))
            snprintf(why, len, "%s takes a number%s, not '%.100s'", c == 'j' ? "--jobs" : "--timeout",
                     c == 'j' ? " of tests at once" : " of seconds", optarg);
        else
            bad = 0;
    }
    if (!bad && optind < argc) { /* getopt_long moved the words that are not options to the end */
        snprintf(why, len, "unexpected argument '%.100s' (to grade some tests only: --filter='suite/*'; --list shows "
                 "them)", args[optind]);
        bad = 1;
    }
    opterr = saved;
    optind = 0;
    return bad;
}

/* matches_none - 1 when Criterion's --filter pattern is set and no test's "suite/name" matches it, else 0 */
static int matches_none(struct criterion_test_set *tests, const char *pattern)
{
    char id[512];
    if (!pattern || !*pattern)
        return 0;
    FOREACH_SET(struct criterion_suite_set *s, tests->suites) {
        FOREACH_SET(struct criterion_test *t, s->tests) {
            snprintf(id, sizeof id, "%s/%s", t->category, t->name);
            if (fnmatch(pattern, id, FNM_EXTMATCH) == 0)
                return 0;
        }
    }
    return 1;
}

/* How many tests run at once by default: the cores the grader may run on, at most this many. Each test process pays for a CUDA
 * context of its own (0.3 to 0.4 s on an H100); a few at once overlap that cost for a lab's correctness tests, while
 * the memory they hold on the GPU and the host stays that of a few tests (its timed tests run one at a time anyway).
 * XL_GRADE_JOBS sets it, from 1 (one at a time, as before) to XL_GRADE_JOBS_MAX. */
#define XL_GRADE_JOBS_DEFAULT 4
#define XL_GRADE_JOBS_MAX 64

/* grade_jobs - how many tests run at once: XL_GRADE_JOBS when set, else the cores this process may run on (its
 * affinity: taskset, a Slurm or container cpuset; else the online ones) up to XL_GRADE_JOBS_DEFAULT; -1 with one
 * line in why when XL_GRADE_JOBS is not a whole number from 1 to XL_GRADE_JOBS_MAX */
static int grade_jobs(char *why, size_t len)
{
    const char *s = getenv("XL_GRADE_JOBS");
    char *end;
    if (!s || !*s) {
        cpu_set_t set;
        long cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
        return cores < 1 ? 1 : cores < XL_GRADE_JOBS_DEFAULT ? (int)cores : XL_GRADE_JOBS_DEFAULT;
    }
    long n = strtol(s, &end, 10);
    if (*end || n < 1 || n > XL_GRADE_JOBS_MAX) {
        snprintf(why, len, "XL_GRADE_JOBS is how many tests run at once, a whole number from 1 to %d (default: the "
                 "cores, at most %d), not '%.100s'", XL_GRADE_JOBS_MAX, XL_GRADE_JOBS_DEFAULT, s);
        return -1;
    }
    return (int)n;
}

/* allow_lock_waits - with tests run at once (Criterion's jobs other than 1), adds to Criterion's timeout of each test
 * that takes the GPU lock (lock_mode) the longest it can wait for it. A holder keeps the lock at most its own timeout
 * (its timer starts once it holds the lock, and ends the test). A test that shares the lock waits only while one
 * that has it alone holds it: at most the timeouts of the other XL_ALONE tests, added up; one that takes it alone
 * may wait for every other test that takes it. So waiting never eats into the XL_TIMEOUT_BACKSTOP_S that Criterion's
 * timeout keeps past the test's own, for code that stops the test's timer (the margin also covers each holder's
 * exit). Runs in the runner before the tests: Criterion enforces the runner's copy of each timeout. One at a time,
 * nothing waits and nothing changes. */
/* The own timeouts of the tests that take the lock, and of those that take it alone. */
typedef struct {
    double all_s, alone_s;
} lock_waits;

/* each_lock_taker - fn(t, mode, m, w) for each test that takes the GPU lock (mode: LOCK_SH or LOCK_EX) */
static void each_lock_taker(struct criterion_test_set *tests,
                            void (*fn)(struct criterion_test *t, int mode, const xl_test_meta *m, lock_waits *w),
                            lock_waits *w)
{
    FOREACH_SET(struct criterion_suite_set *s, tests->suites) {
        if (!s->tests)
            continue;
        FOREACH_SET(struct criterion_test *t, s->tests) {
            const xl_test_meta *m = meta_of(t);
            int mode = m ? lock_mode(m->kind) : 0;
            if (mode)
                fn(t, mode, m, w);
        }
    }
}

/* add_own - each_lock_taker's fn: adds a test's own timeout to the sums */
static void add_own(struct criterion_test *t, int mode, const xl_test_meta *m, lock_waits *w)
{
    (void)t;
    w->all_s += m->timeout_s;
    w->alone_s += mode == LOCK_EX ? m->timeout_s : 0;
}

/* add_wait - each_lock_taker's fn: adds to a test's Criterion timeout the longest it can wait for the lock */
static void add_wait(struct criterion_test *t, int mode, const xl_test_meta *m, lock_waits *w)
{
    t->data->timeout += mode == LOCK_EX ? w->all_s - m->timeout_s : w->alone_s;
}

static void allow_lock_waits(struct criterion_test_set *tests)
{
    lock_waits w = {0, 0};
    if (criterion_options.jobs == 1)
        return;
    each_lock_taker(tests, add_own, &w);
    each_lock_taker(tests, add_wait, &w);
}

/* supervise - runs this grader again as a child (XL_RUNNER=1, ended with this process) and returns its exit status.
 * When the child dies of SIGABRT or SIGSEGV, that is Criterion 2.4's runner crashing (a double free in its own
 * threads, now and then, with several gradings at once), never the code under test (each test has a process of its
 * own): says so in one line and grades once more. -1 when the child cannot be started. */
static int supervise(char *argv[])
{
    char dir[] = "/tmp/xferlab-tokens-XXXXXX"; /* the child's tokens: made here, so that a crash leaves none */
    for (int attempt = 1;; attempt++) {
        strcpy(dir, "/tmp/xferlab-tokens-XXXXXX");
        if (!mkdtemp(dir))
            return -1;
        setenv("XL_TOKEN_DIR", dir, 1);
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            setenv("XL_RUNNER", "1", 1);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            execv("/proc/self/exe", argv);
            _exit(127);
        }
        int st = 0, waited;
        while ((waited = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
        }
        remove_tokens(dir);
        if (waited < 0)
            return -1;
        if (WIFEXITED(st))
            return WEXITSTATUS(st);
        int sig = WTERMSIG(st);
        if ((sig != SIGABRT && sig != SIGSEGV) || attempt == 2)
            return 128 + sig;
        fprintf(stderr, "grader: Criterion's test runner crashed (signal %d; not your code, which runs in a process of "
                        "its own): grading again\n", sig);
    }
}

/* without_heap_cache - runs this program again, once, with glibc's per-thread heap cache off (GLIBC_TUNABLES, read
 * only when a process starts): a small block freed into that cache is never overwritten, so M_PERTURB (xl_test_begin)
 * would miss most reads of freed memory. Where the exec fails the grading goes on with the cache. */
static void without_heap_cache(char *argv[])
{
    const char *was = getenv("GLIBC_TUNABLES");
    char tunables[1024];
    if (was && strstr(was, "glibc.malloc.tcache_count"))
        return; /* this is the second run, or the user chose */
    int n = snprintf(tunables, sizeof tunables, "%s%sglibc.malloc.tcache_count=0", was ? was : "",
                     was && *was ? ":" : "");
    if (n < 0 || (size_t)n >= sizeof tunables || setenv("GLIBC_TUNABLES", tunables, 1) != 0)
        return;
    execv("/proc/self/exe", argv);
}

int main(int argc, char *argv[])
{
    char dir[] = "/tmp/xferlab-tokens-XXXXXX", why[256];
    without_heap_cache(argv);
    struct criterion_test_set *tests = criterion_initialize();
    int rc = 0, jobs = 1;
    const char *bad;
    if (xl_env_on("XL_LIST_TIMED")) {
        print_timed(tests);
        criterion_finalize(tests);
        return 0;
    }
    if (xl_env_on("XL_POINTS_TABLE")) {
        print_points_table(tests);
        criterion_finalize(tests);
        return 0;
    }
    if (bad_argument(argc, argv, why, sizeof why) || xl_credit_check(why, sizeof why) != 0 ||
        (jobs = grade_jobs(why, sizeof why)) < 0) {
        fprintf(stderr, "grader: %s\n", why);
        criterion_finalize(tests);
        return 2;
    }
    /* tests run at once; those that time the GPU have it to themselves all the same (take_gpu_lock). Criterion's
     * --jobs and CRITERION_JOBS still override it. */
    criterion_options.jobs = (size_t)jobs;
    if ((bad = unwritable_output(argc, argv, why, sizeof why))) {
        fprintf(stderr, "grader: cannot write %s: %s (name a file in a folder you can write)\n", bad, why);
        criterion_finalize(tests);
        return 2;
    }
    rc = criterion_handle_args(argc, argv, true);
    if (rc == 1 && matches_none(tests, criterion_options.pattern)) {
        fprintf(stderr, "grader: no test matches --filter=%s; the tests are listed by --list\n", criterion_options.pattern);
        criterion_finalize(tests);
        return 2;
    }
    if (rc == 1 && !xl_env_on("XL_RUNNER") && access("/proc/self/exe", X_OK) == 0) { /* grade in a child */
        criterion_finalize(tests);
        rc = supervise(argv);
        if (rc >= 0)
            return rc;
        fprintf(stderr, "grader: cannot start the test runner (a folder in /tmp, or a process): %s\n", strerror(errno));
        return 2;
    }
    int own_dir = !xl_env_on("XL_RUNNER"); /* a runner grades with its supervisor's token folder */
    if (own_dir && !mkdtemp(dir)) {
        fprintf(stderr, "grader: cannot create a folder in /tmp: %s\n", strerror(errno));
        criterion_finalize(tests);
        return 2;
    }
    if (own_dir)
        setenv("XL_TOKEN_DIR", dir, 1);
    if (rc == 1) { /* 1: go on and run; anything else: --help, --list, or a bad option */
        xl_results_reset();
        allow_lock_waits(tests);
        criterion_run_all_tests(tests);
        order_results(tests);
        print_report(getenv("XL_IMPL"));
        rc = 0;
    } else {
        rc = rc < 0 ? 2 : 0;
    }
    criterion_finalize(tests);
    if (own_dir)
        remove_tokens(dir);
    return rc;
}
