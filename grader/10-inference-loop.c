/* 10-inference-loop.c - the grader of lab 10 (the capstone: an inference loop that keeps the GPU fed). Course staff
 * only.
 *
 * Every frame is fresh in every grading: the kit's frame source draws its pool from a fresh seed, and jobs start at
 * random frame numbers, so a loop that decodes job frame k as source frame k fails. Every run of every test is
 * checked frame by frame against the kit's own results (labs/10-inference-loop/frames.h: fr_expected, fr_check:
 * digest exact, scores within LAB_SCORE_TOL, each frame delivered once, in order, in batches of the job's batch),
 * the delivered results poisoned before each run. Frame counts are awkward (one, a batch less one, a batch and one,
 * multiples and their neighbours, random counts) and every contract parameter is drawn over its range and printed.
 * Around each run the grader records every copy (common/copylog.h), every wait and event record
 * (common/synclog.h), every model run (the kit's run log, labs/10-inference-loop/model.h), which thread decoded which
 * frame into which buffer and when (the frame source's log); every CUDA create inside a run fails (a run creates
 * nothing), a run holds nothing new afterwards (pinned or device memory, streams, events, executors, threads) and
 * leaves none of its streams busy. The hazards are made certain, not likely: every model run sits 2 ms on its stream
 * before it reads its pixels (mdl_slow), and chosen runs hold their stream 20 ms (mdl_hold_run), so a slot refilled
 * too early, a device buffer overwritten, an executor shared, a result read before it landed or delivered out of
 * order shows in the results every time. A create is made to fail at each of its allocations, streams, events,
 * executors and threads in turn. Speed is a ratio against the kit's own stages and loops (baseline.h) measured in
 * the same run, interleaved, every timed result checked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/copylog.h"
#include "common/faults.h"
#include "common/stats.h"
#include "common/synclog.h"
#include "common/threads.h"
#include "common/timeline.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "grader/results.h"
#include "labs/10-inference-loop/baseline.h"
#include "labs/10-inference-loop/frames.h"
#include "labs/10-inference-loop/lab.h"
#include "labs/10-inference-loop/model.h"

XL_LAB("10", "inference-loop");

#define MAX_COPIES 1024    /* copies kept per watched run (more are counted) */
#define MAX_SYNCS 4096     /* waits and event records kept per watched run */
#define MAX_RUNS 512       /* model runs kept per watched run */
#define MAX_TIDS 512       /* the process's threads listed before a run */
#define MAX_STREAMS 64     /* distinct streams followed per run */
#define WARM_EXECUTORS (LAB_STREAMS_MAX + 1) /* the warm-up fills the kit's handle pool: 8 streams and fr_expected */
#define FRAME_FIRST_MAX (1 << 20) /* jobs start at a random source frame below this */
#define WARM_PAGEABLE ((size_t)16 << 20) /* the warm-up's copies from and to pageable memory */
#define CREATE_WARM_CYCLES 160 /* loop.args: creates and destroys before the heap is watched over repeated ones */
#define THREADS_SETTLE_MS 200.0   /* a joined thread may stay listed in /proc/self/task a moment */

/* ===== The bars and sizes (every one to be measured by make stability on the H100 and the H200) =====
 * IDEAL_NEED: the issue's bar: your pipelined loop at batch 64 reaches 85% of the ideal measured in the same run,
 * the slowest of the three stages each measured alone (the kit's workers decoding, the link both ways, the model
 * alone); the design expects the reference at 93-97% (fill and drain of 8,192 frames cost about 1.5%). A loop that
 * decodes on its own thread reaches about 0.2, one stream about 0.55.
 * BLOCKING_NEED: the issue's bar: your pipelined loop against the kit's blocking loop (not yours: a slow blocking
 * loop of yours cannot raise its own ratio); about 9x expected.
 * KIT_IDEAL_MIN: the kit's own pipelined loop must reach this share of the ideal in the same attempt, or the ideal
 * cannot be reached on this machine and the attempt is not sound.
 * SCALING_MIN: the kit's W decode threads must run at least this many times W x one thread's rate (design §3.4; 8
 * threads measured 0.92 of 8x on the H100 host), or the host did not give the workers W cores: not sound.
 * FASTEST_NEED: speed.latency's speed at the chosen batch against the fastest batch of the sweep whose worst
 * latency met the bound: within 10% (the design's); frames/s flatten past 64, so the margin costs little.
 * NARROW_*: wait.narrow beside an unrelated 60 ms kernel on the legacy stream (lab 08's choice): three runs of 128
 * frames at batch 16 take about 5 + 4 + 1.5 ms (decode 27 us a frame on one thread, measured), far under 30 ms; one
 * that waits for the device or the legacy stream, or copies with cudaMemcpy, takes 60 ms. */
#define IDEAL_NEED 85
#define BLOCKING_NEED 1.5
#define KIT_IDEAL_MIN 0.85
#define SCALING_MIN 0.8
#define FASTEST_NEED 90
#define SPEED_BATCH LAB_BATCH_NAMED
#define SPEED_STREAMS LAB_STREAMS_NAMED
#define SPEED_SLOTS LAB_SLOTS_NAMED
#define SPEED_FRAMES 8192    /* a timed run: 128 batches of 64 (never fewer than 4,096: fill and drain past 3%) */
#define BLOCKING_FRAMES 1024 /* the kit's blocking loop, ten times slower: fewer frames, the same rate */
#define WARM_FRAMES 1024     /* untimed runs first: kernels loaded, threads awake */
#define SPEED_ROUNDS 3       /* rounds an attempt, medians */
#define TL_BATCHES 12        /* the report's timeline: one traced run of this many batches of 64 */
#define LAT_MAX_BATCH 256    /* speed.latency's loop */
#define LAT_FRAMES 2048      /* a sweep point */
#define LAT_RUN_FRAMES 4096  /* a run at the chosen batch */
#define LAT_RUNS 3 /* runs at the chosen batch (the messages name three) */
#define NARROW_NS 60000000ull
#define NARROW_MS 30
#define NARROW_FRAMES 128
#define NARROW_BATCH 16
/* The hazards (design §7.5): every model run sits SLOW_NS on its stream before it reads its pixels, BETWEEN_NS
 * between its steps for the shared executor, and one batch holds its stream HOLD_MS after its model run. */
#define SLOW_NS 2000000ull
#define BETWEEN_NS 1000000ull
#define HOLD_MS 20.0
/* loop.stop: a failing decode sleeps this long first; the other workers fill every slot they may in far less */
#define FAIL_WAIT_MS 20.0
/* loop.stop: or it fails at once while every other decode takes this long (the workers are then in mid-decode) */
#define FAIL_DECODE_US 2000.0
#define HZ_BATCH 8
/* loop.modes: decode takes 30 us, long enough for the frame log to order decodes, copies and delivers */
#define MODES_CPU_US 30.0
#define MODES_BATCH 16
/* loop.modes: the async run's held batch keeps its stream this long after its model run; the next batch's decode
 * must begin within half of it (the reference's begins microseconds after the held batch is queued) */
#define MODES_HOLD_MS 30.0
/* loop.stop: idle workers sleep: over IDLE_MS of the grader's nanosleep, the whole process may use IDLE_CPU_MS of
 * CPU (0.3 cores); workers that spin use about W x IDLE_MS */
#define IDLE_WAIT_MS 10.0
#define IDLE_MS 50.0
#define IDLE_CPU_MS 15.0
/* loop.stop: and over IDLE_WAKE_MS (IDLE_MS among them) no worker is woken more than IDLE_WAKES_MAX times (the
 * context switches /proc counts: one to go back to sleep after its last wake-up may fall inside); a worker that
 * wakes on a timeout to look again is woken every few ms */
#define IDLE_WAKE_MS 100.0
#define IDLE_WAKES_MAX 2
/* watch: the host heap in use may hold this much more while a run runs (read at each batch's first decode and at each
 * deliver) than both before and after it; a batch buffer a run mallocs and frees, 8 frames or more, is 1.2 MB */
#define RUN_HEAP_SLACK ((size_t)1 << 20)

/* data/loop.csv: the explorer's columns (design §8) */
#define LOOP_HEADER \
    "loop,impl,batch,frames,workers,streams,slots,cpu_us,fps,latency_p50_ms,latency_p99_ms,latency_max_ms,ideal_fps,bound"

/* ===== Small helpers ===== */

/* rnd - kit_rand_int for ints */
static int rnd(long lo, long hi)
{
    return (int)kit_rand_int(lo, hi);
}

/* imin, imax */
static int imin(int a, int b)
{
    return a < b ? a : b;
}
static int imax(int a, int b)
{
    return a > b ? a : b;
}

/* host_cores - the cores this process may run on (its affinity, and those online) */
static int host_cores(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    int n = online > 0 ? (int)online : 1;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = imin(n, CPU_COUNT(&set));
    return n;
}

/* timed_workers - W for the speed tests: the named 8, or cores - 4 where the host has fewer than 12 cores (the loop's
 * thread, the CUDA driver's threads and the kit's own need the rest), at least 1 */
static int timed_workers(void)
{
    return imax(1, imin(LAB_WORKERS_NAMED, host_cores() - 4));
}

/* max_workers - the most workers a correctness test draws: 12, or cores - 2 on a smaller host, at least 1 */
static int max_workers(void)
{
    return imax(1, imin(LAB_WORKERS_MAX, host_cores() - 2));
}

/* tids_now - the ids of this process's threads now into out (up to max); how many */
static int tids_now(long *out, int max)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' && n < max)
            out[n++] = atol(e->d_name);
    if (d)
        closedir(d);
    return n;
}

/* has_tid - 1 when tid is among the n of tids */
static int has_tid(const long *tids, int n, long tid)
{
    for (int i = 0; i < n; i++)
        if (tids[i] == tid)
            return 1;
    return 0;
}

/* threads_settled - xl_threads_now, waited for (up to THREADS_SETTLE_MS) until it is at most want: a thread just
 * joined can stay listed a moment */
static int threads_settled(int want)
{
    double t0 = xl_now_ms();
    int n = xl_threads_now();
    while (n > want && xl_now_ms() - t0 < THREADS_SETTLE_MS) {
        xl_sleep_ms(1);
        n = xl_threads_now();
    }
    return n;
}

/* expect_threads_back - the process has want threads again after what (its threads joined) */
static void expect_threads_back(int want, const char *what)
{
    int n = threads_settled(want);
    cr_assert(n <= want, "after %s, %d threads still run that were not there before it (%d then, %d now): join "
              "every thread you start (pthread_join) before the call that stopped them returns", what, n - want, want,
              n);
}

/* expect_no_error_left - no CUDA error left for the next cudaGetLastError to find */
static void expect_no_error_left(const char *what)
{
    cudaError_t left = cudaGetLastError();
    cr_assert(left == cudaSuccess, "%s left %s (%s) for the next cudaGetLastError to find: check every call, and clear "
              "the error of one you handle (cudaGetLastError)", what, cudaGetErrorName(left),
              cudaGetErrorString(left));
}

/* batches_of - how many batches frames make at batch (the last one shorter) */
static int batches_of(int frames, int batch)
{
    return batch > 0 && frames > 0 ? (int)(((long long)frames + batch - 1) / batch) : 0;
}

/* batch_size - frames in batch i of a job */
static int batch_size(int frames, int batch, int i)
{
    return imin(batch, frames - i * batch);
}

/* ===== Part A: lab_choose_batch (the grader's own reference, and a wrong chooser for every mistake) ===== */

/* The most points the grader's own chooser takes (batch.choose's long sweep holds 300 to 480) */
#define CHOOSE_MAX 512

/* How a chooser may combine the runs of one batch. */
enum { AGG_MAX, AGG_MIN, AGG_MEAN, AGG_MEDIAN, AGG_LOWER, AGG_UPPER, AGG_FIRST, AGG_LAST };

/* A chooser: the right one (lab.h), or one mistake away from it. */
typedef struct {
    const char *name;  /* the mistake, for the grader's own check that some sweep catches it */
    int figure;        /* latency figure: 0 p50, 1 p99, 2 max (right) */
    int runs_latency;  /* AGG_MAX (right) */
    int runs_fps;      /* AGG_MEDIAN (right: the mean of the middle two for an even count) */
    int no_margin;     /* compares with bound_ms, not LAB_LATENCY_MARGIN x bound_ms */
    int strict;        /* latency < the limit, not <= */
    int largest;       /* the largest eligible batch, not the fastest */
    int ignore_max;    /* max_batch ignored */
    int max_strict;    /* batch < max_batch, not <= */
    int tie_larger;    /* a tie goes to the larger batch */
    int no_skip;       /* points with batch < 1 or a NaN or negative figure are used as they are */
    int sign_skip;     /* a figure of -0.0 skipped too (its sign bit tested, not < 0) */
    int speed_skip;    /* a point with a NaN or negative figure is left out of its batch's speed only: its worst
                        * latency still counts */
    int cap_skip;      /* a point with a batch above LAB_BATCH_MAX skipped, as if invalid (max_batch alone bounds it) */
    int inf_skip;      /* a point with an infinite speed skipped, as if invalid (only NaN and negative figures are) */
} chooser;

static const chooser choosers[] = {
    {"the right chooser", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"latency by p50", 0, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"latency by p99", 1, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' latency: the least", 2, AGG_MIN, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' latency: the mean", 2, AGG_MEAN, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' latency: the median", 2, AGG_MEDIAN, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' latency: the first run", 2, AGG_FIRST, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' latency: the last run", 2, AGG_LAST, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' speed: the mean", 2, AGG_MAX, AGG_MEAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' speed: the least", 2, AGG_MAX, AGG_MIN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' speed: the largest", 2, AGG_MAX, AGG_MAX, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' speed: the first run", 2, AGG_MAX, AGG_FIRST, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' speed: the last run", 2, AGG_MAX, AGG_LAST, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' speed: the lower median", 2, AGG_MAX, AGG_LOWER, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"runs' speed: the upper median", 2, AGG_MAX, AGG_UPPER, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"no margin", 2, AGG_MAX, AGG_MEDIAN, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"latency < the limit", 2, AGG_MAX, AGG_MEDIAN, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"the largest eligible batch", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"max_batch ignored", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {"batch < max_batch", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
    {"ties to the larger batch", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0},
    {"no point skipped", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0},
    {"a -0.0 figure skipped as negative", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
    {"a skipped run's worst latency still counted", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0},
    {"batches above LAB_BATCH_MAX skipped", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
    {"an infinite speed skipped", 2, AGG_MAX, AGG_MEDIAN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
};
#define N_CHOOSERS ((int)(sizeof choosers / sizeof choosers[0]))

/* sort_plain - v[0..n) ascending by <, insertion sort (NaN stays where < puts it: the no-skip chooser's behaviour) */
static void sort_plain(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* aggregate - the n values v (in the points' order) combined as how */
static double aggregate(const double *v, int n, int how)
{
    double s[CHOOSE_MAX], r = v[0];
    memcpy(s, v, (size_t)n * sizeof *v);
    sort_plain(s, n);
    switch (how) {
    case AGG_MAX: for (int i = 1; i < n; i++) r = v[i] > r ? v[i] : r; return r;
    case AGG_MIN: for (int i = 1; i < n; i++) r = v[i] < r ? v[i] : r; return r;
    case AGG_MEAN: r = 0; for (int i = 0; i < n; i++) r += v[i]; return r / n;
    case AGG_MEDIAN: return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    case AGG_LOWER: return s[(n - 1) / 2];
    case AGG_UPPER: return s[n / 2];
    case AGG_FIRST: return v[0];
    default: return v[n - 1];
    }
}

/* point_valid - the point is used (lab.h: batch >= 1, no figure NaN or negative) */
static int point_valid(const lab_point *p)
{
    const double f[4] = {p->fps, p->latency_p50_ms, p->latency_p99_ms, p->latency_max_ms};
    if (p->batch < 1)
        return 0;
    for (int i = 0; i < 4; i++)
        if (isnan(f[i]) || f[i] < 0)
            return 0;
    return 1;
}

/* point_ok - the point is used by chooser c: point_valid, or for the sign-bit mistake no figure with its sign bit set
 * either */
static int point_ok(const chooser *c, const lab_point *p)
{
    if (!point_valid(p) || (c->cap_skip && p->batch > LAB_BATCH_MAX) || (c->inf_skip && isinf(p->fps)))
        return 0;
    return !c->sign_skip || !(signbit(p->fps) || signbit(p->latency_p50_ms) || signbit(p->latency_p99_ms) ||
                              signbit(p->latency_max_ms));
}

/* point_grouped - the point is taken into its batch by chooser c (for the speed-only mistake, any point of batch >= 1:
 * its latency counts, its speed only when point_valid) */
static int point_grouped(const chooser *c, const lab_point *p)
{
    return c->no_skip || (c->speed_skip ? p->batch >= 1 : point_ok(c, p));
}

/* choose_with - what chooser c answers for the sweep (lab_choose_batch's arguments); the right chooser is lab.h's
 * rule, written here apart from any solution */
static int choose_with(const chooser *c, const lab_point *pts, int n, double bound_ms, int max_batch)
{
    if ((!pts && n > 0) || n < 0 || isnan(bound_ms) || isinf(bound_ms) || bound_ms <= 0 || max_batch < 1)
        return -1;
    double limit = c->no_margin ? bound_ms : LAB_LATENCY_MARGIN * bound_ms;
    int best = 0, done[CHOOSE_MAX] = {0};
    double best_fps = 0;
    cr_assert(n <= CHOOSE_MAX, "grader error: a sweep of more than %d points", CHOOSE_MAX);
    for (int i = 0; i < n; i++) {
        if (done[i] || !point_grouped(c, &pts[i]))
            continue;
        double lat[CHOOSE_MAX], fps[CHOOSE_MAX];
        int k = 0, kf = 0, b = pts[i].batch;
        for (int j = i; j < n; j++)
            if (pts[j].batch == b && point_grouped(c, &pts[j])) {
                const double f[3] = {pts[j].latency_p50_ms, pts[j].latency_p99_ms, pts[j].latency_max_ms};
                lat[k++] = f[c->figure];
                if (!c->speed_skip || point_valid(&pts[j]))
                    fps[kf++] = pts[j].fps;
                done[j] = 1;
            }
        if (kf == 0) /* the speed-only mistake: a batch of skipped runs alone has no speed */
            continue;
        double l = aggregate(lat, k, c->runs_latency), s = aggregate(fps, kf, c->runs_fps);
        int fits = c->strict ? l < limit : l <= limit;
        int under = c->ignore_max || (c->max_strict ? b < max_batch : b <= max_batch);
        if (!fits || !under)
            continue;
        int better;
        if (c->largest)
            better = best == 0 || b > best;
        else
            better = best == 0 || s > best_fps || (s == best_fps && (c->tie_larger ? b > best : b < best));
        if (better)
            best = b, best_fps = s;
    }
    return best;
}

/* sweep_text - the sweep as a table for a message: one line per point, in the order given */
static const char *sweep_text(const lab_point *pts, int n, char *buf, size_t len)
{
    size_t used = snprintf(buf, len, "  batch        fps    p50 ms    p99 ms    max ms");
    for (int i = 0; i < n && pts && used < len; i++)
        used += snprintf(buf + used, len - used, "\n  %5d %10.6g %9.6g %9.6g %9.6g", pts[i].batch, pts[i].fps,
                         pts[i].latency_p50_ms, pts[i].latency_p99_ms, pts[i].latency_max_ms);
    return buf;
}

/* One scripted sweep. */
typedef struct {
    const char *name; /* what it is built to catch, said in its message */
    int n;
    lab_point p[16];
    int max_batch;
    int keep_order; /* passed in the order built, not shuffled */
} sweep;

/* sw_add - appends a point of batch b: fps_rel x the sweep's speed scale, latencies as fractions of the bound */
static void sw_add(sweep *s, int b, double fps_rel, double p50, double p99, double max, double scale, double bound)
{
    s->p[s->n] = (lab_point){b, fps_rel * scale, p50 * bound, p99 * bound, max * bound};
    s->n++;
}

/* sw_shuffle - the points interleaved at random, each batch's runs kept in their order (the first and last run of a
 * batch stay first and last) */
static void sw_shuffle(sweep *s)
{
    lab_point out[16];
    int taken[16] = {0};
    for (int k = 0; k < s->n; k++) {
        int pick;
        do
            pick = rnd(0, s->n - 1);
        while (taken[pick]);
        /* the earliest untaken point of the picked point's batch goes next */
        for (int j = 0; j < s->n; j++)
            if (!taken[j] && s->p[j].batch == s->p[pick].batch) {
                pick = j;
                break;
            }
        taken[pick] = 1;
        out[k] = s->p[pick];
    }
    memcpy(s->p, out, (size_t)s->n * sizeof out[0]);
}

/* sw_new - s emptied and named, with a max_batch above all its batches */
static sweep *sw_new(sweep *s, const char *name)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    s->max_batch = rnd(2048, LAB_BATCH_MAX);
    return s;
}

/* lab_choose_batch_kept - lab_choose_batch(pts, n, bound, max_batch), which must leave the caller's points as they
 * were (n > 0 and pts not NULL: compared with a copy taken before the call) */
static int lab_choose_batch_kept(const lab_point *pts, int n, double bound, int max_batch)
{
    static lab_point copy[CHOOSE_MAX];
    int keep = pts && n > 0 && n <= CHOOSE_MAX;
    if (keep)
        memcpy(copy, pts, (size_t)n * sizeof *pts);
    int got = lab_choose_batch(pts, n, bound, max_batch);
    if (keep) {
        char what[160];
        snprintf(what, sizeof what, "lab_choose_batch(points, n %d, bound_ms %.17g, max_batch %d)", n, bound,
                 max_batch);
        kit_expect_unchanged(pts, copy, n, sizeof *pts, what, "points");
    }
    return got;
}

/* expect_choice - lab_choose_batch on the sweep gives want (the grader's reference agrees, or a grader error) */
static void expect_choice(const lab_point *pts, int n, double bound, int max_batch, int want, const char *name)
{
    static char table[4096];
    int ref = choose_with(&choosers[0], pts, n, bound, max_batch);
    sweep_text(pts, n, table, sizeof table);
    cr_assert(ref == want, "grader error: its own chooser gives %d, not %d, on the sweep '%s':\n%s", ref, want, name,
              table);
    int q = want < 0 ? kit_quiet_begin() : -1; /* the refusal's own line is right there: kept out of the output */
    int got = lab_choose_batch_kept(pts, n, bound, max_batch);
    if (want < 0)
        kit_quiet_end(q);
    if (got == want)
        return;
    char wrong[512] = "";
    size_t used = 0;
    for (int v = 1; v < N_CHOOSERS && used < sizeof wrong; v++)
        if (choose_with(&choosers[v], pts, n, bound, max_batch) == got)
            used += snprintf(wrong + used, sizeof wrong - used, "%s%s", used ? ", or " : " (what ", choosers[v].name);
    if (used && used < sizeof wrong)
        snprintf(wrong + used, sizeof wrong - used, " would give)");
    cr_fatal("lab_choose_batch(%s, n %d, bound_ms %.17g, max_batch %d) = %d, want %d%s: %s. lab.h: a "
             "batch's latency is the largest latency_max_ms of its points, its speed the median of their fps (the "
             "mean of the middle two for an even count); eligible when latency <= LAB_LATENCY_MARGIN x bound_ms and "
             "batch <= max_batch; the fastest eligible, the smaller on a tie; points with batch < 1 or a NaN or "
             "negative figure skipped (-0.0 is not negative), counted in none of their batch's figures. The sweep, "
             "in the order passed:\n%s",
             pts ? "points" : "NULL", n, bound, max_batch, got, want, wrong, name, table);
}

/* A call of lab_choose_batch on a thread of its own. */
typedef struct {
    const lab_point *pts;
    int n;
    double bound;
    int max_batch, got;
} huge_call;

static void *huge_thread(void *arg)
{
    huge_call *h = arg;
    h->got = lab_choose_batch(h->pts, h->n, h->bound, h->max_batch);
    return NULL;
}

/* choose_in_child - lab_choose_batch(pts, n, bound, max_batch) in a forked child, on a thread with an ordinary 8 MiB
 * stack (a call that keeps n points on the stack crashes there, whatever this process's stack limit); 0 with *got
 * and *kept (1: the points as they were after the call), or the signal that ended the child (-1: no answer) */
static int choose_in_child(const lab_point *pts, int n, double bound, int max_batch, int *got, int *kept)
{
    int fd[2];
    cr_assert(pipe(fd) == 0, "grader error: pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "grader error: fork failed");
    if (pid == 0) {
        int out[2] = {-1, 0};
        lab_point *copy = malloc((size_t)n * sizeof *pts);
        huge_call h = {pts, n, bound, max_batch, -2};
        pthread_attr_t a;
        pthread_t t;
        close(fd[0]);
        if (copy && pthread_attr_init(&a) == 0 && pthread_attr_setstacksize(&a, (size_t)8 << 20) == 0) {
            memcpy(copy, pts, (size_t)n * sizeof *pts);
            if (pthread_create(&t, &a, huge_thread, &h) == 0 && pthread_join(t, NULL) == 0)
                out[0] = h.got, out[1] = memcmp(copy, pts, (size_t)n * sizeof *pts) == 0;
        }
        ssize_t wr = write(fd[1], out, sizeof out);
        _exit(wr == (ssize_t)sizeof out ? 0 : 1);
    }
    close(fd[1]);
    int in[2] = {0, 0}, st = 0;
    ssize_t rd = read(fd[0], in, sizeof in);
    close(fd[0]);
    pid_t done;
    while ((done = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    cr_assert(done == pid, "grader error: waitpid failed");
    if (WIFSIGNALED(st))
        return WTERMSIG(st);
    cr_assert(rd == (ssize_t)sizeof in && WIFEXITED(st) && WEXITSTATUS(st) == 0 && in[0] != -2,
              "grader error: the child that calls lab_choose_batch on %d points gave no answer", n);
    *got = in[0], *kept = in[1];
    return 0;
}

/* expect_huge_sweep - lab.h takes any n: a sweep of 300,000 to 400,000 runs (a long measured sweep) of five batches
 * (each's speeds spread 10% about its own, so the medians keep their order; one run of the fastest, 128, misses the
 * bound) and a few points to skip, in any order: 64 */
static void expect_huge_sweep(double bound, double scale)
{
    static const int hb[] = {16, 32, 64, 128, 256};
    static const double hf[] = {60, 100, 150, 200, 120}, hl[] = {.1, .2, .3, .4, .5};
    int runs = rnd(60000, 80000), n = 0, extra = rnd(4, 12);
    lab_point *pts = malloc(((size_t)5 * runs + extra) * sizeof *pts);
    cr_assert(pts != NULL, "grader error: out of host memory");
    for (int b = 0; b < 5; b++)
        for (int r = 0; r < runs; r++)
            pts[n++] = (lab_point){hb[b], hf[b] * scale * (0.9 + 0.2 * kit_rand(0, 1000) / 1000.0),
                                   0.5 * hl[b] * bound, 0.8 * hl[b] * bound, hl[b] * bound * (0.9 + 0.1 * r / runs)};
    pts[3 * runs + rnd(0, runs - 1)].latency_max_ms = 0.9 * bound;
    for (int k = 0; k < extra; k++)
        pts[n++] = (lab_point){k % 2 ? rnd(INT_MIN, 0) : INT_MIN, 1000 * scale, .1 * bound, .2 * bound, .3 * bound};
    for (int i = n - 1; i > 0; i--) {
        int j = rnd(0, i);
        lab_point t = pts[i];
        pts[i] = pts[j], pts[j] = t;
    }
    int got = -2, kept = 0, sig = choose_in_child(pts, n, bound, LAB_BATCH_MAX, &got, &kept);
    free(pts);
    cr_assert(sig == 0, "lab_choose_batch(points, n %d, bound_ms %.17g, max_batch %d), called on a thread with an "
              "8 MiB stack, crashed (signal %d, %s): lab.h takes any n >= 0, and %d points of %zu bytes do not fit "
              "on a stack: keep your copy of them on the heap (malloc, and free it), not in an array on the stack",
              n, bound, LAB_BATCH_MAX, sig, strsignal(sig), n, sizeof(lab_point));
    cr_assert(got == 64, "lab_choose_batch(points, n %d, bound_ms %.17g, max_batch %d) = %d, want 64: a sweep of %d "
              "runs each of batches 16, 32, 64, 128 and 256 and %d points to skip, in any order; 64 is the fastest "
              "batch that meets 0.8 x bound_ms (one run of 128 misses it)", n, bound, LAB_BATCH_MAX, got, runs, extra);
    cr_assert(kept, "lab_choose_batch(points, n %d, bound_ms %.17g, max_batch %d) changed the caller's points: they "
              "are const: sort a copy of them, never the points passed in", n, bound, LAB_BATCH_MAX);
}

/* One sweep lab_choose_batch is called on again and again. */
typedef struct {
    const sweep *s;
    double bound;
} choose_ctx;

/* choose_refused_once - kit_expect_no_heap_leak's attempt: lab_choose_batch on the sweep with bound_ms NaN; 0 when
 * it refused (-1) */
static int choose_refused_once(void *ctx)
{
    const choose_ctx *c = ctx;
    return lab_choose_batch(c->s->p, c->s->n, NAN, c->s->max_batch) == -1 ? 0 : -1;
}

/* choose_once - kit_expect_no_heap_leak's attempt: lab_choose_batch on the sweep; 0 when it answered (not -1) */
static int choose_once(void *ctx)
{
    const choose_ctx *c = ctx;
    return lab_choose_batch(c->s->p, c->s->n, c->bound, c->s->max_batch) < 0 ? -1 : 0;
}

/* margin_forms_agree - 1 when, for this bound, lab.h's test (worst <= LAB_LATENCY_MARGIN * bound_ms) and the ways of
 * writing it that differ only in rounding (worst / bound_ms <= LAB_LATENCY_MARGIN, worst / LAB_LATENCY_MARGIN <=
 * bound_ms, worst * 1.25 <= bound_ms) take a worst latency of exactly LAB_LATENCY_MARGIN * bound_ms and refuse the next
 * double above it: the margin sweep's edge then tells <= from < and the margin from none, never one rounding from
 * another */
static int margin_forms_agree(double bound)
{
    volatile double x = LAB_LATENCY_MARGIN * bound, y = nextafter(x, INFINITY), m = LAB_LATENCY_MARGIN;
    return x / bound <= m && x / m <= bound && x * 1.25 <= bound && y / bound > m && y / m > bound && y * 1.25 > bound;
}

XL_TEST(batch, choose, 5, XL_CPU,
        "lab_choose_batch: the fastest batch whose worst latency is within 0.8 of the bound, runs of a batch taken "
        "together (latency: the largest; speed: the median), ties to the smaller batch, max_batch respected; 0 when "
        "none fits; bad arguments refused",
        4)
{
    static sweep sw[40];
    const double M = LAB_LATENCY_MARGIN;
    int ns = 0, caught[N_CHOOSERS] = {0};
    double bound;
    do /* 1 to 11 ms, drawn until the ways of writing the margin agree at its edge */
        bound = 1.0 + kit_rand(0, 1000000) * 1e-5;
    while (!margin_forms_agree(bound));
    double scale = (double)kit_rand(1000, 400000);     /* frames/s per unit of a sweep's speeds */
    sweep *s;
#define NEW(nm) (s = sw_new(&sw[ns++], (nm)))
#define ADD(b, f, a, c, m) sw_add(s, b, f, a, c, m, scale, bound)
    NEW("a batch's latency is its worst (latency_max_ms), not p50 or p99");
    ADD(32, 100, .2, .3, .4), ADD(64, 150, .3, .5, .7), ADD(128, 170, .5, .75, .875), ADD(256, 172, .7, .85, 1.2);
    NEW("the margin: a worst latency of exactly LAB_LATENCY_MARGIN x bound_ms is in, the next double above it and "
        "0.9 x bound_ms are out");
    ADD(8, 50, .05, .08, .1), ADD(16, 80, .5, .7, 0), ADD(32, 90, .5, .7, 0), ADD(64, 95, .5, .7, .9);
    s->p[1].latency_max_ms = M * bound;
    s->p[2].latency_max_ms = nextafter(M * bound, INFINITY);
    NEW("runs of one batch: the worst run's latency decides (not the least, mean, median, first or last run's)");
    ADD(128, 180, .2, .3, .4), ADD(256, 200, .3, .4, .5), ADD(256, 201, .3, .45, .975), ADD(256, 199, .3, .4, .525);
    NEW("runs of one batch: speed is the median of the runs, not their mean, largest or last");
    ADD(32, 170, .1, .2, .3), ADD(32, 171, .1, .2, .3), ADD(32, 172, .1, .2, .3);
    ADD(64, 100, .1, .2, .3), ADD(64, 150, .1, .2, .3), ADD(64, 160, .1, .2, .3), ADD(64, 400, .1, .2, .3);
    NEW("runs of one batch: speed is the median of the runs, not their least or first");
    ADD(32, 150, .1, .2, .3), ADD(64, 90, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(64, 210, .1, .2, .3);
    NEW("runs of one batch: speed is the median of the runs, not their largest, mean or last");
    ADD(32, 150, .1, .2, .3), ADD(64, 120, .1, .2, .3), ADD(64, 100, .1, .2, .3), ADD(64, 300, .1, .2, .3);
    NEW("an even count of runs: the median is the mean of the middle two, not the lower one");
    ADD(32, 152, .1, .2, .3), ADD(64, 160, .1, .2, .3), ADD(64, 150, .1, .2, .3);
    NEW("an even count of runs: the median is the mean of the middle two, not the upper one");
    ADD(32, 157, .1, .2, .3), ADD(64, 150, .1, .2, .3), ADD(64, 170, .1, .2, .3), ADD(64, 100, .1, .2, .3);
    ADD(64, 160, .1, .2, .3);
    NEW("a tie in speed goes to the smaller batch");
    ADD(32, 150, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(128, 190, .2, .3, .4), ADD(128, 200, .2, .3, .4);
    ADD(128, 210, .2, .3, .4);
    NEW("the fastest eligible batch, not the largest (frames/s flatten past the knee)");
    ADD(16, 100, .05, .1, .1), ADD(32, 150, .1, .1, .2), ADD(64, 200, .1, .2, .3), ADD(128, 195, .2, .3, .4);
    ADD(256, 190, .3, .5, .6);
    NEW("a batch above max_batch is not eligible, however fast");
    ADD(32, 150, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(128, 220, .2, .3, .4);
    s->max_batch = rnd(65, 127);
    NEW("a batch equal to max_batch is eligible");
    ADD(32, 150, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(128, 220, .2, .3, .4);
    s->max_batch = 64;
    NEW("points with batch < 1 are skipped");
    ADD(0, 900, .1, .2, .3), ADD(-3, 950, .1, .2, .3), ADD(32, 150, .1, .2, .3), ADD(64, 200, .1, .2, .3);
    NEW("a point with a NaN figure is skipped (here its p50)");
    ADD(128, 500, 0, .3, .4), ADD(64, 200, .1, .2, .3), ADD(32, 150, .1, .2, .3);
    s->p[0].latency_p50_ms = NAN;
    NEW("a point with a negative figure is skipped (here its worst latency)");
    ADD(128, 500, .1, .2, -1.0 / bound), ADD(64, 200, .1, .2, .3), ADD(32, 150, .1, .2, .3);
    NEW("a run with a negative speed is skipped, not counted in its batch's median");
    ADD(32, 202, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(64, -5, .1, .2, .3), ADD(64, 210, .1, .2, .3);
    NEW("a run with a NaN speed is skipped, not counted in its batch's median");
    ADD(32, 202, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(64, 0, .1, .2, .3), ADD(64, 210, .1, .2, .3);
    s->p[2].fps = NAN;
    NEW("no batch meets 0.8 of the bound: 0");
    ADD(32, 150, .5, .7, .81), ADD(64, 200, .6, .9, 1.1), ADD(128, 220, .9, 1.2, 1.5);
    NEW("a figure of exactly 0 is not negative: the point counts (here its p50, p99 and worst latency)");
    ADD(128, 220, 0, 0, 0), ADD(64, 200, .1, .2, .3), ADD(32, 150, .1, .2, .3);
    NEW("batch 1 is a batch like any other (here the fastest)");
    ADD(1, 300, .05, .1, .15), ADD(2, 200, .1, .2, .3), ADD(4, 150, .1, .2, .3);
    NEW("runs come in any order: the median of their speeds, not the middle run as passed");
    ADD(32, 150, .1, .2, .3), ADD(64, 300, .1, .2, .3), ADD(64, 100, .1, .2, .3), ADD(64, 160, .1, .2, .3);
    NEW("a batch faster by less than one frame/s is faster");
    ADD(32, 200, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(16, 100, .1, .2, .3);
    s->p[1].fps = s->p[0].fps + 0.25;
    NEW("a point with a NaN figure is skipped (here its p99)");
    ADD(128, 500, .1, 0, .4), ADD(64, 200, .1, .2, .3), ADD(32, 150, .1, .2, .3);
    s->p[0].latency_p99_ms = NAN;
    NEW("a point with a negative figure is skipped (here one's p99, another's p50)");
    ADD(256, 600, .1, -.2, .4), ADD(128, 500, -.1, .2, .4), ADD(64, 200, .1, .2, .3), ADD(32, 150, .1, .2, .3);
    NEW("a point with a NaN or -infinity worst latency is skipped, and one with a -infinity p99");
    ADD(256, 600, .1, .2, 0), ADD(128, 500, .1, .2, 0), ADD(512, 700, .1, 0, .4), ADD(64, 200, .1, .2, .3);
    ADD(32, 150, .1, .2, .3);
    s->p[0].latency_max_ms = NAN, s->p[1].latency_max_ms = -INFINITY, s->p[2].latency_p99_ms = -INFINITY;
    NEW("an infinite worst latency is neither NaN nor negative: the run counts, and its batch misses the bound");
    ADD(64, 200, .1, .2, .3), ADD(64, 210, .1, .2, 0), ADD(64, 205, .1, .2, .3), ADD(32, 150, .1, .2, .3);
    s->p[1].latency_max_ms = INFINITY;
    NEW("a speed of exactly 0 is not negative: the point counts (here the only eligible batch's, each run)");
    ADD(32, 0, .1, .2, .3), ADD(32, 0, .1, .2, .3), ADD(64, 200, .5, .9, 1.1), ADD(128, 220, .6, 1, 1.3);
    NEW("a speed of exactly 0 is not negative: the run counts in its batch's median");
    ADD(32, 100, .1, .2, .3), ADD(64, 0, .1, .2, .3), ADD(64, 0, .1, .2, .3), ADD(64, 200, .1, .2, .3);
    NEW("a figure of -0.0 equals 0 and is not negative: the point counts (here its p50, p99 and worst latency)");
    ADD(128, 220, 0, 0, 0), ADD(64, 200, .1, .2, .3), ADD(32, 150, .1, .2, .3);
    s->p[0].latency_p50_ms = -0.0, s->p[0].latency_p99_ms = -0.0, s->p[0].latency_max_ms = -0.0;
    NEW("a speed of -0.0 equals 0 and is not negative: the runs count (here the only eligible batch's)");
    ADD(32, 0, .1, .2, .3), ADD(32, 0, .1, .2, .3), ADD(64, 200, .5, .9, 1.1), ADD(128, 220, .6, 1, 1.3);
    s->p[0].fps = -0.0, s->p[1].fps = -0.0;
    NEW("a skipped run counts in none of its batch's figures: one with a NaN speed and a worst latency over the bound "
        "leaves its batch eligible");
    ADD(32, 150, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(64, 0, .1, .2, 1.5), ADD(64, 210, .1, .2, .3);
    s->p[2].fps = NAN;
    NEW("a skipped run counts in none of its batch's figures: one with a negative p50 and a worst latency over the "
        "bound leaves its batch eligible");
    ADD(32, 150, .1, .2, .3), ADD(64, 200, .1, .2, .3), ADD(64, 205, -.1, .2, 2.0), ADD(64, 190, .1, .2, .3);
    NEW("a skipped run counts in none of its batch's figures: one with a negative speed and a worst latency over the "
        "bound leaves its batch eligible");
    ADD(32, 150, .1, .2, .3), ADD(64, -5, .1, .2, 1.2), ADD(64, 200, .1, .2, .3);
    NEW("a batch above LAB_BATCH_MAX is a batch like any other: max_batch alone bounds it (here INT_MAX)");
    ADD(64, 150, .1, .2, .3), ADD(8192, 200, .2, .3, .4), ADD(8192, 210, .2, .3, .4), ADD(4096, 180, .2, .3, .4);
    s->max_batch = INT_MAX;
    NEW("a batch of INT_MAX is a batch like any other, under max_batch INT_MAX");
    ADD(1, 150, .1, .2, .3), ADD(INT_MAX, 200, .2, .3, .4), ADD(4096, 180, .2, .3, .4), ADD(5000, 300, .5, .9, 1);
    s->max_batch = INT_MAX;
    NEW("an infinite speed is neither NaN nor negative: the run counts, and its batch's median speed is infinite (the "
        "fastest)");
    ADD(32, 150, .1, .2, .3), ADD(64, 100, .1, .2, .3), ADD(64, 0, .1, .2, .3);
    s->p[2].fps = INFINITY;
    NEW("points to skip with batches far below 1 (INT_MIN, -2) among batches 1 and 128, in this order: skip them "
        "before sorting by batch (b1 - b2 overflows for INT_MIN), or compare batches without subtracting; each of "
        "batches 1 and 128 has a run over the bound");
    ADD(128, 120, .02, .05, .075), ADD(1, 140, .02, .05, .075), ADD(128, 110, .5, .9, .975);
    ADD(INT_MIN, 140, .5, .9, .975), ADD(1, 110, .5, .9, .975), ADD(-2, 100, .5, .9, .975);
    s->max_batch = INT_MAX, s->keep_order = 1;
    NEW("points to skip with batches far below 1 (INT_MIN, -1, 0) among batches 1, 2 and INT_MAX, in this order; "
        "batches 1 and INT_MAX each have a run over the bound");
    ADD(INT_MAX, 300, .02, .05, .075), ADD(-1, 900, .02, .05, .075), ADD(1, 250, .02, .05, .075);
    ADD(INT_MIN, 900, .02, .05, .075), ADD(INT_MAX, 290, .5, .9, .975), ADD(2, 100, .02, .05, .075);
    ADD(0, 900, .02, .05, .075), ADD(1, 240, .5, .9, .975), ADD(INT_MIN, 900, .02, .05, .075);
    ADD(INT_MAX, 310, .02, .05, .075), ADD(1, 260, .02, .05, .075);
    s->max_batch = INT_MAX, s->keep_order = 1;
#undef ADD
#undef NEW
    static const int want[] = {64, 16, 128, 32, 64, 32, 64, 32, 64, 64, 64, 64, 64, 64, 64, 64, 64, 0, 128, 1, 64, 64,
                               64, 64, 64, 32, 32, 32, 128, 32, 64, 64, 64, 8192, INT_MAX, 64, 0, 2};
    cr_assert(ns == (int)(sizeof want / sizeof want[0]), "grader error: %d sweeps, %d answers", ns,
              (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < ns; i++) {
        if (!sw[i].keep_order)
            sw_shuffle(&sw[i]);
        expect_choice(sw[i].p, sw[i].n, bound, sw[i].max_batch, want[i], sw[i].name);
        for (int v = 1; v < N_CHOOSERS; v++)
            caught[v] |= choose_with(&choosers[v], sw[i].p, sw[i].n, bound, sw[i].max_batch) != want[i];
    }
    for (int v = 1; v < N_CHOOSERS; v++) /* the grader's own coverage: every mistake gives a wrong answer somewhere */
        cr_assert(caught[v], "grader error: no sweep tells '%s' from the right chooser", choosers[v].name);

    /* a long sweep (lab.h takes any n): 300 to 480 runs of five batches, interleaved; each batch's speeds spread 10%
     * about its own, so the medians keep their order; batch 128 is the fastest but one of its runs misses the bound */
    static lab_point lp[CHOOSE_MAX];
    static const int lb[] = {16, 32, 64, 128, 256};
    static const double lf[] = {60, 100, 150, 200, 120}, ll[] = {.1, .2, .3, .4, .5};
    int ln = 0, runs = rnd(60, 96);
    for (int b = 0; b < 5; b++)
        for (int r = 0; r < runs; r++)
            lp[ln++] = (lab_point){lb[b], lf[b] * scale * (0.9 + 0.2 * kit_rand(0, 1000) / 1000.0),
                                   0.5 * ll[b] * bound, 0.8 * ll[b] * bound, ll[b] * bound * (0.9 + 0.1 * r / runs)};
    lp[3 * runs + rnd(0, runs - 1)].latency_max_ms = 0.9 * bound;
    /* and points to skip, fast and within the bound, with batches far below 1: sorted with the others by b1 - b2, an
     * INT_MIN overflows, the order is no order, and one batch's runs fall into two groups */
    for (int k = rnd(8, 16); k > 0; k--) {
        static const int skip_b[] = {INT_MIN, INT_MIN + 1, -2, -1, 0};
        int b = rnd(0, 5);
        lp[ln++] = (lab_point){b == 5 ? rnd(INT_MIN, -1) : skip_b[b], 1000 * scale, .1 * bound, .2 * bound, .3 * bound};
    }
    for (int i = ln - 1; i > 0; i--) { /* any order */
        int j = rnd(0, i);
        lab_point t = lp[i];
        lp[i] = lp[j], lp[j] = t;
    }
    int lwant = choose_with(&choosers[0], lp, ln, bound, LAB_BATCH_MAX);
    cr_assert(lwant == 64, "grader error: its own chooser gives %d, not 64, on the long sweep", lwant);
    int lgot = lab_choose_batch_kept(lp, ln, bound, LAB_BATCH_MAX);
    cr_assert(lgot == lwant, "lab_choose_batch(points, n %d, bound_ms %.17g, max_batch %d) = %d, want %d: a long sweep "
              "of %d runs each of batches 16, 32, 64, 128 and 256, interleaved, with a few points to skip (batches "
              "INT_MIN to 0); 64 is the fastest batch that meets 0.8 x bound_ms (one run of 128 misses it). lab.h "
              "takes any n >= 0: size what you keep by n (malloc, and free it), never a fixed array; and leave the "
              "points to skip out before sorting (b1 - b2 overflows for INT_MIN)", ln, bound, LAB_BATCH_MAX, lgot,
              lwant, runs);
    expect_huge_sweep(bound, scale);

    /* bad arguments, each alone with the others valid (the flat sweep), and the empty cases */
    const sweep *ok = &sw[9];
    expect_choice(NULL, 3, bound, 256, -1, "points NULL with n = 3: -1");
    expect_choice(NULL, 0, bound, 256, 0, "points NULL with n = 0: nothing to choose from, 0");
    expect_choice(ok->p, 0, bound, 256, 0, "n = 0: nothing to choose from, 0");
    expect_choice(ok->p, -1, bound, 256, -1, "n = -1: -1");
    expect_choice(ok->p, INT_MIN, bound, 256, -1, "n = INT_MIN: -1");
    const double bad_bounds[] = {NAN, -NAN, 0.0, -0.0, -1.0, -DBL_MIN, -INFINITY, INFINITY};
    for (size_t i = 0; i < sizeof bad_bounds / sizeof bad_bounds[0]; i++)
        expect_choice(ok->p, ok->n, bad_bounds[i], 256, -1, "bound_ms NaN, infinite or <= 0: -1");
    const int bad_max[] = {0, -1, INT_MIN, rnd(INT_MIN, -2)};
    for (size_t i = 0; i < sizeof bad_max / sizeof bad_max[0]; i++)
        expect_choice(ok->p, ok->n, bound, bad_max[i], -1, "max_batch < 1: -1");
    expect_choice(ok->p, ok->n, 1e-300, 256, 0, "a tiny bound_ms is valid: no batch meets it, 0");
    expect_choice(ok->p, ok->n, bound, 1, 0, "max_batch 1 is valid: no batch of the sweep is that small, 0");
    expect_choice(ok->p, ok->n, bound, INT_MAX, 64, "max_batch INT_MAX: every batch under it");

    /* what a call allocates it frees: repeated on the largest sweep, the heap does not grow */
    choose_ctx cc = {&sw[0], bound};
    for (int i = 1; i < ns; i++)
        cc.s = sw[i].n > cc.s->n ? &sw[i] : cc.s;
    kit_expect_no_heap_leak(choose_once, &cc, "lab_choose_batch",
                            "something it mallocs is not freed before it returns");
    /* and a refusal frees what it took too (bound_ms NaN after the points: a check made after a malloc) */
    kit_expect_no_heap_leak(choose_refused_once, &cc, "lab_choose_batch refusing bound_ms NaN",
                            "something it mallocs is not freed before it returns -1: check the arguments first");
}

/* ===== Part B: lab_max_batch ===== */

typedef unsigned __int128 u128;

/* need128 - lab.h's device memory of streams streams at batch b, without overflow */
static u128 need128(long b, int streams)
{
    const u128 per = (u128)MDL_EXEC_PER_FRAME + LAB_IMAGE_BYTES + sizeof(lab_result);
    return (u128)streams * ((u128)MDL_EXEC_FIXED + (u128)b * per) + LAB_MEM_RESERVE;
}

/* ref_max_batch - the largest b in 1 .. LAB_BATCH_MAX with need128(b) <= free; 0 when none; -1 for bad streams */
static int ref_max_batch(size_t free_bytes, int streams)
{
    if (streams < 1 || streams > LAB_STREAMS_MAX)
        return -1;
    int lo = 0, hi = LAB_BATCH_MAX; /* need(lo) fits or lo is 0; the answer is in lo .. hi */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (need128(mid, streams) <= (u128)free_bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* u128_text - v in decimal */
static const char *u128_text(u128 v, char *buf, size_t len)
{
    char tmp[48];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v && n < 47);
    size_t k = 0;
    while (n > 0 && k + 1 < len)
        buf[k++] = tmp[--n];
    buf[k] = '\0';
    return buf;
}

/* expect_max_batch - lab_max_batch(free, streams) is the reference's answer; why says what the case is */
static void expect_max_batch(size_t free_bytes, int streams, const char *why)
{
    int want = ref_max_batch(free_bytes, streams);
    int q = want < 0 ? kit_quiet_begin() : -1; /* the refusal's own line is right there: kept out of the grading's output */
    int got = lab_max_batch(free_bytes, streams);
    if (want < 0)
        kit_quiet_end(q);
    if (got == want)
        return;
    char a[48], b[48];
    if (want < 0)
        cr_fatal("lab_max_batch(free_bytes %zu, streams %d) = %d, want -1 (%s): lab.h: -1 for streams outside 1 .. %d",
                 free_bytes, streams, got, why, LAB_STREAMS_MAX);
    int g = got >= 0 && got <= LAB_BATCH_MAX ? got : want;
    cr_fatal("lab_max_batch(free_bytes %zu, streams %d) = %d, want %d (%s). lab.h's need at batch b is streams x "
             "(MDL_EXEC_FIXED + b x (MDL_EXEC_PER_FRAME + LAB_IMAGE_BYTES + sizeof(lab_result))) + LAB_MEM_RESERVE: "
             "at b = %d it is %s bytes, at b = %d %s bytes. Compute it without overflow for any free_bytes (a "
             "free_bytes below LAB_MEM_RESERVE must not wrap; 64-bit products), and clamp to 1 .. %d (0 when none fits)",
             free_bytes, streams, got, want, why, g, u128_text(need128(g, streams), a, sizeof a), g + 1,
             u128_text(need128(g + 1, streams), b, sizeof b), LAB_BATCH_MAX);
}

XL_TEST(batch, max, 5, XL_CPU,
        "lab_max_batch: the largest batch whose device memory fits, for 1 to 8 streams, at exact fits and one byte "
        "short, without overflow up to SIZE_MAX; 0 and -1 where due",
        4)
{
    for (int s = 1; s <= LAB_STREAMS_MAX; s++) {
        const long bs[] = {1, 2, LAB_BATCH_MAX - 1, LAB_BATCH_MAX, rnd(3, 64), rnd(65, LAB_BATCH_MAX - 2),
                           rnd(3, LAB_BATCH_MAX - 2)};
        const size_t per = MDL_EXEC_PER_FRAME + LAB_IMAGE_BYTES + sizeof(lab_result);
        for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
            size_t need = (size_t)need128(bs[i], s);
            expect_max_batch(need, s, "free_bytes exactly the need at that batch");
            expect_max_batch(need - 1, s, "one byte short of the need at that batch");
            expect_max_batch(need + kit_rand(1, per - 1), s, "between two batches' needs");
            expect_max_batch(need + ((size_t)1 << 32), s, "the need plus 2^32 (a 32-bit sum wraps here)");
        }
        size_t one = (size_t)need128(1, s);
        expect_max_batch(one - 1, s, "one byte short of a batch of 1: 0");
        expect_max_batch(kit_rand(0, one - 1), s, "less than a batch of 1 needs: 0");
        expect_max_batch(0, s, "free_bytes 0");
        expect_max_batch(1, s, "free_bytes 1 (below LAB_MEM_RESERVE: free - reserve must not wrap)");
        expect_max_batch(kit_rand(2, LAB_MEM_RESERVE - 1), s, "free_bytes below LAB_MEM_RESERVE (must not wrap)");
        expect_max_batch(LAB_MEM_RESERVE, s, "free_bytes exactly LAB_MEM_RESERVE");
        expect_max_batch(LAB_MEM_RESERVE + s * MDL_EXEC_FIXED, s, "the reserve and the executors' fixed part only");
        expect_max_batch((size_t)need128(LAB_BATCH_MAX, s) + kit_rand(1, (size_t)1 << 40), s, "more than 4096 needs");
        expect_max_batch(SIZE_MAX, s, "SIZE_MAX (no overflow: LAB_BATCH_MAX)");
        expect_max_batch(SIZE_MAX - kit_rand(0, 1 << 20), s, "near SIZE_MAX");
        expect_max_batch(SIZE_MAX / 2, s, "SIZE_MAX / 2");
        expect_max_batch((size_t)1 << 63, s, "2^63");
        expect_max_batch(kit_rand((size_t)1 << 32, SIZE_MAX), s, "a random size past 2^32");
    }
    const int bad[] = {0, -1, LAB_STREAMS_MAX + 1, INT_MIN, INT_MAX, rnd(LAB_STREAMS_MAX + 2, INT_MAX),
                       rnd(INT_MIN, -2)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_max_batch(SIZE_MAX, bad[i], "streams outside 1 .. 8");
        expect_max_batch((size_t)need128(rnd(1, 4096), 3), bad[i], "streams outside 1 .. 8");
        expect_max_batch(0, bad[i], "streams outside 1 .. 8, free_bytes 0");
    }
}

/* ===== Part C: a test process's setup, loops and runs under watch ===== */

/* What every GPU test makes first. */
typedef struct {
    mdl_model *m;
    fr_source *src;
    int max_frames;   /* the longest job */
    long caller;      /* the test's thread: the one that calls the runs */
    lab_result *want; /* the right results of the job being checked (expect_frames) */
    int want_first;   /* want holds source frames want_first .. want_first + want_n - 1 */
    int want_n;
    int hold_copy;    /* the next watched run's copy in to hold HOLD_MS (xl_copylog_hold); -1: none */
} world;

static void noop_host(void *arg)
{
    (void)arg;
}

static void *noop_thread(void *arg)
{
    return arg;
}

/* The host heap the kit's own model runs grew (its reference results, its priming): the CUDA runtime loads a kernel, and keeps host memory for it, the first
 * time it runs (cuBLAS picks its GEMM kernels by shape, so a new batch size may load new ones). A loop's check of
 * what it released leaves this out. */
static size_t primed_growth;
static unsigned char primed[LAB_BATCH_MAX + 1]; /* batch sizes the kit's model has run at in this process */

/* world_open - the model, a source of fresh frames (its seed fresh in every process) for jobs of up to max_frames,
 * and the warm-up every test does before it counts anything: the context, the model, WARM_EXECUTORS executors made
 * at once and one run (their cuBLAS handles stay in the kit's pool), one cudaLaunchHostFunc (the runtime starts a
 * thread of its own the first time), a copy to and from pageable memory, and one thread started and joined */
static void world_open(world *w, int max_frames)
{
    memset(w, 0, sizeof *w);
    XL_CHECK(cudaFree(0));
    w->m = mdl_create();
    cr_assert(w->m != NULL, "grader error: the kit's mdl_create failed (see its message above)");
    w->src = fr_create(xl_fresh_seed(), max_frames);
    cr_assert(w->src != NULL, "grader error: the kit's fr_create failed (see its message above)");
    w->max_frames = max_frames;
    w->hold_copy = -1;
    w->want = malloc((size_t)imax(max_frames, 1) * sizeof(lab_result));
    cr_assert(w->want != NULL, "grader error: out of host memory");
    mdl_exec *e[WARM_EXECUTORS];
    uint8_t *px;
    lab_result *res;
    XL_CHECK(cudaMalloc((void **)&px, LAB_IMAGE_BYTES));
    XL_CHECK(cudaMalloc((void **)&res, sizeof(lab_result)));
    cudaStream_t s = kit_stream();
    for (int i = 0; i < WARM_EXECUTORS; i++) {
        e[i] = mdl_exec_create(w->m, 1);
        cr_assert(e[i] != NULL, "grader error: the kit's mdl_exec_create failed in the warm-up");
    }
    cr_assert(fr_make_gpu(w->src, 0, 1, px, s) == 0, "grader error: the kit's fr_make_gpu failed in the warm-up");
    cr_assert(mdl_exec_run(e[0], px, res, 1, s) == 0, "grader error: the kit's mdl_exec_run failed in the warm-up");
    XL_CHECK(cudaLaunchHostFunc(s, noop_host, NULL));
    /* copies to and from pageable memory: the first ones set up the driver's staging for them, host memory it keeps
     * from then on; not the student's */
    uint8_t *pageable = malloc(WARM_PAGEABLE), *dev;
    cr_assert(pageable != NULL, "grader error: out of host memory");
    memset(pageable, 1, WARM_PAGEABLE);
    XL_CHECK(cudaMalloc((void **)&dev, WARM_PAGEABLE));
    for (int back = 0; back < 2; back++) /* in, then out (cudaMemcpyDefault: the pointers say the way) */
        XL_CHECK(cudaMemcpyAsync(back ? (void *)pageable : dev, back ? (void *)dev : pageable, WARM_PAGEABLE,
                                 cudaMemcpyDefault, s));
    XL_CHECK(cudaStreamSynchronize(s));
    XL_CHECK(cudaFree(dev));
    free(pageable);
    for (int i = 0; i < WARM_EXECUTORS; i++)
        mdl_exec_destroy(e[i]);
    XL_CHECK(cudaStreamDestroy(s));
    XL_CHECK(cudaFree(px));
    XL_CHECK(cudaFree(res));
    int before = xl_threads_now();
    pthread_t t;
    cr_assert(pthread_create(&t, NULL, noop_thread, NULL) == 0, "grader error: pthread_create failed in the warm-up");
    pthread_join(t, NULL);
    threads_settled(before);
    w->caller = xl_tid();
}

/* world_close - releases what world_open made */
static void world_close(world *w)
{
    fr_destroy(w->src);
    mdl_destroy(w->m);
    free(w->want);
}

/* expect_frames - w->want becomes the right results of the source's frames first .. first + n - 1 (computed once:
 * the kit's reference runs the model on the GPU) */
static void expect_frames(world *w, int first, int n)
{
    cr_assert(n <= w->max_frames, "grader error: %d frames expected, room for %d", n, w->max_frames);
    if (n <= 0 || (first == w->want_first && n <= w->want_n)) /* already there */
        return;
    size_t heap = kit_held_now().heap;
    cr_assert(fr_expected(w->src, w->m, first, n, w->want) == 0,
              "grader error: the kit's fr_expected failed (see its message above)");
    size_t now = kit_held_now().heap; /* the model's kernels for its batch sizes, loaded the first time: the kit's */
    if (now > heap)
        primed_growth += now - heap;
    w->want_first = first, w->want_n = n;
}

/* open_job - a job of frames frames in batches of batch from source frame first (fr_job); first, the job before it
 * must have seen no decode after its run returned */
static lab_job open_job(world *w, int frames, int batch, int first)
{
    fr_log lg = fr_log_get(w->src);
    cr_assert(lg.late == 0, "after a run of %d frames at batch %d returned, %d decode calls still came (the last on "
              "frame %d's record or later): lab.h: the workers stop when the run returns; no decode after it",
              lg.frames, lg.batch, lg.late, lg.frames - 1);
    return fr_job(w->src, frames, batch, first);
}

/* The streams a live loop of the student's has used, by their number in the loop (lab.h: the blocking loop on its
 * first stream, the async batch i on stream i mod 2, or 0 alone, the pipelined batch i on stream i mod streams): every
 * run of the loop, in every mode, keeps each number on one stream. Keyed by the loop; forgotten at its create and its
 * destroy (loop_open_as, loop_close). */
typedef struct {
    const lab_loop *L;
    cudaStream_t st[LAB_STREAMS_MAX];
    int seen[LAB_STREAMS_MAX]; /* 1 once a run put a batch on stream number i */
    char by[LAB_STREAMS_MAX][80]; /* that run and batch, for messages */
} stream_map;
static stream_map SMAP[8];

/* smap_forget - the loop L's streams forgotten (its create, its destroy) */
static void smap_forget(const lab_loop *L)
{
    for (int i = 0; i < (int)(sizeof SMAP / sizeof SMAP[0]); i++)
        if (SMAP[i].L == L)
            memset(&SMAP[i], 0, sizeof SMAP[i]);
}

/* smap_of - the loop L's map, a free one taken the first time (NULL when none is free: nothing checked) */
static stream_map *smap_of(const lab_loop *L)
{
    stream_map *free_one = NULL;
    for (int i = 0; i < (int)(sizeof SMAP / sizeof SMAP[0]); i++) {
        if (SMAP[i].L == L)
            return &SMAP[i];
        if (!SMAP[i].L && !free_one)
            free_one = &SMAP[i];
    }
    if (free_one) {
        memset(free_one, 0, sizeof *free_one);
        free_one->L = L;
    }
    return free_one;
}

/* A loop's arguments. */
typedef struct {
    int max_batch, streams, workers, slots;
} cfg;

/* One loop of the student's, with what the process held before it. */
typedef struct {
    lab_loop *L;
    cfg c;
    kit_held before;  /* before its create */
    int live;         /* mdl_exec_live() before its create */
    int threads;      /* the process's threads before its create */
    int threads_made; /* threads its create started */
    size_t primed;    /* primed_growth before its create */
    long started;     /* threads its create started (pthread_create) and did not join */
    int nnew;         /* the threads that were there after its create and not before (its workers among them), */
    long newtid[LAB_WORKERS_MAX + 8]; /* their ids */
    char text[160];   /* the create, for messages */
} loop_t;

/* loop_open_as - lab_loop_create with c, which must succeed (if_null: the message when it does not, printf format
 * taking the create's text; NULL for the plain one) and make one executor per stream */
static void loop_open_as(world *w, loop_t *lp, cfg c, const char *if_null)
{
    lp->c = c;
    snprintf(lp->text, sizeof lp->text, "lab_loop_create(model, max_batch %d, streams %d, workers %d, slots %d)",
             c.max_batch, c.streams, c.workers, c.slots);
    lp->before = kit_held_now();
    lp->primed = primed_growth;
    lp->live = mdl_exec_live();
    lp->threads = xl_threads_now();
    long started = xl_threads_started(), joined = xl_threads_joined(), then[MAX_TIDS], now[MAX_TIDS];
    int nthen = tids_now(then, MAX_TIDS);
    lp->L = lab_loop_create(w->m, c.max_batch, c.streams, c.workers, c.slots);
    smap_forget(lp->L);
    lp->started = (xl_threads_started() - started) - (xl_threads_joined() - joined);
    int nnow = tids_now(now, MAX_TIDS);
    lp->nnew = 0;
    for (int i = 0; i < nnow && lp->nnew < (int)(sizeof lp->newtid / sizeof lp->newtid[0]); i++)
        if (!has_tid(then, nthen, now[i]))
            lp->newtid[lp->nnew++] = now[i];
    if (!lp->L && if_null) {
        char msg[1200];
        snprintf(msg, sizeof msg, if_null, lp->text);
        cr_fatal("%s", msg);
    }
    cr_assert(lp->L != NULL, "%s returned NULL (see its message above): the arguments are valid and the GPU has the "
              "memory", lp->text);
    expect_no_error_left(lp->text);
    lp->threads_made = xl_threads_now() - lp->threads;
    int made = mdl_exec_live() - lp->live;
    cr_assert(made == c.streams, "%s made %d executors (mdl_exec_create, not destroyed): lab.h: one per stream, made "
              "in create", lp->text, made);
}

/* loop_open - loop_open_as with the plain message */
static void loop_open(world *w, loop_t *lp, cfg c)
{
    loop_open_as(w, lp, c, NULL);
}

/* loop_close - lab_loop_destroy, after which the process holds what it held before the create: no pinned or device
 * memory, stream, event, executor or thread of the loop's */
static void loop_close(world *w, loop_t *lp, const char *when)
{
    char what[400];
    (void)w;
    snprintf(what, sizeof what, "%s and lab_loop_destroy%s%s", lp->text, when ? " " : "", when ? when : "");
    long joined = xl_threads_joined();
    smap_forget(lp->L);
    lab_loop_destroy(lp->L);
    lp->L = NULL;
    joined = xl_threads_joined() - joined;
    cr_assert(joined >= lp->started, "%s: lab_loop_destroy joined %ld of the %ld threads lab_loop_create started: a "
              "worker not joined may still be running, on memory already freed, when destroy returns. lab.h: destroy "
              "stops and joins the workers (pthread_join)", what, joined, lp->started);
    expect_no_error_left(what);
    lp->before.heap += primed_growth - lp->primed; /* the kit's priming, not the loop's */
    kit_expect_released(lp->before, what);
    expect_threads_back(lp->threads, what);
    int live = mdl_exec_live() - lp->live;
    cr_assert(live == 0, "after %s, %d executors still live: lab.h: destroy releases every mdl_exec create made "
              "(mdl_exec_destroy)", what, live);
}

enum { M_BLOCKING, M_ASYNC, M_PIPELINED, M_COUNT };
static const char *const mode_names[] = {"lab_run_blocking", "lab_run_async", "lab_run_pipelined"};

/* run_mode - the student's run of mode */
static int run_mode(int mode, lab_loop *L, const lab_job *j)
{
    switch (mode) {
    case M_BLOCKING: return lab_run_blocking(L, j);
    case M_ASYNC: return lab_run_async(L, j);
    default: return lab_run_pipelined(L, j);
    }
}

/* What one run did. */
typedef struct {
    int mode, rc;
    lab_loop *L;
    const lab_job *job;          /* as passed (NULL for that refusal) */
    int frames, batch, first;    /* the job opened */
    int ncopies, nsyncs, nruns;  /* as counted (more than kept is a failure) */
    xl_copy_rec copies[MAX_COPIES];
    xl_sync_rec syncs[MAX_SYNCS];
    mdl_run_rec runs[MAX_RUNS];
    int ntids;
    long tids[MAX_TIDS];         /* the process's threads before the run */
    double t0_ms, t1_ms;         /* the call, host clock */
    size_t heap_grew;            /* the most the host heap in use held while it ran beyond its start and end */
    int err_lines;               /* quiet 2: the lines it wrote on stderr, */
    char err[600];               /* and what they said */
    char what[480];              /* the run, for messages */
} seen;

static seen S; /* the run under watch (large: one, static) */

/* The watched run's job: the kit's callbacks wrapped, each passed on to the kit's as it came, the host heap read
 * meanwhile at each batch's first decode and at each deliver (both after the kit's), where a buffer the run made
 * for itself is in use. What the heap held at its peak beyond both its start and its end is what the run made and
 * freed (what the CUDA runtime loads the first time, a kernel, it keeps: that is in the end too). */
typedef struct {
    lab_job kit;          /* the job as the test opened it */
    size_t heap0, peak;   /* the host heap in use when the run was called, and the most read during it */
    size_t heap1;         /* and when it returned */
    pthread_mutex_t lock; /* guards peak: the workers decode at once */
} run_wrap;

static run_wrap RW = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* heap_seen - the heap in use now, into RW.peak */
static void heap_seen(void)
{
    size_t h = kit_heap_now();
    pthread_mutex_lock(&RW.lock);
    if (h > RW.peak)
        RW.peak = h;
    pthread_mutex_unlock(&RW.lock);
}

static int wrapped_decode(int frame, uint8_t *dst, void *ctx)
{
    run_wrap *r = ctx;
    int rc = r->kit.decode(frame, dst, r->kit.ctx);
    if (r->kit.batch > 0 && frame % r->kit.batch == 0)
        heap_seen();
    return rc;
}

static void wrapped_deliver(int first, int n, const lab_result *results, void *ctx)
{
    run_wrap *r = ctx;
    r->kit.deliver(first, n, results, r->kit.ctx);
    heap_seen(); /* after: a read before would hold the deliver back, and the copy out of a result read too early
                  * would land meanwhile (hazard.buffers's pipe-result-early then passed) */
}

static void watched_call(void *ctx)
{
    seen *s = ctx;
    s->rc = -1;
    RW.heap0 = RW.peak = RW.heap1 = kit_heap_now();
    s->rc = run_mode(s->mode, s->L, s->job);
    RW.heap1 = kit_heap_now();
}

/* stream_text - a stream as messages name it */
static const char *stream_text(cudaStream_t st, char *buf, size_t len)
{
    if (!st)
        return "the legacy stream 0";
    snprintf(buf, len, "stream %p", (void *)st);
    return buf;
}

/* expect_streams_idle - every stream the run copied or ran the model on has nothing left queued */
static void expect_streams_idle(const seen *s)
{
    cudaStream_t seen_streams[MAX_STREAMS];
    int n = 0;
    for (int i = 0; i < s->ncopies + s->nruns; i++) {
        cudaStream_t st = i < s->ncopies ? s->copies[i].stream : s->runs[i - s->ncopies].stream;
        int known = 0;
        for (int k = 0; k < n; k++)
            known |= seen_streams[k] == st;
        if (known || n == MAX_STREAMS)
            continue;
        seen_streams[n++] = st;
        cudaError_t e = cudaStreamQuery(st);
        char t[40];
        if (e == cudaErrorNotReady) {
            cudaGetLastError();
            cr_fatal("%s returned while %s still had work of it queued: lab.h: a run returns once every result is "
                     "delivered and nothing of its work is still queued; wait for every batch you issued, on every "
                     "stream (a wait for the last batch's stream only is not enough when batches finish out of order)",
                     s->what, stream_text(st, t, sizeof t));
        }
        cr_assert(e == cudaSuccess, "%s: its %s reported %s (%s) afterwards", s->what, stream_text(st, t, sizeof t),
                  cudaGetErrorName(e), cudaGetErrorString(e));
    }
}

/* watch - one run of mode on L (lp_text names its create) with job (open in the source, or NULL): its copies, waits
 * and model runs recorded into S, every CUDA create inside it failing (a run creates nothing), the host heap read
 * while it runs (never RUN_HEAP_SLACK above both its start and its end: a run mallocs nothing), the job closed when
 * it returns; afterwards it holds nothing new (memory, streams, events, executors, threads) and none of its streams
 * has work left. quiet: 1, its stderr set aside (a failed run's message); 2, captured into S's err and err_lines (a refusal's
 * line, to be counted). label names the case. Returns S. */
/* prime_size - runs the kit's model once at batch b (a kit executor, buffers and stream of its own, released after)
 * unless it has run at b before; adds what that grew of the host heap to primed_growth */
static void prime_size(world *w, int b)
{
    if (b < 1 || b > LAB_BATCH_MAX || primed[b])
        return;
    primed[b] = 1;
    size_t heap = kit_held_now().heap;
    mdl_exec *e = mdl_exec_create(w->m, b);
    cr_assert(e != NULL, "grader error: the kit's mdl_exec_create failed (batch %d)", b);
    uint8_t *px;
    lab_result *res;
    XL_CHECK(cudaMalloc((void **)&px, (size_t)b * LAB_IMAGE_BYTES));
    XL_CHECK(cudaMalloc((void **)&res, (size_t)b * sizeof(lab_result)));
    cudaStream_t st = kit_stream();
    cr_assert(mdl_exec_run(e, px, res, b, st) == 0, "grader error: the kit's mdl_exec_run failed (batch %d)", b);
    XL_CHECK(cudaStreamSynchronize(st));
    mdl_exec_destroy(e);
    XL_CHECK(cudaStreamDestroy(st));
    XL_CHECK(cudaFree(px));
    XL_CHECK(cudaFree(res));
    size_t now = kit_held_now().heap;
    if (now > heap)
        primed_growth += now - heap;
}

/* prime_model - the kit's model run once at each batch size job uses (its batch, and its last, shorter one), before a
 * run of the student's is watched: what the runtime holds for those sizes is then not counted as the student's */
static void prime_model(world *w, const lab_job *job)
{
    if (job == NULL || job->batch < 1 || job->frames < 1)
        return;
    prime_size(w, imin(job->batch, job->frames));
    if (job->frames % job->batch != 0)
        prime_size(w, job->frames % job->batch);
}

static seen *watch(world *w, int mode, lab_loop *L, const char *lp_text, const lab_job *job, int quiet,
                   const char *label)
{
    static char failure[2048];
    static lab_job wrapped, job_in; /* the job handed to the run, and a copy of it (a run changes neither) */
    seen *s = &S;
    fr_log lg = fr_log_get(w->src);
    if (job) {
        RW.kit = *job;
        wrapped = *job;
        wrapped.decode = job->decode ? wrapped_decode : NULL;
        wrapped.deliver = job->deliver ? wrapped_deliver : NULL;
        wrapped.ctx = &RW;
        job_in = wrapped;
    }
    s->mode = mode, s->L = L, s->job = job ? &wrapped : NULL, s->frames = lg.frames, s->batch = lg.batch;
    s->first = lg.first, s->err_lines = 0, s->err[0] = '\0';
    snprintf(s->what, sizeof s->what, "%s%s%s (frames %d, batch %d, from source frame %d; %s%s)", mode_names[mode],
             label ? ", " : "", label ? label : "", job ? job->frames : lg.frames, job ? job->batch : lg.batch,
             lg.first, L ? "the loop of " : "L NULL", L ? lp_text : "");
    prime_model(w, job);
    kit_held before = kit_held_now();
    int threads = xl_threads_now(), live = mdl_exec_live(), fired = 0, stopped = 0;
    s->ntids = tids_now(s->tids, MAX_TIDS);
    int q = quiet == 2 ? kit_capture_begin() : quiet ? kit_quiet_begin() : -1;
    xl_copylog_start(s->copies, MAX_COPIES);
    xl_synclog_start(s->syncs, MAX_SYNCS);
    mdl_log_start(s->runs, MAX_RUNS);
    xl_copylog_hold(w->hold_copy, (uint64_t)(HOLD_MS * 1e6));
    s->t0_ms = xl_now_ms();
    kit_guarded_call(watched_call, s, &fired, &stopped, failure, sizeof failure);
    s->t1_ms = xl_now_ms();
    xl_copylog_hold(-1, 0);
    w->hold_copy = -1;
    s->nruns = mdl_log_stop();
    s->nsyncs = xl_synclog_stop();
    s->ncopies = xl_copylog_stop();
    fr_close(w->src);
    size_t ends = RW.heap0 > RW.heap1 ? RW.heap0 : RW.heap1;
    s->heap_grew = RW.peak > ends ? RW.peak - ends : 0;
    if (quiet == 2)
        s->err_lines = kit_capture_end(q, s->err, sizeof s->err);
    else if (quiet)
        kit_quiet_end(q);
    if (fired)
        cr_fatal("%s tried to create something while it ran (pinned or device memory, a stream, an event or an "
                 "executor: the kit made it fail as out of memory%s). lab.h: a run allocates nothing and creates "
                 "nothing: lab_loop_create makes every buffer, stream, event and executor once",
                 s->what, stopped ? ", and your code stopped on that error" : "");
    if (stopped)
        cr_fatal("%s: %s", s->what, failure);
    if (job)
        cr_assert(wrapped.frames == job_in.frames && wrapped.batch == job_in.batch &&
                      wrapped.decode == job_in.decode && wrapped.deliver == job_in.deliver && wrapped.ctx == job_in.ctx,
                  "%s changed the job it was handed (now frames %d, batch %d%s): it takes the job as a pointer to "
                  "const: read it, keep your own counts", s->what, wrapped.frames, wrapped.batch,
                  wrapped.decode != job_in.decode || wrapped.deliver != job_in.deliver || wrapped.ctx != job_in.ctx
                      ? ", its callbacks or ctx changed too" : "");
    cr_assert(s->ncopies <= MAX_COPIES && s->nsyncs <= MAX_SYNCS && s->nruns <= MAX_RUNS,
              "%s made %d copies, %d waits and event records and %d model runs: far more than its batches need",
              s->what, s->ncopies, s->nsyncs, s->nruns);
    cr_assert(s->heap_grew <= RUN_HEAP_SLACK, "%s: while it ran, the host heap held %zu KiB more than both before and "
              "after it (read at each batch's first decode and at each deliver; at most %zu KiB allowed): it malloc'd "
              "memory for itself and freed it. lab.h: a run allocates no memory, pinned or not: lab_loop_create makes "
              "every buffer once (the blocking loop's pageable batch and result buffers of max_batch too), and each "
              "run uses them", s->what, s->heap_grew >> 10, RUN_HEAP_SLACK >> 10);
    expect_streams_idle(s);
    int busy = fr_log_get(w->src).busy_at_close;
    cr_assert(busy == 0, "%s: %d decode calls were still running when it returned: lab.h: when a run returns, no "
              "worker is still in it (wait until every worker has left the run, a failed one too)", s->what, busy);
    kit_expect_released(before, s->what);
    expect_threads_back(threads, s->what);
    cr_assert(mdl_exec_live() == live, "%s changed the count of live executors from %d to %d: lab.h: a run creates "
              "nothing; the executors are made in create", s->what, live, mdl_exec_live());
    return s;
}

/* batch_of - the batch a job frame belongs to */
static int batch_of(const seen *s, int frame)
{
    return frame / s->batch;
}

/* expect_batches - one copy in of the batch's frames, one model run over them and one copy out of their results per
 * batch, in batch order, the three on one stream; every run on the run's thread; executors and streams one to one */
static void expect_batches(const world *w, const seen *s, const char *hint)
{
    static int in[MAX_COPIES], out[MAX_COPIES];
    int nb = batches_of(s->frames, s->batch), h = 0, d = 0;
    char t1[40], t2[40], t3[40];
    cr_assert(s->nruns == nb, "%s: %d model runs (mdl_exec_run) for its %d batches: lab.h: one per batch%s", s->what,
              s->nruns, nb, hint);
    for (int i = 0; i < s->ncopies; i++) {
        enum cudaMemcpyKind k = xl_copy_dir(&s->copies[i]);
        if (k == cudaMemcpyHostToDevice)
            in[h++] = i;
        else if (k == cudaMemcpyDeviceToHost)
            out[d++] = i;
        else
            cr_fatal("%s: copy %d of %zu bytes was neither host to device nor device to host: lab.h: a batch's frames "
                     "are copied in, its results copied out", s->what, i + 1, s->copies[i].bytes);
    }
    cr_assert(h == nb && d == nb, "%s: %d copies in and %d copies out for %d batches: lab.h: per batch, one copy in of "
              "its frames and one copy out of its results%s", s->what, h, d, nb, hint);
    for (int b = 0; b < nb; b++) {
        int n = batch_size(s->frames, s->batch, b);
        const mdl_run_rec *r = &s->runs[b];
        const xl_copy_rec *ci = &s->copies[in[b]], *co = &s->copies[out[b]];
        cr_assert(r->result == 0, "%s: batch %d's model run (mdl_exec_run) returned %d (see its message above)",
                  s->what, b, r->result);
        cr_assert(r->batch == n, "%s: model run %d was over %d frames, but batch %d holds %d (frames %d .. %d): runs "
                  "go in batch order, each over its batch's frames (the last batch shorter, never padded)%s", s->what,
                  b, r->batch, b, n, b * s->batch, b * s->batch + n - 1, hint);
        cr_assert(ci->bytes == (size_t)n * LAB_IMAGE_BYTES && co->bytes == (size_t)n * sizeof(lab_result),
                  "%s: batch %d (%d frames) was copied in as %zu bytes and out as %zu bytes, not %zu and %zu: one copy "
                  "in of the batch's frames, one copy out of its results%s", s->what, b, n, ci->bytes, co->bytes,
                  (size_t)n * LAB_IMAGE_BYTES, (size_t)n * sizeof(lab_result), hint);
        cr_assert(ci->stream == r->stream && co->stream == r->stream,
                  "%s: batch %d was copied in on %s, run through the model on %s and copied out on %s: lab.h: a "
                  "batch's copy in, model run and copy out go on one stream, in that order (a copy on another stream "
                  "than the model runs ahead of it or after it with nothing between)%s", s->what, b,
                  stream_text(ci->stream, t1, sizeof t1), stream_text(r->stream, t2, sizeof t2),
                  stream_text(co->stream, t3, sizeof t3), hint);
        cr_assert(r->tid == w->caller, "%s: batch %d's model run was queued by thread %ld, not by the thread that "
                  "called the run (%ld): lab.h: the run's thread issues every batch", s->what, b, r->tid, w->caller);
        for (int a = 0; a < b; a++) {
            const mdl_run_rec *p = &s->runs[a];
            cr_assert(0 == (p->exec == r->exec && p->stream != r->stream),
                      "%s: one executor ran batch %d on %s and batch %d on %s: lab.h: one executor per stream, never "
                      "shared (two streams' runs would overwrite each other's activations)%s", s->what, a,
                      stream_text(p->stream, t1, sizeof t1), b, stream_text(r->stream, t2, sizeof t2), hint);
            cr_assert(0 == (p->exec != r->exec && p->stream == r->stream),
                      "%s: %s ran batch %d with one executor and batch %d with another: lab.h: each stream has its own "
                      "executor, and uses it", s->what, stream_text(r->stream, t1, sizeof t1), a, b);
        }
    }
}

/* expect_mode_shape - what the mode says of threads and streams: blocking and async decode on the run's thread,
 * pipelined never, and on all W workers when there are at least W frames; blocking runs every batch on one stream,
 * async on two in turn (one when the loop has one), pipelined batch i on stream i mod streams, every stream used;
 * and each of the loop's streams keeps its number from run to run (stream 0 is the one every blocking run uses) */
static void expect_mode_shape(const world *w, const seen *s, const cfg *c)
{
    fr_log lg = fr_log_get(w->src);
    int nb = batches_of(s->frames, s->batch);
    char t1[40], t2[40];
    for (int f = 0; f < s->frames; f++) {
        long tid = lg.frame[f].tid;
        if (s->mode != M_PIPELINED)
            cr_assert(tid == w->caller, "%s: frame %d (batch %d) was decoded on thread %ld, not on the run's thread "
                      "(%ld): lab.h: %s decodes on the thread that called it (no workers)", s->what, f,
                      batch_of(s, f), tid, w->caller, mode_names[s->mode]);
        else
            cr_assert(tid != w->caller, "%s: frame %d (batch %d) was decoded on the run's own thread: lab.h: every "
                      "decode on a worker, none on the thread that called the run", s->what, f, batch_of(s, f));
    }
    int ways = s->mode == M_BLOCKING ? 1 : s->mode == M_ASYNC ? imin(2, c->streams) : c->streams;
    for (int b = 0; b < nb; b++) {
        cudaStream_t st = s->runs[b].stream;
        if (b >= ways)
            cr_assert(st == s->runs[b - ways].stream, "%s: batch %d went on %s, batch %d on %s: lab.h: %s", s->what,
                      b - ways, stream_text(s->runs[b - ways].stream, t1, sizeof t1), b, stream_text(st, t2, sizeof t2),
                      s->mode == M_BLOCKING ? "every batch on the loop's first stream"
                      : s->mode == M_ASYNC  ? "batches on streams 0 and 1 of the loop in turn"
                                            : "batch i on stream i mod streams of the loop");
        for (int a = imax(0, b - ways + 1); a < b; a++)
            cr_assert(st != s->runs[a].stream, "%s: batches %d and %d both went on %s, with %d streams to take in turn: "
                      "lab.h: %s", s->what, a, b, stream_text(st, t1, sizeof t1), ways,
                      s->mode == M_ASYNC ? "streams 0 and 1 of the loop in turn (stream 0 alone when it has one)"
                                         : "batch i on stream i mod streams, every stream used");
    }
    if (s->mode == M_PIPELINED && s->frames >= c->workers) {
        int threads = fr_distinct_threads(w->src);
        cr_assert(threads == c->workers, "%s: %d distinct threads decoded its %d frames, not its %d workers: lab.h: "
                  "all W workers decode when there are at least W frames (however fast each wakes: give each worker "
                  "a frame of its own to start with)", s->what, threads, s->frames, c->workers);
    }
    stream_map *sm = smap_of(s->L);
    for (int b = 0; sm && b < nb; b++) {
        int i = b % ways;
        cudaStream_t st = s->runs[b].stream;
        if (!sm->seen[i]) {
            sm->seen[i] = 1, sm->st[i] = st;
            snprintf(sm->by[i], sizeof sm->by[i], "%s's batch %d", mode_names[s->mode], b);
            continue;
        }
        cr_assert(st == sm->st[i], "%s: batch %d went on %s, but stream %d of this loop is %s (%s, in an earlier run, "
                  "went there): lab.h: %s; the loop's streams keep their numbers from run to run (the blocking loop "
                  "uses stream 0, the async streams 0 and 1, the pipelined batch i stream i mod streams, counted "
                  "from 0 in every run)", s->what, b, stream_text(st, t1, sizeof t1), i,
                  stream_text(sm->st[i], t2, sizeof t2), sm->by[i],
                  s->mode == M_BLOCKING ? "every batch on the loop's first stream"
                  : s->mode == M_ASYNC  ? "batch i on stream i mod 2 of the loop (stream 0 alone when it has one)"
                                        : "batch i on stream i mod streams of the loop");
    }
}

/* expect_ok_run - the run returned 0 and did its job: every frame decoded once, delivered once on the run's thread,
 * right and in order (want: the job's right results); no wait on the device or the legacy stream; every copy a
 * cudaMemcpyAsync on a non-blocking stream; batches, streams and executors as lab.h says. hint ends the message of a
 * wrong result. */
static void expect_ok_run(const world *w, const seen *s, const cfg *c, const char *hint)
{
    static char why[1024];
    cr_assert(s->rc == 0, "%s returned %d (see its message above)", s->what, s->rc);
    expect_no_error_left(s->what);
    fr_log lg = fr_log_get(w->src);
    cr_assert(lg.bad_range == 0, "%s: %d decode or deliver calls named frames outside 0 .. %d: is the last batch "
              "padded to a full one, or a count off by one?", s->what, lg.bad_range, s->frames - 1);
    cr_assert(lg.late == 0, "%s: %d decode calls came after it returned: lab.h: the workers stop when the run returns",
              s->what, lg.late);
    for (int f = 0; f < s->frames; f++)
        if (lg.frame[f].decodes != 1)
            cr_fatal("%s: frame %d (batch %d) was decoded %d times: lab.h: each frame once%s", s->what, f,
                     batch_of(s, f), lg.frame[f].decodes, hint);
    for (int d = 0; d < lg.delivers; d++)
        cr_assert(lg.deliver[d].tid == w->caller, "%s: the deliver of frames %d .. %d was called on thread %ld, not "
                  "on the thread that called the run (%ld): lab.h: deliver on the run's thread, in order", s->what,
                  lg.deliver[d].first, lg.deliver[d].first + lg.deliver[d].n - 1, lg.deliver[d].tid, w->caller);
    int bad = fr_check(w->src, w->want, s->frames, why, sizeof why);
    cr_assert(bad == 0, "%s: %d of its %d frames came back wrong: %s%s", s->what, bad, s->frames, why, hint);
    kit_expect_no_device_sync(s->syncs, s->nsyncs, s->what);
    kit_expect_nonblocking_streams(s->copies, s->ncopies, s->what);
    expect_batches(w, s, hint);
    expect_mode_shape(w, s, c);
}

/* expect_nothing_done - the run did no work: no decode, deliver, copy or model run, no CUDA error left */
static void expect_nothing_done(const world *w, const seen *s, const char *rule)
{
    fr_log lg = fr_log_get(w->src);
    int decodes = lg.bad_range;
    for (int f = 0; f < lg.frames; f++)
        decodes += lg.frame[f].decodes;
    cr_assert(decodes == 0 && lg.delivers == 0 && s->ncopies == 0 && s->nruns == 0,
              "%s returned %d after %d decodes, %d delivers, %d copies and %d model runs: lab.h: %s, before any work",
              s->what, s->rc, decodes, lg.delivers, s->ncopies, s->nruns, rule);
    expect_no_error_left(s->what);
}

/* exact_runs - the job of frames at batch from source frame first, in each mode in turn on lp, every frame checked
 * (frames 0: each returns 0 having done nothing); label names the case */
static void exact_runs(world *w, loop_t *lp, int frames, int batch, int first, const char *label)
{
    expect_frames(w, first, frames);
    for (int mode = 0; mode < M_COUNT; mode++) {
        lab_job j = open_job(w, frames, batch, first);
        seen *s = watch(w, mode, lp->L, lp->text, &j, 0, label);
        if (frames == 0) {
            cr_assert(s->rc == 0, "%s returned %d: lab.h: frames 0 returns 0, nothing done", s->what, s->rc);
            expect_nothing_done(w, s, "frames 0: 0, nothing done");
        } else
            expect_ok_run(w, s, &lp->c, "");
    }
}

/* ===== Part D: batch.fits ===== */

#define FITS_STREAMS 3
#define FITS_SLOTS 3
#define FITS_FRAMES 400       /* room for 2 x max_batch + a short batch, max_batch 80 to 120 */
#define FITS_SLACK_PER_STREAM 4096 /* bytes a stream's buffers may take beyond their frames' and results' (alignment) */

/* exec_dev_bytes - the device memory one of the kit's executors of max_batch frames takes, measured: one made and
 * destroyed, the kit's record of device buffers read around it (its cuBLAS handle comes from the kit's pool) */
static size_t exec_dev_bytes(const world *w, int max_batch)
{
    size_t before = xl_resources_now().dev_bytes;
    mdl_exec *e = mdl_exec_create(w->m, max_batch);
    cr_assert(e != NULL, "grader error: the kit's mdl_exec_create failed (max_batch %d)", max_batch);
    size_t bytes = xl_resources_now().dev_bytes - before;
    mdl_exec_destroy(e);
    return bytes;
}

XL_TEST(batch, fits, 5, XL_GPU,
        "a loop created at lab_max_batch of a free memory drawn near a few hundred MiB takes no more device memory "
        "than the formula counts (per stream: pixels, results and an executor of max_batch frames), and runs every "
        "mode correctly",
        4)
{
    world w;
    world_open(&w, FITS_FRAMES);
    int first = rnd(0, FRAME_FIRST_MAX), target = rnd(80, 120);
    expect_frames(&w, first, FITS_FRAMES);
    /* free memory anywhere from the need at target to one byte short of the need at target + 1 */
    u128 lo = need128(target, FITS_STREAMS), hi = need128(target + 1, FITS_STREAMS);
    size_t free_b = (size_t)(lo + (u128)kit_rand(0, (uint64_t)(hi - lo - 1)));
    int b = lab_max_batch(free_b, FITS_STREAMS), want = ref_max_batch(free_b, FITS_STREAMS);
    cr_assert(b == want, "lab_max_batch(free_bytes %zu, streams %d) = %d, want %d", free_b, FITS_STREAMS, b, want);
    size_t exec = exec_dev_bytes(&w, b);
    cr_assert(exec <= MDL_EXEC_FIXED + (size_t)b * MDL_EXEC_PER_FRAME, "grader error: the kit's executor of %d frames "
              "takes %zu bytes of device memory, more than lab.h's MDL_EXEC_FIXED + batch x MDL_EXEC_PER_FRAME", b, exec);
    cfg c = {b, FITS_STREAMS, rnd(1, imin(4, max_workers())), FITS_SLOTS};
    loop_t lp;
    loop_open(&w, &lp, c);
    size_t dev = xl_resources_now().dev_bytes - lp.before.res.dev_bytes;
    size_t own = dev > FITS_STREAMS * exec ? dev - FITS_STREAMS * exec : 0;
    size_t allowed = FITS_STREAMS * ((size_t)b * (LAB_IMAGE_BYTES + sizeof(lab_result)) + FITS_SLACK_PER_STREAM);
    cr_assert(own <= allowed, "%s took %zu bytes of device memory besides its %d executors' (%zu bytes each), more "
              "than the %zu the formula of lab_max_batch counts (per stream a pixel buffer of max_batch frames and a "
              "result buffer of max_batch lab_results): with lab_max_batch(%zu, %d) = %d it would not fit on a GPU "
              "with just that much free. A device buffer per slot, or one of more than max_batch frames?", lp.text,
              own, FITS_STREAMS, exec, allowed, free_b, FITS_STREAMS, b);
    int frames = 2 * b + rnd(1, b - 1);
    exact_runs(&w, &lp, frames, b, first, "at lab_max_batch of the free memory");
    loop_close(&w, &lp, NULL);
    world_close(&w);
}

/* ===== Part E: hazard.buffers ===== */

/* hazard_case - one hazard made certain: every model run waits SLOW_NS on its stream before it reads its pixels
 * (between_ns between its steps too), run hold_run (>= 0) holds its stream HOLD_MS after its model, and copy in
 * hold_copy (>= 0, counted from the run's first) waits HOLD_MS on its stream before it reads its slot; nb batches of
 * HZ_BATCH (the last one sometimes short) in mode on a loop of c; name and hint say what a wrong result means */
static void hazard_case(world *w, const char *name, int mode, cfg c, int nb, uint64_t between_ns, int hold_run,
                        int hold_copy, const char *hint)
{
    int frames = nb * HZ_BATCH - rnd(0, HZ_BATCH / 2), first = rnd(0, FRAME_FIRST_MAX);
    char label[300], h[600];
    expect_frames(w, first, frames); /* before the model is slowed */
    loop_t lp;
    loop_open(w, &lp, c);
    snprintf(label, sizeof label, "the hazard '%s' (every model run waits %.0f ms on its stream before it reads its "
             "pixels%s%s%s)", name, SLOW_NS / 1e6, between_ns ? " and 1 ms between its steps" : "",
             hold_run >= 0 ? ", and one batch's stream held 20 ms after its model run" : "",
             hold_copy >= 0 ? ", and one batch's copy in held 20 ms on its stream" : "");
    snprintf(h, sizeof h, ". %s", hint);
    mdl_slow(SLOW_NS, between_ns);
    if (hold_run >= 0)
        mdl_hold_run(hold_run, HOLD_MS);
    lab_job j = open_job(w, frames, HZ_BATCH, first);
    w->hold_copy = hold_copy;
    seen *s = watch(w, mode, lp.L, lp.text, &j, 0, label);
    mdl_hold_run(-1, 0);
    mdl_slow(0, 0);
    if (hold_run >= 0)
        snprintf(s->what + strlen(s->what), sizeof s->what - strlen(s->what), " [batch %d held]", hold_run);
    if (hold_copy >= 0)
        snprintf(s->what + strlen(s->what), sizeof s->what - strlen(s->what), " [copy in %d held]", hold_copy);
    expect_ok_run(w, s, &c, h);
    loop_close(w, &lp, NULL);
}

XL_TEST(hazard, buffers, 15, XL_GPU,
        "no pinned slot refilled before its copy in read it, no device buffer overwritten while the model reads it, "
        "no result read before it arrived, no executor shared between streams, results in order when batches finish "
        "out of order (model slowed to 2 ms; one batch, or its copy in, held up 20 ms)",
        6)
{
    world w;
    world_open(&w, 24 * HZ_BATCH);
    int mw = max_workers(), S;
    static const char slot_hint[] =
        "A pinned slot refilled before its copy in read it gives a batch later frames' pixels: before a slot is "
        "written again, wait on an event recorded right after that slot's copy in (cudaEventSynchronize)";
    static const char dev_hint[] =
        "A pinned slot refilled before its copy in read it (wait on an event recorded after that copy in before "
        "writing the slot again), or a device buffer overwritten while the model still read it (a batch's copy in, "
        "model run and copy out on one stream: the stream's order then guards its device buffers)";
    static const char early_hint[] =
        "A result read before its copy out landed: before deliver, wait for an event recorded after the batch's copy "
        "out (not after its copy in or its model run), or for its stream";
    static const char order_hint[] =
        "Batches that finish out of order must still be delivered in order: wait for batch i's own event before "
        "delivering it, and before returning wait for every batch issued, on every stream";

    /* batch k's copy in held: its slot is the one batch k + 2 is decoded into meanwhile (the async loop's two in
     * turn), and a worker decodes batch k + slots into it once batch k is issued */
    hazard_case(&w, "slot reuse", M_ASYNC, (cfg){HZ_BATCH, rnd(2, 4), rnd(1, mw), 2}, rnd(12, 20), 0, -1, rnd(1, 4),
                slot_hint);
    S = rnd(2, 4);
    hazard_case(&w, "slot reuse", M_PIPELINED, (cfg){HZ_BATCH, S, rnd(2, mw), rnd(2, 8)}, rnd(12, 20), 0, -1,
                rnd(1, 3), slot_hint);
    S = rnd(2, 4);
    hazard_case(&w, "slot and device buffer reuse", M_PIPELINED, (cfg){HZ_BATCH, S, rnd(2, mw), S + 1}, rnd(12, 20),
                0, -1, -1, dev_hint);
    S = rnd(2, 4);
    hazard_case(&w, "slot and device buffer reuse", M_PIPELINED, (cfg){HZ_BATCH, S, rnd(2, mw), rnd(S + 2, 8)},
                rnd(12, 20), 0, -1, -1, dev_hint);
    S = rnd(2, 4);
    hazard_case(&w, "executor shared", M_PIPELINED, (cfg){HZ_BATCH, S, rnd(2, mw), rnd(S + 1, 8)}, rnd(12, 16),
                BETWEEN_NS, -1, -1,
                "Two streams' runs on one executor overwrite each other's activations: lab.h: one mdl_exec per stream, "
                "made in create, and batch i run with stream i mod streams' executor");
    for (int mode = 0; mode < M_COUNT; mode++) {
        S = rnd(1, 4);
        hazard_case(&w, "result read early", mode, (cfg){HZ_BATCH, S, rnd(1, mw), rnd(2, 6)}, rnd(6, 10), 0, 1, -1,
                    early_hint);
    }
    S = rnd(2, 4);
    hazard_case(&w, "batches finish out of order", M_PIPELINED, (cfg){HZ_BATCH, S, rnd(2, mw), rnd(S + 1, 8)},
                rnd(10, 14), 0, rnd(1, S - 1), -1, order_hint);
    S = rnd(2, 4);
    int nb = rnd(8, 12); /* the second-last batch held: still out when the last is issued, on another stream */
    hazard_case(&w, "a late batch held", M_PIPELINED, (cfg){HZ_BATCH, S, rnd(2, mw), rnd(S + 1, 8)}, nb, 0, nb - 2, -1,
                order_hint);
    S = rnd(2, 4);
    int slots;
    do
        slots = rnd(S + 1, 9);
    while (slots % S == 0); /* batch 2 + slots then goes on another stream than the held batch 2 */
    hazard_case(&w, "result slot reuse", M_PIPELINED, (cfg){HZ_BATCH, S, rnd(2, mw), slots}, slots + rnd(5, 8), 0, 2, -1,
                "A result slot reused before its batch was delivered: a later batch's copy out landed in it while "
                "batch 2 waited. lab.h: a result slot is refilled only once its batch has been delivered (at most "
                "slots batches in flight)");
    world_close(&w);
}

/* ===== Part F: loop.args ===== */

/* own_lines - the lines of text (what a call wrote on stderr) that are not the kit's: an executor that could not be
 * made says why itself, in lines beginning "mdl_" */
static int own_lines(const char *text)
{
    int n = 0;
    for (const char *c = text; *c;) {
        const char *end = strchr(c, '\n');
        n += strncmp(c, "mdl_", 4) != 0;
        c = end ? end + 1 : c + strlen(c);
    }
    return n;
}

/* try_create - lab_loop_create(m, c) with its first create failing (and thread creation counted as one), its stderr
 * captured into said (len bytes): *fired is 1 when it tried to create something; what it returned */
static lab_loop *try_create(const mdl_model *m, cfg c, int *fired, char *said, size_t len)
{
    int q = kit_capture_begin();
    xl_fault_threads(1);
    xl_fail_create_after(0);
    lab_loop *L = lab_loop_create(m, c.max_batch, c.streams, c.workers, c.slots);
    *fired = xl_fault_fired();
    xl_fail_create_after(-1);
    xl_fault_threads(0);
    kit_capture_end(q, said, len);
    return L;
}

/* expect_create - lab_loop_create(m, c) with its first create made to fail: not accepted, it refuses with NULL before
 * creating anything; accepted (c valid), it must have tried that create and returned NULL; either way it holds
 * nothing afterwards. why names the case. */
static void expect_create(const mdl_model *m, cfg c, int accepted, const char *why)
{
    char what[400];
    snprintf(what, sizeof what, "lab_loop_create(%s, max_batch %d, streams %d, workers %d, slots %d) (%s)",
             m ? "model" : "NULL", c.max_batch, c.streams, c.workers, c.slots, why);
    char said[2048];
    kit_held before = kit_held_now();
    int threads = xl_threads_now(), live = mdl_exec_live(), fired = 0;
    lab_loop *L = try_create(m, c, &fired, said, sizeof said);
    if (L) {
        lab_loop_destroy(L);
        cudaGetLastError();
    }
    if (accepted) {
        cr_assert(fired, "%s returned %s without creating anything: lab.h: max_batch 1 .. %d, streams 1 .. %d, workers "
                  "1 .. %d, slots 2 .. %d are valid", what, L ? "a loop" : "NULL", LAB_BATCH_MAX, LAB_STREAMS_MAX,
                  LAB_WORKERS_MAX, LAB_SLOTS_MAX);
        cr_assert(L == NULL, "%s: its first create failed (the kit made it fail as out of memory), yet it returned a "
                  "loop: check the result of every call that creates something", what);
    } else {
        cr_assert(L == NULL, "%s returned a loop: lab.h: NULL, with a one-line message, for %s", what, why);
        cr_assert(fired == 0, "%s returned NULL, but only after it began creating (memory, a stream, an event, an executor "
                  "or a thread): check every argument first", what);
    }
    if (L == NULL) /* 0: try_create captured it; the lines the kit's executor wrote are not the student's */
        kit_expect_one_line(0, own_lines(said), said, what, "NULL");
    if (fired)
        cudaGetLastError(); /* the out-of-memory error the kit planted */
    expect_no_error_left(what);
    kit_expect_released(before, what);
    expect_threads_back(threads, what);
    cr_assert(mdl_exec_live() == live, "after %s, %d executors live that were not before", what,
              mdl_exec_live() - live);
}

/* expect_run_refused - the run of mode refuses (L, and the open job as modified into j, or NULL) with -1 before any
 * work; why names the bad argument */
static void expect_run_refused(world *w, int mode, loop_t *lp, lab_loop *L, const lab_job *j, const char *why)
{
    char label[200];
    snprintf(label, sizeof label, "%s", why);
    seen *s = watch(w, mode, L, lp->text, j, 2, label);
    cr_assert(s->rc == -1, "%s (every other argument valid) returned %d: lab.h: -1, with a one-line message, before any "
              "work", s->what, s->rc);
    expect_nothing_done(w, s, "a bad argument is refused with -1");
    kit_expect_one_line(0, s->err_lines, s->err, s->what, "-1"); /* 0: watch captured it */
}

/* refuse_runs - every rule of the runs, each alone, then with frames 0 (where an early return could skip it) */
static void refuse_runs(world *w, loop_t *lp, int mode)
{
    int mb = lp->c.max_batch, b = rnd(1, mb), f = rnd(1, 3 * mb), first = rnd(0, FRAME_FIRST_MAX);
    for (int zero = 0; zero < 2; zero++) {
        int n = zero ? 0 : f;
        lab_job j = open_job(w, n, b, first);
        expect_run_refused(w, mode, lp, NULL, &j, zero ? "L NULL, frames 0" : "L NULL");
        j = open_job(w, n, b, first);
        expect_run_refused(w, mode, lp, lp->L, NULL, zero ? "job NULL, frames 0" : "job NULL");
        j = open_job(w, n, b, first);
        j.decode = NULL;
        expect_run_refused(w, mode, lp, lp->L, &j, zero ? "decode NULL, frames 0" : "decode NULL");
        j = open_job(w, n, b, first);
        j.deliver = NULL;
        expect_run_refused(w, mode, lp, lp->L, &j, zero ? "deliver NULL, frames 0" : "deliver NULL");
        j = open_job(w, n, 0, first);
        expect_run_refused(w, mode, lp, lp->L, &j, zero ? "batch 0, frames 0" : "batch 0");
        j = open_job(w, n, rnd(INT_MIN, -1), first);
        expect_run_refused(w, mode, lp, lp->L, &j, zero ? "batch < 0, frames 0" : "batch < 0");
        j = open_job(w, n, mb + 1, first);
        expect_run_refused(w, mode, lp, lp->L, &j, zero ? "batch max_batch + 1, frames 0" : "batch max_batch + 1");
        j = open_job(w, n, rnd(mb + 2, INT_MAX), first);
        expect_run_refused(w, mode, lp, lp->L, &j, zero ? "batch > max_batch, frames 0" : "batch > max_batch");
    }
    lab_job j = open_job(w, -1, b, first);
    expect_run_refused(w, mode, lp, lp->L, &j, "frames -1");
    j = open_job(w, rnd(INT_MIN, -2), b, first);
    expect_run_refused(w, mode, lp, lp->L, &j, "frames < 0");
}

/* The create whose every failure path kit_expect_create_failures takes. */
typedef struct {
    const mdl_model *m;
    cfg c;
    char text[200];
} create_ctx;

/* create_attempt - kit_expect_create_failures' attempt: the create, then destroy; 1 when it returned NULL, which
 * must leave no thread and no executor, with one line of its own on stderr (captured) */
static int create_attempt(void *ctx)
{
    create_ctx *a = ctx;
    char said[2048];
    int threads = xl_threads_now(), live = mdl_exec_live();
    long started = xl_threads_started(), joined = xl_threads_joined();
    int q = kit_capture_begin();
    lab_loop *L = lab_loop_create(a->m, a->c.max_batch, a->c.streams, a->c.workers, a->c.slots);
    kit_capture_end(q, said, sizeof said);
    if (L)
        lab_loop_destroy(L);
    if (L == NULL) {
        char call[sizeof a->text + 80];
        snprintf(call, sizeof call, "%s, when one of its creates failed (the kit made it fail as out of memory),",
                 a->text);
        kit_expect_one_line(q, own_lines(said), said, call, "NULL");
    }
    started = xl_threads_started() - started, joined = xl_threads_joined() - joined;
    cr_assert(joined >= started, "%s%s joined %ld of the %ld threads it started: a worker not joined may still be "
              "running when the call returns. Join (pthread_join) every thread started before returning", a->text,
              L ? " and lab_loop_destroy" : ", when one of its creates failed,", joined, started);
    int n = threads_settled(threads);
    cr_assert(n <= threads, "%s%s left %d threads running: a create that fails half way stops and joins the workers it "
              "started (a thread that did not start counts as a failure too)", a->text,
              L ? " and lab_loop_destroy" : ", when one of its creates failed,", n - threads);
    cr_assert(mdl_exec_live() == live, "%s%s left %d executors live: release each one made (mdl_exec_destroy) before "
              "returning NULL", a->text, L ? " and lab_loop_destroy" : ", when one of its creates failed,",
              mdl_exec_live() - live);
    return L == NULL;
}

XL_TEST(loop, args, 5, XL_GPU,
        "lab_loop_create and the runs refuse bad arguments before any work; a create that fails at any of its "
        "allocations, streams, events, executors or threads returns NULL holding nothing; destroy(NULL) is harmless",
        30)
{
    world w;
    world_open(&w, 3 * 16);
    int mw = max_workers();
    cfg good = {rnd(1, 16), rnd(1, 4), rnd(1, imin(4, mw)), rnd(2, 4)}, c;
    /* every rule alone */
    c = good, c.max_batch = 0, expect_create(w.m, c, 0, "max_batch 0");
    c = good, c.max_batch = rnd(INT_MIN, -1), expect_create(w.m, c, 0, "max_batch < 0");
    c = good, c.max_batch = LAB_BATCH_MAX + 1, expect_create(w.m, c, 0, "max_batch 4097");
    c = good, c.max_batch = rnd(LAB_BATCH_MAX + 2, INT_MAX), expect_create(w.m, c, 0, "max_batch > 4096");
    c = good, c.streams = 0, expect_create(w.m, c, 0, "streams 0");
    c = good, c.streams = rnd(INT_MIN, -1), expect_create(w.m, c, 0, "streams < 0");
    c = good, c.streams = LAB_STREAMS_MAX + 1, expect_create(w.m, c, 0, "streams 9");
    c = good, c.workers = 0, expect_create(w.m, c, 0, "workers 0");
    c = good, c.workers = rnd(INT_MIN, -1), expect_create(w.m, c, 0, "workers < 0");
    c = good, c.workers = LAB_WORKERS_MAX + 1, expect_create(w.m, c, 0, "workers 13");
    c = good, c.slots = 1, expect_create(w.m, c, 0, "slots 1");
    c = good, c.slots = rnd(INT_MIN, 0), expect_create(w.m, c, 0, "slots < 1");
    c = good, c.slots = LAB_SLOTS_MAX + 1, expect_create(w.m, c, 0, "slots 17");
    c = good, c.slots = rnd(LAB_SLOTS_MAX + 2, INT_MAX), expect_create(w.m, c, 0, "slots > 16");
    expect_create(NULL, good, 0, "model NULL");
    /* the ends are valid: the create tries (the kit fails its first create, so nothing large is made) */
    c = good, c.max_batch = LAB_BATCH_MAX, expect_create(w.m, c, 1, "max_batch 4096, the largest valid");
    c = good, c.max_batch = 1, expect_create(w.m, c, 1, "max_batch 1, the smallest valid");
    c = good, c.streams = LAB_STREAMS_MAX, expect_create(w.m, c, 1, "streams 8, the most valid");
    c = good, c.workers = LAB_WORKERS_MAX, expect_create(w.m, c, 1, "workers 12, the most valid");
    c = good, c.slots = LAB_SLOTS_MAX, expect_create(w.m, c, 1, "slots 16, the most valid");
    c = good, c.slots = 2, c.streams = 1, c.workers = 1,
    expect_create(w.m, c, 1, "streams 1, workers 1, slots 2, the least valid");

    /* the runs' rules, on a valid loop */
    loop_t lp;
    loop_open(&w, &lp, (cfg){rnd(4, 16), rnd(1, 3), rnd(1, imin(4, mw)), rnd(2, 4)});
    for (int mode = 0; mode < M_COUNT; mode++)
        refuse_runs(&w, &lp, mode);
    loop_close(&w, &lp, "after refused runs");

    /* destroy(NULL) */
    kit_held before = kit_held_now();
    lab_loop_destroy(NULL);
    expect_no_error_left("lab_loop_destroy(NULL)");
    kit_expect_released(before, "lab_loop_destroy(NULL)");

    /* every create inside lab_loop_create fails in turn: allocations, streams, events, executors, threads */
    create_ctx a = {w.m, {rnd(1, 8), rnd(2, 3), rnd(2, imax(2, imin(4, mw))), rnd(2, 4)}, ""};
    snprintf(a.text, sizeof a.text, "lab_loop_create(model, max_batch %d, streams %d, workers %d, slots %d)",
             a.c.max_batch, a.c.streams, a.c.workers, a.c.slots);
    /* the runtime's own tables grow as creates and destroys of streams, events and threads repeat, less each time
     * (measured on an H100: 192, then 13, then 4 bytes a cycle over rounds of 62 of the reference's; after 64 cycles
     * here, still 77 and 30 bytes a call in one grading of 16): the heap check of kit_expect_create_failures starts
     * after those first cycles */
    for (int k = 0; k < CREATE_WARM_CYCLES; k++)
        create_attempt(&a);
    xl_fault_threads(1);
    long creates = kit_expect_create_failures(create_attempt, &a, a.text);
    xl_fault_threads(0);
    cr_assert(creates >= a.c.streams * 2 + a.c.workers, "%s made only %ld creates (allocations, streams, events, "
              "executors, threads): lab.h: it makes everything the runs need: per stream a stream, buffers and an "
              "executor, and its workers", a.text, creates);
    world_close(&w);
}

/* ===== Part G: loop.modes ===== */

/* waited_after - 1 when copy k of the run was waited for before its next copy was asked: a cudaStreamSynchronize of
 * its stream, or a cudaEventSynchronize of an event last recorded on its stream after it */
static int waited_after(const seen *s, int k)
{
    cudaStream_t st = s->copies[k].stream;
    for (int i = 0; i < s->nsyncs; i++) {
        const xl_sync_rec *r = &s->syncs[i];
        if (r->copies_before != k + 1 || r->result != cudaSuccess)
            continue;
        if (r->kind == XL_SYNC_STREAM && r->stream == st)
            return 1;
        if (r->kind == XL_SYNC_EVENT)
            for (int j = i - 1; j >= 0; j--)
                if (s->syncs[j].kind == XL_SYNC_RECORD && s->syncs[j].event == r->event) {
                    if (s->syncs[j].stream == st && s->syncs[j].copies_before >= k + 1)
                        return 1;
                    break;
                }
    }
    return 0;
}

/* copy_in_of - the index in s->copies of batch b's copy in (expect_batches has checked there is one per batch) */
static int copy_in_of(const seen *s, int b)
{
    for (int i = 0, h = 0; i < s->ncopies; i++)
        if (xl_copy_dir(&s->copies[i]) == cudaMemcpyHostToDevice && h++ == b)
            return i;
    return -1;
}

/* copy_out_of - the index in s->copies of batch b's copy out */
static int copy_out_of(const seen *s, int b)
{
    for (int i = 0, d = 0; i < s->ncopies; i++)
        if (xl_copy_dir(&s->copies[i]) == cudaMemcpyDeviceToHost && d++ == b)
            return i;
    return -1;
}

/* expect_buffers - every batch was decoded into one buffer of its own, at its frames' places, copied in from there;
 * pinned (want_pinned) or pageable, and its results copied out into pinned or pageable memory likewise */
static void expect_buffers(const world *w, const seen *s, int want_pinned)
{
    fr_log lg = fr_log_get(w->src);
    const char *kind = want_pinned ? "pinned" : "pageable";
    for (int b = 0; b < batches_of(s->frames, s->batch); b++) {
        const uint8_t *base = lg.frame[b * s->batch].dst;
        for (int f = b * s->batch; f < b * s->batch + batch_size(s->frames, s->batch, b); f++)
            cr_assert(lg.frame[f].dst == base + (size_t)(f - b * s->batch) * LAB_IMAGE_BYTES,
                      "%s: frame %d (batch %d) was decoded to %p, not to its place in its batch's buffer (%p + %d "
                      "frames): decode each frame of a batch into one buffer, in order", s->what, f, b,
                      (const void *)lg.frame[f].dst, (const void *)base, f - b * s->batch);
        cr_assert(kit_is_pinned(base) == want_pinned, "%s: batch %d was decoded into %s memory: lab.h: %s",
                  s->what, b, want_pinned ? "pageable" : "pinned",
                  want_pinned ? "the pinned slots (cudaMallocHost in create)"
                              : "the blocking loop decodes into one pageable batch buffer (malloc), as .to('cuda') "
                                "from pageable memory does");
        const xl_copy_rec *ci = &s->copies[copy_in_of(s, b)], *co = &s->copies[copy_out_of(s, b)];
        cr_assert(ci->src == base, "%s: batch %d was decoded into %p but copied in from %p: copy in the buffer its "
                  "frames were decoded into", s->what, b, (const void *)base, ci->src);
        cr_assert(kit_is_pinned(co->dst) == want_pinned, "%s: batch %d's results were copied out into %s memory, not "
                  "%s: lab.h: %s", s->what, b, want_pinned ? "pageable" : "pinned", kind,
                  want_pinned ? "the pinned result slots" : "the blocking loop's pageable result buffer");
        cr_assert(kit_is_write_combined(co->dst) == 0, "%s: batch %d's results were copied out into write-combined "
                  "memory, which the host reads uncached, a load at a time: cudaHostAllocWriteCombined is for "
                  "buffers the host only writes; allocate the result slots with cudaMallocHost", s->what, b);
    }
}

/* first_decode_ms - when the first decode of batch b started */
static double first_decode_ms(const fr_log *lg, const seen *s, int b)
{
    double t = INFINITY;
    for (int f = b * s->batch; f < b * s->batch + batch_size(s->frames, s->batch, b); f++)
        t = fmin(t, lg->frame[f].start_ms);
    return t;
}

XL_TEST(loop, modes, 10, XL_GPU,
        "blocking: pageable buffers, every copy waited for, nothing overlapped; async: two pinned slots, the loop's "
        "thread decodes the next batch while the GPU runs; pipelined: decode on the workers only, at most `slots` "
        "pinned slots, every stream used, one executor per stream; no pinned allocation and no device-wide wait in "
        "any run",
        4)
{
    world w;
    world_open(&w, 9 * MODES_BATCH);
    fr_set_cpu_us(w.src, MODES_CPU_US);
    int S = rnd(2, 4);
    cfg c = {rnd(MODES_BATCH, 40), S, rnd(imin(3, max_workers()), imin(8, max_workers())), rnd(S + 1, S + 4)};
    loop_t lp;
    loop_open(&w, &lp, c);
    kit_held made = kit_held_now();
    size_t pinned = made.pinned.alloc_bytes + made.pinned.reg_bytes - lp.before.pinned.alloc_bytes -
                    lp.before.pinned.reg_bytes;
    size_t slot_bytes = (size_t)c.slots * c.max_batch * (LAB_IMAGE_BYTES + sizeof(lab_result));
    cr_assert(pinned >= slot_bytes, "%s pinned %zu bytes, less than its %d slots of %d frames and their result slots "
              "(%zu bytes): lab.h: slots pinned slots of max_batch frames, with a pinned result slot each", lp.text,
              pinned, c.slots, c.max_batch, slot_bytes);
    for (int mode = 0; mode < M_COUNT; mode++) {
        int nb = rnd(5, 9), frames = nb * MODES_BATCH - rnd(0, MODES_BATCH - 1), first = rnd(0, FRAME_FIRST_MAX);
        expect_frames(&w, first, frames);
        lab_job j = open_job(&w, frames, MODES_BATCH, first);
        /* a batch the GPU keeps busy: are the next two decoded meanwhile? */
        int held = mode == M_ASYNC ? (int)rnd(1, nb - 3) : -1;
        if (held >= 0)
            mdl_hold_run(held, MODES_HOLD_MS);
        seen *s = watch(&w, mode, lp.L, lp.text, &j, 0, "decode 30 us a frame");
        mdl_hold_run(-1, 0);
        expect_ok_run(&w, s, &c, "");
        fr_log lg = fr_log_get(w.src);
        if (mode == M_BLOCKING) {
            expect_buffers(&w, s, 0);
            int bufs = fr_distinct_dst(w.src);
            cr_assert(bufs == 1, "%s decoded into %d distinct batch buffers: lab.h: one pageable batch buffer, made "
                      "in create", s->what, bufs);
            for (int k = 0; k < s->ncopies; k++)
                cr_assert(waited_after(s, k), "%s: its copy %d (%s of %zu bytes) was not waited for before the next "
                          "step: lab.h: copy in, then wait for the stream (cudaStreamSynchronize), run the model, copy "
                          "out, wait, deliver: nothing overlaps", s->what, k + 1,
                          xl_copy_dir(&s->copies[k]) == cudaMemcpyHostToDevice ? "a copy in" : "a copy out",
                          s->copies[k].bytes);
            for (int b = 0; b + 1 < nb; b++)
                cr_assert(first_decode_ms(&lg, s, b + 1) >= lg.deliver[b].at_ms,
                          "%s: batch %d's first decode started %.3f ms before batch %d was delivered: the blocking "
                          "loop overlaps nothing (decode, copy in, model, copy out, deliver, then the next batch)",
                          s->what, b + 1, lg.deliver[b].at_ms - first_decode_ms(&lg, s, b + 1), b);
        } else if (mode == M_ASYNC) {
            expect_buffers(&w, s, 1);
            int bufs = fr_distinct_dst(w.src), overlap = 0;
            cr_assert(bufs == 2, "%s decoded into %d distinct slots over %d batches: lab.h: two pinned slots in turn",
                      s->what, bufs, nb);
            for (int b = 0; b + 1 < nb; b++) {
                cr_assert(lg.frame[b * MODES_BATCH].dst != lg.frame[(b + 1) * MODES_BATCH].dst,
                          "%s: batches %d and %d were decoded into the same slot: the two slots in turn", s->what, b,
                          b + 1);
                double next = first_decode_ms(&lg, s, b + 1);
                overlap |= next > s->runs[b].at_ms && next < lg.deliver[b].at_ms;
            }
            cr_assert(overlap, "%s: no batch's decode began while the batch before it was on the GPU (after its model "
                      "run was queued, before it was delivered): lab.h: the loop's thread decodes batch i + 1 while "
                      "batch i's copy in, model run and copy out run", s->what);
            double late = first_decode_ms(&lg, s, held + 1) - s->runs[held].at_ms;
            cr_assert(late < MODES_HOLD_MS / 2, "%s: batch %d's first decode began %.1f ms after batch %d's model run "
                      "was queued, and the kit kept that run on the GPU %.0f ms: lab.h: the loop's thread decodes "
                      "batch i + 1 while batch i's copy in, model run and copy out run. Before refilling a slot, wait "
                      "only for that slot's own copy in (its event), not for the batch just queued or its stream",
                      s->what, held + 1, late, held, MODES_HOLD_MS);
            /* batch held + 2 goes into the slot batch held left: its copy in read it long ago, and batch held + 1 runs
             * on the other stream (or queues behind it): its decode starts as soon as batch held + 1 is queued */
            late = first_decode_ms(&lg, s, held + 2) - s->runs[held + 1].at_ms;
            cr_assert(late < MODES_HOLD_MS / 2, "%s: batch %d's first decode began %.1f ms after batch %d's model run "
                      "was queued, while the kit kept batch %d's model run on the GPU %.0f ms: lab.h: a slot is "
                      "refilled once its copy in has read it. Batch %d's slot last held batch %d, whose copy in was "
                      "done: wait for that slot's copy in event, not for its batch's copy out or the whole batch",
                      s->what, held + 2, late, held + 1, held, MODES_HOLD_MS, held + 2, held);
        } else {
            expect_buffers(&w, s, 1);
            int threads = fr_distinct_threads(w.src), bufs = fr_distinct_dst(w.src);
            cr_assert(threads == c.workers, "%s: %d distinct threads decoded its %d frames, not its %d workers: lab.h: "
                      "all W workers decode when there are at least W frames", s->what, threads, frames, c.workers);
            for (int f = 0; f < frames; f++)
                cr_assert(has_tid(s->tids, s->ntids, lg.frame[f].tid), "%s: frame %d was decoded by thread %ld, which "
                          "the run started: lab.h: the workers are started by lab_loop_create and sleep until a "
                          "pipelined run", s->what, f, lg.frame[f].tid);
            cr_assert(bufs <= c.slots, "%s decoded into %d distinct buffers, more than its %d slots: lab.h: the "
                      "workers decode into the ring of pinned slots made in create", s->what, bufs, c.slots);
        }
    }
    loop_close(&w, &lp, "after a run of each mode");
    world_close(&w);
}

/* ===== Part H: loop.stop ===== */

/* switches_of - how many times thread tid of this process has left the CPU so far (its voluntary and involuntary
 * context switches: a sleep that ends, a wake-up that sleeps again, a preemption); -1 when it is gone */
static long switches_of(long tid)
{
    char path[64], line[160];
    long n = 0, v;
    int found = 0;
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
            sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
            n += v, found++;
    fclose(f);
    return found == 2 ? n : -1;
}

/* What a loop's threads did while no run was open. */
typedef struct {
    int n;
    long tid[LAB_WORKERS_MAX + 8];   /* the loop's threads (loop_t's newtid), */
    long wakes[LAB_WORKERS_MAX + 8]; /* their context switches over IDLE_WAKE_MS (-1: gone) */
    double cpu_ms;                   /* the whole process's CPU time over IDLE_MS of it */
} idle_probe;

/* idle_measure - lp's threads left alone: IDLE_WAIT_MS to settle, then over IDLE_WAKE_MS the context switches of each
 * and, over its first IDLE_MS, the process's CPU time (the /proc reads outside that span) */
static void idle_measure(const loop_t *lp, idle_probe *p)
{
    long at[LAB_WORKERS_MAX + 8];
    p->n = lp->nnew;
    xl_sleep_ms(IDLE_WAIT_MS);
    for (int i = 0; i < p->n; i++)
        p->tid[i] = lp->newtid[i], at[i] = switches_of(p->tid[i]);
    double cpu0 = xl_cpu_ms_now();
    xl_sleep_ms(IDLE_MS);
    p->cpu_ms = xl_cpu_ms_now() - cpu0;
    xl_sleep_ms(IDLE_WAKE_MS - IDLE_MS);
    for (int i = 0; i < p->n; i++) {
        long now = switches_of(p->tid[i]);
        p->wakes[i] = at[i] < 0 || now < 0 ? -1 : now - at[i];
    }
}

/* expect_idle - what idle_measure saw after when (the create, a run): the process nearly idle, and each of the loop's
 * threads that decoded in the pipelined run whose log is lg (its workers) woken at most IDLE_WAKES_MAX times */
static void expect_idle(const idle_probe *p, const fr_log *lg, const char *when)
{
    cr_assert(p->cpu_ms <= IDLE_CPU_MS, "after %s, the process used %.1f ms of CPU time in %.0f ms while the grader "
              "slept (at most %.0f allowed): idle workers spin. lab.h: they sleep (not spin) until the next run: wait "
              "on a condition variable (pthread_cond_wait)", when, p->cpu_ms, IDLE_MS, IDLE_CPU_MS);
    for (int i = 0; i < p->n; i++) {
        int decoded = 0;
        for (int f = 0; f < lg->frames && !decoded; f++)
            decoded = lg->frame[f].decodes > 0 && lg->frame[f].tid == p->tid[i];
        cr_assert(decoded == 0 || p->wakes[i] <= IDLE_WAKES_MAX, "after %s, worker thread %ld was woken %ld times in "
                  "%.0f ms while no run was open (at most %d allowed): lab.h: the workers sleep until the next run, "
                  "not waking on a timeout to look again: wait on a condition variable without a timeout "
                  "(pthread_cond_wait, not pthread_cond_timedwait), woken by the run that needs them", when,
                  p->tid[i], p->wakes[i], IDLE_WAKE_MS, IDLE_WAKES_MAX);
    }
}

/* expect_stopped_at - a run whose decode failed in batch kb (of batches of batch frames) started no batch at or past
 * kb: at most kb copies in, model runs and copies out, each model run over a whole batch before kb */
static void expect_stopped_at(const seen *s, int kb, int batch)
{
    int in = 0, out = 0;
    for (int i = 0; i < s->ncopies; i++) {
        enum cudaMemcpyKind k = xl_copy_dir(&s->copies[i]);
        in += k == cudaMemcpyHostToDevice, out += k == cudaMemcpyDeviceToHost;
    }
    cr_assert(s->nruns <= kb && in <= kb && out <= kb, "%s: %d copies in, %d model runs and %d copies out, but only "
              "the %d batch%s before the failing frame's batch %d could be whole: lab.h: when decode fails, no new "
              "batch is started (check decode's result before the batch's copy in; never send a batch that could "
              "not be decoded through the GPU)", s->what, in, s->nruns, out, kb, kb == 1 ? "" : "es", kb);
    for (int r = 0; r < s->nruns; r++)
        cr_assert(s->runs[r].batch == batch, "%s: model run %d was over %d frames, but every batch before the failing "
                  "one (batch %d) holds %d: lab.h: no new batch is started once decode fails", s->what, r,
                  s->runs[r].batch, kb, batch);
}

/* Where failed_run's failing frame lies: in batch 0 (for the pipelined loop one of the workers' first frames, 0 ..
 * W - 1), in batch 2 to 4 with more than slots batches after it, or in the last batch (2 to 4 batches before it) */
enum { FAIL_FIRST, FAIL_MID, FAIL_LAST };

/* failed_run - mode on lp with a frame at where failing to decode: late (FAIL_WAIT_MS, by when the workers have
 * filled every other slot, more than slots batches following it, and wait), at once while the other workers are in
 * the middle of slow decodes (slow: FAIL_DECODE_US each), or at once (neither). Outside the blocking loop, when the
 * failing frame's batch is not the first, the batch before it is on the GPU when the decode fails: its stream held
 * HOLD_MS past the failure (mdl_hold_run), so a run that returns without waiting for what it queued leaves it busy.
 * -1, the frames delivered a prefix of whole batches before that frame's batch, each right; then the same loop runs
 * a job of more than slots batches again, so that every slot a failed run left part-made or whole is used */
static void failed_run(world *w, loop_t *lp, int mode, int batch, int where, int late, int slow, int idle)
{
    int kb = where == FAIL_FIRST ? 0 : rnd(2, 4);
    int nb = where == FAIL_LAST ? kb + 1 : kb + lp->c.slots + rnd(1, 2);
    int frames = nb * batch - rnd(0, batch - 1), first = rnd(0, FRAME_FIRST_MAX);
    int k = where == FAIL_FIRST && mode == M_PIPELINED ? rnd(0, imin(lp->c.workers, batch) - 1)
                                                        : rnd(kb * batch, imin(frames, (kb + 1) * batch) - 1);
    double wait_ms = late ? FAIL_WAIT_MS : 0;
    int held = mode != M_BLOCKING && kb > 0 && !slow ? kb - 1 : -1;
    char label[200], why[1024];
    double cpu_us = fr_cpu_us(w->src);
    expect_frames(w, first, frames);
    fr_fail_at(w->src, k, wait_ms);
    if (slow)
        fr_set_cpu_us(w->src, FAIL_DECODE_US);
    lab_job j = open_job(w, frames, batch, first);
    int used = snprintf(label, sizeof label, "frame %d (batch %d of %d) fails to decode", k, kb, nb);
    if (late)
        used += snprintf(label + used, sizeof label - used, ", %.0f ms late", FAIL_WAIT_MS);
    else
        used += snprintf(label + used, sizeof label - used, " at once");
    if (slow)
        used += snprintf(label + used, sizeof label - used, ", every decode %.0f ms", FAIL_DECODE_US / 1e3);
    if (held >= 0)
        snprintf(label + used, sizeof label - used, "; batch %d's stream held %.0f ms after its model run", held,
                 wait_ms + HOLD_MS);
    if (held >= 0)
        mdl_hold_run(held, wait_ms + HOLD_MS);
    seen *s = watch(w, mode, lp->L, lp->text, &j, 1, label);
    mdl_hold_run(-1, 0);
    fr_fail_at(w->src, -1, 0);
    fr_set_cpu_us(w->src, cpu_us);
    cr_assert(s->rc == -1, "%s returned %d: lab.h: when decode fails, no new batch is started, what was queued is "
              "waited for, and the run returns -1", s->what, s->rc);
    expect_no_error_left(s->what);
    xl_sleep_ms(2); /* a worker that goes on decoding is seen */
    fr_log lg = fr_log_get(w->src);
    cr_assert(lg.late == 0, "%s: %d decode calls came after it returned: lab.h: the workers stop when the run returns",
              s->what, lg.late);
    int p = 0;
    while (p < frames && lg.frame[p].delivered > 0)
        p++;
    for (int f = p; f < frames; f++)
        cr_assert(lg.frame[f].delivered == 0, "%s: frame %d was delivered but frame %d was not: deliver in order, "
                  "each batch whole", s->what, f, p);
    cr_assert(p <= kb * batch, "%s: frames up to %d were delivered, at or past the failing frame's batch (frames "
              "%d ..): lab.h: none at or past the failing frame's batch is delivered", s->what, p - 1, kb * batch);
    if (p > 0) {
        int bad = fr_check(w->src, w->want, p, why, sizeof why);
        cr_assert(bad == 0, "%s: of the %d frames it delivered before the failing batch, %d are wrong: %s", s->what, p,
                  bad, why);
    }
    kit_expect_no_device_sync(s->syncs, s->nsyncs, s->what);
    expect_stopped_at(s, kb, batch);
    if (idle) { /* the workers sleep after a failed run too */
        idle_probe ip;
        idle_measure(lp, &ip);
        expect_idle(&ip, &lg, s->what);
    }
    frames = (lp->c.slots + rnd(1, 2)) * batch + rnd(1, batch - 1), first = rnd(0, FRAME_FIRST_MAX);
    expect_frames(w, first, frames);
    j = open_job(w, frames, batch, first);
    s = watch(w, mode, lp->L, lp->text, &j, 0, "the run after one that failed");
    expect_ok_run(w, s, &lp->c, "");
}

/* huge_failed_run - mode on lp with a job of nearly INT_MAX frames at batch (within batch - 2 of it: frames + batch
 * - 1 overflows an int), stopped by a frame of batch slots .. slots + 2 that fails to decode at once: -1, the frames
 * delivered a prefix of whole batches before the failing one, each right (only the source's first frames are
 * recorded) */
static void huge_failed_run(world *w, loop_t *lp, int mode, int batch)
{
    int kb = lp->c.slots + rnd(0, 2), frames = INT_MAX - rnd(0, batch - 2), first = rnd(0, FRAME_FIRST_MAX);
    int k = rnd(kb * batch, (kb + 1) * batch - 1);
    char label[200], why[1024];
    expect_frames(w, first, kb * batch);
    fr_fail_at(w->src, k, 0);
    int q = kit_quiet_begin(); /* the source says it records only its first frames */
    lab_job j = open_job(w, frames, batch, first);
    kit_quiet_end(q);
    snprintf(label, sizeof label, "a job of nearly INT_MAX frames, frame %d (batch %d) fails to decode at once", k, kb);
    seen *s = watch(w, mode, lp->L, lp->text, &j, 1, label);
    fr_fail_at(w->src, -1, 0);
    cr_assert(s->rc == -1, "%s returned %d: lab.h: frames is any count >= 0, and when decode fails the run returns -1. "
              "Near INT_MAX, (frames + batch - 1) / batch overflows an int: count the batches in 64 bits", s->what,
              s->rc);
    expect_no_error_left(s->what);
    fr_log lg = fr_log_get(w->src);
    int p = 0;
    while (p < lg.frames && lg.frame[p].delivered > 0)
        p++;
    for (int f = p; f < lg.frames; f++)
        cr_assert(lg.frame[f].delivered == 0, "%s: frame %d was delivered but frame %d was not: deliver in order, "
                  "each batch whole", s->what, f, p);
    cr_assert(lg.bad_range == 0 && p <= kb * batch, "%s: frames up to %d were delivered (%d calls named frames past "
              "the first %d): lab.h: none at or past the failing frame's batch (frames %d ..) is delivered", s->what,
              p - 1, lg.bad_range, lg.frames, kb * batch);
    if (p > 0) {
        int bad = fr_check(w->src, w->want, p, why, sizeof why);
        cr_assert(bad == 0, "%s: of the %d frames it delivered before the failing batch, %d are wrong: %s", s->what, p,
                  bad, why);
    }
    kit_expect_no_device_sync(s->syncs, s->nsyncs, s->what);
    expect_stopped_at(s, kb, batch);
}

XL_TEST(loop, stop, 10, XL_GPU,
        "workers stop when a run ends and sleep between runs; a frame that fails to decode stops the run with -1, its "
        "frames before delivered right and in order, and the loop runs again; lab_loop_destroy joins every thread and "
        "releases everything, also right after a run",
        10)
{
    const int batch = 16;
    world w;
    world_open(&w, 24 * batch); /* huge_failed_run: the workers may decode 8 slots past batch 10 */
    int mw = max_workers(), first, frames;
    cfg c = {batch, rnd(1, 4), rnd(imin(2, mw), imin(8, mw)), rnd(2, 8)};
    loop_t lp;
    loop_open(&w, &lp, c);
    cr_assert(lp.threads_made >= c.workers && lp.threads_made <= c.workers + 2,
              "%s started %d threads: lab.h: it starts its %d workers (asleep until a pipelined run)%s", lp.text,
              lp.threads_made, c.workers, lp.threads_made < c.workers ? "" : "; at most two helper threads besides");

    /* the workers asleep from the create on (which threads are the workers, the first run's decodes tell) */
    idle_probe made_idle, ran_idle;
    idle_measure(&lp, &made_idle);

    /* a run, then idle workers sleep and decode nothing */
    frames = rnd(4, 8) * batch - rnd(0, batch - 1), first = rnd(0, FRAME_FIRST_MAX);
    expect_frames(&w, first, frames);
    lab_job j = open_job(&w, frames, batch, first);
    seen *s = watch(&w, M_PIPELINED, lp.L, lp.text, &j, 0, NULL);
    expect_ok_run(&w, s, &c, "");
    fr_log lg = fr_log_get(w.src);
    expect_idle(&made_idle, &lg, lp.text);
    idle_measure(&lp, &ran_idle);
    char when[600];
    snprintf(when, sizeof when, "%s returned", s->what);
    expect_idle(&ran_idle, &lg, when);
    lg = fr_log_get(w.src);
    cr_assert(lg.late == 0, "%s: %d decode calls came in the %.0f ms after it returned: lab.h: the workers stop when "
              "the run returns", s->what, lg.late, IDLE_WAIT_MS + IDLE_WAKE_MS);

    /* the workers sleep through the other runs too: a blocking and an async run of many batches (a batch every few ms)
     * wake none of them (they are told by the pipelined run's decodes) */
    {
        long wtid[LAB_WORKERS_MAX], at[LAB_WORKERS_MAX];
        int nw = 0;
        for (int f = 0; f < lg.frames; f++)
            if (lg.frame[f].decodes > 0 && nw < LAB_WORKERS_MAX && !has_tid(wtid, nw, lg.frame[f].tid))
                wtid[nw++] = lg.frame[f].tid;
        double cpu_us = fr_cpu_us(w.src);
        fr_set_cpu_us(w.src, 200.0);
        for (int mode = M_BLOCKING; mode <= M_ASYNC; mode++) {
            int nb = rnd(12, 20);
            frames = nb * batch - rnd(0, batch - 1), first = rnd(0, FRAME_FIRST_MAX);
            expect_frames(&w, first, frames);
            j = open_job(&w, frames, batch, first);
            xl_sleep_ms(IDLE_WAIT_MS); /* the workers back asleep */
            for (int i = 0; i < nw; i++)
                at[i] = switches_of(wtid[i]);
            s = watch(&w, mode, lp.L, lp.text, &j, 0, "decode 200 us a frame, the workers idle");
            for (int i = 0; i < nw; i++) {
                long now = switches_of(wtid[i]);
                at[i] = at[i] < 0 || now < 0 ? -1 : now - at[i];
            }
            expect_ok_run(&w, s, &c, "");
            for (int i = 0; i < nw; i++)
                cr_assert(at[i] <= IDLE_WAKES_MAX, "%s: worker thread %ld was woken %ld times during its %d batches "
                          "(at most %d allowed): lab.h: the workers sleep until the next pipelined run, woken by "
                          "nothing else: only lab_run_pipelined signals their condition variable, never the blocking "
                          "or async run (nor code they share with it)", s->what, wtid[i], at[i], nb, IDLE_WAKES_MAX);
        }
        fr_set_cpu_us(w.src, cpu_us);
    }

    /* two loops at once: a pipelined run of one wakes none of the other's idle workers (each loop its own lock and
     * condition variable). The second loop's workers are told by its own run's decodes. */
    {
        loop_t lb;
        cfg cb = {batch, rnd(1, 2), rnd(imin(2, mw), imin(4, mw)), rnd(2, 4)};
        long wtid[LAB_WORKERS_MAX], at[LAB_WORKERS_MAX];
        int nw = 0;
        loop_open(&w, &lb, cb);
        frames = rnd(2, 3) * batch, first = rnd(0, FRAME_FIRST_MAX);
        expect_frames(&w, first, frames);
        j = open_job(&w, frames, batch, first);
        s = watch(&w, M_PIPELINED, lb.L, lb.text, &j, 0, "a second loop, the first one alive");
        expect_ok_run(&w, s, &cb, "");
        lg = fr_log_get(w.src);
        for (int f = 0; f < frames; f++)
            if (nw < LAB_WORKERS_MAX && !has_tid(wtid, nw, lg.frame[f].tid))
                wtid[nw++] = lg.frame[f].tid;
        /* the first loop's run: a batch issued every few hundred us, each a wake-up for workers that share its
         * condition variable */
        double cpu_us = fr_cpu_us(w.src);
        fr_set_cpu_us(w.src, 300.0);
        frames = rnd(6, 8) * batch - rnd(0, batch - 1), first = rnd(0, FRAME_FIRST_MAX);
        expect_frames(&w, first, frames);
        j = open_job(&w, frames, batch, first);
        xl_sleep_ms(IDLE_WAIT_MS); /* the second loop's workers back asleep */
        for (int i = 0; i < nw; i++)
            at[i] = switches_of(wtid[i]);
        s = watch(&w, M_PIPELINED, lp.L, lp.text, &j, 0, "decode 300 us a frame, a second loop's workers idle");
        for (int i = 0; i < nw; i++) {
            long now = switches_of(wtid[i]);
            at[i] = at[i] < 0 || now < 0 ? -1 : now - at[i];
        }
        fr_set_cpu_us(w.src, cpu_us);
        expect_ok_run(&w, s, &c, "");
        for (int i = 0; i < nw; i++)
            cr_assert(at[i] <= IDLE_WAKES_MAX, "%s: worker thread %ld of another live loop (%s, no run open) was "
                      "woken %ld times meanwhile (at most %d allowed): lab.h: the workers sleep until their loop's next "
                      "run, woken by nothing else: give each loop its own mutex and condition variable (members of "
                      "struct lab_loop, not statics shared by every loop)", s->what, wtid[i], lb.text, at[i],
                      IDLE_WAKES_MAX);
        loop_close(&w, &lb, "with another loop alive");
    }

    /* a frame that fails to decode, in each mode: in the first batch (the pipelined workers' first frames), in the
     * middle of the run, in the last batch; after the first, the workers asleep again */
    failed_run(&w, &lp, M_PIPELINED, batch, FAIL_MID, 1, 0, 1);
    failed_run(&w, &lp, M_PIPELINED, batch, FAIL_MID, 0, 1, 0);
    failed_run(&w, &lp, M_PIPELINED, batch, FAIL_FIRST, 0, 0, 0);
    failed_run(&w, &lp, M_PIPELINED, batch, FAIL_LAST, 0, 0, 0);
    for (int mode = M_BLOCKING; mode <= M_ASYNC; mode++)
        for (int where = FAIL_FIRST; where <= FAIL_LAST; where++)
            failed_run(&w, &lp, mode, batch, where, 0, 0, 0);
    /* a job of nearly INT_MAX frames (a stream run until decode fails), in each mode */
    for (int mode = 0; mode < M_COUNT; mode++)
        huge_failed_run(&w, &lp, mode, batch);

    /* destroy right after a pipelined run */
    frames = rnd(3, 8) * batch - rnd(0, batch - 1), first = rnd(0, FRAME_FIRST_MAX);
    expect_frames(&w, first, frames);
    j = open_job(&w, frames, batch, first);
    s = watch(&w, M_PIPELINED, lp.L, lp.text, &j, 0, NULL);
    expect_ok_run(&w, s, &c, "");
    loop_close(&w, &lp, "right after a pipelined run");

    /* destroy right after a run that failed */
    c = (cfg){batch, rnd(1, 4), rnd(imin(2, mw), imin(8, mw)), rnd(2, 8)};
    loop_open(&w, &lp, c);
    int nb = rnd(5, 8), k;
    frames = nb * batch, first = rnd(0, FRAME_FIRST_MAX), k = rnd(2 * batch, (nb - 1) * batch - 1);
    fr_fail_at(w.src, k, FAIL_WAIT_MS);
    j = open_job(&w, frames, batch, first);
    s = watch(&w, M_PIPELINED, lp.L, lp.text, &j, 1, "a frame fails to decode, then destroy");
    fr_fail_at(w.src, -1, 0);
    cr_assert(s->rc == -1, "%s returned %d, not -1, when frame %d failed to decode", s->what, s->rc, k);
    expect_stopped_at(s, k / batch, batch);
    cudaGetLastError();
    loop_close(&w, &lp, "right after a pipelined run that failed");
    world_close(&w);
}

/* ===== Part I: results.exact ===== */

/* check_kit_model - the kit's GPU reference against its CPU reference on two frames drawn fresh (design §6.1): digests
 * equal (and equal to the digest of the pixels decode makes), scores within LAB_SCORE_TOL; NOT GRADED otherwise (the
 * kit is wrong, not the student) */
static void check_kit_model(world *w)
{
    uint8_t *px = malloc(LAB_IMAGE_BYTES);
    cr_assert(px != NULL, "grader error: out of host memory");
    for (int i = 0; i < 2; i++) {
        int f = rnd(0, FRAME_FIRST_MAX);
        lab_result gpu, cpu;
        char figures[400];
        fr_make(w->src, f, px, 0);
        cr_assert(fr_expected(w->src, w->m, f, 1, &gpu) == 0, "grader error: the kit's fr_expected failed");
        mdl_reference_cpu(w->m, px, &cpu);
        uint32_t dig = mdl_digest_cpu(px);
        double worst = 0;
        int at = 0;
        for (int k = 0; k < LAB_CLASSES; k++) {
            double d = fabs((double)gpu.score[k] - cpu.score[k]);
            if (!(d <= worst))
                worst = d, at = k;
        }
        if (gpu.digest != dig || cpu.digest != dig || !(worst <= LAB_SCORE_TOL)) {
            snprintf(figures, sizeof figures, "frame %d: digest of decode's pixels 0x%08x, the GPU reference's 0x%08x, "
                     "the CPU reference's 0x%08x; largest score difference %.3g (class %d), tolerance %g", f, dig,
                     gpu.digest, cpu.digest, worst, at, LAB_SCORE_TOL);
            free(px);
            xl_not_graded("the kit's model", "its GPU and CPU references disagree on a frame: the kit, not your "
                          "code, is wrong here; tell the course staff", figures);
        }
    }
    free(px);
}

#define EXACT_MANY_MAX 2500

/* pin_to_one_core - the threads lp's create started (its workers) all made to run on one core of those this process
 * may use, as on a host with fewer cores than workers: one that is awake decodes frame after frame before the others
 * run. 1, or 0 when the host would not (the case is then run unpinned) */
static int pin_to_one_core(const loop_t *lp)
{
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0)
        return 0;
    int cpu = -1;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &all))
            cpu = i; /* the last: the grader's own thread keeps the others */
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    int ok = cpu >= 0;
    for (int i = 0; ok && i < lp->nnew; i++)
        ok = sched_setaffinity((pid_t)lp->newtid[i], sizeof one, &one) == 0;
    return ok;
}

XL_TEST(results, exact, 15, XL_GPU,
        "every frame's result matches the kit's (digest exact, scores within 1e-3), in order, each once, fresh frames "
        "each grading, in all three modes: frames 0, 1, batch - 1, batch + 1, multiples and their neighbours, batches "
        "1 to max_batch, 1 to 8 streams, 1 to 12 workers, 2 to 16 slots",
        6)
{
    world w;
    world_open(&w, EXACT_MANY_MAX);
    check_kit_model(&w);
    int mw = max_workers(), mb;
    loop_t lp;
    char label[120];
    /* the upper ends of streams, workers and slots; batches of one */
    loop_open(&w, &lp, (cfg){1, LAB_STREAMS_MAX, mw, LAB_SLOTS_MAX});
    exact_runs(&w, &lp, 1, 1, rnd(0, FRAME_FIRST_MAX), "one frame, batch 1");
    exact_runs(&w, &lp, rnd(2, 12), 1, rnd(0, FRAME_FIRST_MAX), "batches of one");
    /* as many frames as workers, and a few more, the workers all on one core: every worker decodes all the same */
    int pinned = pin_to_one_core(&lp);
    snprintf(label, sizeof label, "as many frames as workers%s", pinned ? ", the workers on one core" : "");
    exact_runs(&w, &lp, mw, 1, rnd(0, FRAME_FIRST_MAX), label);
    snprintf(label, sizeof label, "a few frames more than workers%s", pinned ? ", the workers on one core" : "");
    exact_runs(&w, &lp, mw + rnd(1, 5), 1, rnd(0, FRAME_FIRST_MAX), label);
    loop_close(&w, &lp, NULL);
    /* the lower ends; batch 16 and its neighbours */
    mb = rnd(16, 40);
    loop_open(&w, &lp, (cfg){mb, 1, 1, 2});
    exact_runs(&w, &lp, 0, rnd(1, mb), rnd(0, FRAME_FIRST_MAX), "no frames");
    exact_runs(&w, &lp, 1, 16, rnd(0, FRAME_FIRST_MAX), "one frame, batch 16");
    exact_runs(&w, &lp, 15, 16, rnd(0, FRAME_FIRST_MAX), "a batch less one");
    exact_runs(&w, &lp, 17, 16, rnd(0, FRAME_FIRST_MAX), "a batch and one");
    for (int d = -1; d <= 1; d++) {
        snprintf(label, sizeof label, "a multiple of the batch%s", d < 0 ? " less one" : d > 0 ? " and one" : "");
        exact_runs(&w, &lp, rnd(2, 6) * 16 + d, 16, rnd(0, FRAME_FIRST_MAX), label);
    }
    loop_close(&w, &lp, NULL);
    /* batches 7 and 33, and frame numbers from a random first */
    mb = rnd(33, 48);
    loop_open(&w, &lp, (cfg){mb, rnd(2, LAB_STREAMS_MAX), rnd(1, mw), rnd(2, LAB_SLOTS_MAX)});
    const int odd[] = {7, 33};
    for (int i = 0; i < 2; i++)
        for (int d = -1; d <= 1; d++) {
            snprintf(label, sizeof label, "a multiple of the batch%s", d < 0 ? " less one" : d > 0 ? " and one" : "");
            exact_runs(&w, &lp, rnd(2, 6) * odd[i] + d, odd[i], rnd(0, FRAME_FIRST_MAX), label);
        }
    exact_runs(&w, &lp, 200, 8, rnd(1, FRAME_FIRST_MAX - 1), "frame numbers from a random first");
    loop_close(&w, &lp, NULL);
    /* full batches at the create's size; the named batch over many frames */
    mb = rnd(64, 80);
    loop_open(&w, &lp, (cfg){mb, rnd(1, LAB_STREAMS_MAX), rnd(1, mw), rnd(2, 8)});
    exact_runs(&w, &lp, 2 * mb + 3, mb, rnd(0, FRAME_FIRST_MAX), "batch max_batch");
    exact_runs(&w, &lp, rnd(1500, EXACT_MANY_MAX), LAB_BATCH_NAMED, rnd(0, FRAME_FIRST_MAX), "many frames at 64");
    loop_close(&w, &lp, NULL);
    world_close(&w);
}

/* ===== Part J: speed (timed) ===== */

/* The loops a speed round times. */
enum { T_YOURS, T_KIT_PIPE, T_KIT_BLOCKING, T_COUNT };
static const char *const timed_names[] = {"your lab_run_pipelined", "the kit's base_run_pipelined",
                                          "the kit's base_run_blocking"};

typedef struct {
    world *w;
    loop_t lp;            /* yours: batch 64, 3 streams, W workers, 6 slots */
    base_loop *kit;       /* the kit's, the same arguments */
    base_stage_bufs *st;  /* the kit's stage measurements */
    int workers;          /* W */
    double cpu_us, make_us, model_us, h2d_us; /* base_balance: decode's time and the GPU's pace, us a frame */
    int first;            /* the timed frames are the source's first .. first + SPEED_FRAMES - 1 */
    double fps[T_COUNT][SPEED_ROUNDS];
    base_stages stages[SPEED_ROUNDS];
    lab_point pt[T_COUNT]; /* each loop's last run, as the kit's frame log measured it */
    double med[T_COUNT], ideal, cpu, cpu_one, link, compute;
    const char *bound;
    int cached;           /* #1's last attempt kept for #2's first */
} speed_ctx;

/* timed_run - one run of loop t over frames frames at SPEED_BATCH, host clock around the call: frames/s; then,
 * untimed, every frame checked, and the kit's point of the run into x->pt[t] */
static double timed_run(speed_ctx *x, int t, int frames)
{
    static char why[1024];
    world *w = x->w;
    lab_job j = fr_job(w->src, frames, SPEED_BATCH, x->first);
    double t0 = xl_now_ms();
    int rc = t == T_YOURS      ? lab_run_pipelined(x->lp.L, &j)
             : t == T_KIT_PIPE ? base_run_pipelined(x->kit, &j)
                               : base_run_blocking(x->kit, &j);
    double ms = xl_now_ms() - t0;
    fr_close(w->src);
    int bad = rc == 0 ? fr_check(w->src, w->want, frames, why, sizeof why) : 0;
    if (t == T_YOURS) {
        cr_assert(rc == 0, "%s (%d frames at batch %d, %s) returned %d in a timed run (see its message above)",
                  timed_names[t], frames, SPEED_BATCH, x->lp.text, rc);
        cr_assert(bad == 0, "%s (%d frames at batch %d, %s, decode %.1f us a frame), timed: %d frames came back wrong: "
                  "%s", timed_names[t], frames, SPEED_BATCH, x->lp.text, x->cpu_us, bad, why);
        cr_assert(fr_log_get(w->src).late == 0, "%s, timed: decode calls came after it returned", timed_names[t]);
    } else
        cr_assert(rc == 0 && bad == 0, "grader error: %s returned %d with %d frames wrong: %s", timed_names[t], rc, bad,
                  bad ? why : "");
    if (fr_point(w->src, &x->pt[t]) != 0)
        memset(&x->pt[t], 0, sizeof x->pt[t]);
    return frames / ms * 1e3;
}

/* stages_run - the kit's three stages over SPEED_FRAMES frames into x->stages[r] */
static void stages_run(speed_ctx *x, int r)
{
    cr_assert(base_stages_run(x->st, SPEED_FRAMES, SPEED_BATCH, &x->stages[r]) == 0,
              "grader error: the kit's base_stages_run failed (see its message above)");
}

/* loop_row - one row of data/loop.csv */
static void loop_row(const speed_ctx *x, const char *loop, const char *impl, int batch, int frames, double fps,
                     const lab_point *pt)
{
    char lat[96] = ",,";
    if (pt && pt->batch > 0)
        snprintf(lat, sizeof lat, "%.4f,%.4f,%.4f", pt->latency_p50_ms, pt->latency_p99_ms, pt->latency_max_ms);
    xl_results_row("loop", LOOP_HEADER, "%s,%s,%d,%d,%d,%d,%d,%.3f,%.1f,%s,%.1f,%s", loop, impl, batch, frames,
                   x->workers, SPEED_STREAMS, SPEED_SLOTS, x->cpu_us, fps, lat, x->ideal, x->bound ? x->bound : "");
}

/* measure_all - SPEED_ROUNDS rounds, each in alternating order: your pipelined run, the kit's stages, the kit's
 * pipelined run, the kit's blocking run; medians into x; the attempt unsound where the kit's own figures say the
 * machine could not show the ideal; rows of data/loop.csv */
static void measure_all(speed_ctx *x)
{
    double ideal[SPEED_ROUNDS], cpu[SPEED_ROUNDS], one[SPEED_ROUNDS], link[SPEED_ROUNDS], comp[SPEED_ROUNDS];
    for (int r = 0; r < SPEED_ROUNDS; r++)
        for (int k = 0; k < 4; k++) {
            int op = r % 2 ? 3 - k : k;
            if (op == 0)
                x->fps[T_YOURS][r] = timed_run(x, T_YOURS, SPEED_FRAMES);
            else if (op == 1)
                stages_run(x, r);
            else if (op == 2)
                x->fps[T_KIT_PIPE][r] = timed_run(x, T_KIT_PIPE, SPEED_FRAMES);
            else
                x->fps[T_KIT_BLOCKING][r] = timed_run(x, T_KIT_BLOCKING, BLOCKING_FRAMES);
        }
    for (int r = 0; r < SPEED_ROUNDS; r++) {
        ideal[r] = x->stages[r].ideal_fps, cpu[r] = x->stages[r].cpu_fps, one[r] = x->stages[r].cpu_fps_one;
        link[r] = x->stages[r].link_fps, comp[r] = x->stages[r].compute_fps;
    }
    for (int t = 0; t < T_COUNT; t++)
        x->med[t] = xl_median(x->fps[t], SPEED_ROUNDS);
    x->ideal = xl_median(ideal, SPEED_ROUNDS), x->cpu = xl_median(cpu, SPEED_ROUNDS);
    x->cpu_one = xl_median(one, SPEED_ROUNDS), x->link = xl_median(link, SPEED_ROUNDS);
    x->compute = xl_median(comp, SPEED_ROUNDS);
    x->bound = x->stages[SPEED_ROUNDS - 1].bound;
    xl_sound_spread(ideal, SPEED_ROUNDS, XL_SOUND_SPREAD, "the ideal (the slowest stage, frames/s)");
    xl_sound_spread(x->fps[T_KIT_PIPE], SPEED_ROUNDS, XL_SOUND_SPREAD, "the kit's pipelined loop (frames/s)");
    xl_sound_spread(x->fps[T_KIT_BLOCKING], SPEED_ROUNDS, XL_SOUND_SPREAD_PAGEABLE, "the kit's blocking loop (frames/s)");
    if (!(x->cpu >= SCALING_MIN * x->workers * x->cpu_one))
        xl_measure_unsound("the kit's %d decode threads ran at %.0f frames/s, %.2fx one thread's %.0f (needs at least "
                           "%.1f x %d): the host could not give the workers %d cores", x->workers, x->cpu,
                           x->cpu / x->cpu_one, x->cpu_one, SCALING_MIN, x->workers, x->workers);
    if (!(x->med[T_KIT_PIPE] >= KIT_IDEAL_MIN * x->ideal))
        xl_measure_unsound("the kit's own pipelined loop reached %.0f frames/s, %.0f%% of the ideal %.0f (needs %.0f%%): "
                           "the ideal cannot be reached on this machine now", x->med[T_KIT_PIPE],
                           100 * x->med[T_KIT_PIPE] / x->ideal, x->ideal, 100 * KIT_IDEAL_MIN);
    loop_row(x, "pipelined", "yours", SPEED_BATCH, SPEED_FRAMES, x->med[T_YOURS], &x->pt[T_YOURS]);
    loop_row(x, "pipelined", "kit", SPEED_BATCH, SPEED_FRAMES, x->med[T_KIT_PIPE], &x->pt[T_KIT_PIPE]);
    loop_row(x, "blocking", "kit", SPEED_BATCH, BLOCKING_FRAMES, x->med[T_KIT_BLOCKING], &x->pt[T_KIT_BLOCKING]);
    loop_row(x, "resident", "kit", SPEED_BATCH, SPEED_FRAMES, x->compute, NULL);
}

/* speed_figures - the attempt's figures for a message */
static void speed_figures(const speed_ctx *x, char *buf, size_t len)
{
    const lab_point *p = &x->pt[T_YOURS];
    snprintf(buf, len,
             "batch %d, %d frames, %d workers, %d streams, %d slots, decode %.1f us a frame (making a frame %.1f us; "
             "the GPU's pace: model %.2f, fresh copy in %.2f us a frame); medians of %d rounds: yours %.0f frames/s; "
             "the ideal %.0f, bound by %s (the kit's %d decode threads %.0f [one thread %.0f], the link both ways "
             "%.0f, the model alone %.0f); the kit's pipelined loop %.0f (%.0f%% of the ideal), the kit's blocking "
             "loop %.0f; your last run's latency p50 %.2f, p99 %.2f, max %.2f ms",
             SPEED_BATCH, SPEED_FRAMES, x->workers, SPEED_STREAMS, SPEED_SLOTS, x->cpu_us, x->make_us, x->model_us,
             x->h2d_us, SPEED_ROUNDS, x->med[T_YOURS], x->ideal, x->bound ? x->bound : "?", x->workers, x->cpu,
             x->cpu_one, x->link, x->compute, x->med[T_KIT_PIPE], 100 * x->med[T_KIT_PIPE] / x->ideal,
             x->med[T_KIT_BLOCKING], p->latency_p50_ms, p->latency_p99_ms, p->latency_max_ms);
}

/* measure_ideal - #1: your pipelined loop over the ideal */
static void measure_ideal(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    measure_all(x);
    x->cached = 1;
    *ratio = x->med[T_YOURS] / x->ideal;
    xl_sound_within(*ratio, 0, XL_EFF_MAX, "your pipelined loop over the ideal");
    speed_figures(x, figures, len);
}

/* measure_blocking - #2: your pipelined loop over the kit's blocking loop (#1's last attempt first) */
static void measure_blocking(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    if (!x->cached)
        measure_all(x);
    x->cached = 0;
    *ratio = x->med[T_YOURS] / x->med[T_KIT_BLOCKING];
    speed_figures(x, figures, len);
}

/* timeline_for_report - when the grading keeps results (make grade): one traced pipelined run of yours over
 * TL_BATCHES batches, written as data/timeline.csv (run,lane,what,start_ms,end_ms,bytes): each worker's decodes per
 * batch (lanes "worker N"), the loop's delivers (lane "loop"), copies and the model between them on each stream (lanes
 * "stream N"); results checked; nothing otherwise */
static void timeline_for_report(speed_ctx *x)
{
    static xl_copy_rec recs[4 * TL_BATCHES];
    static char why[1024];
    char path[1200];
    if (xl_results_data_path("timeline", path, sizeof path) != 0)
        return;
    world *w = x->w;
    const int frames = TL_BATCHES * SPEED_BATCH;
    xl_timeline *t = xl_timeline_create(4 * TL_BATCHES + 8);
    cr_assert(t != NULL, "grader error: out of host memory");
    double probe[2];
    xl_timeline_host(t, "origin", "origin", "origin", 0.0, 0.0); /* the timeline's origin on the host clock */
    xl_timeline_collect(t, "origin", "origin", probe, 1);
    double origin = -probe[0];
    lab_job j = fr_job(w->src, frames, SPEED_BATCH, x->first);
    xl_copylog_start(recs, 4 * TL_BATCHES);
    xl_timeline_trace_copies(t, "yours");
    int rc = lab_run_pipelined(x->lp.L, &j);
    xl_timeline_trace_copies(NULL, NULL);
    int nc = imin(xl_copylog_stop(), 4 * TL_BATCHES);
    fr_close(w->src);
    cr_assert(rc == 0, "your lab_run_pipelined returned %d in the run traced for the report", rc);
    int bad = fr_check(w->src, w->want, frames, why, sizeof why);
    cr_assert(bad == 0, "your lab_run_pipelined (%d frames at %d, %s), traced for the report: %d frames wrong: %s",
              frames, SPEED_BATCH, x->lp.text, bad, why);
    double in[2 * TL_BATCHES], out[2 * TL_BATCHES];
    int nin = imin(xl_timeline_collect(t, "yours", "H2D", in, TL_BATCHES), TL_BATCHES);
    int nout = imin(xl_timeline_collect(t, "yours", "D2H", out, TL_BATCHES), TL_BATCHES);
    xl_csv *c = xl_results_csv("timeline", "run,lane,what,start_ms,end_ms,bytes");
    if (!c) {
        xl_timeline_destroy(t);
        return;
    }
    fr_log lg = fr_log_get(w->src);
    long workers[MAX_TIDS]; /* lane k + 1: the k-th thread to decode, in frame order */
    int nw = 0;
    for (int f = 0; f < frames; f++)
        if (!has_tid(workers, nw, lg.frame[f].tid) && nw < MAX_TIDS)
            workers[nw++] = lg.frame[f].tid;
    for (int b = 0; b < TL_BATCHES; b++) /* a worker's decodes of one batch as one span */
        for (int k = 0; k < nw; k++) {
            double lo = INFINITY, hi = -INFINITY;
            for (int f = b * SPEED_BATCH; f < (b + 1) * SPEED_BATCH; f++)
                if (lg.frame[f].tid == workers[k])
                    lo = fmin(lo, lg.frame[f].start_ms), hi = fmax(hi, lg.frame[f].end_ms);
            if (lo <= hi)
                xl_csv_row(c, "yours,worker %d,decode b=%d,%.4f,%.4f,0", k + 1, b, lo - origin, hi - origin);
        }
    for (int d = 0; d < lg.delivers; d++)
        xl_csv_row(c, "yours,loop,deliver,%.4f,%.4f,0", lg.deliver[d].at_ms - origin, lg.deliver[d].at_ms - origin + 0.01);
    cudaStream_t lanes[MAX_STREAMS];
    int nl = 0, hi = 0, di = 0;
    for (int i = 0; i < nc; i++) {
        if (!recs[i].async)
            continue;
        int l = 0;
        while (l < nl && lanes[l] != recs[i].stream)
            l++;
        if (l == nl && nl < MAX_STREAMS)
            lanes[nl++] = recs[i].stream;
        enum cudaMemcpyKind k = xl_copy_dir(&recs[i]);
        if (k == cudaMemcpyHostToDevice && hi < nin) {
            xl_csv_row(c, "yours,stream %d,H2D,%.4f,%.4f,%zu", l + 1, in[2 * hi], in[2 * hi + 1], recs[i].bytes);
            hi++;
        } else if (k == cudaMemcpyDeviceToHost && di < nout) {
            /* the model: from the batch's copy in to its copy out, on their stream */
            if (di < hi && out[2 * di] > in[2 * di + 1])
                xl_csv_row(c, "yours,stream %d,model,%.4f,%.4f,0", l + 1, in[2 * di + 1], out[2 * di]);
            xl_csv_row(c, "yours,stream %d,D2H,%.4f,%.4f,%zu", l + 1, out[2 * di], out[2 * di + 1], recs[i].bytes);
            di++;
        }
    }
    xl_results_close(c);
    xl_timeline_destroy(t);
}

/* speed_open - the model, the frames and their right results, decode's time from this machine's balance
 * (base_balance), and your loop at max_batch with the named streams and slots and W workers */
static void speed_open(world *w, speed_ctx *x, int max_batch, int frames)
{
    memset(x, 0, sizeof *x);
    world_open(w, frames);
    x->w = w;
    x->workers = timed_workers();
    cr_assert(base_balance(w->m, w->src, x->workers, SPEED_BATCH, &x->cpu_us, &x->make_us, &x->model_us,
                           &x->h2d_us) == 0, "grader error: the kit's base_balance failed (see its message above)");
    fr_set_cpu_us(w->src, x->cpu_us);
    x->first = rnd(0, FRAME_FIRST_MAX);
    expect_frames(w, x->first, frames);
    loop_open(w, &x->lp, (cfg){max_batch, SPEED_STREAMS, x->workers, SPEED_SLOTS});
}

XL_TEST(speed, pipelined, 15, XL_TIMED,
        "batch 64, 8 workers (fewer on a host with fewer than 12 cores), 3 streams: the pipelined loop reaches at "
        "least " XL_STR(IDEAL_NEED) "% of the ideal measured in the same run (the slowest of the workers' decode, the "
        "link both ways, the model alone) and at least " XL_STR(BLOCKING_NEED) "x the kit's blocking loop",
        10)
{
    world w;
    static speed_ctx x;
    speed_open(&w, &x, SPEED_BATCH, SPEED_FRAMES);
    x.kit = base_loop_create(w.m, SPEED_BATCH, SPEED_STREAMS, x.workers, SPEED_SLOTS);
    cr_assert(x.kit != NULL, "grader error: the kit's base_loop_create failed (see its message above)");
    x.st = base_stages_create(w.m, w.src, SPEED_BATCH, x.workers, SPEED_STREAMS);
    cr_assert(x.st != NULL, "grader error: the kit's base_stages_create failed (see its message above)");
    timed_run(&x, T_YOURS, WARM_FRAMES); /* warm-up: kernels for batch 64 loaded, every thread awake once */
    timed_run(&x, T_KIT_PIPE, WARM_FRAMES);
    timed_run(&x, T_KIT_BLOCKING, WARM_FRAMES / 4);
    cr_assert(base_stages_run(x.st, WARM_FRAMES, SPEED_BATCH, &x.stages[0]) == 0,
              "grader error: the kit's base_stages_run failed (see its message above)");
    xl_ratio_check(measure_ideal, &x, XL_AT_LEAST_PCT(IDEAL_NEED),
                   "your pipelined loop over the ideal (do the workers decode ahead into enough slots, while copies "
                   "and the model of other batches run on every stream, and the loop's thread waits only for the "
                   "batch it delivers?)");
    xl_ratio_check(measure_blocking, &x, XL_AT_LEAST_X(BLOCKING_NEED),
                   "your pipelined loop over the kit's blocking loop (decode on the workers, pinned slots, several "
                   "streams?)");
    timeline_for_report(&x);
    base_stages_destroy(x.st);
    base_loop_destroy(x.kit);
    lab_loop_destroy(x.lp.L);
    world_close(&w);
}

/* lat_run - your pipelined loop (or, kit 1, the kit's base_run_pipelined on x->kit) over frames frames at batch from
 * x->first, checked; its point (the kit's frame log: fps from the first decode to the last deliver, each frame's
 * latency from its decode's start to its deliver) */
static lab_point lat_run(speed_ctx *x, int frames, int batch, int kit)
{
    static char why[1024];
    world *w = x->w;
    lab_point p;
    lab_job j = fr_job(w->src, frames, batch, x->first);
    int rc = kit ? base_run_pipelined(x->kit, &j) : lab_run_pipelined(x->lp.L, &j);
    fr_close(w->src);
    int bad = rc == 0 ? fr_check(w->src, w->want, frames, why, sizeof why) : 0;
    if (kit)
        cr_assert(rc == 0 && bad == 0 && fr_point(w->src, &p) == 0, "grader error: the kit's base_run_pipelined (%d "
                  "frames at batch %d) returned %d with %d frames wrong: %s", frames, batch, rc, bad, bad ? why : "");
    cr_assert(rc == 0, "your lab_run_pipelined (%d frames at batch %d, %s) returned %d (see its message above)", frames,
              batch, x->lp.text, rc);
    cr_assert(bad == 0, "your lab_run_pipelined (%d frames at batch %d, %s, decode %.1f us a frame): %d frames came "
              "back wrong: %s", frames, batch, x->lp.text, x->cpu_us, bad, why);
    cr_assert(fr_point(w->src, &p) == 0, "your lab_run_pipelined (%d frames at batch %d): a frame was never decoded "
              "or delivered", frames, batch);
    return p;
}

/* kit_worst_ms - the kit's own pipelined loop at batch: the slowest frame of each of LAT_RUNS runs of LAT_RUN_FRAMES,
 * their median (ms); what this host lets a loop that queues nothing needless reach now */
static double kit_worst_ms(speed_ctx *x, int batch)
{
    double worsts[LAT_RUNS];
    for (int i = 0; i < LAT_RUNS; i++)
        worsts[i] = lat_run(x, LAT_RUN_FRAMES, batch, 1).latency_max_ms;
    return xl_median(worsts, LAT_RUNS);
}

/* lat_unsound - NOT GRADED when the kit's own loop at batch, measured now, is itself slower than limit_ms: the host
 * (its cores, its memory, the GPU) could not keep any loop's frames within the bound, so a miss is not the loop's */
static void lat_unsound(speed_ctx *x, int batch, double limit_ms, const char *what, const char *figures)
{
    double kit = kit_worst_ms(x, batch);
    if (kit > limit_ms) {
        char why[300];
        snprintf(why, sizeof why, "the kit's own pipelined loop at batch %d, measured next, had a worst latency of "
                 "%.2f ms (median of %d runs), over %.1f ms: this host could not keep any loop within the bound now",
                 batch, kit, LAT_RUNS, limit_ms);
        xl_not_graded(what, why, figures);
    }
}

XL_TEST(speed, latency, 10, XL_TIMED,
        "at the batch lab_choose_batch picks from the pipelined loop's measured sweep, every frame's result arrives "
        "within " XL_STR(LAB_LATENCY_MS) " ms of its decode (the slowest frame of the median of 3 runs), at a speed "
        "within 10% of the fastest batch that meets the bound; not graded when the kit's own loop misses it then",
        8)
{
    static const int sweep_b[] = {16, 32, 64, 128, 256};
    const int nsw = (int)(sizeof sweep_b / sizeof sweep_b[0]);
    world w;
    static speed_ctx x;
    static char table[4096], figs[5000];
    lab_point pts[10];
    speed_open(&w, &x, LAT_MAX_BATCH, LAT_RUN_FRAMES);
    /* the model run once at every batch of the sweep first: the first run at a new batch size loads the GEMM
     * kernels cuBLAS picks for it, a stall of milliseconds that made the first half of the sweep miss the bound at
     * every batch on the H100 */
    for (int i = 0; i < nsw; i++)
        prime_size(&w, sweep_b[i]);
    x.kit = base_loop_create(w.m, LAT_MAX_BATCH, SPEED_STREAMS, x.workers, SPEED_SLOTS);
    cr_assert(x.kit != NULL, "grader error: the kit's base_loop_create failed (see its message above)");
    for (int i = 0; i < nsw; i++) { /* and both loops once at each: the first run at a batch size is the slowest */
        lat_run(&x, 4 * sweep_b[i], sweep_b[i], 0);
        lat_run(&x, 4 * sweep_b[i], sweep_b[i], 1);
    }
    lat_run(&x, 2 * LAT_MAX_BATCH, LAT_MAX_BATCH, 0);
    for (int r = 0; r < 2 * nsw; r++) { /* each batch twice: in order, then reversed */
        int b = r < nsw ? sweep_b[r] : sweep_b[2 * nsw - 1 - r];
        pts[r] = lat_run(&x, LAT_FRAMES, b, 0);
        pts[r].batch = b;
        xl_results_row("loop", LOOP_HEADER, "pipelined,yours,%d,%d,%d,%d,%d,%.3f,%.1f,%.4f,%.4f,%.4f,,", b, LAT_FRAMES,
                       x.workers, SPEED_STREAMS, SPEED_SLOTS, x.cpu_us, pts[r].fps, pts[r].latency_p50_ms,
                       pts[r].latency_p99_ms, pts[r].latency_max_ms);
    }
    sweep_text(pts, 2 * nsw, table, sizeof table);
    int want = choose_with(&choosers[0], pts, 2 * nsw, LAB_LATENCY_MS, LAT_MAX_BATCH);
    /* the fastest batch of the sweep whose worst latency met the bound itself */
    double fastest = 0, least_worst = INFINITY;
    for (int i = 0; i < nsw; i++) {
        double worst = 0, f[2];
        for (int r = 0, k = 0; r < 2 * nsw; r++)
            if (pts[r].batch == sweep_b[i])
                worst = fmax(worst, pts[r].latency_max_ms), f[k++] = pts[r].fps;
        least_worst = fmin(least_worst, worst);
        if (worst <= LAB_LATENCY_MS)
            fastest = fmax(fastest, 0.5 * (f[0] + f[1]));
    }
    if (want == 0) { /* no batch of your loop met the margin: the loop's latency, a timed figure, is what failed */
        snprintf(figs, sizeof figs, "%s, decode %.1f us a frame; the best worst latency of the sweep %.2f ms. The "
                 "sweep:\n%s", x.lp.text, x.cpu_us, least_worst, table);
        lat_unsound(&x, sweep_b[0], LAB_LATENCY_MARGIN * LAB_LATENCY_MS, "the least worst latency of the sweep", figs);
        xl_timed_check(least_worst, XL_AT_MOST(LAB_LATENCY_MARGIN * LAB_LATENCY_MS),
                       "the least worst latency of the sweep (ms)",
                       "no batch of your pipelined loop's sweep (%d frames at 16 to 256, each twice; %s, decode %.1f "
                       "us a frame) kept every frame within %.1f ms (0.8 of the bound): the best was %.2f ms. A frame "
                       "waits for its batch's decode, the batches queued ahead of it, and its copy in, model run and "
                       "copy out: spread a batch's frames over the workers, and deliver each batch as soon as its "
                       "results are in. The sweep:\n%s",
                       LAT_FRAMES, x.lp.text, x.cpu_us, LAB_LATENCY_MARGIN * LAB_LATENCY_MS, least_worst, table);
    }
    int b = lab_choose_batch_kept(pts, 2 * nsw, LAB_LATENCY_MS, LAT_MAX_BATCH);
    cr_assert(b == want, "lab_choose_batch(your loop's sweep, n %d, bound_ms %g, max_batch %d) = %d, want %d%s. The "
              "sweep (%d frames a point):\n%s", 2 * nsw, LAB_LATENCY_MS, LAT_MAX_BATCH, b, want,
              b == 0 ? " (no batch chosen)" : "", LAT_FRAMES, table);
    /* a run's worst frame, the median of the runs: one stall of the host (a page fault, the scheduler) in one run is
     * not the loop's; a loop that queues too much is late in every run */
    double worsts[LAT_RUNS], fps[LAT_RUNS];
    for (int i = 0; i < LAT_RUNS; i++) {
        lab_point p = lat_run(&x, LAT_RUN_FRAMES, b, 0);
        worsts[i] = p.latency_max_ms, fps[i] = p.fps;
    }
    double med = xl_median(fps, LAT_RUNS), worst = xl_median(worsts, LAT_RUNS);
    if (worst > LAB_LATENCY_MS) {
        snprintf(figs, sizeof figs, "batch %d chosen; %d runs of %d frames: worst latency %.2f, %.2f and %.2f ms (%s, "
                 "decode %.1f us a frame)", b, LAT_RUNS, LAT_RUN_FRAMES, worsts[0], worsts[1], worsts[2], x.lp.text,
                 x.cpu_us);
        lat_unsound(&x, b, LAB_LATENCY_MS, "the worst latency at the chosen batch", figs);
    }
    xl_note("batch %d chosen; %d runs of %d frames there: worst latency %.2f, %.2f and %.2f ms, %.0f frames/s (the "
            "fastest batch within the bound ran at %.0f)", b, LAT_RUNS, LAT_RUN_FRAMES, worsts[0], worsts[1],
            worsts[2], med, fastest);
    xl_timed_check(worst, XL_AT_MOST(LAB_LATENCY_MS), "the worst latency at the chosen batch, median of the runs (ms)",
                   "at batch %d, chosen from your sweep, the slowest frame of a run took %.2f ms from the start of its "
                   "decode to its deliver (the median of %d runs of %d frames: %.2f, %.2f, %.2f ms; %s, decode %.1f us "
                   "a frame): lab.h: each frame's result within %.1f ms. The sweep:\n%s", b, worst, LAT_RUNS,
                   LAT_RUN_FRAMES, worsts[0], worsts[1], worsts[2], x.lp.text, x.cpu_us, LAB_LATENCY_MS, table);
    xl_timed_check(fastest > 0 ? med / fastest : 0, XL_AT_LEAST_PCT(FASTEST_NEED),
                   "speed at the chosen batch over the fastest batch within the bound",
                   "at batch %d your loop ran %.0f frames/s (median of %d runs of %d frames), %.0f%% of the fastest "
                   "batch of the sweep whose worst latency met %.1f ms (%.0f frames/s). The sweep:\n%s", b, med,
                   LAT_RUNS, LAT_RUN_FRAMES, fastest > 0 ? 100 * med / fastest : 0, LAB_LATENCY_MS, fastest, table);
    base_loop_destroy(x.kit);
    lab_loop_destroy(x.lp.L);
    world_close(&w);
}

/* ===== Part K: wait.narrow (timed) ===== */

typedef struct {
    world *w;
    loop_t lp;
    int first;
    int rc[M_COUNT], bad[M_COUNT];
    char why[M_COUNT][512];
} narrow_ctx;

/* narrow_call - mode k's run of NARROW_FRAMES frames (kit_ms_beside_busy_each), its results checked after */
static void narrow_call(void *ctx, int k)
{
    narrow_ctx *c = ctx;
    lab_job j = fr_job(c->w->src, NARROW_FRAMES, NARROW_BATCH, c->first);
    c->rc[k] = run_mode(k, c->lp.L, &j);
    fr_close(c->w->src);
    c->bad[k] = c->rc[k] == 0 ? fr_check(c->w->src, c->w->want, NARROW_FRAMES, c->why[k], sizeof c->why[k]) : 0;
}

/* expect_narrow_ok - each mode returned 0 with every frame right */
static void expect_narrow_ok(const narrow_ctx *c, const char *when)
{
    for (int k = 0; k < M_COUNT; k++) {
        cr_assert(c->rc[k] == 0, "%s (%d frames at batch %d, %s) returned %d %s (see its message above)",
                  mode_names[k], NARROW_FRAMES, NARROW_BATCH, c->lp.text, c->rc[k], when);
        cr_assert(c->bad[k] == 0, "%s (%d frames at batch %d, %s) %s: %d frames came back wrong: %s", mode_names[k],
                  NARROW_FRAMES, NARROW_BATCH, c->lp.text, when, c->bad[k], c->why[k]);
    }
}

/* narrow_nothing - a call that does nothing, for kit_ms_beside_busy's warm-up */
static void narrow_nothing(void *ctx)
{
    (void)ctx;
}

XL_TEST(wait, narrow, 5, XL_TIMED,
        "all three runs wait for their own work only: beside a 60 ms kernel on the legacy stream, the three take "
        "under " XL_STR(NARROW_MS) " ms together",
        4)
{
    world w;
    static narrow_ctx c;
    world_open(&w, NARROW_FRAMES);
    c.w = &w;
    fr_set_cpu_us(w.src, 0);
    /* before the loop is made, what the runtime holds from then on: the model's kernels at this batch, the legacy
     * stream and the kit's busy kernel */
    prime_size(&w, NARROW_BATCH);
    kit_ms_beside_busy(narrow_nothing, NULL, 1000000ull);
    loop_open(&w, &c.lp, (cfg){rnd(NARROW_BATCH, 32), rnd(2, 3), rnd(1, imin(4, max_workers())), rnd(3, 6)});
    c.first = rnd(0, FRAME_FIRST_MAX);
    expect_frames(&w, c.first, NARROW_FRAMES);
    for (int k = 0; k < M_COUNT; k++) /* warm-up: every path taken once */
        narrow_call(&c, k);
    expect_narrow_ok(&c, "");
    double ms[M_COUNT];
    double total = kit_ms_beside_busy_each(narrow_call, &c, M_COUNT, NARROW_NS, ms);
    expect_narrow_ok(&c, "beside the kit's 60 ms kernel");
    xl_timed_check(total, XL_AT_MOST(NARROW_MS), "the three runs' time beside an unrelated kernel (ms)",
                   "%s, %s and %s of %d frames at batch %d (%s) took %.1f, %.1f and %.1f ms, %.1f ms in all, while an "
                   "unrelated 60 ms kernel ran on the legacy stream: one of them waited for the whole device "
                   "(cudaDeviceSynchronize), for the legacy stream (a cudaMemcpy, stream 0), or used a stream made "
                   "by cudaStreamCreate, which waits for the legacy stream. lab.h: each run waits for this loop's "
                   "streams only", mode_names[0], mode_names[1], mode_names[2], NARROW_FRAMES, NARROW_BATCH,
                   c.lp.text, ms[0], ms[1], ms[2], total);
    xl_note("beside the 60 ms kernel: blocking %.1f, async %.1f, pipelined %.1f ms", ms[0], ms[1], ms[2]);
    loop_close(&w, &c.lp, NULL);
    world_close(&w);
}
