/* 01-pageable-copy.c - the grader of lab 01 (pageable copy). Course staff only.
 *
 * Built against the student's labs/01-pageable-copy/lab.cu (make grade LAB=01),
 * the reference solution (IMPL=solution) and each planted mutant (make test).
 * Every figure a speed test judges is compared with the kit's own measurement
 * in the same run, and the bytes of the student's timed copies are checked after it.
 * Contract checks vary every argument, queue GPU work ahead of a call on the stream it
 * must respect (the caller's, or the legacy stream for lab_copy), record the copies a
 * sweep makes (common/copylog.h), the event records of each timed run (common/synclog.h), and count what a call
 * leaves allocated (kit_held_now), refusals and failures included, and the files it leaves open (/proc/self/fd).
 * Tests marked XL_CPU grade without a GPU.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/copylog.h"
#include "common/delay.h"
#include "common/devmem.h"
#include "common/synclog.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "grader/results.h"
#include "labs/01-pageable-copy/lab.h"

XL_LAB("01", "pageable-copy");

#define GUARD 4096                 /* poisoned bytes after every destination */
#define SWEEP_MIN (4u << 10)       /* 4 KiB */
#define SWEEP_MAX (256u << 20)     /* 256 MiB */
#define SWEEP_POINTS 17            /* 4 KiB, 8 KiB, ..., 256 MiB */
/* The sweep's figures are judged as the median over sizes >= 1 MiB of the kit's time over the student's.
 * For the reference this ratio ranged from 0.83 to 1.05 (H100) and 0.79 to 1.13 (H200) in 20 sweeps each;
 * a sweep that copies half or twice the sizes it reports sits near 2 or 0.5. The bar: within 1.5x. */
#define SPEED_BYTES (64u << 20)    /* 64 MiB: past the small-size latency, quick to copy */
/* Pageable copies vary from run to run. In 10 gradings each (2026-11-22) the reference reached 96% to 105% of
 * the kit's rate on an H100 and 94% to 114% on an H200: mean 101%, standard deviation 4%. 85% sits about four
 * standard deviations below the mean, and a failing attempt is measured again twice. */
#define SPEED_NEED 85
#define SWEEP_WITHIN 1.5 /* your sweep's figures against the kit's, either way (a factor) */
/* Checks of the contract, not of speed: small and quick. */
#define RUN_NS 20000000ull         /* the operation timer.waits_for_gpu times: 20 ms */
#define TIMER_WITHIN 0.10          /* your timer's readings of it against the kit's: within 10% either way */
#define TINY_MEDIAN_MAX_MS 1.0     /* the median your timer reports for 1024 runs of a 0.02 ms operation */
#define AHEAD_NS 40000000ull       /* GPU work queued on the caller's stream just before a call: part of no run */
#define LEGACY_AHEAD_NS 100000000ull /* and on the legacy stream, which the caller's (non-blocking) does not wait for */
#define WARMUP_MS 0.4              /* scripted warm-ups: faster than every timed run, so a timed warm-up shows */
#define STAT_TOL_MS 0.2            /* every wrong statistic of the scripted runs lies 0.45 ms or more away; events
                                    * time a run to within a few us (0.2 ms leaves room for a slow launch) */
/* the legacy stream kept busy ahead of a small copy: a fresh 150 to 400 ms, longer than a wait that gives up after
 * a while (polls a set number of times, or for a set time) lasts */
#define LEGACY_BUSY_NS ((uint64_t)kit_rand(150000000ull, 400000000ull))
#define NARROW_HOLD_NS 2000000000ull /* a kernel on a non-blocking stream, ended by the grader once lab_copy returns */
#define BAND_BUSY_NS 2000000ull    /* and 2 ms ahead of each larger one (kept short: other tests time beside them) */
#define STALE_BYTE 0x5A            /* what work queued ahead writes: neither the poison nor the data */
#define D2H_HOLD_NS 150000000ull  /* the legacy stream held 150 ms ahead of a D2H sweep's first copy, while the
                                    * grader looks at its destination's pages */
#define LOG_MAX (1 << 14)          /* copies recorded per checked sweep */
#define SYNC_MAX (1 << 14)         /* waits and event records recorded per checked sweep */

/* random_host - malloc'd host memory holding fresh random data (every page touched); fails the test on OOM */
static unsigned char *random_host(size_t bytes)
{
    unsigned char *p = malloc(bytes ? bytes : 1);
    cr_assert(p != NULL, "the grader could not allocate %zu bytes of host memory", bytes);
    xl_fill_random(p, bytes, xl_fresh_seed());
    return p;
}

/* odd_size - a random size in [lo, hi] that is not a power of two */
static size_t odd_size(long lo, long hi)
{
    size_t n = (size_t)kit_rand_int(lo, hi);
    return (n & (n - 1)) == 0 ? n + 1 : n;
}

/* ===== Part A: the timer ===== */

/* A work function whose runs take scripted times, in order, and that counts its calls and the calls given a stream
 * other than the one the caller handed lab_time_gpu. */
typedef struct {
    int calls;
    int n;          /* scripted runs; the ones after take tail_ms */
    double tail_ms;
    double ms[16];
    cudaStream_t want; /* the caller's stream */
    int other_stream;  /* calls given another stream */
    int *marks;        /* when not NULL: xl_synclog_count() at the start of each call, for the first nmarks calls */
    int nmarks;
} script;

/* scripted_work - lab_work_fn: call k takes ms[k] of GPU time (tail_ms from call n on) */
static void scripted_work(cudaStream_t s, void *ctx)
{
    script *sc = ctx;
    double ms = sc->calls < sc->n ? sc->ms[sc->calls] : sc->tail_ms;
    if (sc->marks && sc->calls < sc->nmarks)
        sc->marks[sc->calls] = xl_synclog_count();
    sc->calls++;
    sc->other_stream += s != sc->want;
    xl_delay(s, (uint64_t)(ms * 1e6));
}

/* empty_work - lab_work_fn: enqueues nothing; counts its calls in *(int *)ctx */
static void empty_work(cudaStream_t s, void *ctx)
{
    (void)s;
    (*(int *)ctx)++;
}

/* expect_own_stream - every call of the work was given the caller's stream */
static void expect_own_stream(const script *sc, int warmup, int reps)
{
    cr_assert(sc->other_stream == 0,
              "lab_time_gpu(warmup %d, reps %d) gave the work another stream than the caller's in %d of its %d calls: "
              "pass the stream it was given to every call, the warm-ups included",
              warmup, reps, sc->other_stream, sc->calls);
}

#define TIMER_LOG (1 << 13) /* waits and event records recorded per checked lab_time_gpu call */
#define TIMER_MARKS 4096    /* work calls marked per checked call: warm-ups and runs */

/* The record of one lab_time_gpu call watched by timer_watch_start and timer_watch_stop. */
static xl_sync_rec timer_recs[TIMER_LOG];
static int timer_marks[TIMER_MARKS];
static int timer_nrec; /* the calls it recorded (more than TIMER_LOG: only the first are held) */

/* timer_watch_start - records the waits and event records of the lab_time_gpu call about to be made with sc, and
 * marks where each call of its work falls among them */
static void timer_watch_start(script *sc)
{
    sc->marks = timer_marks;
    sc->nmarks = TIMER_MARKS;
    xl_synclog_start(timer_recs, TIMER_LOG);
}

/* timer_watch_stop - closes timer_watch_start's record, right after the call */
static void timer_watch_stop(script *sc)
{
    timer_nrec = xl_synclog_stop();
    sc->marks = NULL;
}

/* expect_runs_bracketed - in timer_watch_stop's record: each timed run (the calls warmup .. warmup + reps - 1 of the
 * work) must have a CUDA event recorded on the caller's stream after the call before it and before it starts, and
 * one after it, before the next call (lab.h: each run timed on its own, with CUDA events, on stream itself) */
static void expect_runs_bracketed(const script *sc, int warmup, int reps)
{
    int known = timer_nrec < TIMER_LOG ? timer_nrec : TIMER_LOG;
    int calls = sc->calls < TIMER_MARKS ? sc->calls : TIMER_MARKS;
    for (int k = 0; k < reps && warmup + k < calls; k++) {
        int g = warmup + k, lo = g ? timer_marks[g - 1] : 0, mid = timer_marks[g], hi, before = 0, after = 0;
        if (g + 1 < calls)
            hi = timer_marks[g + 1];
        else if (g + 1 == sc->calls)
            hi = timer_nrec;
        else
            break; /* past the calls marked: not judged */
        if (hi > known) /* past what the record holds: not judged */
            break;
        int stale = 0; /* a record before a host wait in [lo, mid), none after it */
        for (int i = lo; i < mid; i++) {
            xl_sync_kind kind = timer_recs[i].kind;
            if (kind == XL_SYNC_RECORD && kit_same_stream(timer_recs[i].stream, sc->want))
                before = 1, stale = 0;
            else if ((kind == XL_SYNC_DEVICE || kind == XL_SYNC_STREAM || kind == XL_SYNC_EVENT) && before)
                before = 0, stale = 1; /* the host waited after it: that event cannot start this run */
        }
        for (int i = mid; i < hi; i++)
            after |= timer_recs[i].kind == XL_SYNC_RECORD && kit_same_stream(timer_recs[i].stream, sc->want);
        cr_assert(stale == 0,
                  "lab_time_gpu(warmup %d, reps %d): timed run %d of %d started from an event recorded before the host "
                  "waited (%s) for the work before it, and none was recorded after that wait: the run's time then also "
                  "counts the wait, the host's wake-up and the launch, while the GPU sat idle. Record a fresh start "
                  "event after the wait, right before each run (a stop event reused as the next start does not)",
                  warmup, reps, k + 1, reps, "cudaEventSynchronize, cudaStreamSynchronize");
        cr_assert(before && after,
                  "lab_time_gpu(warmup %d, reps %d): timed run %d of %d had no CUDA event recorded on the caller's "
                  "stream %s it. Record an event on the stream before each run and one after it (cudaEventRecord) and "
                  "take the run's time from them (cudaEventElapsedTime): that is the GPU's time, where a host clock "
                  "also counts the launch and the wake-up of the wait",
                  warmup, reps, k + 1, reps, before ? "after" : "before");
    }
}

XL_TEST(timer, waits_for_gpu, 10, XL_TIMED,
        "lab_time_gpu times a 20 ms GPU operation as 20 ms: it waits for the GPU, times on the caller's stream and "
        "releases its events", 10)
{
    cudaStream_t s = kit_stream();
    script sc = {0, 0, RUN_NS / 1e6, {0}, s, 0, NULL, 0};
    xl_timing kit, you = {0};
    xl_time_gpu(scripted_work, &sc, s, 1, 3, &kit);
    sc.calls = 0;
    kit_held before = kit_held_now();
    xl_delay(s, AHEAD_NS); /* queued on the caller's stream before the call: part of no run */
    xl_delay(cudaStreamLegacy, LEGACY_AHEAD_NS); /* an event on any stream but s would wait for this */
    timer_watch_start(&sc);
    xl_expect_ok(lab_time_gpu(scripted_work, &sc, s, 0, 3, &you), "lab_time_gpu");
    timer_watch_stop(&sc);
    expect_own_stream(&sc, 0, 3);
    cr_assert(sc.calls == 3, "with warmup=0 and reps=3, lab_time_gpu must call the work 3 times; it called it %d times%s",
              sc.calls, sc.calls == 4 ? " (a warm-up run although warmup is 0?)" : "");
    expect_runs_bracketed(&sc, 0, 3);
    double r = you.median_ms / kit.median_ms;
    const char *hint =
        r < 0.5 ? ": does it wait for the stop event (cudaEventSynchronize) before reading the time, and are the events "
                  "recorded on the stream it was given? (the grader had queued 100 ms of work on the legacy default "
                  "stream, which that stream does not wait for: an event recorded on stream 0 or cudaStreamPerThread "
                  "waits for it, the runs do not)"
                : "";
    for (int side = 0; side < 2; side++) /* at least 0.9 of the kit's median, then at most 1.1 */
        xl_timed_check(r, side ? XL_AT_MOST(1 + TIMER_WITHIN) : XL_AT_LEAST(1 - TIMER_WITHIN),
                       "your timer's median over the kit's",
                       "your timer measured %.3f ms for GPU work the kit times at %.3f ms (ratio %.2f; need %.2f to "
                       "%.2f)%s",
                       you.median_ms, kit.median_ms, r, 1 - TIMER_WITHIN, 1 + TIMER_WITHIN, hint);
    hint = you.max_ms > AHEAD_NS / 1e6
               ? ": the grader had queued 40 ms of other work on the stream just before the call, and a run counted "
                 "it. Record an event on the stream before each run and one after: the GPU stamps each when it "
                 "reaches it, after the work queued earlier; a host clock started at the call does not know about it"
               : "";
    for (int side = 0; side < 2; side++) /* the fastest run against the kit's fastest, the slowest against its slowest */
        xl_timed_check(side ? you.max_ms / kit.max_ms : you.min_ms / kit.min_ms,
                       side ? XL_AT_MOST(1 + TIMER_WITHIN) : XL_AT_LEAST(1 - TIMER_WITHIN),
                       side ? "your timer's slowest run over the kit's" : "your timer's fastest run over the kit's",
                       "your timer's 3 runs of a 20 ms operation (warmup 0) took %.3f to %.3f ms; the kit's took %.3f "
                       "to %.3f ms (need within %.0f%%)%s",
                       you.min_ms, you.max_ms, kit.min_ms, kit.max_ms, 100 * TIMER_WITHIN, hint);
    XL_CHECK(cudaStreamSynchronize(s));
    kit_expect_released(before, "lab_time_gpu (warmup 0, reps 3)");
    xl_note("your timer %.3f ms (%.3f-%.3f), the kit's %.3f ms", you.median_ms, you.min_ms, you.max_ms, kit.median_ms);
}

/* One lab_time_gpu call for kit_ms_beside_busy: 1 warm-up and 3 runs of 1 ms on the caller's stream. */
typedef struct {
    script sc;
    xl_timing t;
    int rc;
} narrow_call;

/* time_narrow - lab_time_gpu of narrow_call's script */
static void time_narrow(void *ctx)
{
    narrow_call *c = ctx;
    c->sc.calls = c->sc.other_stream = 0;
    c->rc = lab_time_gpu(scripted_work, &c->sc, c->sc.want, 1, 3, &c->t);
}

XL_TEST(timer, narrow_wait, 5, XL_TIMED,
        "lab_time_gpu waits for the caller's stream only, not for a 300 ms kernel on another stream", 15)
{
    narrow_call c = {.sc = {.tail_ms = 1.0, .want = kit_stream()}};
    time_narrow(&c); /* warm-up */
    double ms = kit_ms_beside_busy(time_narrow, &c, KIT_OTHER_NS);
    xl_expect_ok(c.rc, "lab_time_gpu");
    cr_assert(c.sc.calls == 4, "with warmup=1 and reps=3, lab_time_gpu must call the work 4 times; it called it %d times",
              c.sc.calls);
    expect_own_stream(&c.sc, 1, 3);
    xl_timed_check(ms, XL_AT_MOST(KIT_NARROW_MS), "lab_time_gpu's time beside an unrelated kernel (ms)",
                   "lab_time_gpu took %.0f ms for 4 runs of 1 ms while an unrelated 300 ms kernel ran on another "
                   "stream: it waited for more than its own work (cudaDeviceSynchronize, or an event or wait on the "
                   "legacy default stream). Wait on the stop event, or on the stream it was given",
                   ms);
    xl_note("lab_time_gpu took %.1f ms beside the 300 ms kernel", ms);
}

/* design_runs - reps (>= 4) run times in ms, in a fresh order, whose min, median, mean, max, first and last all
 * differ by more than 0.45 ms (runs 1 ms apart, the slowest an outlier placed so that the mean falls between two
 * runs): a wrong statistic never gives the right answer */
static void design_runs(int reps, double *runs)
{
    double v[16], base = 1.0 + 0.1 * (double)kit_rand_int(0, 10), mean = 0;
    int ok = 0;
    for (int k = 0; k < reps - 1; k++)
        v[k] = base + k;
    for (int step = 0; step < 64 && !ok; step++) { /* the slowest run an outlier, placed so the mean is apart */
        v[reps - 1] = base + reps - 2 + 3.0 + 0.5 * step;
        mean = 0;
        for (int k = 0; k < reps; k++)
            mean += v[k] / reps;
        ok = fabs(mean - xl_median(v, reps)) > 0.45;
        for (int k = 0; k < reps; k++)
            ok = ok && fabs(mean - v[k]) > 0.45;
    }
    cr_assert(ok, "the grader could not design runs for reps %d", reps);
    /* first and last: neither the min, the max, nor (odd count) the median; the others in a fresh order */
    int pick[16] = {0}, np = 0, rest[16] = {0}, nr = 0;
    for (int k = 1; k < reps - 1; k++)
        if (reps % 2 == 0 || k != reps / 2)
            pick[np++] = k;
    int a = (int)kit_rand_int(0, np - 1), b = (int)kit_rand_int(0, np - 2);
    b += b >= a;
    for (int k = 0; k < reps; k++)
        if (k != pick[a] && k != pick[b])
            rest[nr++] = k;
    for (int k = nr - 1; k > 0; k--) {
        int j = (int)kit_rand_int(0, k), t = rest[k];
        rest[k] = rest[j], rest[j] = t;
    }
    runs[0] = v[pick[a]];
    runs[reps - 1] = v[pick[b]];
    for (int k = 0; k < nr; k++)
        runs[k + 1] = v[rest[k]];
}

/* stat_hint - what a reported median that is not the median looks like, for the message */
static const char *stat_hint(double got, const double *runs, int reps)
{
    double sorted[16], mean = 0;
    memcpy(sorted, runs, reps * sizeof *runs);
    for (int i = 0; i < reps; i++)
        mean += runs[i] / reps;
    for (int i = 1; i < reps; i++) /* insertion sort: a few values */
        for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
            double t = sorted[j];
            sorted[j] = sorted[j - 1], sorted[j - 1] = t;
        }
    if (fabs(got - mean) < STAT_TOL_MS)
        return ". Your median is their mean: sort the samples and take the middle (xl_summarize does)";
    if (fabs(got - runs[0]) < STAT_TOL_MS)
        return ". Your median is the first run: are the samples sorted before the middle is taken?";
    if (fabs(got - runs[reps - 1]) < STAT_TOL_MS)
        return ". Your median is the last run: is every run's time kept, not only the last?";
    if (fabs(got - sorted[0]) < STAT_TOL_MS)
        return ". Your median is the fastest run";
    if (fabs(got - sorted[reps - 1]) < STAT_TOL_MS)
        return ". Your median is the slowest run";
    if (reps % 2 == 0 && (fabs(got - sorted[reps / 2]) < STAT_TOL_MS || fabs(got - sorted[reps / 2 - 1]) < STAT_TOL_MS))
        return ". Your median is one of the two middle runs: for an even count it is their mean";
    return ". Were warm-up runs timed, or runs timed together?";
}

/* expect_scripted - one lab_time_gpu call on s: warmup warm-ups of WARMUP_MS, then the timed runs runs[0 .. reps)
 * in that order; fails unless the work was called warmup + reps times, the summary is that of runs, and every
 * event it made is released */
static void expect_scripted(cudaStream_t s, int warmup, const double *runs, int reps)
{
    script sc = {0, warmup + reps, WARMUP_MS, {0}, s, 0, NULL, 0};
    char list[160];
    size_t used = 0;
    xl_timing want, you = {0};
    for (int i = 0; i < warmup; i++)
        sc.ms[i] = WARMUP_MS;
    for (int i = 0; i < reps; i++) {
        sc.ms[warmup + i] = runs[i];
        used += snprintf(list + used, sizeof list - used, "%s%.1f", i ? ", " : "", runs[i]);
    }
    xl_summarize(runs, reps, &want);
    kit_held before = kit_held_now();
    timer_watch_start(&sc);
    xl_expect_ok(lab_time_gpu(scripted_work, &sc, s, warmup, reps, &you), "lab_time_gpu");
    timer_watch_stop(&sc);
    expect_own_stream(&sc, warmup, reps);
    cr_assert(sc.calls == warmup + reps,
              "with warmup=%d and reps=%d, lab_time_gpu must call the work %d times; it called it %d times", warmup,
              reps, warmup + reps, sc.calls);
    expect_runs_bracketed(&sc, warmup, reps);
    cr_assert(you.reps == reps, "lab_time_gpu(warmup %d, reps %d): out->reps is %d; it must be reps, %d", warmup, reps,
              you.reps, reps);
    double off = fmax(fabs(you.median_ms - want.median_ms),
                      fmax(fabs(you.min_ms - want.min_ms), fabs(you.max_ms - want.max_ms)));
    xl_timed_check(off, XL_AT_MOST(STAT_TOL_MS), "your median, min or max, the farthest from the scripted runs' (ms)",
              "lab_time_gpu(warmup %d, reps %d): after %d warm-ups of %.1f ms, runs of %s ms in that order. Their median "
              "is %.2f ms%s, min %.2f, max %.2f; you reported median %.3f, min %.3f, max %.3f ms (need each within "
              "%.2f ms)%s",
              warmup, reps, warmup, WARMUP_MS, list, want.median_ms,
              reps % 2 ? "" : " (the mean of the two middle runs)", want.min_ms, want.max_ms, you.median_ms,
              you.min_ms, you.max_ms, STAT_TOL_MS,
              fabs(you.median_ms - want.median_ms) < STAT_TOL_MS ? "" : stat_hint(you.median_ms, runs, reps));
    XL_CHECK(cudaStreamSynchronize(s));
    kit_expect_released(before, "lab_time_gpu");
}

/* One lab_time_gpu call for kit_expect_no_heap_leak. */
typedef struct {
    script sc;
    int warmup, reps;
} timer_args;

/* timer_again - kit_expect_no_heap_leak's attempt: lab_time_gpu of a tiny operation */
static int timer_again(void *ctx)
{
    timer_args *a = ctx;
    xl_timing t;
    a->sc.calls = 0;
    return lab_time_gpu(scripted_work, &a->sc, a->sc.want, a->warmup, a->reps, &t);
}

/* timer_refused - kit_expect_no_heap_leak's attempt: lab_time_gpu with reps 0 or 1025 on the stream *ctx, its line
 * kept out of the output; 0 when it returned -1 without calling the work, as it must */
static int timer_refused(void *ctx)
{
    script sc = {0, 0, WARMUP_MS, {0}, *(cudaStream_t *)ctx, 0, NULL, 0};
    xl_timing out;
    int quiet = kit_quiet_begin();
    int rc = lab_time_gpu(scripted_work, &sc, sc.want, 2, kit_rand_int(0, 1) ? 0 : 1025, &out);
    kit_quiet_end(quiet);
    return rc == -1 && sc.calls == 0 ? 0 : -1;
}

#define TWIN_REPS 12     /* timed runs of each of the two threads' lab_time_gpu calls at once */
#define TWIN_TOL_MS 1.0  /* how far a thread's figures may be from its own runs; the other thread's are 3 ms away */

/* One of two lab_time_gpu calls made at once, from threads of their own, on streams of their own. */
typedef struct {
    script sc;
    xl_timing t;
    int rc, device;
    pthread_barrier_t *start;
} twin_timer;

/* twin_time - a thread of its own: lab_time_gpu(warmup 0, reps TWIN_REPS) of t->sc, on the test's device, started
 * together with the other thread (no assert here: it runs beside the test's thread) */
static void *twin_time(void *arg)
{
    twin_timer *t = arg;
    if (cudaSetDevice(t->device) != cudaSuccess) {
        t->rc = -2;
        return NULL;
    }
    pthread_barrier_wait(t->start);
    t->rc = lab_time_gpu(scripted_work, &t->sc, t->sc.want, 0, TWIN_REPS, &t->t);
    return NULL;
}

/* expect_twin_timers - two threads call lab_time_gpu at once, each on a stream of its own, one timing runs of a ms
 * and the other runs of a + 3 ms or more: each call must report its own runs (samples kept in one array shared by
 * every call, static, show the other thread's) */
static void expect_twin_timers(void)
{
    twin_timer tw[2];
    pthread_t thr[2];
    pthread_barrier_t start;
    int device = 0;
    double a = 1.0 + 0.1 * (double)kit_rand_int(0, 10), ms[2] = {a, a + 3.0 + 0.1 * (double)kit_rand_int(0, 10)};
    XL_CHECK(cudaGetDevice(&device));
    cr_assert(pthread_barrier_init(&start, NULL, 2) == 0, "grader error: pthread_barrier_init failed");
    for (int k = 0; k < 2; k++) {
        tw[k] = (twin_timer){.sc = {0, 0, ms[k], {0}, kit_stream(), 0, NULL, 0}, .device = device, .start = &start};
        xl_poison(&tw[k].t, sizeof tw[k].t);
    }
    for (int k = 0; k < 2; k++)
        cr_assert(pthread_create(&thr[k], NULL, twin_time, &tw[k]) == 0, "grader error: pthread_create failed");
    for (int k = 0; k < 2; k++)
        pthread_join(thr[k], NULL);
    pthread_barrier_destroy(&start);
    for (int k = 0; k < 2; k++) {
        const xl_timing *t = &tw[k].t;
        cr_assert(tw[k].rc != -2, "grader error: cudaSetDevice(%d) failed on a thread of the grader", device);
        xl_expect_ok(tw[k].rc, "lab_time_gpu");
        expect_own_stream(&tw[k].sc, 0, TWIN_REPS);
        cr_assert(tw[k].sc.calls == TWIN_REPS && t->reps == TWIN_REPS,
                  "lab_time_gpu(warmup 0, reps %d), called from two threads at once: one call called the work %d times "
                  "and set out->reps to %d (need %d each)",
                  TWIN_REPS, tw[k].sc.calls, t->reps, TWIN_REPS);
        double off = fmax(fabs(t->median_ms - ms[k]), fmax(fabs(t->min_ms - ms[k]), fabs(t->max_ms - ms[k])));
        xl_timed_check(off, XL_AT_MOST(TWIN_TOL_MS), "a thread's median, min or max, the farthest from its own runs (ms)",
                       "lab_time_gpu(warmup 0, reps %d) was called from two threads at once, each on a stream of its "
                       "own: one timing runs of %.1f ms, the other runs of %.1f ms. The call timing %.1f ms runs reported "
                       "median %.3f, min %.3f, max %.3f ms (need each within %.1f ms of %.1f). Keep each call's samples "
                       "in memory of that call (on its stack, or allocated and freed by it), never in a static array "
                       "that every call shares",
                       TWIN_REPS, ms[0], ms[1], ms[k], t->median_ms, t->min_ms, t->max_ms, TWIN_TOL_MS, ms[k]);
    }
    for (int k = 0; k < 2; k++)
        XL_CHECK(cudaStreamDestroy(tw[k].sc.want));
}

XL_TEST(timer, median_after_warmup, 5, XL_TIMED,
        "lab_time_gpu calls the work warmup + reps times for any warmup and reps, times only the reps runs and "
        "reports their median, min and max, also when two threads call it at once; bad arguments give -1 and leave "
        "out as it was", 10)
{
    static const int bad[3][2] = {{2, 0}, {2, 1025}, {-1, 3}}; /* warmup, reps */
    cudaStream_t s = kit_stream();
    script first = {0, 0, WARMUP_MS, {0}, s, 0, NULL, 0};
    xl_timing t;
    xl_time_gpu(scripted_work, &first, s, 1, 1, &t); /* loads the delay kernel (lazily loaded): no run below pays */
    kit_held before = kit_held_now();
    for (int i = 0; i < 3; i++) {
        script sc = {0, 0, WARMUP_MS, {0}, s, 0, NULL, 0};
        xl_timing out, poison;
        char said[512], call[64];
        xl_poison(&out, sizeof out);
        memcpy(&poison, &out, sizeof out);
        int saved = kit_capture_begin();
        int rc = lab_time_gpu(scripted_work, &sc, s, bad[i][0], bad[i][1], &out);
        int lines = kit_capture_end(saved, said, sizeof said);
        cr_assert(rc == -1 && sc.calls == 0,
                  "lab_time_gpu(warmup %d, reps %d) returned %d and called the work %d times: lab.h allows warmup >= 0 "
                  "and 1 <= reps <= 1024, and asks for -1 before any work otherwise",
                  bad[i][0], bad[i][1], rc, sc.calls);
        snprintf(call, sizeof call, "lab_time_gpu(warmup %d, reps %d)", bad[i][0], bad[i][1]);
        kit_expect_one_line(saved, lines, said, call, "-1");
        cr_assert(memcmp(&out, &poison, sizeof out) == 0,
                  "%s returned -1 but wrote into *out: a refused call leaves the caller's out as it was", call);
    }
    kit_expect_released(before, "lab_time_gpu with bad arguments");
    kit_expect_no_heap_leak(timer_refused, &s, "lab_time_gpu refusing reps 0 or 1025",
                            "allocate nothing before the arguments are checked, or free it before returning -1");

    /* an odd and an even count of runs whose min, median, mean, max, first and last all differ, after 0 to 4
     * warm-ups; then the ends of reps: one run, and 1024 */
    double runs[16];
    int odd = 2 * (int)kit_rand_int(2, 4) + 1, even = 2 * (int)kit_rand_int(2, 4);
    design_runs(odd, runs);
    expect_scripted(s, (int)kit_rand_int(0, 4), runs, odd);
    design_runs(even, runs);
    expect_scripted(s, (int)kit_rand_int(0, 4), runs, even);
    runs[0] = 1.0 + 0.1 * (double)kit_rand_int(0, 20);
    expect_scripted(s, (int)kit_rand_int(0, 4), runs, 1);

    script sc = {0, 0, 0.02, {0}, s, 0, NULL, 0};
    int w = (int)kit_rand_int(1025, 2048); /* and more warm-ups than reps may be: any warmup >= 0 */
    xl_timing you = {0};
    before = kit_held_now();
    timer_watch_start(&sc);
    xl_expect_ok(lab_time_gpu(scripted_work, &sc, s, w, 1024, &you), "lab_time_gpu");
    timer_watch_stop(&sc);
    expect_own_stream(&sc, w, 1024);
    cr_assert(sc.calls == w + 1024 && you.reps == 1024,
              "lab_time_gpu(warmup %d, reps 1024) called the work %d times (need %d) and set out->reps to %d (need "
              "1024): 1024 is the largest reps lab.h allows, and warmup has no upper bound",
              w, sc.calls, w + 1024, you.reps);
    expect_runs_bracketed(&sc, w, 1024);
    cr_assert(you.min_ms > 0 && you.min_ms <= you.median_ms && you.median_ms <= you.max_ms,
              "lab_time_gpu(warmup %d, reps 1024) of a 0.02 ms operation reported min %.4f, median %.4f, max %.4f ms: "
              "need 0 < min <= median <= max",
              w, you.min_ms, you.median_ms, you.max_ms);
    xl_timed_check(you.median_ms, XL_AT_MOST(TINY_MEDIAN_MAX_MS), "the median of 1024 runs of a 0.02 ms operation (ms)",
                   "lab_time_gpu(warmup %d, reps 1024) of a 0.02 ms operation reported a median of %.4f ms: need one "
                   "well under %.0f ms",
                   w, you.median_ms, TINY_MEDIAN_MAX_MS);
    /* an operation that enqueues nothing: each run is its stop event's time less its start event's, nothing taken
     * off, so no time is below 0 (a "timer overhead" measured once and subtracted makes about half of them so) */
    int empty_calls = 0;
    xl_timing none = {0};
    xl_expect_ok(lab_time_gpu(empty_work, &empty_calls, s, 1, 1024, &none), "lab_time_gpu");
    cr_assert(empty_calls == 1025 && none.reps == 1024 && none.min_ms >= 0 && none.min_ms <= none.median_ms &&
                  none.median_ms <= none.max_ms,
              "lab_time_gpu(warmup 1, reps 1024) of an operation that enqueues nothing called it %d times (need 1025) "
              "and reported reps %d, min %.6f, median %.6f, max %.6f ms: need 0 <= min <= median <= max. Each run's "
              "time is its stop event's less its start event's (cudaEventElapsedTime), nothing subtracted (lab.h)",
              empty_calls, none.reps, none.min_ms, none.median_ms, none.max_ms);
    XL_CHECK(cudaStreamSynchronize(s));
    kit_expect_released(before, "lab_time_gpu (reps 1024)");
    /* repeated, a call must not grow the host heap: memory it allocates (for the samples, say) is freed */
    timer_args again = {{0, 0, 0.005, {0}, s, 0, NULL, 0}, (int)kit_rand_int(0, 4), (int)kit_rand_int(4, 1024)};
    char what[96];
    snprintf(what, sizeof what, "lab_time_gpu(warmup %d, reps %d)", again.warmup, again.reps);
    kit_expect_no_heap_leak(timer_again, &again, what,
                            "free everything it allocates (an array of samples too) before it returns");
    expect_twin_timers();
}

/* ===== Part B: copies ===== */

/* band_size - a fresh size in binary band k (0 .. 26): 2^k plus up to a quarter more, so that every order of
 * magnitude from 1 byte to 64 MiB is tried near its bottom (a copy that takes another path from some size on is
 * caught at that size) */
static size_t band_size(int k)
{
    return ((size_t)1 << k) + (size_t)kit_rand(0, ((uint64_t)1 << k) / 4);
}

#define BANDS 27 /* band_size's bands: 1 byte to 64 MiB */

/* big_size - past 64 MiB, exact multiples of the sizes a copy made in pieces may use, where a last piece sized as
 * bytes % piece is 0: which 0, a whole number of 100 MB (1 or 2: every decimal piece of 1 MB to 100 MB divides it);
 * 1, 256 MiB (every power of two up to 256 MiB divides it) */
static size_t big_size(int which)
{
    return which == 0 ? (size_t)kit_rand_int(1, 2) * 100000000u : (size_t)256 << 20;
}

/* check_h2d_behind_legacy - lab_copy host to device of n bytes while the legacy stream still has busy_ns of work,
 * ending in an overwrite of the destination: when lab_copy returns, that work must be done (cudaMemcpy from
 * pageable memory waits for the legacy stream before it copies; a copy left queued behind it is not done), and once
 * the GPU is idle the copy must be in place, after that work (no wait on a clock: a busy GPU can delay a copy's DMA,
 * never its order) */
static void check_h2d_behind_legacy(size_t n, uint64_t busy_ns)
{
    char what[400];
    unsigned char *src = random_host(n), *keep = malloc(n);
    void *dev = kit_dev_alloc(n + GUARD);
    cudaEvent_t before_call;
    cr_assert(keep != NULL, "the grader could not allocate %zu bytes of host memory", n);
    memcpy(keep, src, n);
    XL_CHECK(cudaEventCreateWithFlags(&before_call, cudaEventDisableTiming));
    kit_queue_busy_memset(0, busy_ns, dev, STALE_BYTE, n);
    XL_CHECK(cudaEventRecord(before_call, 0));
    xl_expect_ok(lab_copy(dev, src, n, LAB_H2D), "lab_copy");
    cudaError_t done = cudaEventQuery(before_call);
    cr_assert(done == cudaSuccess || done == cudaErrorNotReady, "cudaEventQuery: %s", cudaGetErrorString(done));
    cr_assert(done == cudaSuccess,
              "lab_copy(LAB_H2D) of %zu bytes returned while the %.0f ms of work queued before it on the legacy stream "
              "was still running: the copy, which must follow that work as cudaMemcpy's does, cannot have been done. "
              "lab_copy must return only when the copy is complete, so a cudaMemcpyAsync must be waited for before "
              "returning",
              n, busy_ns / 1e6);
    XL_CHECK(cudaDeviceSynchronize());
    snprintf(what, sizeof what,
             "lab_copy(LAB_H2D) of %zu bytes, once the work queued before it on the legacy stream had finished (that "
             "work ends by writing 0x%02X over the destination): the copy ran before that work. lab_copy must run in "
             "order with the legacy stream, as cudaMemcpy does, not on a stream of its own",
             n, STALE_BYTE);
    kit_expect_dev_bytes(dev, keep, n, GUARD, what);
    snprintf(what, sizeof what, "the source of lab_copy(dev, src, %zu, LAB_H2D) after the call: src is const, "
             "lab_copy must leave it as it was", n);
    kit_expect_host_bytes(src, keep, n, 0, what);
    XL_CHECK(cudaEventDestroy(before_call));
    XL_CHECK(cudaFree(dev));
    free(keep);
    free(src);
}

/* check_d2h_behind_legacy - lab_copy device to host of n bytes from a source that work queued on the legacy stream
 * writes only after busy_ns: the copy must come after that work and be complete when lab_copy returns */
static void check_d2h_behind_legacy(size_t n, uint64_t busy_ns)
{
    char what[400];
    unsigned char *want = random_host(n), *dst = kit_host_alloc(n + GUARD);
    void *real = kit_dev_alloc(n), *dev = kit_dev_alloc(n);
    xl_dev_upload(real, want, n);
    xl_dev_fill(dev, STALE_BYTE, n);
    kit_queue_busy_copy(0, busy_ns, dev, real, n); /* the source holds the data after busy_ns of GPU work */
    xl_expect_ok(lab_copy(dst, dev, n, LAB_D2H), "lab_copy");
    snprintf(what, sizeof what,
             "lab_copy(LAB_D2H) of %zu bytes, read right after it returned, from a source that work queued before the "
             "call on the legacy stream fills after %.0f ms (0x%02X before): lab_copy must run in order with the legacy "
             "stream, as cudaMemcpy does, and return only when dst holds the data",
             n, busy_ns / 1e6, STALE_BYTE);
    kit_expect_host_bytes(dst, want, n, GUARD, what);
    XL_CHECK(cudaDeviceSynchronize());
    snprintf(what, sizeof what, "the source of lab_copy(dst, src, %zu, LAB_D2H) after the call: src is const, "
             "lab_copy must leave it as it was", n);
    kit_expect_dev_bytes(dev, want, n, 0, what);
    XL_CHECK(cudaFree(real));
    XL_CHECK(cudaFree(dev));
    free(want);
    free(dst);
}

/* One lab_copy for kit_expect_no_heap_leak: its direction and size (buffers made on the first call). */
typedef struct {
    lab_dir dir;
    size_t bytes;
    void *host, *dev;
} copy_args;

/* copy_again - kit_expect_no_heap_leak's attempt: one lab_copy of a->bytes in a->dir */
static int copy_again(void *ctx)
{
    copy_args *a = ctx;
    return a->dir == LAB_H2D ? lab_copy(a->dev, a->host, a->bytes, LAB_H2D) : lab_copy(a->host, a->dev, a->bytes, LAB_D2H);
}

/* expect_copy_no_leak - lab_copy of a->bytes in a->dir, repeated, must not grow the host heap */
static void expect_copy_no_leak(copy_args *a)
{
    char what[96];
    a->host = random_host(a->bytes);
    a->dev = kit_dev_alloc(a->bytes);
    snprintf(what, sizeof what, "lab_copy(%s) of %zu bytes", a->dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H", a->bytes);
    kit_expect_no_heap_leak(copy_again, a, what, "free everything it allocates (a staging buffer too) before it returns");
    XL_CHECK(cudaFree(a->dev));
    free(a->host);
}

/* expect_copy_narrow - lab_copy in direction dir of a fresh size up to 4 MiB while a kernel on a non-blocking stream
 * runs until the grader ends it (or NARROW_HOLD_NS has passed): lab_copy waits for the legacy stream only, which does
 * not wait for non-blocking streams, so when it returns that kernel must still be running. No clock is read: a copy
 * that waited for the whole device returns only once the kernel has ended on its own */
static void expect_copy_narrow(lab_dir dir)
{
    size_t n = (size_t)kit_rand_int(1, 4 << 20);
    unsigned char *data = random_host(n), *dst = kit_host_alloc(n);
    void *dev = kit_dev_alloc(n);
    unsigned *word = NULL;
    cudaStream_t other = kit_stream();
    const char *name = dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H";
    XL_CHECK(cudaHostAlloc((void **)&word, sizeof *word, cudaHostAllocMapped));
    if (dir == LAB_D2H)
        xl_dev_upload(dev, data, n);
    /* a first call, not watched: whatever the first copy sets up (and the grader's own buffers) is ready */
    xl_expect_ok(dir == LAB_H2D ? lab_copy(dev, data, n, dir) : lab_copy(dst, dev, n, dir), "lab_copy");
    XL_CHECK(cudaStreamSynchronize(0));
    if (dir == LAB_H2D)
        xl_dev_fill(dev, XL_POISON_BYTE, n);
    else
        xl_poison(dst, n);
    *(volatile unsigned *)word = 0;
    xl_delay_released(other, NARROW_HOLD_NS, word);
    int rc = dir == LAB_H2D ? lab_copy(dev, data, n, dir) : lab_copy(dst, dev, n, dir);
    cudaError_t running = cudaStreamQuery(other);
    *(volatile unsigned *)word = 1;
    XL_CHECK(cudaStreamSynchronize(other));
    xl_expect_ok(rc, "lab_copy");
    cr_assert(running == cudaErrorNotReady,
              "lab_copy(%s) of %zu bytes returned only after a kernel on a non-blocking stream of the grader's had "
              "ended (%.0f ms of it; cudaStreamQuery: %s): it waited for more than the legacy stream and its own copy. "
              "cudaMemcpy waits for the legacy stream only; never wait for the whole device (cudaDeviceSynchronize, "
              "cudaCtxSynchronize; freeing memory inside the copy, with cudaFree or "
              "cudaFreeHost, can wait for it too)",
              name, n, NARROW_HOLD_NS / 1e6, cudaGetErrorString(running));
    char what[160];
    snprintf(what, sizeof what, "lab_copy(%s) of %zu bytes beside a kernel on a non-blocking stream", name, n);
    if (dir == LAB_H2D)
        kit_expect_dev_bytes(dev, data, n, 0, what);
    else
        kit_expect_host_bytes(dst, data, n, 0, what);
    XL_CHECK(cudaStreamDestroy(other));
    XL_CHECK(cudaFreeHost(word));
    XL_CHECK(cudaFree(dev));
    free(dst);
    free(data);
}

XL_TEST(copy, h2d_exact, 10, XL_GPU,
        "lab_copy host to device is byte-exact for sizes from 1 byte to 256 MiB, leaves its source as it was, is in "
        "order with the legacy stream, waits for no other stream and is complete when it returns", 10)
{
    for (size_t i = 0; i < kit_n_awkward; i++) {
        size_t n = kit_awkward_sizes[i];
        char what[128];
        unsigned char *src = kit_host_alloc(n), *keep = kit_host_alloc(n);
        void *dev = kit_dev_alloc(n + GUARD);
        xl_fill_random(src, n, xl_fresh_seed());
        memcpy(keep, src, n);
        snprintf(what, sizeof what, "lab_copy(LAB_H2D) of %zu bytes", n);
        xl_expect_ok(lab_copy(dev, src, n, LAB_H2D), "lab_copy");
        kit_expect_dev_bytes(dev, keep, n, GUARD, what);
        snprintf(what, sizeof what, "the (const) source of lab_copy(LAB_H2D) of %zu bytes, after the call", n);
        kit_expect_host_bytes(src, keep, n, 0, what);
        /* the same buffers again, the source refilled with other data: nothing is kept from the first call */
        xl_fill_random(src, n, xl_fresh_seed());
        memcpy(keep, src, n);
        snprintf(what, sizeof what, "a second lab_copy(LAB_H2D) of %zu bytes between the same buffers, the source "
                 "refilled with other data", n);
        xl_expect_ok(lab_copy(dev, src, n, LAB_H2D), "lab_copy");
        kit_expect_dev_bytes(dev, keep, n, GUARD, what);
        XL_CHECK(cudaFree(dev));
        free(keep);
        free(src);
    }
    check_h2d_behind_legacy((size_t)kit_rand_int(1, 65536), LEGACY_BUSY_NS);
    for (int k = 16; k < BANDS; k++) /* and every order of magnitude above, each behind 2 ms of legacy-stream work */
        check_h2d_behind_legacy(band_size(k), BAND_BUSY_NS);
    for (int k = 0; k < 2; k++) /* and whole multiples of any piece size up to 100 MB or 256 MiB */
        check_h2d_behind_legacy(big_size(k), BAND_BUSY_NS);
    copy_args again = {LAB_H2D, band_size((int)kit_rand_int(0, 20)), NULL, NULL};
    expect_copy_no_leak(&again);
    expect_copy_narrow(LAB_H2D);
}

XL_TEST(copy, d2h_exact, 10, XL_GPU,
        "lab_copy device to host is byte-exact for sizes from 1 byte to 256 MiB, leaves its source as it was, is in "
        "order with the legacy stream, waits for no other stream and is complete when it returns", 10)
{
    for (size_t i = 0; i < kit_n_awkward; i++) {
        size_t n = kit_awkward_sizes[i];
        char what[128];
        unsigned char *want = kit_host_alloc(n), *dst = kit_host_alloc(n + GUARD);
        void *dev = kit_dev_alloc(n);
        xl_fill_random(want, n, xl_fresh_seed());
        xl_dev_upload(dev, want, n);
        snprintf(what, sizeof what, "lab_copy(LAB_D2H) of %zu bytes", n);
        xl_expect_ok(lab_copy(dst, dev, n, LAB_D2H), "lab_copy");
        kit_expect_host_bytes(dst, want, n, GUARD, what);
        snprintf(what, sizeof what, "the (const) source of lab_copy(LAB_D2H) of %zu bytes, after the call", n);
        kit_expect_dev_bytes(dev, want, n, 0, what);
        /* the same buffers again, the source refilled with other data: nothing is kept from the first call */
        xl_fill_random(want, n, xl_fresh_seed());
        xl_dev_upload(dev, want, n);
        snprintf(what, sizeof what, "a second lab_copy(LAB_D2H) of %zu bytes between the same buffers, the source "
                 "refilled with other data", n);
        xl_expect_ok(lab_copy(dst, dev, n, LAB_D2H), "lab_copy");
        kit_expect_host_bytes(dst, want, n, GUARD, what);
        XL_CHECK(cudaFree(dev));
        free(want);
        free(dst);
    }
    check_d2h_behind_legacy((size_t)kit_rand_int(1, 1 << 20), LEGACY_BUSY_NS);
    check_d2h_behind_legacy(band_size((int)kit_rand_int(20, BANDS - 1)), BAND_BUSY_NS); /* and one up to 64 MiB */
    for (int k = 0; k < 2; k++) /* and whole multiples of any piece size up to 100 MB or 256 MiB */
        check_d2h_behind_legacy(big_size(k), BAND_BUSY_NS);
    copy_args again = {LAB_D2H, band_size((int)kit_rand_int(0, 20)), NULL, NULL};
    expect_copy_no_leak(&again);
    expect_copy_narrow(LAB_D2H);
}

/* expect_copy_rc - one lab_copy call that must return want (0: 0 bytes does nothing; -1: refused, why says why) */
static void expect_copy_rc(void *dst, const void *src, size_t bytes, lab_dir dir, int want, const char *why)
{
    char call[128], name[24];
    if (dir == LAB_H2D || dir == LAB_D2H)
        snprintf(name, sizeof name, "%s", dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H");
    else
        snprintf(name, sizeof name, "direction %d", (int)dir);
    snprintf(call, sizeof call, "lab_copy(%s, %s, %zu, %s)", dst ? "dst" : "NULL", src ? "src" : "NULL", bytes, name);
    char said[512];
    int saved = want < 0 ? kit_capture_begin() : -1; /* the student's line about the bad argument: counted, not shown */
    int rc = lab_copy(dst, src, bytes, dir);
    int lines = want < 0 ? kit_capture_end(saved, said, sizeof said) : 0;
    cr_assert(rc == want, "%s returned %d; it must return %d: %s", call, rc, want, why);
    if (want < 0)
        kit_expect_one_line(saved, lines, said, call, "-1");
}

/* Buffers for copy_refused. */
typedef struct {
    void *dev;
    unsigned char *host;
} refused_args;

/* copy_refused - kit_expect_no_heap_leak's attempt: lab_copy refusing a NULL buffer and a bad direction, each way,
 * its lines kept out of the output; 0 when every call returned -1, as it must */
static int copy_refused(void *ctx)
{
    const refused_args *a = ctx;
    int quiet = kit_quiet_begin();
    int bad = (lab_copy(NULL, a->host, 8, LAB_H2D) != -1) + (lab_copy(a->host, NULL, 8, LAB_D2H) != -1) +
              (lab_copy(a->dev, a->host, 8, (lab_dir)2) != -1) + (lab_copy(a->host, a->dev, 8, (lab_dir)-1) != -1);
    kit_quiet_end(quiet);
    return bad ? -1 : 0;
}

XL_TEST(copy, edge_cases, 5, XL_GPU, "lab_copy: 0 bytes does nothing; NULL buffers and a bad direction return -1", 10)
{
    /* each rule alone, in both directions, with every other argument valid; and 0 bytes, the cheapest valid case,
     * with the same NULL buffers (only bytes > 0 makes them an error). Sources hold fresh data and destinations
     * the poison, so any byte a refused call copies shows. */
    size_t n = (size_t)kit_rand_int(1, 64);
    unsigned char *src = random_host(64), *dst = kit_host_alloc(64), keep[64];
    void *dev = kit_dev_alloc(64), *dev_src = kit_dev_alloc(64);
    xl_dev_upload(dev_src, src, 64);
    memcpy(keep, src, 64);
    kit_held before = kit_held_now();
    for (int d = 0; d < 2; d++) {
        lab_dir dir = d ? LAB_D2H : LAB_H2D;
        void *to = d ? (void *)dst : dev;
        const void *from = d ? (const void *)dev_src : src;
        const char *zero = "0 bytes does nothing and returns 0, whatever the buffers (-1 is for NULL with bytes > 0)";
        expect_copy_rc(to, from, 0, dir, 0, zero);
        expect_copy_rc(NULL, NULL, 0, dir, 0, zero);
        expect_copy_rc(NULL, from, 0, dir, 0, zero);
        expect_copy_rc(to, NULL, 0, dir, 0, zero);
        expect_copy_rc(NULL, from, n, dir, -1, "a NULL buffer with bytes > 0 returns -1, in both directions");
        expect_copy_rc(to, NULL, n, dir, -1, "a NULL buffer with bytes > 0 returns -1, in both directions");
        expect_copy_rc(NULL, NULL, n, dir, -1, "a NULL buffer with bytes > 0 returns -1, in both directions");
        /* one past each end of lab_dir, and any other value, with the buffers of either direction */
        int bad[3] = {-1, 2, (int)kit_rand_int(3, 1000)};
        for (int i = 0; i < 3; i++)
            expect_copy_rc(to, from, n, (lab_dir)bad[i], -1, "the direction must be LAB_H2D or LAB_D2H");
        /* and 0 bytes with each bad direction: lab.h's first rule, before the others (nothing to copy: 0) */
        const char *zero_dir = "0 bytes does nothing and returns 0, whatever dst, src and dir: check bytes == 0 "
                               "before the direction";
        for (int i = 0; i < 3; i++) {
            expect_copy_rc(to, from, 0, (lab_dir)bad[i], 0, zero_dir);
            expect_copy_rc(NULL, NULL, 0, (lab_dir)bad[i], 0, zero_dir);
        }
    }
    kit_expect_released(before, "lab_copy's refused and 0-byte calls");
    kit_expect_dev_bytes(dev, src, 0, 64, "lab_copy's refused and 0-byte calls into device memory");
    kit_expect_host_bytes(dst, src, 0, 64, "lab_copy's refused and 0-byte calls into host memory");
    kit_expect_host_bytes(src, keep, 64, 0, "the (const) host source of lab_copy's refused and 0-byte calls");
    kit_expect_dev_bytes(dev_src, keep, 64, 0, "the (const) device source of lab_copy's refused and 0-byte calls");
    refused_args refused = {dev, dst};
    kit_expect_no_heap_leak(copy_refused, &refused, "lab_copy refusing a NULL buffer or a bad direction",
                            "allocate nothing before the arguments are checked, or free it before returning -1");
    kit_expect_dev_bytes(dev, src, 0, 64, "lab_copy's refused calls into device memory, repeated");
    kit_expect_host_bytes(dst, src, 0, 64, "lab_copy's refused calls into host memory, repeated");
    XL_CHECK(cudaFree(dev));
    XL_CHECK(cudaFree(dev_src));
    free(src);
    free(dst);
}

/* What the speed test copies. The kit's copies and yours alternate, so yours go to destinations of their own,
 * checked after the timing: a figure counts only for copies that moved the data. */
typedef struct {
    unsigned char *src;      /* fresh random data: both H2D sources, and the kit's D2H destination (it gets it back) */
    void *dev;               /* the kit's H2D destination, so it holds src: both D2H sources */
    void *dev_you;           /* your H2D destination */
    unsigned char *host_you; /* your D2H destination, and the H2D check's read-back */
    unsigned char *keep;     /* what src holds, kept apart: your copies must leave their sources as they were */
} speed_bufs;

/* student_copy_work - xl_work_fn: one lab_copy as described by an xl_copy_job */
static void student_copy_work(cudaStream_t s, void *ctx)
{
    xl_copy_job *c = ctx;
    (void)s;
    cr_assert(lab_copy(c->dst, c->src, c->bytes, c->kind == cudaMemcpyHostToDevice ? LAB_H2D : LAB_D2H) == 0,
              "lab_copy returned an error during the speed test");
}

/* measure_speed - xl_measure_fn: student vs kit, interleaved, both directions; ratio = the worse one. Each direction's
 * timed copies of yours are checked byte for byte after it is timed. */
static void measure_speed(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_bufs *b = ctx;
    xl_copy_job kit_jobs[2] = {{b->dev, b->src, SPEED_BYTES, cudaMemcpyHostToDevice},
                               {b->src, b->dev, SPEED_BYTES, cudaMemcpyDeviceToHost}};
    xl_copy_job your_jobs[2] = {{b->dev_you, b->src, SPEED_BYTES, cudaMemcpyHostToDevice},
                                {b->host_you, b->dev, SPEED_BYTES, cudaMemcpyDeviceToHost}};
    const char *names[2] = {"H2D", "D2H"};
    size_t used = 0;
    *ratio = INFINITY;
    xl_dev_fill(b->dev_you, XL_POISON_BYTE, SPEED_BYTES); /* a measurement again starts from poison */
    for (int d = 0; d < 2 && used < len; d++) {
        xl_timing kit, you;
        if (d == 1)
            xl_poison(b->host_you, SPEED_BYTES);
        xl_time_interleaved(xl_memcpy_work, &kit_jobs[d], student_copy_work, &your_jobs[d], 0, 5, &kit, &you);
        if (d == 0)
            XL_CHECK(cudaMemcpy(b->host_you, b->dev_you, SPEED_BYTES, cudaMemcpyDeviceToHost));
        kit_expect_host_bytes(b->host_you, b->keep, SPEED_BYTES, 0,
                              d == 0 ? "your timed lab_copy(LAB_H2D) runs of 64 MiB, read back after the timing"
                                     : "your timed lab_copy(LAB_D2H) runs of 64 MiB, checked after the timing");
        if (d == 0)
            kit_expect_host_bytes(b->src, b->keep, SPEED_BYTES, 0,
                                  "the (const) source of your timed lab_copy(LAB_H2D) runs of 64 MiB, after the timing");
        else
            kit_expect_dev_bytes(b->dev, b->keep, SPEED_BYTES, 0,
                                 "the (const) source of your timed lab_copy(LAB_D2H) runs of 64 MiB, after the timing");
        xl_sound_timing(kit.min_ms, kit.max_ms, XL_SOUND_SPREAD_PAGEABLE, "the kit's own pageable copy time (ms)");
        double r = kit.median_ms / you.median_ms;
        if (r < *ratio)
            *ratio = r;
        used += snprintf(figures + used, len - used,
                         "%syour %s %.2f GB/s = %.0f%% of the kit's %.2f GB/s (kit spread %.2f-%.2f GB/s)",
                         d ? "; " : "", names[d], xl_gbps(SPEED_BYTES, you.median_ms), 100 * r,
                         xl_gbps(SPEED_BYTES, kit.median_ms), xl_gbps(SPEED_BYTES, kit.max_ms),
                         xl_gbps(SPEED_BYTES, kit.min_ms));
    }
}

XL_TEST(copy, pageable_speed, 10, XL_TIMED,
        "lab_copy of 64 MiB reaches " XL_STR(SPEED_NEED) "% of the kit's pageable rate, both directions, and the timed "
        "copies are exact", 20)
{
    speed_bufs b = {random_host(SPEED_BYTES), kit_dev_alloc(SPEED_BYTES), kit_dev_alloc(SPEED_BYTES),
                    kit_host_alloc(SPEED_BYTES), kit_host_alloc(SPEED_BYTES)};
    memcpy(b.keep, b.src, SPEED_BYTES);
    xl_ratio_check(measure_speed, &b, XL_AT_LEAST_PCT(SPEED_NEED), "pageable copy speed against the kit's");
    XL_CHECK(cudaFree(b.dev));
    XL_CHECK(cudaFree(b.dev_you));
    free(b.src);
    free(b.host_you);
    free(b.keep);
}

/* ===== Part C: sweep and CSV ===== */

/* kit_sweep - the kit's own sweep of cudaMemcpy between host and dev (each at least min << (n-1) bytes): the n sizes
 * min, 2 min, 4 min, ..., one warm-up and reps timed runs each, into pts */
static void kit_sweep(enum cudaMemcpyKind kind, size_t min, int n, int reps, void *host, void *dev, lab_point *pts)
{
    for (int i = 0; i < n; i++) {
        size_t bytes = min << i;
        pts[i].bytes = bytes;
        if (kind == cudaMemcpyHostToDevice)
            kit_time_copy(dev, host, bytes, kind, 1, reps, &pts[i].t);
        else
            kit_time_copy(host, dev, bytes, kind, 1, reps, &pts[i].t);
    }
}

/* expect_sweep_copies - fails unless the copies recorded in direction kind end with (1 + reps) copies of each of the
 * n sizes min << i, in order, counted in bytes per size (a copy made in pieces counts as one); before them nothing
 * more that way, but device to host exactly the largest size's bytes (a sweep may fill its host buffer by copying
 * into it) */
static void expect_sweep_copies(const xl_copy_rec *recs, int nrec, enum cudaMemcpyKind kind, size_t min, int n,
                                int reps, const char *call)
{
    const char *way = kind == cudaMemcpyHostToDevice ? "host to device" : "device to host";
    size_t done = 0, other = 0, before = 0;
    int size_i = n - 1;
    for (int k = nrec - 1; k >= 0; k--) { /* from the last copy back: the largest size first */
        if (xl_copy_dir(&recs[k]) != kind) {
            other += recs[k].bytes;
            continue;
        }
        if (size_i < 0) {
            before += recs[k].bytes;
            continue;
        }
        size_t size = min << size_i, all = (size_t)(1 + reps) * size;
        cr_assert(recs[k].bytes <= size && done + recs[k].bytes <= all,
                  "%s: its last copies of %zu bytes (1 warm-up + %d runs: %zu bytes %s in all) came to %zu bytes, "
                  "then before them a copy of %zu: each size must be copied exactly 1 + reps times, one size after "
                  "the other, smallest first",
                  call, size, reps, all, way, done, recs[k].bytes);
        done += recs[k].bytes;
        if (done == all)
            size_i--, done = 0;
    }
    cr_assert(size_i < 0,
              "%s: copied %zu bytes %s for size %zu, where 1 warm-up + %d runs make %zu (and %zu bytes the other "
              "way)%s",
              call, done, way, min << size_i, reps, (size_t)(1 + reps) * (min << size_i), other,
              done == 0 && other > 0 ? ": does the sweep copy in the direction it was given?" : "");
    /* device to host, one fill of the host buffer may come first: the largest size's bytes, no more, no less */
    cr_assert(before == 0 || (kind == cudaMemcpyDeviceToHost && before == min << (n - 1)),
              "%s: besides 1 + %d copies of each size it copied %zu more bytes %s before them: each size must be "
              "copied exactly 1 + reps times (one warm-up, the smallest size too), in no other copies that way%s",
              call, reps, before, way,
              before % min == 0 && before / min <= 2 ? " (an extra warm-up of the first size?)" : "");
}

/* expect_sweep_events_legacy - fails unless every event the sweep recorded went on the legacy stream or on a stream
 * that waits for it (a blocking stream, cudaStreamPerThread): lab_copy's cudaMemcpy runs on the legacy stream, and
 * an event recorded on a non-blocking stream does not wait for it, so the time would leave out the copy's last DMA */
static void expect_sweep_events_legacy(const xl_sync_rec *syncs, int n, const char *call)
{
    for (int k = 0; k < n; k++)
        cr_assert(syncs[k].kind != XL_SYNC_RECORD || syncs[k].stream_flags == cudaStreamDefault,
                  "%s recorded a timing event (call %d of its waits and event records) on %s %p: lab_copy's "
                  "cudaMemcpy runs on the legacy stream 0, and an event on a non-blocking stream does not wait for it "
                  "(host to device, the copy's last DMA would be left out of every run). Pass stream 0 to "
                  "lab_time_gpu",
                  call, k + 1, syncs[k].stream_flags == ~0u ? "something that is not a stream," : "non-blocking stream",
                  (void *)syncs[k].stream);
}

/* shared_pages - of the pages of [p, p + bytes): how many are mapped (*present) and how many of those are not this
 * process's own (/proc/self/pagemap bit 56, "exclusively mapped", clear): an untouched page that was only read is
 * mapped to the kernel's shared zero page (or huge zero page), one written is the process's own. -1 when pagemap
 * cannot be read. A helper other labs could use (kit_shared_pages) */
static long shared_pages(const void *p, size_t bytes, long *present)
{
    uintptr_t first = (uintptr_t)p / 4096, last = ((uintptr_t)p + bytes + 4095) / 4096;
    uint64_t e[512];
    long shared = 0;
    *present = 0;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    for (uintptr_t pg = first; pg < last;) {
        size_t want = last - pg < 512 ? (size_t)(last - pg) : 512;
        ssize_t got = pread(fd, e, want * 8, (off_t)(pg * 8));
        if (got <= 0) {
            close(fd);
            return -1;
        }
        for (size_t i = 0; i < (size_t)got / 8; i++)
            if (e[i] >> 63 & 1) {
                (*present)++;
                shared += !(e[i] >> 56 & 1);
            }
        pg += (size_t)got / 8;
    }
    close(fd);
    return shared;
}

/* pagemap_tells - 1 when pagemap shows pages this process wrote as its own (a kernel that reports bit 56): a fresh
 * mapping of 64 pages, every one written */
static int pagemap_tells(void)
{
    size_t n = 64 * 4096;
    unsigned char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    long present = 0, shared;
    if (m == MAP_FAILED)
        return 0;
    memset(m, 1, n);
    shared = shared_pages(m, n, &present);
    munmap(m, n);
    return shared == 0 && present == 64;
}

/* A thread that watches a host to device sweep: once it has made two copies, it reads the pagemap of the first
 * one's source (the sweep's host buffer, still allocated: the sweep goes on). Device to host (d2h), once the first
 * copy is asked for, if it is the first size's warm-up (first_bytes, in one copy), it counts the pages of its
 * destination already in memory: the copy waits behind the kit's work on the legacy stream meanwhile, so a buffer
 * never written shows its pages missing. */
typedef struct {
    const xl_copy_rec *recs;
    volatile int stop;
    int seen;              /* 1 once it looked */
    long present, shared;  /* of the first copy's source pages (d2h: destination pages) */
    size_t bytes;
    int d2h;
    size_t first_bytes;
} source_watch;

/* watch_source - source_watch's thread (no assert here: it runs beside the test's thread) */
static void *watch_source(void *arg)
{
    source_watch *w = arg;
    while (!w->stop && w->d2h) {
        if (xl_copylog_count() >= 1) {
            if (xl_copy_dir(&w->recs[0]) == cudaMemcpyDeviceToHost && w->recs[0].bytes == w->first_bytes) {
                w->bytes = w->recs[0].bytes;
                w->shared = shared_pages(w->recs[0].dst, w->bytes, &w->present);
                w->seen = 1;
            }
            return NULL;
        }
        usleep(50);
    }
    while (!w->stop) {
        if (xl_copylog_count() >= 2) {
            if (xl_copy_dir(&w->recs[0]) == cudaMemcpyHostToDevice) {
                w->bytes = w->recs[0].bytes;
                w->shared = shared_pages(w->recs[0].src, w->bytes, &w->present);
                w->seen = 1;
            }
            return NULL;
        }
        usleep(50);
    }
    return NULL;
}

/* The arguments of one lab_sweep that must be refused, for sweep_refused. */
typedef struct {
    lab_dir dir;
    size_t min, max;
    int reps, max_points;
} refused_sweep;

/* sweep_refused - kit_expect_no_heap_leak's attempt: the refused lab_sweep a describes, its line kept out of the
 * output; 0 when it returned -1, as it must */
static int sweep_refused(void *ctx)
{
    const refused_sweep *a = ctx;
    lab_point out[16];
    int quiet = kit_quiet_begin();
    int n = lab_sweep(a->dir, a->min, a->max, a->reps, out, a->max_points);
    kit_quiet_end(quiet);
    return n == -1 ? 0 : -1;
}

/* expect_sweep - one small lab_sweep call: it must return want_n (-1: an error, for the reason why), measure exactly
 * the sizes, runs and direction asked, timing each run with events, write nothing past out[n-1], and hold nothing
 * more afterwards; a refusal, repeated, must not grow the host heap either */
static void expect_sweep(lab_dir dir, size_t min, size_t max, int reps, int max_points, int want_n, const char *why)
{
    static xl_copy_rec recs[LOG_MAX];
    static xl_sync_rec syncs[SYNC_MAX];
    lab_point out[16];
    char call[160];
    size_t bad = 0;
    snprintf(call, sizeof call, "lab_sweep(%s, min_bytes %zu, max_bytes %zu, reps %d, max_points %d)",
             dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H", min, max, reps, max_points);
    xl_poison(out, sizeof out);
    kit_held held = kit_held_now();
    long dev_before = xl_resources_now().dev_allocations;
    char said[512];
    int saved = want_n < 0 ? kit_capture_begin() : -1; /* a refusal's line: counted, not shown */
    /* host to device from fresh pages (past 32 MiB, mmap'd): watch that the source pages were written, not only read
     * (a page only read maps the shared zero page: the copies would read zeros from one cached page) */
    /* device to host into fresh pages: watch that the destination was written before the first copy (held up
     * D2H_HOLD_NS behind the kit's work on the legacy stream, where lab_copy runs, while the watcher looks) */
    source_watch watch = {.recs = recs, .d2h = dir == LAB_D2H, .first_bytes = min};
    pthread_t watcher;
    int watching = want_n > 0 && min > ((size_t)32 << 20) && pagemap_tells();
    xl_copylog_start(recs, LOG_MAX);
    xl_synclog_start(syncs, SYNC_MAX);
    watching = watching && pthread_create(&watcher, NULL, watch_source, &watch) == 0; /* after the start: a fresh count */
    if (watching && dir == LAB_D2H)
        xl_delay(0, D2H_HOLD_NS);
    int n = lab_sweep(dir, min, max, reps, out, max_points);
    int nsync = xl_synclog_stop();
    int nrec = xl_copylog_stop();
    if (watching) {
        watch.stop = 1;
        pthread_join(watcher, NULL);
    }
    int lines = want_n < 0 ? kit_capture_end(saved, said, sizeof said) : 0;
    long left = xl_resources_now().dev_allocations - dev_before;
    cr_assert(left <= 0, "%s left %ld device buffers allocated: free (cudaFree) every buffer it allocates", call, left);
    kit_expect_released(held, call);
    if (want_n < 0) { /* refused for its arguments: before it measures or writes anything */
        cr_assert(n == -1, "%s returned %d; it must return -1: %s", call, n, why);
        kit_expect_one_line(saved, lines, said, call, "-1");
        cr_assert(xl_check_poison(out, sizeof out, &bad) == 0,
                  "%s returned -1 (%s), yet it had written into out[%zu]: check the arguments, max_points included, "
                  "before measuring anything, and write nothing into out when refusing", call, why, bad / sizeof *out);
        cr_assert(nrec == 0, "%s returned -1 (%s), yet it had made %d copies first: check the arguments, max_points "
                  "included, before measuring anything", call, why, nrec);
        /* repeated, the refusal must not grow the host heap: a buffer allocated before the check is freed */
        refused_sweep again = {dir, min, max, reps, max_points};
        kit_expect_no_heap_leak(sweep_refused, &again, call,
                                "it returned -1 but kept memory it had allocated: check every argument, max_points "
                                "included, before allocating anything, or free it before returning -1");
        return;
    }
    cr_assert(n == want_n, "%s returned %d; the sizes %zu, %zu, %zu, ... up to and including the last one <= %zu "
              "are %d", call, n, min, 2 * min, 4 * min, max, want_n);
    for (int i = 0; i < n; i++) {
        const xl_timing *t = &out[i].t;
        cr_assert(out[i].bytes == min << i, "%s: point %d has size %zu; expected %zu (min_bytes << %d)", call, i,
                  out[i].bytes, min << i, i);
        cr_assert(t->reps == reps && t->min_ms > 0 && t->min_ms <= t->median_ms && t->median_ms <= t->max_ms,
                  "%s: point %d (%zu bytes) is not a summary of %d runs (reps %d, min %.4f, median %.4f, max %.4f ms)",
                  call, i, out[i].bytes, reps, t->reps, t->min_ms, t->median_ms, t->max_ms);
    }
    cr_assert(xl_check_poison(&out[n], (16 - n) * sizeof *out, &bad) == 0,
              "%s returned %d points but wrote into out[%zu]: nothing past out[n-1] may change", call, n,
              n + bad / sizeof *out);
    cr_assert(nrec <= LOG_MAX, "%s made %d copies, more than the %d the grader records: copy each run in one piece",
              call, nrec, LOG_MAX);
    expect_sweep_copies(recs, nrec, dir == LAB_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, min, n, reps,
                        call);
    expect_sweep_events_legacy(syncs, nsync < SYNC_MAX ? nsync : SYNC_MAX, call);
    int records = 0;
    for (int k = 0; k < nsync && k < SYNC_MAX; k++)
        records += syncs[k].kind == XL_SYNC_RECORD;
    cr_assert(nsync > SYNC_MAX || records >= n * (reps + 1),
              "%s recorded %d CUDA events for its %d sizes of %d timed runs: each run is timed with events by "
              "lab_time_gpu on stream 0, an event before and one after it (at least %d in all)",
              call, records, n, reps, n * (reps + 1));
    kit_expect_sources_written(recs, nrec, call);
    long pages = (long)(watch.bytes / 4096);
    cr_assert(watching == 0 || dir == LAB_H2D || watch.seen == 0 || watch.shared < 0 || 2 * watch.present >= pages,
              "%s: when its first copy (the first size's warm-up, %zu bytes device to host) was asked for, only %ld of "
              "the %ld pages of its destination had ever been written: the copies themselves then fault the host "
              "buffer's fresh pages in, and the time counts it. lab.h: the host memory holds data, written before "
              "timing, in both directions: fill the host buffer (memset) before timing a device to host sweep too",
              call, watch.bytes, watch.present, pages);
    cr_assert(watching == 0 || dir == LAB_D2H || watch.seen == 0 || watch.shared < 0 || watch.present < 16 || 2 * watch.shared <= watch.present,
              "%s: %ld of the %ld pages of its first copy's source (%zu bytes of its host buffer) were never written, "
              "only read: such a page maps the kernel's shared zero page, so the copies read zeros from one cached "
              "page, faster than data. Fill the host buffer by writing it (memset) before timing",
              call, watch.shared, watch.present, watch.bytes);
}

/* expect_sweep_bad_reps - lab_sweep with a reps lab_time_gpu refuses (0 or 1025), over 2 to 4 sizes of up to a few
 * MiB: -1, and nothing left held (host heap, device buffers, events), also repeated; its line kept out of the output */
static void expect_sweep_bad_reps(void)
{
    int k = (int)kit_rand_int(1, 3), reps = kit_rand_int(0, 1) ? 0 : 1025;
    size_t min = odd_size(1025, 1 << 20);
    lab_dir dir = kit_rand_int(0, 1) ? LAB_H2D : LAB_D2H;
    lab_point out[16];
    char call[160];
    snprintf(call, sizeof call, "lab_sweep(%s, min_bytes %zu, max_bytes %zu, reps %d, max_points 16)",
             dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H", min, min << k, reps);
    kit_held held = kit_held_now();
    long dev_before = xl_resources_now().dev_allocations;
    int quiet = kit_quiet_begin();
    int n = lab_sweep(dir, min, min << k, reps, out, 16);
    kit_quiet_end(quiet);
    long left = xl_resources_now().dev_allocations - dev_before;
    cr_assert(n == -1, "%s returned %d; it must return -1: lab_time_gpu refuses reps %d (1 <= reps <= 1024)", call, n,
              reps);
    cr_assert(left <= 0, "%s returned -1 but left %ld device buffers allocated: when a timing fails, free (cudaFree) "
              "the buffers before returning -1", call, left);
    kit_expect_released(held, call);
    refused_sweep again = {dir, min, min << k, reps, 16};
    kit_expect_no_heap_leak(sweep_refused, &again, call,
                            "it returned -1 but kept memory it had allocated: when lab_time_gpu fails, free the host "
                            "buffer (and the device one) before returning -1");
}

/* One small lab_sweep for kit_expect_no_heap_leak. */
typedef struct {
    lab_dir dir;
    size_t min, max;
    int reps;
} sweep_args;

/* sweep_again - kit_expect_no_heap_leak's attempt: the sweep a describes (3 sizes); 0 when it measured them */
static int sweep_again(void *ctx)
{
    const sweep_args *a = ctx;
    lab_point out[4];
    return lab_sweep(a->dir, a->min, a->max, a->reps, out, 4) == 3 ? 0 : -1;
}

/* expect_sweep_shapes - small sweeps from sizes that are not powers of two: a max that is exactly min << k (the
 * last size included) and one byte less (excluded), max_points equal to the count (fine), above it (points past
 * n must stay untouched) and one less (-1), max equal to min (one size, in one point), reps below and above the 5 of
 * the figures' sweeps, both directions, a min_bytes of 1, and sizes of tens of MiB (a host buffer of fresh pages) */
static void expect_sweep_shapes(void)
{
    int k = (int)kit_rand_int(2, 4);
    size_t min = odd_size(1025, 9000);
    expect_sweep(LAB_H2D, min, min << k, (int)kit_rand_int(1, 4), k + 1, k + 1, NULL);
    k = (int)kit_rand_int(2, 4);
    min = odd_size(1025, 9000);
    expect_sweep(LAB_D2H, min, (min << k) - 1, (int)kit_rand_int(6, 9), k + (int)kit_rand_int(1, 3), k, NULL);
    k = (int)kit_rand_int(2, 4);
    min = odd_size(1025, 9000);
    expect_sweep(kit_rand_int(0, 1) ? LAB_H2D : LAB_D2H, min, min << k, (int)kit_rand_int(1, 5), k, -1,
                 "its sizes up to and including max_bytes are one more than max_points");
    expect_sweep(kit_rand_int(0, 1) ? LAB_H2D : LAB_D2H, min, min << k, (int)kit_rand_int(1, 5), 0, -1,
                 "max_points 0 holds none of its sizes");
    min = odd_size(1025, 9000);
    expect_sweep(kit_rand_int(0, 1) ? LAB_H2D : LAB_D2H, min, min, (int)kit_rand_int(1, 4), 1, 1, NULL);
    /* min_bytes at the bottom of its range, 1: sizes 1, 2, 4, ...; and up to SIZE_MAX, where the doubling overflows
     * after 64 sizes (more than max_points) */
    k = (int)kit_rand_int(3, 10);
    expect_sweep(kit_rand_int(0, 1) ? LAB_H2D : LAB_D2H, 1, ((size_t)1 << k) + (size_t)kit_rand_int(0, (1L << k) - 1),
                 1, (int)kit_rand_int(k + 1, INT_MAX), k + 1, NULL);
    /* reps at the top of lab_time_gpu's range, 1024, over two small sizes */
    min = (size_t)kit_rand_int(1, 4096);
    expect_sweep(kit_rand_int(0, 1) ? LAB_H2D : LAB_D2H, min, 2 * min + (size_t)kit_rand_int(0, (long)min - 1), 1024,
                 2, 2, NULL);
    expect_sweep(LAB_D2H, 1, SIZE_MAX, 3, 25, -1, "its 64 sizes from 1 byte up to SIZE_MAX are more than max_points");
    /* sizes past malloc's largest reuse threshold (32 MiB): the host buffer is fresh pages, never touched before */
    min = odd_size(33 << 20, 40 << 20);
    expect_sweep(LAB_H2D, min, min << 1, 1, 2, 2, NULL);
    size_t min_d2h = odd_size(33 << 20, 40 << 20); /* device to host into fresh pages: written before timing too */
    expect_sweep(LAB_D2H, min_d2h, min_d2h << 1, 1, 2, 2, NULL);
    expect_sweep(LAB_H2D, min, min - 1, 3, 8, -1, "max_bytes is below min_bytes");
    expect_sweep(LAB_D2H, min + 1, min, 3, 8, -1, "max_bytes is below min_bytes"); /* and a min of the other parity */
    expect_sweep(LAB_D2H, 0, SWEEP_MAX, 3, 25, -1, "min_bytes is 0");
    expect_sweep_bad_reps(); /* refused by lab_time_gpu, after the buffers are made */
    /* repeated, a sweep must not grow the host heap (its buffers and anything else it allocates are freed) */
    sweep_args again = {kit_rand_int(0, 1) ? LAB_H2D : LAB_D2H, odd_size(1025, 9000), 0, (int)kit_rand_int(1, 3)};
    again.max = again.min << 2;
    char what[128];
    snprintf(what, sizeof what, "lab_sweep(%s, min_bytes %zu, max_bytes %zu, reps %d)",
             again.dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H", again.min, again.max, again.reps);
    kit_expect_no_heap_leak(sweep_again, &again, what, "free everything it allocates before it returns");
}

/* One direction's sweep, for the figures check, with the kit's buffers (allocated once for both directions). */
typedef struct {
    lab_dir dir;
    const char *name;
    void *host, *dev; /* SWEEP_MAX bytes each */
} sweep_job;

/* keep_sweep - the report page's data/sweep.csv: the student's last sweep in each direction so far, n points of
 * you in direction dir (the reference data's columns) */
static void keep_sweep(lab_dir dir, const lab_point *you, int n)
{
    static lab_point kept[2][SWEEP_POINTS];
    static int nkept[2];
    int d = dir == LAB_D2H;
    nkept[d] = n < 0 ? 0 : n > SWEEP_POINTS ? SWEEP_POINTS : n;
    memcpy(kept[d], you, nkept[d] * sizeof *you);
    xl_csv *c = xl_results_csv("sweep", "direction,bytes,median_ms,min_ms,max_ms,gbps");
    for (int k = 0; c && k < 2; k++)
        for (int i = 0; i < nkept[k]; i++)
            xl_csv_row(c, "%s,%zu,%.9g,%.9g,%.9g,%.9g", k ? "D2H" : "H2D", kept[k][i].bytes, kept[k][i].t.median_ms,
                       kept[k][i].t.min_ms, kept[k][i].t.max_ms, xl_gbps((double)kept[k][i].bytes, kept[k][i].t.median_ms));
    xl_results_close(c);
}

/* measure_sweep - xl_measure_fn: the student's sweep and the kit's, in this run; checks the
 * sweep's shape (a test failure if wrong) and gives the median over sizes >= 1 MiB of
 * kit time / student time, as *ratio; 1 means the same figures */
static void measure_sweep(void *ctx, double *ratio, char *figures, size_t len)
{
    sweep_job *j = ctx;
    lab_point you[SWEEP_POINTS + 8], kit[SWEEP_POINTS];
    double r[SWEEP_POINTS];
    int nr = 0;
    memset(you, 0, sizeof you);
    char call[64];
    snprintf(call, sizeof call, "lab_sweep(%s, 4 KiB, 256 MiB)", j->name);
    kit_held before = kit_held_now();
    int n = lab_sweep(j->dir, SWEEP_MIN, SWEEP_MAX, 5, you, SWEEP_POINTS + 8);
    keep_sweep(j->dir, you, n);
    kit_expect_released(before, call); /* its buffers, the host one (256 MiB) included */
    cr_assert(n == SWEEP_POINTS, "lab_sweep(%s, 4 KiB, 256 MiB) returned %d; it must measure %d sizes", j->name, n,
              SWEEP_POINTS);
    kit_sweep(j->dir == LAB_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, SWEEP_MIN, SWEEP_POINTS, 5, j->host,
              j->dev, kit);
    for (int i = 0; i < n; i++) {
        const xl_timing *t = &you[i].t;
        cr_assert(you[i].bytes == kit[i].bytes, "%s point %d: size %zu, expected %zu", j->name, i, you[i].bytes,
                  kit[i].bytes);
        cr_assert(t->reps == 5 && t->min_ms > 0 && t->min_ms <= t->median_ms && t->median_ms <= t->max_ms,
                  "%s point %d (%zu bytes): not a valid summary of 5 runs (reps %d, min %.4f, median %.4f, max %.4f ms)",
                  j->name, i, you[i].bytes, t->reps, t->min_ms, t->median_ms, t->max_ms);
        if (you[i].bytes >= (1u << 20)) { /* below 1 MiB, latency jitter dominates */
            r[nr++] = kit[i].t.median_ms / t->median_ms;
            xl_sound_timing(kit[i].t.min_ms, kit[i].t.max_ms, XL_SOUND_SPREAD_PAGEABLE, "the kit's own sweep times (ms)");
        }
    }
    *ratio = xl_median(r, nr);
    snprintf(figures, len,
             "%s: your sweep's figures are %.2f times the kit's (median over 1 MiB to 256 MiB); at 256 MiB yours "
             "%.2f GB/s, the kit's %.2f GB/s",
             j->name, *ratio, xl_gbps(SWEEP_MAX, you[n - 1].t.median_ms), xl_gbps(SWEEP_MAX, kit[n - 1].t.median_ms));
}

/* measure_sweep_deviation - xl_measure_fn: how far the sweep is from the kit's, as max(r, 1/r) */
static void measure_sweep_deviation(void *ctx, double *dev, char *figures, size_t len)
{
    double r;
    measure_sweep(ctx, &r, figures, len);
    *dev = r > 1 ? r : 1 / r;
}

XL_TEST(sweep, sizes_and_figures, 10, XL_TIMED,
        "lab_sweep measures exactly the sizes, runs and direction asked and frees its buffers; from 4 KiB to 256 MiB "
        "its figures are within " XL_STR(SWEEP_WITHIN) "x of the kit's", 40)
{
    expect_sweep_shapes();
    void *host = kit_host_alloc(SWEEP_MAX), *dev = kit_dev_alloc(SWEEP_MAX);
    sweep_job jobs[2] = {{LAB_H2D, "H2D", host, dev}, {LAB_D2H, "D2H", host, dev}};
    for (int d = 0; d < 2; d++)
        xl_ratio_check(measure_sweep_deviation, &jobs[d], XL_AT_MOST_X(SWEEP_WITHIN),
                       d ? "D2H sweep figures against the kit's" : "H2D sweep figures against the kit's");
    XL_CHECK(cudaFree(dev));
    free(host);
}

/* open_fds - how many file descriptors this process has open now (/proc/self/fd, less the one reading it); -1 when
 * it cannot tell */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;
}

/* expect_fds_closed - fails when more files are open now than before (open_fds's count before a call; -1: not
 * judged); call names the call and what happened in it */
static void expect_fds_closed(int before, const char *call)
{
    int now = before < 0 ? -1 : open_fds();
    cr_assert(now < 0 || now <= before,
              "%s left %d more file%s open than before the call: close (fclose) every file it opens, on every path "
              "that returns, -1 included", call, now - before, now - before == 1 ? "" : "s");
}

/* random_points - n plausible sweep points with fresh random times and sizes (not powers of two; the last one past
 * 2 GiB, where a size printed as an int goes wrong) */
static void random_points(lab_point *p, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++) {
        uint64_t r[4];
        xl_fill_random(r, sizeof r, seed + (uint64_t)i);
        p[i].bytes = (size_t)(1 + r[3] % (1ull << 31));
        if (i == n - 1)
            p[i].bytes += (size_t)1 << 31;
        p[i].t.reps = 5;
        p[i].t.min_ms = 0.001 + (r[0] % 100000) * 1e-5;
        p[i].t.median_ms = p[i].t.min_ms * (1 + (r[1] % 1000) * 1e-4);
        p[i].t.max_ms = p[i].t.median_ms * (1 + (r[2] % 1000) * 1e-3);
    }
}

/* expect_row - parses one CSV row and compares it with point p in direction dir */
static void expect_row(const char *line, const char *dir, const lab_point *p, int row, int n)
{
    char d[8];
    unsigned long long bytes;
    double med, mn, mx, gbps;
    int got = sscanf(line, "%7[^,],%llu,%lf,%lf,%lf,%lf", d, &bytes, &med, &mn, &mx, &gbps);
    cr_assert(got == 6, "n = %d: CSV row %d is not direction,bytes,median_ms,min_ms,max_ms,gbps: '%s'", n, row, line);
    double want_gbps = xl_gbps((double)p->bytes, p->t.median_ms);
    cr_assert(strcmp(d, dir) == 0 && bytes == p->bytes && fabs(med / p->t.median_ms - 1) < 1e-5 &&
                  fabs(mn / p->t.min_ms - 1) < 1e-5 && fabs(mx / p->t.max_ms - 1) < 1e-5 &&
                  fabs(gbps / want_gbps - 1) < 1e-5,
              "n = %d: CSV row %d is '%s'; expected %s,%zu,%.9g,%.9g,%.9g,%.9g%s", n, row, line, dir, p->bytes,
              p->t.median_ms, p->t.min_ms, p->t.max_ms, want_gbps,
              bytes != p->bytes ? " (bytes is a size_t: print it with %zu)" : "");
}

/* csv_said - lab_write_csv(path, h2d, d2h, n) with its stderr counted, not shown: what it returned; a -1 must come
 * with one line (lab.h) */
static int csv_said(const char *path, const lab_point *h2d, const lab_point *d2h, int n)
{
    char said[512], call[300];
    lab_point keep[2][17];
    memcpy(keep[0], h2d, n * sizeof *h2d);
    memcpy(keep[1], d2h, n * sizeof *d2h);
    int fds = open_fds();
    int saved = kit_capture_begin();
    int rc = lab_write_csv(path, h2d, d2h, n);
    int lines = kit_capture_end(saved, said, sizeof said);
    snprintf(call, sizeof call, "lab_write_csv(\"%s\", h2d, d2h, %d), returning %d,", path, n, rc);
    expect_fds_closed(fds, call);
    kit_expect_unchanged(h2d, keep[0], n, sizeof *h2d, call, "points");
    kit_expect_unchanged(d2h, keep[1], n, sizeof *d2h, call, "points");
    snprintf(call, sizeof call, "lab_write_csv(\"%s\", h2d, d2h, %d)", path, n);
    if (rc == -1)
        kit_expect_one_line(saved, lines, said, call, "-1");
    return rc;
}

#define CSV_LINE 512 /* the longest CSV line the grader reads back */

/* expect_csv - lab_write_csv of n fresh random points per direction (n >= 0, any size), read back row by row, in a
 * folder made in $TMPDIR (or /tmp); with existed, the path already holds more lines of other text than the CSV will
 * (the explorer run twice): they must all be gone. The file and its folder are removed before any check can end the
 * test */
static void expect_csv(int n, int existed)
{
    int maxlines = 2 * n + 2; /* one more than the CSV has: a longer file shows */
    lab_point *h2d = malloc((n + 1) * sizeof *h2d), *d2h = malloc((n + 1) * sizeof *d2h);
    lab_point *keep_h2d = malloc((n + 1) * sizeof *h2d), *keep_d2h = malloc((n + 1) * sizeof *d2h);
    char (*lines)[CSV_LINE] = malloc((size_t)maxlines * CSV_LINE);
    const char *tmp = getenv("TMPDIR");
    char dir[512], path[600];
    int nlines = 0;
    uint64_t seed = xl_fresh_seed();
    cr_assert(h2d && d2h && keep_h2d && keep_d2h && lines, "the grader is out of host memory");
    snprintf(dir, sizeof dir, "%s/xferlab-csv-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    random_points(h2d, n, seed);
    random_points(d2h, n, seed + 1000 + (uint64_t)n);
    cr_assert(mkdtemp(dir) != NULL, "the grader cannot create a temporary folder");
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    FILE *old = existed ? fopen(path, "w") : NULL;
    for (int i = 0; old && i < 2 * n + 8; i++)
        fprintf(old, "an older line %d of this file, longer than any line of the CSV that replaces it, %d\n", i, n);
    int ready = existed ? old != NULL && fclose(old) == 0 : 1;
    cr_assert(ready, "the grader cannot write %s", path);
    char call[160];
    memcpy(keep_h2d, h2d, n * sizeof *h2d);
    memcpy(keep_d2h, d2h, n * sizeof *d2h);
    int fds = open_fds();
    /* no points: no point is read, so the arrays may be NULL (lab.h); the header alone */
    int rc = n == 0 ? lab_write_csv(path, NULL, NULL, 0) : lab_write_csv(path, h2d, d2h, n);
    snprintf(call, sizeof call, "lab_write_csv(path, %s, %d), returning %d,", n == 0 ? "NULL, NULL" : "h2d, d2h", n,
             rc);
    FILE *f = fopen(path, "r");
    int written = f != NULL;
    while (f && nlines < maxlines && fgets(lines[nlines], CSV_LINE, f))
        nlines++;
    if (f)
        fclose(f);
    unlink(path);
    rmdir(dir);
    expect_fds_closed(fds, call); /* the grader's own reading of the file is closed by now */
    kit_expect_unchanged(h2d, keep_h2d, n, sizeof *h2d, call, "points");
    kit_expect_unchanged(d2h, keep_d2h, n, sizeof *d2h, call, "points");
    cr_assert(rc == 0, "lab_write_csv(path, %s, n = %d) returned %d: it returns -1 only when the file cannot be "
              "written%s", n == 0 ? "NULL, NULL" : "h2d, d2h", n, rc,
              n == 0 ? " (no points: the header alone; with n == 0 no point is read, so the arrays may be NULL)" : "");
    cr_assert(written, "lab_write_csv returned 0 but %s does not exist", path);
    const char *again = existed ? "; the file existed before the call, with other lines: write it anew (fopen "
                                  "mode \"w\"), keeping none of them" : "";
    cr_assert(nlines > 0 && strcmp(lines[0], "direction,bytes,median_ms,min_ms,max_ms,gbps\n") == 0,
              "n = %d: the first line must be exactly 'direction,bytes,median_ms,min_ms,max_ms,gbps'%s", n, again);
    for (int row = 0; row < 2 * n; row++) {
        cr_assert(row + 1 < nlines, "n = %d: the CSV has %d data rows; expected %d, every point of both directions "
                  "(however many there are: write each row as it comes, no buffer of a fixed size)", n, row, 2 * n);
        lines[row + 1][strcspn(lines[row + 1], "\r\n")] = '\0';
        expect_row(lines[row + 1], row < n ? "H2D" : "D2H", row < n ? &h2d[row] : &d2h[row - n], row + 2, n);
    }
    cr_assert(nlines == 2 * n + 1, "n = %d: the CSV has more than the %d expected data rows%s", n, 2 * n, again);
    free(lines);
    free(keep_d2h);
    free(keep_h2d);
    free(d2h);
    free(h2d);
}

/* csv_fails_again - kit_expect_no_heap_leak's attempt: lab_write_csv of a few random points where it must fail, at
 * *ctx (a path), its line kept out of the output; 0 when it returned -1, as it must */
static int csv_fails_again(void *ctx)
{
    lab_point p[3];
    random_points(p, 3, xl_fresh_seed());
    int quiet = kit_quiet_begin();
    int rc = lab_write_csv((const char *)ctx, p, p, 3);
    kit_quiet_end(quiet);
    return rc == -1 ? 0 : -1;
}

/* csv_again - kit_expect_no_heap_leak's attempt: lab_write_csv of a few random points to a fresh temporary file,
 * removed after */
static int csv_again(void *ctx)
{
    lab_point p[3];
    const char *tmp = getenv("TMPDIR");
    char dir[512], path[600];
    (void)ctx;
    random_points(p, 3, xl_fresh_seed());
    snprintf(dir, sizeof dir, "%s/xferlab-csv-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert(mkdtemp(dir) != NULL, "the grader cannot create a temporary folder");
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    int rc = lab_write_csv(path, p, p, 3);
    unlink(path);
    rmdir(dir);
    return rc;
}

XL_TEST(sweep, csv_file, 5, XL_CPU, "lab_write_csv writes the header and one exact row per point, for any n", 10)
{
    lab_point p[1];
    expect_csv((int)kit_rand_int(2, 17), 0);
    expect_csv(1, 0);
    expect_csv(0, 0); /* no points: the header alone */
    expect_csv((int)kit_rand_int(0, 17), 1); /* over a file that exists: replaced, not appended to */
    /* more points than one sweep of 4 KiB to 256 MiB: up to the 64 of a sweep from 1 byte, and thousands (a file of
     * hundreds of KiB, past any text buffer of a fixed size) */
    expect_csv((int)kit_rand_int(18, 64), 0);
    expect_csv((int)kit_rand_int(1000, 4000), (int)kit_rand_int(0, 1));
    random_points(p, 1, xl_fresh_seed());
    int rc = csv_said("/nonexistent-xferlab/dir/sweep.csv", p, p, 1);
    cr_assert(rc == -1, "lab_write_csv into a folder that does not exist must return -1");
    kit_expect_no_heap_leak(csv_fails_again, "/nonexistent-xferlab/dir/sweep.csv",
                            "lab_write_csv into a folder that does not exist",
                            "free everything it allocates, on the path that returns -1 too");
    /* a file that opens but whose rows cannot be written (/dev/full: every write fails, no space left): the rows
     * are buffered, so the failure shows at the latest when fclose writes them out */
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        fclose(full);
        lab_point h2d[17], d2h[17];
        int n = (int)kit_rand_int(1, 17);
        random_points(h2d, n, xl_fresh_seed());
        random_points(d2h, n, xl_fresh_seed() + 1000);
        rc = csv_said("/dev/full", h2d, d2h, n);
        cr_assert(rc == -1, "lab_write_csv(\"/dev/full\", h2d, d2h, n = %d) returned %d: the file opens, but no row "
                  "can be written there (no space left), so it must return -1. Buffered rows are written at the latest "
                  "by fclose: check its result (and any fprintf's or fflush's)", n, rc);
        kit_expect_no_heap_leak(csv_fails_again, "/dev/full", "lab_write_csv(\"/dev/full\", ...), which must fail",
                                "where a write fails, still close the file (fclose frees its buffer) before returning -1");
    } else {
        xl_note("no /dev/full here: a file whose writes fail was not tried");
    }
    kit_expect_no_heap_leak(csv_again, NULL, "lab_write_csv",
                            "close (fclose) every file it opens and free everything it allocates");
}

/* ===== Part D: the fit ===== */

/* sweep_grows - 1 when the kit can fit a line with a positive slope to the n measured points and the largest copy
 * took at least twice as long as the smallest (on an idle GPU it takes about a hundred times as long) */
static int sweep_grows(const lab_point *pts, int n)
{
    double bytes[64], ms[64], l, b;
    for (int i = 0; i < n; i++) {
        bytes[i] = (double)pts[i].bytes;
        ms[i] = pts[i].t.median_ms;
    }
    return xl_fit_latency_bw(bytes, ms, n, &l, &b) == 0 && pts[n - 1].t.median_ms >= 2 * pts[0].t.median_ms;
}

/* fit_of - the kit's fit of pts (0, or -1 when no positive slope fits); l and b may be NULL */
static int fit_of(const lab_point *pts, int n, double *l, double *b)
{
    double bytes[64], ms[64], kl, kb;
    for (int i = 0; i < n; i++) {
        bytes[i] = (double)pts[i].bytes;
        ms[i] = pts[i].t.median_ms;
    }
    int rc = xl_fit_latency_bw(bytes, ms, n, &kl, &kb);
    if (l)
        *l = kl;
    if (b)
        *b = kb;
    return rc;
}

/* Points for fit_again. */
typedef struct {
    const lab_point *p;
    int n;
} fit_args;

/* fit_again - kit_expect_no_heap_leak's attempt: lab_fit of points that fit */
static int fit_again(void *ctx)
{
    const fit_args *a = ctx;
    double l, b;
    return lab_fit(a->p, a->n, &l, &b);
}

/* fit_refused - kit_expect_no_heap_leak's attempt: lab_fit of points it must refuse (a time of 0), its line kept out
 * of the output; 0 when it returned -1, as it must */
static int fit_refused(void *ctx)
{
    const fit_args *a = ctx;
    double l, b;
    int quiet = kit_quiet_begin();
    int rc = lab_fit(a->p, a->n, &l, &b);
    kit_quiet_end(quiet);
    return rc == -1 ? 0 : -1;
}

/* expect_fit_like_kit - fails unless lab_fit on pts agrees with the kit's fit */
static void expect_fit_like_kit(const lab_point *pts, int n, const char *what)
{
    double bytes[64], ms[64], kit_l, kit_b, l = NAN, b = NAN;
    for (int i = 0; i < n; i++) {
        bytes[i] = (double)pts[i].bytes;
        ms[i] = pts[i].t.median_ms;
    }
    cr_assert(xl_fit_latency_bw(bytes, ms, n, &kit_l, &kit_b) == 0, "the kit could not fit %s", what);
    lab_point keep[64];
    memcpy(keep, pts, n * sizeof *pts);
    xl_expect_ok(lab_fit(pts, n, &l, &b), "lab_fit");
    kit_expect_unchanged(pts, keep, n, sizeof *pts, "lab_fit", "points");
    cr_assert(fabs(b / kit_b - 1) < 0.005 && fabs(l - kit_l) < 0.01 * fabs(kit_l) + 0.05,
              "%s: you fitted L = %.3f us, B = %.3f GB/s; the kit fits L = %.3f us, B = %.3f GB/s "
              "(need B within 0.5%% and L within 1%%; is every point weighted by 1/T^2?)",
              what, l, b, kit_l, kit_b);
    xl_note("%s: L = %.2f us, B = %.2f GB/s", what, l, b);
}

/* model_point - p as a point of T = L + bytes / B exactly (its median); its min and max a fresh 0.5 to 0.8 and 1.25
 * to 2 times that, and its reps a fresh 0 to 1024 (a point filled by hand may say 0): only the median is fitted */
static void model_point(lab_point *p, size_t bytes, double l_us, double b_gbps)
{
    p->bytes = bytes;
    p->t.median_ms = l_us * 1e-3 + (double)bytes * 1e-6 / b_gbps;
    p->t.min_ms = p->t.median_ms * (0.5 + 0.01 * (double)kit_rand_int(0, 30));
    p->t.max_ms = p->t.median_ms * (1.25 + 0.01 * (double)kit_rand_int(0, 75));
    p->t.reps = (int)kit_rand_int(0, 1024);
}

/* model_points - n points of T = L + bytes / B exactly, at sizes from 1 to 9 KiB up to about top, each step
 * jittered (no power of two) */
static void model_points(lab_point *p, int n, double l_us, double b_gbps, double top)
{
    double size = (double)kit_rand_int(1000, 9000), step = n > 1 ? pow(top / size, 1.0 / (n - 1)) : 1;
    for (int i = 0; i < n; i++) {
        model_point(&p[i], (size_t)size, l_us, b_gbps);
        size *= step * (0.9 + 0.01 * (double)kit_rand_int(0, 20));
    }
}

/* fit_said - lab_fit(p, n, l, b) with its stderr counted, not shown, *l and *b poisoned first: what it returned; a -1
 * must come with one line (lab.h) and leave *l and *b as they were */
static int fit_said(const lab_point *p, int n, double *l, double *b)
{
    char said[512], call[64];
    lab_point keep[64];
    double poison[2];
    memcpy(keep, p, (n > 0 ? n : 0) * sizeof *p);
    xl_poison(l, sizeof *l);
    xl_poison(b, sizeof *b);
    memcpy(&poison[0], l, sizeof *l);
    memcpy(&poison[1], b, sizeof *b);
    int saved = kit_capture_begin();
    int rc = lab_fit(p, n, l, b);
    int lines = kit_capture_end(saved, said, sizeof said);
    snprintf(call, sizeof call, "lab_fit(points, %d, &l, &b)", n);
    kit_expect_unchanged(p, keep, n, sizeof *p, call, "points");
    if (rc == -1) {
        kit_expect_one_line(saved, lines, said, call, "-1");
        cr_assert(memcmp(l, &poison[0], sizeof *l) == 0 && memcmp(b, &poison[1], sizeof *b) == 0,
                  "%s returned -1 but wrote into *latency_us or *bandwidth_gbps: a refused fit leaves both as they "
                  "were", call);
    }
    return rc;
}

/* expect_exact_fit - lab_fit of n points p of T = L + bytes / B exactly (in any order, sizes repeated, L of either
 * sign) must return 0 with L and B within 1e-6 of l_us and b_gbps, and leave the points as they were; shape says
 * what is special about them */
static void expect_exact_fit(const lab_point *p, int n, double l_us, double b_gbps, const char *shape)
{
    double l = NAN, b = NAN;
    lab_point *keep = malloc(n * sizeof *p);
    cr_assert(keep != NULL, "the grader is out of host memory");
    memcpy(keep, p, n * sizeof *p);
    int rc = lab_fit(p, n, &l, &b);
    kit_expect_unchanged(p, keep, n, sizeof *p, "lab_fit on exact data", "points");
    free(keep);
    cr_assert(rc == 0, "lab_fit returned %d on exact data, %d points (%s) made with L = %.4f us and B = %.4f GB/s: "
              "every time is positive and the fitted slope is too, so a line fits (lab.h lists every reason for -1)",
              rc, n, shape, l_us, b_gbps);
    cr_assert(fabs(l / l_us - 1) < 1e-6 && fabs(b / b_gbps - 1) < 1e-6,
              "exact data, %d points (%s) made with L = %.4f us and B = %.4f GB/s: you fitted L = %.4f us, B = %.4f "
              "GB/s", n, shape, l_us, b_gbps, l, b);
}

/* shuffle_points - p[0 .. n) in a fresh order */
static void shuffle_points(lab_point *p, int n)
{
    for (int k = n - 1; k > 0; k--) {
        int j = (int)kit_rand_int(0, k);
        lab_point t = p[k];
        p[k] = p[j], p[j] = t;
    }
}

XL_TEST(fit, synthetic, 5, XL_CPU,
        "lab_fit recovers L and B from exact and noisy synthetic sweeps of 2 to thousands of points, in any order, L of "
        "either sign; -1, outputs untouched, for fewer than two points, a time that is not positive, or a fitted slope "
        "that is not positive, whatever the first and last times", 10)
{
    lab_point p[64];
    uint64_t r[19];
    char what[192];
    xl_fill_random(r, sizeof r, xl_fresh_seed());
    double l_us = 5 + (double)(r[0] % 4500) / 100, b_gbps = 5 + (double)(r[1] % 5500) / 100, l = NAN, b = NAN;
    int n = 0;
    /* exact data: the least number of points, then any, then any up to past 4 GiB (lab_sweep may go that far), the
     * last two points between 2 and 4 GiB and past 4 GiB, where a size held in an int or unsigned wraps, and up to
     * 64 points (a sweep from 1 byte makes that many before its sizes overflow) */
    for (int k = 0; k < 3; k++) {
        n = k == 0 ? 2 : k == 1 ? (int)kit_rand_int(3, 17) : (int)kit_rand_int(18, 64);
        model_points(p, n, l_us, b_gbps, k < 2 ? (double)(1u << 28) : (double)(1ull << 34));
        if (k == 2) {
            model_point(&p[n - 2], (size_t)kit_rand((1ull << 31) + 1, (1ull << 32) - 1), l_us, b_gbps);
            model_point(&p[n - 1], (size_t)kit_rand((1ull << 32) + 1, 1ull << 36), l_us, b_gbps);
        }
        l = b = NAN;
        lab_point keep[64];
        memcpy(keep, p, n * sizeof *p);
        int rc = lab_fit(p, n, &l, &b);
        kit_expect_unchanged(p, keep, n, sizeof *p, "lab_fit on exact data", "points");
        cr_assert(rc == 0, "lab_fit returned %d on exact data, %d points from %zu to %zu bytes, made with L = %.4f us "
                  "and B = %.4f GB/s: every time is positive and grows with the size, so a line fits%s",
                  rc, n, p[0].bytes, p[n - 1].bytes, l_us, b_gbps,
                  k == 2 ? " (sizes past 2^31 and 2^32 bytes need a size_t or a double, never an int)" : "");
        cr_assert(fabs(l / l_us - 1) < 1e-6 && fabs(b / b_gbps - 1) < 1e-6,
                  "exact data, %d points from %zu to %zu bytes, made with L = %.4f us and B = %.4f GB/s: you fitted "
                  "L = %.4f us, B = %.4f GB/s (mind the units: ms, bytes, us, GB/s%s)",
                  n, p[0].bytes, p[n - 1].bytes, l_us, b_gbps, l, b,
                  k == 2 ? "; sizes past 2^31 and 2^32 bytes need a size_t or a double, never an int" : "");
    }
    /* exact data in any order: the sizes shuffled, one of them repeated at both ends (the first and the last point
     * of one size, with others between); and thousands of points (lab.h sets no largest n) */
    n = (int)kit_rand_int(4, 17);
    model_points(p, n - 1, l_us, b_gbps, (double)(1u << 28));
    shuffle_points(p, n - 1);
    p[n - 1] = p[0];
    expect_exact_fit(p, n, l_us, b_gbps, "in no order of size, the first and the last of one size");
    /* a point of 0 bytes is a point like any other: its time is L itself (lab.h refuses only times, not sizes) */
    n = (int)kit_rand_int(2, 17);
    model_points(p, n - 1, l_us, b_gbps, (double)(1u << 28));
    model_point(&p[n - 1], 0, l_us, b_gbps);
    shuffle_points(p, n);
    expect_exact_fit(p, n, l_us, b_gbps, "one of them of 0 bytes, whose time is the latency itself: a valid point");
    int many = (int)kit_rand_int(65, 3000);
    lab_point *big = malloc(many * sizeof *big);
    cr_assert(big != NULL, "the grader is out of host memory");
    for (int i = 0; i < many; i++) { /* each in a fresh binary band from 1 KiB to 1 GiB: in no order */
        int e = (int)kit_rand_int(10, 29);
        model_point(&big[i], (size_t)kit_rand((uint64_t)1 << e, ((uint64_t)2 << e) - 1), l_us, b_gbps);
    }
    expect_exact_fit(big, many, l_us, b_gbps, "of random sizes from 1 KiB to 1 GiB, in no order");
    free(big);
    /* a line whose intercept is negative (L < 0, as noisy small sizes can give) with every time positive still
     * fits: 0. The smallest size takes 2 to 10 times |L| to copy. Two points, then any number */
    for (int k = 0; k < 2; k++) {
        double neg_us = -0.01 * (double)kit_rand_int(10, 2000); /* -0.1 to -20 us */
        double low = -neg_us * b_gbps * 1e3 * (2 + (double)kit_rand_int(0, 8)); /* bytes that take 2 to 10 |L| */
        n = k == 0 ? 2 : (int)kit_rand_int(3, 17);
        model_points(p, n, neg_us, b_gbps, (double)(1u << 28));
        for (int i = 0; i < n; i++)
            model_point(&p[i], p[i].bytes + (size_t)low, neg_us, b_gbps);
        if (k == 1)
            shuffle_points(p, n);
        expect_exact_fit(p, n, neg_us, b_gbps, "every time positive, the fitted latency negative");
    }
    n = (int)kit_rand_int(3, 17);
    for (int tries = 0, fits = 0; !fits; tries++) { /* noise that still leaves a fit (the kit's) */
        double bytes[17], ms[17], kl, kb;
        cr_assert(tries < 100, "the grader could not make a noisy sweep of %d points that fits", n);
        model_points(p, n, l_us, b_gbps, (double)(1u << 28));
        xl_fill_random(r, sizeof r, xl_fresh_seed());
        for (int i = 0; i < n; i++) { /* up to +-20% noise on every point */
            p[i].t.median_ms *= 1 + ((double)(r[i + 2] % 4001) - 2000) * 1e-4;
            bytes[i] = (double)p[i].bytes, ms[i] = p[i].t.median_ms;
        }
        fits = xl_fit_latency_bw(bytes, ms, n, &kl, &kb) == 0;
    }
    for (int i = 0; i < n; i++) /* reps that differ a lot: 1 to 3 below 64 KiB, hundreds above, one point 0 */
        p[i].t.reps = p[i].bytes < (64u << 10) ? (int)kit_rand_int(1, 3) : (int)kit_rand_int(100, 1024);
    p[kit_rand_int(0, n - 1)].t.reps = 0;
    snprintf(what, sizeof what, "noisy synthetic sweep of %d points (each point's reps and min and max differ: only "
             "the medians are fitted, each weighted 1/T^2)", n);
    expect_fit_like_kit(p, n, what);

    /* from here lab_fit is called to fail: each -1 must come with one line on stderr, counted, not shown */
    cr_assert(fit_said(p, 0, &l, &b) == -1, "lab_fit with no points must return -1");
    /* one point: the normal equations are singular, but rounding makes a positive slope of about 1 point in 16, so
     * a fit that does not check n is caught only over many single points of any size and time */
    for (int i = 0; i < 200; i++) {
        double ms = 0.001 * (double)kit_rand_int(1, 100000);
        lab_point one = {.bytes = (size_t)kit_rand_int(1, 1l << 31), .t = {ms, ms, ms, 1}};
        cr_assert(fit_said(&one, 1, &l, &b) == -1, "lab_fit with one point (%zu bytes, %g ms) must return -1",
                  one.bytes, one.t.median_ms);
    }
    /* a time of 0 anywhere; a negative one, small beside the others, at the smallest size (the line through the
     * rest still rises, so only the check of each time can reject it); a negative one of any size anywhere; and
     * NaN (not positive: every comparison with it is false, so "y <= 0" lets it through), -0.0 and -infinity */
    for (int z = 0; z < 6; z++) {
        int k = z == 1 ? 0 : (int)kit_rand_int(0, n - 1);
        double keep = p[k].t.median_ms;
        p[k].t.median_ms = z == 0   ? 0.0
                           : z == 1 ? -0.001 * (double)kit_rand_int(1, 999)      /* -0.001 to -0.999 ms */
                           : z == 2 ? -0.001 * (double)kit_rand_int(1, 1000000)  /* -0.001 to -1000 ms */
                           : z == 3 ? NAN
                           : z == 4 ? -0.0
                                    : -INFINITY;
        cr_assert(fit_said(p, n, &l, &b) == -1,
                  "lab_fit must return -1 when a time is not positive (point %d of %d: %g ms)", k, n, p[k].t.median_ms);
        p[k].t.median_ms = keep;
    }
    double flat = 1.0; /* the same time at every size: the slope is exactly 0, so no finite B fits */
    for (int i = 0; i < n; i++)
        p[i].t.median_ms = flat;
    b = NAN;
    int rc = fit_said(p, n, &l, &b);
    cr_assert(rc == -1 || (rc == 0 && isfinite(b) && b > 0), /* rounding may leave a tiny slope: a huge finite B */
              "lab_fit returned %d with B = %g GB/s when the time is the same (%.1f ms) at all %d sizes: the fitted "
              "1/B is 0, so no finite B fits; return -1",
              rc, b, flat, n);
    /* every point of one size: no line, so no slope, fits. The size and the times are powers of two (1/64 to 8 ms),
     * so that every product and sum of a least-squares fit is exact, fused or not, and its slope is exactly 0 / 0:
     * NaN, which is not positive either */
    size_t one = (size_t)1 << kit_rand_int(10, 33);
    lab_point sized[64];
    memcpy(sized, p, n * sizeof *p);
    for (int i = 0; i < n; i++) {
        p[i].bytes = one;
        p[i].t.median_ms = ldexp(1.0, (int)kit_rand_int(-6, 3));
    }
    b = NAN;
    rc = fit_said(p, n, &l, &b);
    cr_assert(rc == -1,
              "lab_fit returned %d (B = %g GB/s) for %d points that all have one size, %zu bytes (the first time "
              "%.4g ms, the last %.4g ms): no slope fits points of one size, so it must return -1 (the fitted slope is 0 / 0, "
              "NaN, which is not positive: \"s <= 0\" is false for NaN, \"!(s > 0)\" is true)",
              rc, b, n, one, p[0].t.median_ms, p[n - 1].t.median_ms);
    fit_args refused = {p, n};
    p[kit_rand_int(0, n - 1)].t.median_ms = 0.0;
    kit_expect_no_heap_leak(fit_refused, &refused, "lab_fit refusing a time of 0",
                            "allocate nothing before the points are checked, or free it before returning -1");
    memcpy(p, sized, n * sizeof *p); /* the sizes as they were */
    for (int i = 0; i < n; i++) /* times that fall as the size grows: no positive bandwidth fits */
        p[i].t.median_ms = 0.05 + 0.5 / (i + 1);
    cr_assert(fit_said(p, n, &l, &b) == -1,
              "lab_fit must return -1 when the times fall as the size grows (%d points, %.3f ms at %zu bytes down to "
              "%.3f ms at %zu): the fitted B would not be positive",
              n, p[0].t.median_ms, p[0].bytes, p[n - 1].t.median_ms, p[n - 1].bytes);
    /* the rule is the fitted slope's, not the data's ends: times that fall, then a last one a little above the
     * first, fit a slope <= 0 (-1) */
    for (int tries = 0;; tries++) {
        cr_assert(tries < 100, "the grader could not make a sweep whose ends rise but whose fit falls");
        n = (int)kit_rand_int(3, 17);
        model_points(p, n - 1, l_us, b_gbps, (double)(1u << 28));
        p[n - 1] = p[n - 2];
        p[n - 1].bytes += (size_t)kit_rand_int(1, 1000);
        for (int i = 0; i < n - 1; i++)
            p[i].t.median_ms = 0.05 + 0.5 / (i + 1);
        p[n - 1].t.median_ms = p[0].t.median_ms * (1.001 + 0.001 * (double)kit_rand_int(0, 49));
        if (fit_of(p, n, NULL, NULL) != 0)
            break;
    }
    b = NAN;
    rc = fit_said(p, n, &l, &b);
    cr_assert(rc == -1,
              "lab_fit returned %d (B = %g GB/s) for %d points whose times fall from %.3f ms at %zu bytes to %.3f ms, "
              "then end at %.3f ms at %zu bytes: the last time is above the first, yet the weighted fit's 1/B is not "
              "positive, so it must return -1 (judge the fitted slope, not the first and last times)",
              rc, b, n, p[0].t.median_ms, p[0].bytes, p[n - 2].t.median_ms, p[n - 1].t.median_ms, p[n - 1].bytes);
    /* and the other way: exact data whose first (smallest) time is a slow outlier above the last still fits a
     * positive slope: 0, with the kit's L and B */
    for (int tries = 0;; tries++) {
        cr_assert(tries < 100, "the grader could not make a sweep whose ends fall but whose fit rises");
        n = (int)kit_rand_int(6, 17);
        model_points(p, n, l_us, b_gbps, (double)(1u << 28));
        p[0].t.median_ms = p[n - 1].t.median_ms * (1.01 + 0.01 * (double)kit_rand_int(0, 9));
        if (fit_of(p, n, NULL, NULL) == 0)
            break;
    }
    snprintf(what, sizeof what, "%d points whose first time (%.3f ms) is above the last (%.3f ms)", n,
             p[0].t.median_ms, p[n - 1].t.median_ms);
    expect_fit_like_kit(p, n, what);
    fit_args again = {p, n};
    kit_expect_no_heap_leak(fit_again, &again, "lab_fit", "free everything it allocates before it returns");
}

XL_TEST(fit, measured_sweep, 5, XL_GPU, "lab_fit on this run's measured sweep agrees with the kit's fit", 20)
{
    lab_point pts[16];
    char what[96], figures[256] = "";
    size_t min = odd_size(3000, 7000);
    int n = (int)kit_rand_int(8, 12);
    void *host = kit_host_alloc(min << (n - 1)), *dev = kit_dev_alloc(min << (n - 1));
    snprintf(what, sizeof what, "pageable H2D measured at %d sizes from %zu bytes", n, min);
    for (int tries = 1;; tries++) { /* a sweep whose times grow with the size: a busy GPU or host can flatten one */
        kit_sweep(cudaMemcpyHostToDevice, min, n, 3, host, dev, pts);
        if (sweep_grows(pts, n))
            break;
        snprintf(figures + strlen(figures), sizeof figures - strlen(figures), "%s%.4f ms at %zu bytes, %.4f ms at %zu",
                 tries > 1 ? "; " : "try: ", pts[0].t.median_ms, pts[0].bytes, pts[n - 1].t.median_ms,
                 pts[n - 1].bytes);
        if (tries == 3)
            xl_not_graded(what, "the kit's sweep did not take longer for larger copies in 3 tries (the GPU or the "
                                "host is busy), so no line fits it", figures);
    }
    expect_fit_like_kit(pts, n, what);
    XL_CHECK(cudaFree(dev));
    free(host);
}
