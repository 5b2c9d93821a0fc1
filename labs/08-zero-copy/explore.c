/* explore.c - lab 08's explorer: a fraction of a large host array read by a kernel, once or many times, by copying
 * all of it, by zero-copy and by managed memory. Do not edit.
 *
 * First the machine: the GPU's attributes that decide what it can read, and the rates behind every figure that
 * follows (the kit's code alone: device memory, the link, zero-copy in whole lines and in single elements,
 * prefetches there and back, page faults, pageable memory where the GPU can read it). Then the fraction sweep (each
 * fraction of LAB_FRACTIONS read once, in runs of 32 elements and of one element), the reuse sweep (1 %, 10 % and
 * 100 % read LAB_REUSES times), the decision grid that the grader's speed.choose checks your lab_choose against,
 * and the done-when checks. Every way runs the kit's code and yours where you wrote it; every point is timed as
 * wall time to the end of its work (for managed and pageable memory, until the host has read the span back), a
 * warm-up then the median of --reps runs, and its result is checked (a hash of out) on its first and last run before
 * its figures are shown. A function of yours that returns -1 for a job with nothing to read (not written yet) is
 * left out with one line.
 *     make run LAB=08 ARGS="--csv zero.csv"
 * zero.csv: sweep,way,impl,run_elems,fraction,reuse,array_bytes,read_bytes,ms_median,ms_min,ms_max,gbps,model
 * (sweep fraction, reuse or check; way copied, mapped, managed, managed-rm, managed-faults, managed-host or
 * pageable; impl kit or yours; run_elems the run length, 32 for a dense read; fraction count/n as read, 4 digits;
 * read_bytes count x 4 x reuse; gbps the useful rate, read_bytes / ms; model 1 where the time is the last measured
 * point plus passes at the measured pass time).
 * zero-model.csv, beside it (xl_csv_sibling): one row per run length (1 and 32): run_elems,array_bytes,l2_bytes,
 * link_gbps,device_copy_gbps,device_read_gbps,mapped_gbps,mapped_dense_gbps,prefetch_gbps,prefetch_back_gbps,
 * faults_gbps,pageable_gbps,cross_mapped_copied,cross_managed_copied,cross_mapped_managed,cross_fr,
 * reuse_cross_1pct,reuse_cross_10pct,rm_write_us (nan: not measured or no crossing).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/csv.h"
#include "common/gpu.h"
#include "common/pool.h"
#include "common/sizes.h"
#include "common/stats.h"
#include "common/timing.h"
#include "common/trace.h"
#include "labs/08-zero-copy/baseline.h"

static const char *prog = "08-zero-copy-explore";

#define MAX_REPS 50
#define MIN_BYTES ((long long)64 << 20)       /* --max at least: the decision grid needs its 64 MiB */
#define MAX_BYTES ((long long)16 << 30)
#define DEVICE_COPY_BYTES ((size_t)256 << 20)  /* the device-memory copy rate: one copy of this much */
#define GRID_BYTES ((size_t)64 << 20)          /* the decision grid's array: the grader's (its SPEED_BYTES) */
#define REAL_MS 200.0                          /* the reuse sweep times real passes while a point should take at
                                                * most this long; beyond it, the last real point + more passes */
#define THIN_RUNS 3                            /* timed runs a point of the managed-rm, -faults and -host series
                                                * and pageable memory: each from a cold start (the data on the host) */
#define CHECK_ROUNDS 5                         /* interleaved rounds of the done-when checks; medians */
#define RM_WRITE_BYTES ((size_t)64 << 20)      /* the host's writes to read-duplicated pages: over this much */
#define VALUE_MASK 0x00FFFFFFu                 /* the array's values: below 2^24, so that out[k] never wraps */
#define INIT_BYTE 0x11                         /* out starts as 0x11111111 in every element before each run: */
#define INIT_WORD 0x11111111u                  /* with values below 2^24, init + 150 passes stays below 2^32 */

static const double fractions[LAB_N_FRACTIONS] = LAB_FRACTIONS;
static const int reuses[LAB_N_REUSES] = LAB_REUSES;

/* ===== What is measured ===== */

enum { KIT, YOURS, NIMPLS };
static const char *const impl_csv[NIMPLS] = {"kit", "yours"};

/* The ways. The first three are yours and the kit's; the others the kit's only (shown, not graded). */
typedef enum { W_COPIED, W_MAPPED, W_MANAGED, W_RM, W_FAULTS, W_HOST, W_PAGEABLE, NWAYS } way;
#define MAIN_WAYS 3
static const char *const way_csv[NWAYS] = {"copied",         "mapped",       "managed", "managed-rm",
                                           "managed-faults", "managed-host", "pageable"};
static const char *const way_words[NWAYS] = {"copy everything",
                                             "zero-copy",
                                             "managed, prefetched",
                                             "managed, read-mostly, prefetched",
                                             "managed, page faults (no prefetch)",
                                             "managed, preferred on the host",
                                             "pageable (malloc'd, read by the GPU)"};
static const char *const way_head[NWAYS] = {"copy", "zero-copy", "managed", "rd-mostly", "faults", "host-pref",
                                            "pageable"};

/* The machine's rates, from the kit's code (the model table's columns; NaN: not measured). */
typedef struct {
    double link_gbps;          /* one pinned cudaMemcpyAsync of the array to the GPU */
    double device_copy_gbps;   /* one device-to-device copy of DEVICE_COPY_BYTES, bytes counted once */
    double device_read_gbps;   /* one dense gather pass from device memory, bytes read */
    double mapped_gbps[2];     /* zero-copy at 1/32 of the array, useful bytes: [0] one element a line, [1] lines */
    double mapped_dense_gbps;  /* zero-copy, all of the array */
    double prefetch_gbps;      /* cudaMemPrefetchAsync of the whole managed array to the GPU */
    double prefetch_back_gbps; /* and back to the host */
    double faults_gbps;        /* a dense pass over managed memory without a prefetch, with the host's read after */
    double pageable_gbps;      /* a dense pass over malloc'd memory (cold), with the host's read after */
    double rm_write_us;        /* the host's first write to a page the GPU holds a read-only copy of, us a page */
    double plain_write_us;     /* the same write again, the page the host's alone, us a page */
} rates;

/* One run length's fraction sweep: every way's timing at each fraction (median NaN: not measured). */
typedef struct {
    size_t run;
    int in[LAB_N_FRACTIONS];   /* 1: this fraction is swept at this run length */
    double frac[LAB_N_FRACTIONS]; /* count / n as read */
    xl_timing t[NWAYS][NIMPLS][LAB_N_FRACTIONS];
    double cross[3];           /* mapped = copied, managed = copied, mapped = managed (the kit's ways) */
} fsweep;

/* The reuse sweep at 1 %, 10 % and 100 %, runs of 32 (model 1: not measured, modelled). */
#define NREUSE_FRACS 3
static const double reuse_fracs[NREUSE_FRACS] = {0.01, 0.1, 1.0};
typedef struct {
    double frac[NREUSE_FRACS];
    xl_timing t[NREUSE_FRACS][MAIN_WAYS][NIMPLS][LAB_N_REUSES];
    int model[NREUSE_FRACS][MAIN_WAYS][NIMPLS][LAB_N_REUSES];
    double cross[NREUSE_FRACS]; /* the reuse where the kit's zero-copy = the kit's copy; NaN: none */
} rsweep;

/* Everything the measurements share. */
typedef struct {
    uint32_t *host;     /* mapped pinned memory, n elements: the array; the copied and mapped ways read it */
    uint32_t *dev;      /* device, n elements: the copied way's copy */
    uint32_t *out;      /* device, n elements: every way's output */
    uint32_t *managed;  /* managed memory without advice, n elements: the managed and managed-faults ways */
    uint32_t *rm;       /* managed, read-mostly: while its series runs */
    uint32_t *hostpref; /* managed, preferred location the host, accessed by this GPU: while its series runs */
    uint32_t *pageable; /* malloc'd, where the GPU can read pageable memory: from the rates to the fraction sweep */
    size_t n;
    int reps;
    int device;
    cudaStream_t stream; /* non-blocking */
    int can_map, concurrent, pageable_access, host_page_tables, l2_bytes;
    int have[NWAYS][NIMPLS]; /* 1: the way runs here, and (yours) your function is written */
    int have_gather, have_choose;
    xl_timing dense_thin[NWAYS]; /* the rates' dense managed-faults and pageable runs, kept for the sweep */
    rates r;
    fsweep fs[2];       /* [0] one element a line, [1] whole lines */
    rsweep rs;
    double check_ratio[3];
    xl_pool *pool;
    xl_csv *csv;
} ex;

/* ===== The data and the checks ===== */

/* fill_part - xl_pool_fn: one thread's share of the array, fresh random values below 2^24 */
typedef struct {
    uint32_t *a;
    size_t n;
    uint64_t seed;
} fill_ctx;

static void fill_part(int t, int threads, void *ctx)
{
    fill_ctx *c = ctx;
    size_t per = (c->n + threads - 1) / threads, lo = per * t, hi = lo + per < c->n ? lo + per : c->n;
    if (lo >= hi)
        return;
    xl_fill_random(c->a + lo, (hi - lo) * sizeof(uint32_t), c->seed + 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1));
    for (size_t i = lo; i < hi; i++)
        c->a[i] &= VALUE_MASK;
}

/* refill - fresh data in the array, and the same in the managed copy (and the pageable one, when there is one) */
static void refill(ex *e)
{
    fill_ctx c = {e->host, e->n, xl_fresh_seed()};
    XL_CHECK(cudaDeviceSynchronize());
    xl_pool_run(e->pool, fill_part, &c);
    xl_pool_memcpy(e->pool, e->managed, e->host, e->n * sizeof(uint32_t));
    if (e->pageable)
        xl_pool_memcpy(e->pool, e->pageable, e->host, e->n * sizeof(uint32_t));
}

/* last_of - the last element a pattern reads */
static size_t last_of(const lab_pattern *p)
{
    return p->first + (p->count - 1) / p->run * p->stride + (p->count - 1) % p->run;
}

/* job_for - the job of way w over pattern p: its array (the host pointer for the copied and mapped ways) into out */
static lab_job job_for(const ex *e, way w, lab_pattern p)
{
    const uint32_t *src = e->host;
    if (w == W_MANAGED || w == W_FAULTS)
        src = e->managed;
    else if (w == W_RM)
        src = e->rm;
    else if (w == W_HOST)
        src = e->hostpref;
    else if (w == W_PAGEABLE)
        src = e->pageable;
    return (lab_job){src, e->n, p, e->out};
}

/* hash_of - the hash a pass of p adds to out (what out holds after one pass from all zeros), from the host's array.
 * With values below 2^24 nothing wraps, so k passes from INIT_WORD give INIT_WORD * count^2 + k * hash_of. */
static uint64_t hash_of(const ex *e, lab_pattern p)
{
    lab_job j = {e->host, e->n, p, e->out};
    return base_expect_hash(e->host, &j, 0, 1);
}

/* describe - "zero-copy (yours), 1.000 % of 268435456 elements in runs of 32, 10 passes", into buf; way NWAYS is
 * a gather pass from device memory */
static const char *describe(way w, int impl, const lab_job *j, int reps, char *buf, size_t len)
{
    snprintf(buf, len, "%s (%s), %.3f %% of %zu elements in runs of %zu, %d pass%s",
             w == NWAYS ? "a gather from device memory" : way_words[w],
             impl == YOURS ? "yours" : "the kit's", 100.0 * (double)j->pat.count / (double)j->n, j->n, j->pat.run,
             reps, reps == 1 ? "" : "es");
    return buf;
}

/* check_out - returns when out holds INIT_WORD plus passes passes of j (g: hash_of its pattern); else one line and
 * exit 1 */
static void check_out(ex *e, way w, int impl, const lab_job *j, int passes, uint64_t g)
{
    char what[160];
    int ok = 1;
    uint64_t c = j->pat.count;
    uint64_t got = base_out_hash(j->out, j->pat.count, e->stream, &ok);
    uint64_t want = (uint64_t)INIT_WORD * c * c + (uint64_t)passes * g;
    if (!ok)
        xl_fail("%s: the kit's hash of out failed (see the message above)", describe(w, impl, j, passes, what,
                                                                                     sizeof what));
    if (got != want)
        xl_fail("%s: out is wrong after the call (its hash is %016llx, not %016llx: an element missed, read twice, "
                "or a pass too few or too many); make grade LAB=08 says which element",
                describe(w, impl, j, passes, what, sizeof what), (unsigned long long)got, (unsigned long long)want);
}

/* ===== Prefetch and advice, for the explorer's own use (CUDA 12 and 13) ===== */

/* prefetch_to - cudaMemPrefetchAsync of [p, p + bytes) to device, or to the host when device is -1, on s */
static void prefetch_to(const void *p, size_t bytes, int device, cudaStream_t s)
{
#if LAB_LOCATION_API
    struct cudaMemLocation loc = {device < 0 ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice,
                                  device < 0 ? 0 : device};
    XL_CHECK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
#else
    XL_CHECK(cudaMemPrefetchAsync(p, bytes, device < 0 ? cudaCpuDeviceId : device, s));
#endif
}

/* read_mostly - sets (on 1) or unsets (on 0) cudaMemAdviseSetReadMostly over [p, p + bytes) */
static void read_mostly(const void *p, size_t bytes, int on, int device)
{
    enum cudaMemoryAdvise a = on ? cudaMemAdviseSetReadMostly : cudaMemAdviseUnsetReadMostly;
#if LAB_LOCATION_API
    struct cudaMemLocation loc = {cudaMemLocationTypeDevice, device}; /* ignored for this advice */
    XL_CHECK(cudaMemAdvise(p, bytes, a, loc));
#else
    XL_CHECK(cudaMemAdvise(p, bytes, a, device));
#endif
}

/* rm_cold - the read-mostly array back to one copy, on the host, still read-mostly: as if the host had just written
 * it (untimed; a rewrite of every page by the host would cost a fault a page) */
static void rm_cold(ex *e)
{
    size_t bytes = e->n * sizeof(uint32_t);
    XL_CHECK(cudaStreamSynchronize(e->stream));
    read_mostly(e->rm, bytes, 0, e->device);
    prefetch_to(e->rm, bytes, -1, e->stream);
    XL_CHECK(cudaStreamSynchronize(e->stream));
    read_mostly(e->rm, bytes, 1, e->device);
}

/* ===== Timing a way ===== */

/* start - queues way w (impl) on job j, reps passes, on e's stream; what the function returned */
static int start(ex *e, way w, int impl, const lab_job *j, int reps)
{
    cudaStream_t s = e->stream;
    int y = impl == YOURS;
    switch (w) {
    case W_COPIED:
        return y ? lab_read_copied(j, e->dev, reps, s) : base_read_copied(j, e->dev, reps, s);
    case W_MAPPED:
        return y ? lab_read_mapped(j, reps, s) : base_read_mapped(j, reps, s);
    case W_MANAGED:
        return y ? lab_read_managed(j, reps, 1, s) : base_read_managed(j, reps, 1, s);
    case W_RM:
        return base_read_managed(j, reps, 1, s);
    case W_FAULTS:
    case W_HOST:
        return base_read_managed(j, reps, 0, s);
    case W_PAGEABLE:
        for (int r = 0; r < reps; r++)
            if (base_gather(j, s) != 0)
                return -1;
        return 0;
    default:
        return -1;
    }
}

/* touches - 1 when way w's time includes the host's read of the span afterwards (the data comes back to it) */
static int touches(way w)
{
    return w >= W_MANAGED;
}

/* one_run - one call of way w (impl) on j, reps passes, from a freshly reset out (and, checked, a poisoned copy
 * for the copied way): wall ms through cudaStreamSynchronize and, for managed and pageable memory, the host's read
 * of one word a page of the span. Checked runs have their result compared with g (hash_of). Exits after one line
 * when the call returns an error or the result is wrong. */
static double one_run(ex *e, way w, int impl, const lab_job *j, int reps, uint64_t g, int checked)
{
    char what[160];
    size_t first = j->pat.first, span = (last_of(&j->pat) - first + 1) * sizeof(uint32_t);
    if (w == W_RM)
        rm_cold(e);
    XL_CHECK(cudaMemsetAsync(e->out, INIT_BYTE, j->pat.count * sizeof(uint32_t), e->stream));
    if (checked && w == W_COPIED)
        XL_CHECK(cudaMemsetAsync(e->dev, XL_POISON_BYTE, e->n * sizeof(uint32_t), e->stream));
    XL_CHECK(cudaStreamSynchronize(e->stream));
    double t0 = xl_now_ms();
    int rc = start(e, w, impl, j, reps);
    XL_CHECK(cudaStreamSynchronize(e->stream));
    if (rc == 0 && touches(w))
        base_host_touch(j->src + first, span);
    double ms = xl_now_ms() - t0;
    if (rc != 0)
        xl_fail("%s: returned %d (see its message above)", describe(w, impl, j, reps, what, sizeof what), rc);
    if (checked)
        check_out(e, w, impl, j, reps, g);
    return ms;
}

/* thin - 1 for the series that start cold every run and are timed THIN_RUNS times */
static int thin(way w)
{
    return w >= W_RM;
}

/* measure - way w (impl) on j, reps passes: a warm-up (not for page faults and pageable memory, where every run must
 * start cold), then --reps runs (THIN_RUNS for the thin series), the first and last checked; into t */
static void measure(ex *e, way w, int impl, const lab_job *j, int reps, uint64_t g, xl_timing *t)
{
    double ms[MAX_REPS];
    int runs = thin(w) ? THIN_RUNS : e->reps;
    if (w != W_FAULTS && w != W_PAGEABLE)
        one_run(e, w, impl, j, reps, g, 0);
    for (int r = 0; r < runs; r++)
        ms[r] = one_run(e, w, impl, j, reps, g, r == 0 || r == runs - 1);
    xl_summarize(ms, runs, t);
}

/* csv_row - one row of the CSV, when there is one */
static void csv_row(ex *e, const char *sweep, way w, int impl, const lab_job *j, int reuse, const xl_timing *t,
                    int model)
{
    double read = (double)j->pat.count * sizeof(uint32_t) * reuse;
    size_t run = j->pat.run >= j->n ? LAB_LINE_ELEMS : j->pat.run; /* a dense read is one of whole lines */
    if (e->csv)
        xl_csv_row(e->csv, "%s,%s,%s,%zu,%.4g,%d,%zu,%.0f,%.5f,%.5f,%.5f,%.3f,%d", sweep, way_csv[w], impl_csv[impl],
                   run, (double)j->pat.count / (double)j->n, reuse, j->n * sizeof(uint32_t), read,
                   t->median_ms, t->min_ms, t->max_ms, xl_gbps(read, t->median_ms), model);
}

/* ===== The thin series' arrays ===== */

/* thin_array - the array way w reads, allocated (the kit's base_managed_alloc, or malloc) and filled from the host's
 * array; 0, or -1 with a line when it cannot be had (the series is then left out) */
static int thin_array(ex *e, way w)
{
    size_t bytes = e->n * sizeof(uint32_t);
    uint32_t **slot = w == W_RM ? &e->rm : w == W_HOST ? &e->hostpref : w == W_PAGEABLE ? &e->pageable : NULL;
    if (!slot || *slot)
        return 0;
    if (w == W_PAGEABLE)
        *slot = malloc(bytes);
    else
        *slot = base_managed_alloc(bytes, w == W_RM ? LAB_ADVICE_READ_MOSTLY : LAB_ADVICE_HOST);
    if (!*slot) {
        printf("  left out: %s: no memory for another copy of the array\n", way_words[w]);
        return -1;
    }
    xl_pool_memcpy(e->pool, *slot, e->host, bytes);
    return 0;
}

/* drop_array - frees the array of way w (not the managed one, which the main ways share) */
static void drop_array(ex *e, way w)
{
    XL_CHECK(cudaDeviceSynchronize());
    if (w == W_RM && e->rm) {
        XL_CHECK(cudaFree(e->rm));
        e->rm = NULL;
    }
    if (w == W_HOST && e->hostpref) {
        XL_CHECK(cudaFree(e->hostpref));
        e->hostpref = NULL;
    }
    if (w == W_PAGEABLE && e->pageable) {
        free(e->pageable);
        e->pageable = NULL;
    }
}

/* ===== The machine's rates ===== */

/* A pass of a gather, as xl_work_fn: the kit's base_gather or your lab_gather, or the kit's zero-copy way. */
typedef struct {
    lab_job j;
    int impl;
    int mapped; /* 1: base_read_mapped, 1 pass */
} pass_ctx;

static void pass_work(cudaStream_t s, void *ctx)
{
    pass_ctx *c = ctx;
    int rc = c->mapped ? base_read_mapped(&c->j, 1, s)
                       : c->impl == YOURS ? lab_gather(&c->j, s) : base_gather(&c->j, s);
    if (rc != 0)
        xl_fail("%s pass returned %d (see its message above)", c->impl == YOURS ? "your lab_gather" : "the kit's",
                rc);
}

/* pass_ms - one pass of pattern p (device time, events: a warm-up, then the median of --reps), from dev (holding
 * the array; mapped 0) or through the mapping (the kit's zero-copy way; mapped 1), by impl's gather; every pass's
 * sum checked at the end */
static double pass_ms(ex *e, lab_pattern p, int impl, int mapped, uint64_t g)
{
    pass_ctx c = {{mapped ? e->host : e->dev, e->n, p, e->out}, impl, mapped};
    xl_timing t;
    XL_CHECK(cudaMemsetAsync(e->out, INIT_BYTE, p.count * sizeof(uint32_t), e->stream));
    xl_time_gpu(pass_work, &c, e->stream, 1, e->reps, &t);
    check_out(e, mapped ? W_MAPPED : NWAYS, impl, &c.j, 1 + e->reps, g);
    return t.median_ms;
}

/* upload - the array into dev (for passes from device memory) */
static void upload(ex *e)
{
    XL_CHECK(cudaMemcpy(e->dev, e->host, e->n * sizeof(uint32_t), cudaMemcpyHostToDevice));
}

/* copy_gbps - one cudaMemcpyAsync of bytes from src to dst (events: a warm-up, then the median of --reps), GB/s */
static double copy_gbps(ex *e, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    xl_copy_job c = {dst, src, bytes, kind};
    xl_timing t;
    xl_time_gpu(xl_memcpy_async_work, &c, e->stream, 1, e->reps, &t);
    return xl_gbps((double)bytes, t.median_ms);
}

/* prefetch_rates - the whole managed array to the GPU and back, each timed with events (a warm-up, then the median
 * of --reps); then the host finds the array unchanged */
static void prefetch_rates(ex *e)
{
    size_t bytes = e->n * sizeof(uint32_t), bad;
    double there[MAX_REPS], back[MAX_REPS];
    cudaEvent_t ev[3];
    e->r.prefetch_gbps = e->r.prefetch_back_gbps = NAN;
    if (!e->concurrent)
        return;
    for (int i = 0; i < 3; i++)
        XL_CHECK(cudaEventCreate(&ev[i]));
    for (int r = -1; r < e->reps; r++) {
        float a, b;
        XL_CHECK(cudaEventRecord(ev[0], e->stream));
        prefetch_to(e->managed, bytes, e->device, e->stream);
        XL_CHECK(cudaEventRecord(ev[1], e->stream));
        prefetch_to(e->managed, bytes, -1, e->stream);
        XL_CHECK(cudaEventRecord(ev[2], e->stream));
        XL_CHECK(cudaEventSynchronize(ev[2]));
        XL_CHECK(cudaEventElapsedTime(&a, ev[0], ev[1]));
        XL_CHECK(cudaEventElapsedTime(&b, ev[1], ev[2]));
        if (r >= 0)
            there[r] = a, back[r] = b;
    }
    for (int i = 0; i < 3; i++)
        XL_CHECK(cudaEventDestroy(ev[i]));
    if (xl_compare(e->managed, e->host, bytes, &bad) != 0)
        xl_fail("the managed array came back from the GPU changed, from byte %zu on", bad);
    e->r.prefetch_gbps = xl_gbps((double)bytes, xl_median(there, e->reps));
    e->r.prefetch_back_gbps = xl_gbps((double)bytes, xl_median(back, e->reps));
}

/* measure_rates - the rates line by line (the kit's code), and the dense page-fault and pageable runs the fraction
 * sweep reuses */
static void measure_rates(ex *e)
{
    char a[32];
    rates *r = &e->r;
    lab_pattern dense = base_pattern(e->n, 1.0, LAB_LINE_ELEMS);
    size_t bytes = e->n * sizeof(uint32_t), dcopy = bytes < DEVICE_COPY_BYTES ? bytes : DEVICE_COPY_BYTES;
    uint64_t gd = hash_of(e, dense);
    XL_RANGE_PUSH("rates");
    printf("rates (the kit's code; device-side ones timed with events, median of %d after a warm-up):\n", e->reps);
    r->link_gbps = copy_gbps(e, e->dev, e->host, bytes, cudaMemcpyHostToDevice);
    r->device_read_gbps = xl_gbps((double)bytes, pass_ms(e, dense, KIT, 0, gd)); /* dev holds the array: checked */
    r->device_copy_gbps = copy_gbps(e, e->out, e->dev, dcopy, cudaMemcpyDeviceToDevice);
    {
        lab_pattern head = {0, dcopy / sizeof(uint32_t), dcopy / sizeof(uint32_t), dcopy / sizeof(uint32_t)};
        lab_job j = {e->host, e->n, head, e->out};
        int ok = 1;
        if (base_out_hash(e->out, head.count, e->stream, &ok) != base_expect_hash(e->host, &j, 0, 1) || !ok)
            xl_fail("the device-to-device copy of %s is wrong", xl_format_size(dcopy, a, sizeof a));
    }
    printf("  device memory: a copy of %s on the GPU %.0f GB/s (bytes counted once); a dense gather pass reads "
           "%.0f GB/s\n", xl_format_size(dcopy, a, sizeof a), r->device_copy_gbps, r->device_read_gbps);
    printf("  the link: one pinned copy of the array to the GPU %.1f GB/s; device memory moves %.0fx the link\n",
           r->link_gbps, r->device_copy_gbps / r->link_gbps);
    for (int k = 0; k < 2; k++) {
        lab_pattern p = base_pattern(e->n, 1.0 / LAB_LINE_ELEMS, k ? LAB_LINE_ELEMS : 1);
        r->mapped_gbps[k] = xl_gbps((double)p.count * sizeof(uint32_t), pass_ms(e, p, KIT, 1, hash_of(e, p)));
    }
    r->mapped_dense_gbps = xl_gbps((double)bytes, pass_ms(e, dense, KIT, 1, gd));
    printf("  zero-copy (useful bytes): 1/32 of the array in whole 128-byte lines %.1f GB/s, one element a line "
           "%.2f GB/s; all of it %.1f GB/s\n", r->mapped_gbps[1], r->mapped_gbps[0], r->mapped_dense_gbps);
    prefetch_rates(e);
    if (e->concurrent)
        printf("  managed memory: a prefetch of the whole array to the GPU %.1f GB/s, back to the host %.1f GB/s\n",
               r->prefetch_gbps, r->prefetch_back_gbps);
    else
        printf("  managed memory: no prefetch on this GPU (cudaDevAttrConcurrentManagedAccess 0)\n");
    r->faults_gbps = r->pageable_gbps = NAN;
    if (e->have[W_FAULTS][KIT]) {
        lab_job j = job_for(e, W_FAULTS, dense);
        measure(e, W_FAULTS, KIT, &j, 1, gd, &e->dense_thin[W_FAULTS]);
        r->faults_gbps = xl_gbps((double)bytes, e->dense_thin[W_FAULTS].median_ms);
        printf("  page faults: a dense pass over managed memory without a prefetch, then the host's read: %.2f GB/s "
               "(%.1f ms, %d cold runs)\n", r->faults_gbps, e->dense_thin[W_FAULTS].median_ms, THIN_RUNS);
    }
    if (e->have[W_PAGEABLE][KIT] && thin_array(e, W_PAGEABLE) == 0) {
        lab_job j = job_for(e, W_PAGEABLE, dense);
        measure(e, W_PAGEABLE, KIT, &j, 1, gd, &e->dense_thin[W_PAGEABLE]);
        r->pageable_gbps = xl_gbps((double)bytes, e->dense_thin[W_PAGEABLE].median_ms);
        printf("  the fourth way: a dense pass over malloc'd memory, then the host's read: %.2f GB/s (%.1f ms, %d "
               "cold runs)\n", r->pageable_gbps, e->dense_thin[W_PAGEABLE].median_ms, THIN_RUNS);
    } else {
        e->have[W_PAGEABLE][KIT] = 0;
    }
    XL_RANGE_POP();
}

/* rm_write_cost - the host writes one word of each page of the read-mostly array's first RM_WRITE_BYTES while the
 * GPU holds a read-only copy of them (each write must invalidate that copy), then again (the pages the host's
 * alone now): us a page, into the rates */
static void rm_write_cost(ex *e)
{
    size_t bytes = e->n * sizeof(uint32_t) < RM_WRITE_BYTES ? e->n * sizeof(uint32_t) : RM_WRITE_BYTES;
    size_t step = (size_t)sysconf(_SC_PAGESIZE) / sizeof(uint32_t), pages = bytes / sizeof(uint32_t) / step;
    volatile uint32_t *a = e->rm;
    double us[2];
    prefetch_to(e->rm, bytes, e->device, e->stream);
    XL_CHECK(cudaStreamSynchronize(e->stream));
    for (int k = 0; k < 2; k++) {
        double t0 = xl_now_ms();
        for (size_t i = 0; i < pages; i++)
            a[i * step] = a[i * step];
        us[k] = (xl_now_ms() - t0) * 1e3 / (double)pages;
    }
    e->r.rm_write_us = us[0];
    e->r.plain_write_us = us[1];
}

/* ===== The fraction sweep ===== */

/* swept - 1 when way w is measured at fraction i for runs of run elements: one element a line reads at most 1/32 of
 * the array; the thin series only in whole lines, at the decades (0.1 %, 1 %, 10 %, 100 %) */
static int swept(const fsweep *f, way w, int i)
{
    if (!f->in[i])
        return 0;
    if (!thin(w))
        return 1;
    double l = log10(fractions[i]);
    return f->run == LAB_LINE_ELEMS && fabs(l - round(l)) < 1e-9;
}

/* cell - a median in ms for a table (4 significant digits), "-" when not measured, into buf */
static const char *cell(double ms, int model, char *buf, size_t len)
{
    if (isnan(ms))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%s%.4g", model ? "~" : "", ms);
    return buf;
}

/* crossing - the first x, from the smallest, where the series a and b cross (log-log interpolation between
 * neighbouring points where both were measured); NaN when they do not cross */
static double crossing(const double *x, const double *a, const double *b, int n)
{
    int prev = -1;
    for (int i = 0; i < n; i++) {
        if (!(a[i] > 0) || !(b[i] > 0) || !(x[i] > 0))
            continue;
        double d1 = log(a[i] / b[i]);
        if (d1 == 0)
            return x[i];
        if (prev >= 0) {
            double d0 = log(a[prev] / b[prev]);
            if ((d0 < 0) != (d1 < 0)) {
                double t = d0 / (d0 - d1);
                return exp(log(x[prev]) + t * (log(x[i]) - log(x[prev])));
            }
        }
        prev = i;
    }
    return NAN;
}

/* pct_text - a fraction as a percentage for a person ("3.2 %"), or "none in the sweep" for NaN, into buf */
static const char *pct_text(double f, char *buf, size_t len)
{
    if (isnan(f))
        snprintf(buf, len, "none in the sweep");
    else
        snprintf(buf, len, "%.3g %%", 100 * f);
    return buf;
}

/* fraction_crossings - the three crossings of the kit's ways at reuse 1, of impl's ways into c */
static void fraction_crossings(const fsweep *f, int impl, double c[3])
{
    double x[LAB_N_FRACTIONS], s[3][LAB_N_FRACTIONS];
    for (int i = 0; i < LAB_N_FRACTIONS; i++) {
        x[i] = f->frac[i];
        for (int w = 0; w < MAIN_WAYS; w++)
            s[w][i] = f->t[w][impl][i].median_ms;
    }
    c[0] = crossing(x, s[W_MAPPED], s[W_COPIED], LAB_N_FRACTIONS);
    c[1] = crossing(x, s[W_MANAGED], s[W_COPIED], LAB_N_FRACTIONS);
    c[2] = crossing(x, s[W_MAPPED], s[W_MANAGED], LAB_N_FRACTIONS);
}

/* print_fsweep - the fraction sweep's table and its crossings */
static void print_fsweep(const ex *e, const fsweep *f)
{
    char b[32], c0[32], c1[32], c2[32];
    int cols[2 * NWAYS][2], nc = 0; /* (way, impl) of each column */
    for (int w = 0; w < NWAYS; w++)
        for (int i = 0; i < NIMPLS; i++)
            if (e->have[w][i] && (f->run == LAB_LINE_ELEMS || !thin((way)w)))
                cols[nc][0] = w, cols[nc][1] = i, nc++;
    printf("\n%s: ms per call to the end of its work (median), useful GB/s of the kit's zero-copy:\n",
           f->run == 1 ? "read once, one element a 128-byte line (runs of 1)" : "read once, in whole 128-byte lines "
                                                                                "(runs of 32)");
    printf("  %-9s", "fraction");
    for (int k = 0; k < nc; k++) {
        char h[24];
        snprintf(h, sizeof h, "%s%s", way_head[cols[k][0]], cols[k][1] == YOURS ? ":you" : cols[k][0] < MAIN_WAYS ?
                                                                                           ":kit" : "");
        printf(" %11s", h);
    }
    printf(" %9s\n", "zc GB/s");
    for (int i = 0; i < LAB_N_FRACTIONS; i++) {
        if (!f->in[i])
            continue;
        printf("  %-9s", pct_text(f->frac[i], b, sizeof b));
        for (int k = 0; k < nc; k++)
            printf(" %11s", cell(f->t[cols[k][0]][cols[k][1]][i].median_ms, 0, b, sizeof b));
        double zc = f->t[W_MAPPED][KIT][i].median_ms;
        printf(" %9.2f\n", xl_gbps(f->frac[i] * (double)e->n * sizeof(uint32_t), zc));
    }
    printf("  crossings (the kit's ways): zero-copy = copy at %s; managed = copy at %s; zero-copy = managed at %s\n",
           pct_text(f->cross[0], c0, sizeof c0), pct_text(f->cross[1], c1, sizeof c1),
           pct_text(f->cross[2], c2, sizeof c2));
    if (e->have[W_COPIED][YOURS] && e->have[W_MAPPED][YOURS]) {
        double mine[3];
        fraction_crossings(f, YOURS, mine);
        printf("  with your ways: zero-copy = copy at %s\n", pct_text(mine[0], c0, sizeof c0));
    }
}

/* sweep_fractions - one run length's sweep: every way that runs here, series by series (a line each as it ends),
 * then the table */
static void sweep_fractions(ex *e, fsweep *f, size_t run)
{
    uint64_t g[LAB_N_FRACTIONS];
    lab_pattern p[LAB_N_FRACTIONS];
    char name[64];
    XL_RANGE_PUSH(run == 1 ? "fraction sweep, runs of 1" : "fraction sweep, runs of 32");
    f->run = run;
    refill(e);
    for (int i = 0; i < LAB_N_FRACTIONS; i++) {
        f->in[i] = run == LAB_LINE_ELEMS || fractions[i] <= 1.0 / LAB_LINE_ELEMS;
        p[i] = base_pattern(e->n, fractions[i], run);
        f->frac[i] = (double)p[i].count / (double)e->n;
        g[i] = f->in[i] ? hash_of(e, p[i]) : 0;
        for (int w = 0; w < NWAYS; w++)
            for (int k = 0; k < NIMPLS; k++)
                f->t[w][k][i] = (xl_timing){NAN, NAN, NAN, 0};
    }
    printf("\nfraction sweep, runs of %zu%s:\n", run,
           run == 1 ? " (one element a line can read at most 1/32 of the array)" : "");
    for (int w = 0; w < NWAYS; w++) {
        if (thin((way)w) && run != LAB_LINE_ELEMS)
            continue;
        for (int k = 0; k < NIMPLS; k++) {
            if (!e->have[w][k] || thin_array(e, (way)w) != 0)
                continue;
            double t0 = xl_now_ms();
            int points = 0;
            for (int i = 0; i < LAB_N_FRACTIONS; i++) {
                if (!swept(f, (way)w, i))
                    continue;
                lab_job j = job_for(e, (way)w, p[i]);
                if (thin((way)w) && fractions[i] == 1.0 && e->dense_thin[w].reps > 0)
                    f->t[w][k][i] = e->dense_thin[w]; /* measured for the rates, on the same pattern */
                else
                    measure(e, (way)w, k, &j, 1, g[i], &f->t[w][k][i]);
                csv_row(e, "fraction", (way)w, k, &j, 1, &f->t[w][k][i], 0);
                points++;
            }
            snprintf(name, sizeof name, "%s%s", way_words[w], w < MAIN_WAYS ? (k == YOURS ? ", yours" : ", the kit's")
                                                                            : "");
            printf("  %-48s %2d points, %.1f s\n", name, points, (xl_now_ms() - t0) / 1e3);
        }
        if (w == W_RM && e->rm)
            rm_write_cost(e);
        if (thin((way)w))
            drop_array(e, (way)w);
    }
    fraction_crossings(f, KIT, f->cross);
    print_fsweep(e, f);
    XL_RANGE_POP();
}

/* ===== The reuse sweep ===== */

/* sweep_reuse - 1 %, 10 % and 100 % in whole lines, read LAB_REUSES times by the three ways: real passes while a
 * point should take at most REAL_MS, then the last real point plus passes at the measured pass time (model);
 * reuse 1 is the fraction sweep's. A table per fraction, and where zero-copy stops paying. */
static void sweep_reuse(ex *e)
{
    rsweep *s = &e->rs;
    const fsweep *f = &e->fs[1];
    char b[32];
    XL_RANGE_PUSH("reuse sweep");
    refill(e);
    upload(e);
    printf("\nreuse sweep, runs of 32: ms per call to the end of its work (median; ~ a model: the last measured point "
           "and more passes at the measured pass time, where a call would take over %.0f ms)\n", REAL_MS);
    for (int q = 0; q < NREUSE_FRACS; q++) {
        int fi = 0;
        while (fi < LAB_N_FRACTIONS - 1 && fabs(fractions[fi] - reuse_fracs[q]) > 1e-12)
            fi++;
        lab_pattern p = base_pattern(e->n, reuse_fracs[q], LAB_LINE_ELEMS);
        uint64_t g = hash_of(e, p);
        s->frac[q] = (double)p.count / (double)e->n;
        for (int w = 0; w < MAIN_WAYS; w++)
            for (int k = 0; k < NIMPLS; k++) {
                if (!e->have[w][k])
                    continue;
                /* a pass: from device memory for the copied and managed ways, the call itself for zero-copy */
                int gimpl = k == YOURS && e->have_gather ? YOURS : KIT;
                double pass = w == W_MAPPED ? f->t[w][k][fi].median_ms : (upload(e), pass_ms(e, p, gimpl, 0, g));
                int r0 = 1, gone = 0;
                double t0 = f->t[w][k][fi].median_ms;
                for (int i = 0; i < LAB_N_REUSES; i++) {
                    int r = reuses[i];
                    lab_job j = job_for(e, (way)w, p);
                    xl_timing *t = &s->t[q][w][k][i];
                    double guess = t0 + (r - r0) * pass;
                    s->model[q][w][k][i] = 0;
                    if (r == 1) {
                        *t = f->t[w][k][fi];
                    } else if (!gone && guess <= REAL_MS) {
                        measure(e, (way)w, k, &j, r, g, t);
                        r0 = r, t0 = t->median_ms;
                    } else {
                        gone = 1;
                        *t = (xl_timing){guess, guess, guess, 0};
                        s->model[q][w][k][i] = 1;
                    }
                    csv_row(e, "reuse", (way)w, k, &j, r, t, s->model[q][w][k][i]);
                }
            }
        double x[LAB_N_REUSES], zc[LAB_N_REUSES], cp[LAB_N_REUSES];
        for (int i = 0; i < LAB_N_REUSES; i++)
            x[i] = reuses[i], zc[i] = s->t[q][W_MAPPED][KIT][i].median_ms, cp[i] = s->t[q][W_COPIED][KIT][i].median_ms;
        s->cross[q] = crossing(x, zc, cp, LAB_N_REUSES);
        printf("  %s of the array:\n  %-6s", pct_text(s->frac[q], b, sizeof b), "reuse");
        for (int w = 0; w < MAIN_WAYS; w++)
            for (int k = 0; k < NIMPLS; k++)
                if (e->have[w][k]) {
                    char h[24];
                    snprintf(h, sizeof h, "%s:%s", way_head[w], k == YOURS ? "you" : "kit");
                    printf(" %12s", h);
                }
        printf("\n");
        for (int i = 0; i < LAB_N_REUSES; i++) {
            printf("  %-6d", reuses[i]);
            for (int w = 0; w < MAIN_WAYS; w++)
                for (int k = 0; k < NIMPLS; k++)
                    if (e->have[w][k])
                        printf(" %12s", cell(s->t[q][w][k][i].median_ms, s->model[q][w][k][i], b, sizeof b));
            printf("\n");
        }
        if (isnan(s->cross[q]))
            printf("  zero-copy = copy (the kit's ways): no crossing between reuse 1 and 100\n");
        else
            printf("  zero-copy = copy (the kit's ways) at reuse %.3g: fraction x reuse = %.3g\n", s->cross[q],
                   s->frac[q] * s->cross[q]);
    }
    XL_RANGE_POP();
}

/* ===== The decision grid ===== */

/* way_letter - C (copied), Z (zero-copy), M (managed), - for anything else */
static char way_letter(int w)
{
    return w == LAB_COPIED ? 'C' : w == LAB_MAPPED ? 'Z' : w == LAB_MANAGED ? 'M' : '-';
}

/* decision_grid - the kit's measurement of the three ways on a GRID_BYTES array (base_measure_rates: what the
 * grader's speed.choose uses), and your lab_choose at every sweep point, * where the grader would not accept
 * it. The array's data is overwritten. */
static void decision_grid(ex *e)
{
    base_rates r;
    char why[256], sz[32];
    size_t n = e->n < GRID_BYTES / sizeof(uint32_t) ? e->n : GRID_BYTES / sizeof(uint32_t);
    int wrong = 0, reps = e->reps < 3 ? 3 : e->reps;
    XL_RANGE_PUSH("decision grid");
    printf("\ndecision grid: the kit's measurement of a %s array (the grader's speed.choose); in brackets the ways "
           "within %.1fx of the fastest (C copy everything, Z zero-copy, M managed), before them your lab_choose, * "
           "where the grader would not accept it\n", xl_format_size(n * sizeof(uint32_t), sz, sizeof sz),
           BASE_DECIDE_MARGIN);
    if (base_measure_rates(&r, e->host, e->dev, e->managed, e->out, n, reps, e->stream, why, sizeof why) != 0) {
        printf("  not measured: %s\n", why);
        XL_RANGE_POP();
        return;
    }
    printf("  the kit's figures: a copy of the array %.3f ms; managed, prefetched there and back with the host's "
           "read, %.3f ms; the readings spread up to %.2fx\n", r.copy_ms, r.prefetch_ms, r.spread);
    printf("  %-6s", "reuse");
    for (int i = 0; i < LAB_N_FRACTIONS; i++) {
        char h[16];
        snprintf(h, sizeof h, "%g%%", 100 * fractions[i]);
        printf(" %9s", h);
    }
    printf("\n");
    for (int ri = 0; ri < LAB_N_REUSES; ri++) {
        printf("  %-6d", reuses[ri]);
        for (int i = 0; i < LAB_N_FRACTIONS; i++) {
            char acc[4] = "", c[16];
            int na = 0;
            for (int w = LAB_COPIED; w <= LAB_MANAGED; w++)
                if (base_accepted(&r, i, reuses[ri], w))
                    acc[na++] = way_letter(w);
            acc[na] = '\0';
            if (e->have_choose) {
                int mine = lab_choose(fractions[i], reuses[ri]);
                int ok = base_accepted(&r, i, reuses[ri], mine);
                wrong += !ok;
                snprintf(c, sizeof c, "%c%s[%s]", way_letter(mine), ok ? " " : "*", acc);
            } else {
                snprintf(c, sizeof c, "[%s]", acc);
            }
            printf(" %9s", c);
        }
        printf("\n");
    }
    printf("  a pass at each fraction, device memory / zero-copy (ms):");
    for (int i = 0; i < LAB_N_FRACTIONS; i++)
        printf(" %.3g/%.3g", r.dev_ms[i], r.map_ms[i]);
    printf("\n");
    if (e->have_choose)
        printf("  your lab_choose: %s\n", wrong ? "not accepted at the points marked *" : "accepted at every point");
    XL_RANGE_POP();
}

/* ===== The done-when checks ===== */

/* check_pair - way a (impl ia) against way b (impl ib) on pattern p, reps passes each: a warm-up round, then
 * CHECK_ROUNDS rounds of both, alternating which goes first, the first and last checked; a CSV row each; their
 * medians into *ma and *mb, and returns b's over a's (how many times faster a is) */
static double check_pair(ex *e, way wa, int ia, way wb, int ib, lab_pattern p, int reps, double *ma, double *mb)
{
    double ta[CHECK_ROUNDS], tb[CHECK_ROUNDS];
    uint64_t g = hash_of(e, p);
    lab_job ja = job_for(e, wa, p), jb = job_for(e, wb, p);
    xl_timing sa, sb;
    for (int r = -1; r < CHECK_ROUNDS; r++) {
        int checked = r == 0 || r == CHECK_ROUNDS - 1;
        double a, b;
        if (r % 2 == 0) {
            a = one_run(e, wa, ia, &ja, reps, g, checked);
            b = one_run(e, wb, ib, &jb, reps, g, checked);
        } else {
            b = one_run(e, wb, ib, &jb, reps, g, checked);
            a = one_run(e, wa, ia, &ja, reps, g, checked);
        }
        if (r >= 0)
            ta[r] = a, tb[r] = b;
    }
    xl_summarize(ta, CHECK_ROUNDS, &sa);
    xl_summarize(tb, CHECK_ROUNDS, &sb);
    csv_row(e, "check", wa, ia, &ja, reps, &sa, 0);
    csv_row(e, "check", wb, ib, &jb, reps, &sb, 0);
    *ma = sa.median_ms;
    *mb = sb.median_ms;
    return sb.median_ms / sa.median_ms;
}

/* done_when - the lab's three claims at this size, on fresh data */
static void done_when(ex *e)
{
    char sz[32];
    double a, b;
    lab_pattern sparse = base_pattern(e->n, 0.01, LAB_LINE_ELEMS), dense = base_pattern(e->n, 1.0, LAB_LINE_ELEMS);
    XL_RANGE_PUSH("done-when checks");
    refill(e);
    printf("\ndone-when checks at %s (the grader checks the first two at 64 MiB), %d interleaved rounds, medians:\n",
           xl_format_size(e->n * sizeof(uint32_t), sz, sizeof sz), CHECK_ROUNDS);
    for (int k = 0; k < 3; k++)
        e->check_ratio[k] = NAN;
    if (e->have[W_MAPPED][YOURS]) {
        e->check_ratio[0] = check_pair(e, W_MAPPED, YOURS, W_COPIED, KIT, sparse, 1, &a, &b);
        printf("  1 %% read once: your zero-copy %.3f ms, the kit's copy everything %.3f ms: %.1fx as fast (needs 3x)"
               "\n", a, b, e->check_ratio[0]);
    } else {
        printf("  1 %% read once: not measured: your lab_read_mapped does not run yet\n");
    }
    if (e->have[W_COPIED][YOURS]) {
        e->check_ratio[1] = check_pair(e, W_COPIED, YOURS, W_MAPPED, KIT, dense, 10, &a, &b);
        printf("  all of it read 10 times: your copy everything %.2f ms, the kit's zero-copy %.2f ms: %.1fx as fast "
               "(needs 3x)\n", a, b, e->check_ratio[1]);
    } else {
        printf("  all of it read 10 times: not measured: your lab_read_copied does not run yet\n");
    }
    if (e->have[W_MANAGED][YOURS]) {
        e->check_ratio[2] = check_pair(e, W_MANAGED, YOURS, W_COPIED, KIT, dense, 1, &a, &b);
        printf("  all of it read once: your prefetched managed memory %.2f ms (there, the pass, back, the host's "
               "read), the kit's copy everything %.2f ms: %.0f %% of its speed (a figure, no bar here)\n", a, b,
               100 * e->check_ratio[2]);
    } else {
        printf("  all of it read once, managed: not measured: your lab_read_managed does not run yet\n");
    }
    XL_RANGE_POP();
}

/* ===== Setting up ===== */

/* Options, as given on the command line. */
typedef struct {
    size_t max_bytes;
    int reps;
    const char *csv; /* NULL: no CSV */
} options;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.max_bytes = (size_t)1 << 30, .reps = 5};
    const xl_opt opts[] = {
        {"max", XL_OPT_SIZE, &o->max_bytes, MIN_BYTES, MAX_BYTES,
         "the array, 64M to 16G (default 1G); the fractions are of it"},
        {"reps", XL_OPT_INT, &o->reps, 1, MAX_REPS, "timed runs per point after one warm-up, 1 to 50 (default 5)"},
        {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0, "also write the figures as CSV (the model beside it, NAME-model.csv)"}};
    xl_cli_or_exit(prog, "Zero-copy and managed memory: a fraction of a large host array read once or many times, "
                   "copied, read in place, or moved by the driver; where each wins.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
}

/* empty_job - a job with nothing to read (count 0) over e's buffers */
static lab_job empty_job(const ex *e, const uint32_t *src)
{
    return (lab_job){src, e->n, {0, 1, 1, 0}, e->out};
}

/* probe - which of your functions run (a job with nothing to read returns 0), and which ways this GPU has; a line
 * for each left out */
static void probe(ex *e)
{
    lab_job none = empty_job(e, e->host), mnone = empty_job(e, e->managed);
    for (int w = 0; w < NWAYS; w++)
        for (int k = 0; k < NIMPLS; k++)
            e->have[w][k] = k == KIT || w < MAIN_WAYS;
    if (!e->concurrent) {
        printf("left out: the prefetched managed ways: this GPU has no cudaDevAttrConcurrentManagedAccess (the "
               "prefetch is refused)\n");
        e->have[W_MANAGED][KIT] = e->have[W_MANAGED][YOURS] = e->have[W_RM][KIT] = 0;
    }
    if (!e->pageable_access)
        e->have[W_PAGEABLE][KIT] = 0;
    e->have_gather = lab_gather(&none, e->stream) == 0;
    if (!e->have_gather)
        printf("left out: your lab_gather: a job with nothing to read returned -1, not 0 (not written yet?); the "
               "model's passes use the kit's\n");
    if (lab_read_copied(&none, e->dev, 1, e->stream) != 0) {
        printf("left out: your lab_read_copied: a job with nothing to read returned -1, not 0 (not written yet?)\n");
        e->have[W_COPIED][YOURS] = 0;
    }
    if (lab_read_mapped(&none, 1, e->stream) != 0) {
        printf("left out: your lab_read_mapped: a job with nothing to read returned -1, not 0 (not written yet?)\n");
        e->have[W_MAPPED][YOURS] = 0;
    }
    if (e->have[W_MANAGED][YOURS] && lab_read_managed(&mnone, 1, 1, e->stream) != 0) {
        printf("left out: your lab_read_managed: a job with nothing to read returned -1, not 0 (not written yet?)\n");
        e->have[W_MANAGED][YOURS] = 0;
    }
    e->have_choose = lab_choose(0.5, 1) != LAB_NONE;
    if (!e->have_choose)
        printf("left out: your lab_choose: LAB_NONE for fraction 0.5, reuse 1 (not written yet?)\n");
    XL_CHECK(cudaStreamSynchronize(e->stream));
}

/* attr - a device attribute of e's GPU */
static int attr(const ex *e, enum cudaDeviceAttr a)
{
    int v = 0;
    XL_CHECK(cudaDeviceGetAttribute(&v, a, e->device));
    return v;
}

/* setup - e's arrays (fresh data), stream and pool, the GPU's attributes, and which ways run; exits 1 after one line
 * when something cannot be had */
static void setup(ex *e, const options *o)
{
    char sz[32];
    void *mapped_dev;
    size_t bytes = o->max_bytes;
    e->n = bytes / sizeof(uint32_t);
    e->reps = o->reps;
    XL_CHECK(cudaGetDevice(&e->device));
    e->can_map = attr(e, cudaDevAttrCanMapHostMemory);
    e->concurrent = attr(e, cudaDevAttrConcurrentManagedAccess);
    e->pageable_access = attr(e, cudaDevAttrPageableMemoryAccess);
    e->host_page_tables = attr(e, cudaDevAttrPageableMemoryAccessUsesHostPageTables);
    e->l2_bytes = attr(e, cudaDevAttrL2CacheSize);
    if (!e->can_map)
        xl_fail("this GPU cannot map host memory (cudaDevAttrCanMapHostMemory 0): zero-copy is not possible here");
    if (!(e->host = base_mapped_alloc(bytes, &mapped_dev)))
        xl_fail("cannot allocate %s of mapped pinned memory (see the message above; try a smaller --max)",
                xl_format_size(bytes, sz, sizeof sz));
    if (!(e->managed = base_managed_alloc(bytes, LAB_ADVICE_NONE)))
        xl_fail("cannot allocate %s of managed memory (see the message above; try a smaller --max)",
                xl_format_size(bytes, sz, sizeof sz));
    XL_CHECK(cudaMalloc((void **)&e->dev, bytes));
    XL_CHECK(cudaMalloc((void **)&e->out, bytes));
    XL_CHECK(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
    if (!(e->pool = xl_pool_create(xl_pool_default_threads())))
        xl_fail("cannot start the kit's threads (xl_pool_create)");
    refill(e);
    probe(e);
}

/* teardown - releases what setup made */
static void teardown(ex *e)
{
    XL_CHECK(cudaDeviceSynchronize());
    xl_pool_destroy(e->pool);
    XL_CHECK(cudaStreamDestroy(e->stream));
    XL_CHECK(cudaFree(e->dev));
    XL_CHECK(cudaFree(e->out));
    XL_CHECK(cudaFree(e->managed));
    XL_CHECK(cudaFreeHost(e->host));
    free(e->pageable);
}

/* ===== Results ===== */

/* write_model - the model's table at the CSV beside path (xl_csv_sibling "model"); exits 1 after one line on failure */
static void write_model(const ex *e, const char *path, const xl_gpu_info *g)
{
    char where[4096], err[256];
    const rates *r = &e->r;
    if (xl_csv_sibling(path, "model", where, sizeof where) != 0)
        xl_fail("--csv %s: the path is too long for the model's file beside it", path);
    xl_csv *c = xl_csv_open(where, "run_elems,array_bytes,l2_bytes,link_gbps,device_copy_gbps,device_read_gbps,"
                                   "mapped_gbps,mapped_dense_gbps,prefetch_gbps,prefetch_back_gbps,faults_gbps,"
                                   "pageable_gbps,cross_mapped_copied,cross_managed_copied,cross_mapped_managed,"
                                   "cross_fr,reuse_cross_1pct,reuse_cross_10pct,rm_write_us", err, sizeof err);
    if (!c)
        xl_fail("%s", err);
    for (int k = 0; k < 2; k++) {
        const fsweep *f = &e->fs[k];
        int wide = k == 1;
        xl_csv_row(c, "%zu,%zu,%d,%.3f,%.1f,%.1f,%.4f,%.3f,%.3f,%.3f,%.4f,%.4f,%.5g,%.5g,%.5g,%.5g,%.5g,%.5g,%.3f",
                   f->run, e->n * sizeof(uint32_t), e->l2_bytes, r->link_gbps, r->device_copy_gbps,
                   r->device_read_gbps, r->mapped_gbps[k], r->mapped_dense_gbps, r->prefetch_gbps,
                   r->prefetch_back_gbps, r->faults_gbps, r->pageable_gbps, f->cross[0], f->cross[1], f->cross[2],
                   wide ? e->rs.frac[0] * e->rs.cross[0] : NAN, wide ? e->rs.cross[0] : NAN,
                   wide ? e->rs.cross[1] : NAN, r->rm_write_us);
    }
    xl_csv_comment(c, "rates from the kit's code (GB/s = 1e9 bytes/s; mapped_gbps useful bytes at 1/32 of the array, "
                      "in runs of run_elems); cross_*: the fraction read once where the kit's two ways take the same "
                      "time; cross_fr = 0.01 x reuse_cross_1pct; reuse_cross_*: the reuse where the kit's zero-copy = "
                      "its copy everything; rm_write_us: the host's first write to a page the GPU holds a read-only "
                      "copy of; nan: not measured, or no crossing");
    xl_write_run_info(c, g, prog, e->reps);
    if (xl_csv_close(c, err, sizeof err) != 0)
        xl_fail("%s", err);
    printf("wrote %s\n", where);
}

/* print_summary - the summary line */
static void print_summary(const ex *e)
{
    char a[32], b[32];
    const fsweep *f = &e->fs[1];
    int i1 = 0; /* 1 % */
    while (i1 < LAB_N_FRACTIONS - 1 && fabs(fractions[i1] - 0.01) > 1e-12)
        i1++;
    printf("\nsummary: link %.1f GB/s, device memory %.0fx that; zero-copy %.1f GB/s in whole lines, %.2f GB/s one "
           "element a line; 1 %% once: copy %.3f ms, zero-copy %.3f ms (the kit's); zero-copy = copy at %s read once, "
           "fraction x reuse %.3g at 1 %%; prefetch %.1f GB/s, page faults %.2f GB/s; read-mostly first host write "
           "%.1f us a page; the fourth way %s\n",
           e->r.link_gbps, e->r.device_copy_gbps / e->r.link_gbps, e->r.mapped_gbps[1], e->r.mapped_gbps[0],
           f->t[W_COPIED][KIT][i1].median_ms, f->t[W_MAPPED][KIT][i1].median_ms, pct_text(f->cross[0], a, sizeof a),
           e->rs.frac[0] * e->rs.cross[0], e->r.prefetch_gbps, e->r.faults_gbps, e->r.rm_write_us,
           isnan(e->r.pageable_gbps) ? "not measured" : (snprintf(b, sizeof b, "%.2f GB/s", e->r.pageable_gbps), b));
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    static ex e;
    char err[256], sz[32], drv[64], v1[16], v2[16];
    int gen, width;
    double line;
    parse_options(argc, argv, &o);
    xl_gpu_require(prog, &g);
    if (o.max_bytes > g.total_mem_bytes / 4)
        xl_cli_die(prog, "--max is more than a quarter of the GPU's memory (the array's copy, the output and the "
                         "managed array live there at once)");
    if ((double)o.max_bytes * 4 > 0.75 * (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE))
        xl_cli_die(prog, "--max: four copies of the array (pinned, managed, an advised one and a malloc'd one) need "
                         "more than three quarters of this machine's memory");
    if (o.csv && !(e.csv = xl_csv_open(o.csv, "sweep,way,impl,run_elems,fraction,reuse,array_bytes,read_bytes,"
                                              "ms_median,ms_min,ms_max,gbps,model", err, sizeof err)))
        xl_fail("%s", err);
    setup(&e, &o);
    e.r.rm_write_us = e.r.plain_write_us = NAN;
    printf("lab 08 on %s: driver %s (CUDA %s), built with CUDA %s", g.name, xl_driver_release(drv, sizeof drv),
           xl_version_string(g.driver_version, v1, sizeof v1), xl_version_string(g.runtime_version, v2, sizeof v2));
    if (xl_pcie_link(&gen, &width, &line) == 0)
        printf("; PCIe gen %d x%d, %.1f GB/s a direction on paper", gen, width, line);
    printf("; L2 %s\n", xl_format_size((size_t)e.l2_bytes, sz, sizeof sz));
    printf("  cudaDevAttrCanMapHostMemory %d, ConcurrentManagedAccess %d (prefetches %s), PageableMemoryAccess %d, "
           "PageableMemoryAccessUsesHostPageTables %d\n", e.can_map, e.concurrent, e.concurrent ? "run" : "refused",
           e.pageable_access, e.host_page_tables);
    printf("  the fourth way, malloc'd memory read by the GPU: %s\n",
           e.pageable_access ? (e.host_page_tables ? "measured (through the host's page tables: ATS)"
                                                   : "measured (the driver migrates pages on the GPU's faults: HMM)")
                             : "not available (PageableMemoryAccess 0): the fourth way is not measured");
    printf("  the array: %s (%zu elements of 4 bytes, values below 2^24); median of %d runs a point after a warm-up "
           "(%d, each from a cold start, for the read-mostly, page-fault, host-preferred and pageable series)\n",
           xl_format_size(o.max_bytes, sz, sizeof sz), e.n, e.reps, THIN_RUNS);
    measure_rates(&e);
    sweep_fractions(&e, &e.fs[1], LAB_LINE_ELEMS);
    if (!isnan(e.r.rm_write_us))
        printf("  read-mostly: the host's first write to a page the GPU holds a copy of took %.1f us a page; the next "
               "write to it %.3f us\n", e.r.rm_write_us, e.r.plain_write_us);
    sweep_fractions(&e, &e.fs[0], 1);
    sweep_reuse(&e);
    decision_grid(&e);
    done_when(&e);
    print_summary(&e);
    if (e.csv) {
        xl_csv_comment(e.csv, "wall time per call to the end of its work (managed and pageable memory: until the host "
                              "has read the span back); the array in mapped pinned memory (copied, mapped), managed "
                              "memory or malloc'd memory; thin series (managed-rm, -faults, -host, pageable): %d runs, "
                              "each from a cold start", THIN_RUNS);
        xl_write_run_info(e.csv, &g, prog, e.reps);
        if (xl_csv_close(e.csv, err, sizeof err) != 0)
            xl_fail("%s", err);
        printf("wrote %s\n", o.csv);
        write_model(&e, o.csv, &g);
    }
    teardown(&e);
    return 0;
}
