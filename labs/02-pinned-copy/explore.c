/* explore.c - lab 02's explorer: your pinned copies against pageable ones, and what pinning costs. Do not edit.
 *
 * Runs your lab.cu (or the reference, as build/bin/02-pinned-copy-explore-solution) and prints:
 * bandwidth of pinned and pageable copies by size, both directions; the cost of malloc, pinning
 * (lab_pinned_alloc) and registering (cudaHostRegister) by size; your pooled loop against the
 * naive one; your round trip; and after how many transfers pinning pays for itself.
 *     make run LAB=02 ARGS="--max 256M --reps 5 --csv pinned.csv"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/cli.h"
#include "common/csv.h"
#include "common/gpu.h"
#include "common/sizes.h"
#include "common/stats.h"
#include "common/timing.h"
#include "common/trace.h"
#include "labs/02-pinned-copy/lab.h"

#define MAX_POINTS 40
#define LOOP_N 16
#define LOOP_BYTES ((size_t)64 << 20)

static const char *prog = "02-pinned-copy-explore";

/* One pinned copy by the student's code, as a work function. */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    lab_dir dir;
} pinned_job;

/* pinned_work - xl_work_fn: one lab_pinned_copy */
static void pinned_work(cudaStream_t s, void *ctx)
{
    pinned_job *j = ctx;
    if (lab_pinned_copy(j->dst, j->src, j->bytes, j->dir, s) != 0)
        xl_fail("lab_pinned_copy failed (see its message above)");
}

/* row - prints a CSV row when a CSV is open */
static void row(xl_csv *csv, const char *kind, const char *label, size_t bytes, const xl_timing *t)
{
    if (csv)
        xl_csv_row(csv, "%s,%s,%zu,%.9g,%.9g,%.9g,%.9g", kind, label, bytes, t->median_ms, t->min_ms, t->max_ms,
                   xl_gbps((double)bytes, t->median_ms));
}

/* sweep_copies - pinned (yours) and pageable (the kit's cudaMemcpy), both directions, by size */
static void sweep_copies(size_t min_b, size_t max_b, int reps, cudaStream_t s, xl_csv *csv,
                         xl_timing pin_t[2][MAX_POINTS], xl_timing page_t[2][MAX_POINTS], int *npoints)
{
    char sz[32];
    void *pinned = lab_pinned_alloc(max_b), *pageable = malloc(max_b), *dev;
    if (!pinned || !pageable)
        xl_fail("cannot allocate two host buffers of %s", xl_format_size(max_b, sz, sizeof sz));
    memset(pinned, 1, max_b);
    memset(pageable, 1, max_b);
    XL_CHECK(cudaMalloc(&dev, max_b));
    printf("%10s %12s %12s %8s %12s %12s %8s\n", "size", "H2D pinned", "H2D pageable", "ratio", "D2H pinned",
           "D2H pageable", "ratio");
    int i = 0;
    for (size_t b = min_b; b <= max_b && i < MAX_POINTS; b *= 2, i++) {
        printf("%10s", xl_format_size(b, sz, sizeof sz));
        for (int d = 0; d < 2; d++) {
            pinned_job pj = {d ? pinned : dev, d ? dev : pinned, b, (lab_dir)d};
            xl_copy_job kj = {d ? pageable : dev, d ? dev : pageable, b,
                              d ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice};
            xl_time_gpu(pinned_work, &pj, s, 1, reps, &pin_t[d][i]);
            xl_time_gpu(xl_memcpy_work, &kj, 0, 1, reps, &page_t[d][i]);
            double gp = xl_gbps(b, pin_t[d][i].median_ms), gq = xl_gbps(b, page_t[d][i].median_ms);
            printf(" %7.2f GB/s %7.2f GB/s %7.1fx", gp, gq, gp / gq);
            row(csv, "copy", d ? "D2H pinned" : "H2D pinned", b, &pin_t[d][i]);
            row(csv, "copy", d ? "D2H pageable" : "H2D pageable", b, &page_t[d][i]);
        }
        printf("\n");
    }
    *npoints = i;
    XL_CHECK(cudaFree(dev));
    lab_pinned_free(pinned);
    free(pageable);
}

/* Allocation methods timed on the host clock. */
enum { M_MALLOC, M_PINNED, M_REGISTER, M_FREEHOST, M_UNREGISTER, M_PINNED_WRITE, M_COUNT };
static const char *method_name[M_COUNT] = {"malloc + touch", "lab_pinned_alloc", "cudaHostRegister", "lab_pinned_free",
                                           "cudaHostUnregister", "write into pinned"};

/* time_allocs - median host time of each method at bytes, into t[M_COUNT] */
static void time_allocs(size_t bytes, int reps, xl_timing t[M_COUNT])
{
    double ms[M_COUNT][100];
    char sz[32];
    for (int r = 0; r < reps; r++) {
        double t0 = xl_now_ms();
        char *p = malloc(bytes);
        if (!p)
            xl_fail("malloc of %s failed", xl_format_size(bytes, sz, sizeof sz));
        memset(p, 1, bytes); /* malloc alone reserves address space; the pages appear when touched */
        ms[M_MALLOC][r] = xl_now_ms() - t0;
        t0 = xl_now_ms();
        XL_CHECK(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
        ms[M_REGISTER][r] = xl_now_ms() - t0;
        t0 = xl_now_ms();
        XL_CHECK(cudaHostUnregister(p));
        ms[M_UNREGISTER][r] = xl_now_ms() - t0;
        free(p);
        t0 = xl_now_ms();
        void *q = lab_pinned_alloc(bytes);
        ms[M_PINNED][r] = xl_now_ms() - t0;
        if (!q)
            xl_fail("lab_pinned_alloc of %s failed", xl_format_size(bytes, sz, sizeof sz));
        t0 = xl_now_ms();
        memset(q, 1, bytes); /* the first write, which malloc + touch includes: the comparison is like for like */
        ms[M_PINNED_WRITE][r] = xl_now_ms() - t0;
        t0 = xl_now_ms();
        lab_pinned_free(q);
        ms[M_FREEHOST][r] = xl_now_ms() - t0;
    }
    for (int m = 0; m < M_COUNT; m++)
        xl_summarize(ms[m], reps, &t[m]);
}

/* stamp - lab_produce_fn: writes one word per page, as cheaply as a batch can be marked */
static void stamp(void *buf, size_t bytes, int i, void *ctx)
{
    (void)ctx;
    for (size_t off = 0; off + 8 <= bytes; off += 4096)
        memcpy((char *)buf + off, &i, sizeof i);
}

/* Options, as given on the command line. */
typedef struct {
    size_t min_b, max_b, alloc_max;
    int reps;
    const char *csv_path; /* NULL: no CSV */
} options;

/* What the phases measured, for the pay-off and the summary. */
typedef struct {
    xl_timing pin_t[2][MAX_POINTS], page_t[2][MAX_POINTS]; /* by direction (LAB_H2D, LAB_D2H) and size */
    int n;                                                 /* sizes swept */
    xl_timing at64[M_COUNT];                               /* allocation costs at 64 MiB ... */
    int have64;                                            /* ... when that size was timed */
    double naive_ms, pooled_ms;                            /* LOOP_N transfers, pinning each and pooled */
} figures;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.min_b = XL_SWEEP_MIN, .max_b = XL_SWEEP_MAX, .alloc_max = (size_t)1 << 30, .reps = 5};
    const xl_opt opts[] = {
        XL_SWEEP_OPTS(&o->min_b, &o->max_b),
        {"alloc-max", XL_OPT_SIZE, &o->alloc_max, 1 << 20, XL_SWEEP_LIMIT,
         "largest allocation timed, 1M to 4G (default 1G); sizes grow 4x from 1 MiB"},
        {"reps", XL_OPT_INT, &o->reps, 1, 100, "timed runs per point after one warm-up, 1 to 100 (default 5)"},
        {"csv", XL_OPT_OUTFILE, &o->csv_path, 0, 0,
         "also write every figure as CSV (kind,label,bytes,median_ms,min_ms,max_ms,gbps)"}};
    xl_cli_or_exit(prog, "Pinned against pageable copies, the pool, the round trip, and what pinning costs.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
    xl_sweep_check(prog, o->min_b, o->max_b);
}

/* alloc_costs - the table of what each method costs by size, 1 MiB up to alloc_max (a CSV row each when csv is
 * open); keeps the 64 MiB figures in f */
static void alloc_costs(size_t alloc_max, int reps, xl_csv *csv, figures *f)
{
    char sz[32];
    xl_timing at[M_COUNT];
    printf("\nallocation costs (host clock, median of %d)\n%10s", reps < 3 ? reps : 3, "size");
    for (int m = 0; m < M_COUNT; m++)
        printf(" %19s", method_name[m]);
    printf("\n");
    XL_RANGE_PUSH("lab 02: allocation costs");
    time_allocs(1u << 20, 1, at); /* warm-up: the first call of each kind pays one-time setup */
    for (size_t b = 1u << 20; b <= alloc_max; b *= 4) {
        time_allocs(b, reps < 3 ? reps : 3, at);
        printf("%10s", xl_format_size(b, sz, sizeof sz));
        for (int m = 0; m < M_COUNT; m++) {
            printf(" %16.3f ms", at[m].median_ms);
            row(csv, "alloc", method_name[m], b, &at[m]);
        }
        printf("\n");
        if (b == LOOP_BYTES) {
            memcpy(f->at64, at, sizeof at);
            f->have64 = 1;
        }
    }
    XL_RANGE_POP();
}

/* pool_against_naive - LOOP_N transfers of 64 MiB on s, pinning each (lab_loop_naive) and through a pool of two
 * (lab_loop_pooled), timed into f; returns the device memory they filled (LOOP_N * LOOP_BYTES; the caller frees it) */
static void *pool_against_naive(cudaStream_t s, figures *f)
{
    void *dev;
    XL_RANGE_PUSH("lab 02: pool against naive");
    XL_CHECK(cudaMalloc(&dev, (size_t)LOOP_N * LOOP_BYTES));
    lab_pool *pool = lab_pool_create(LOOP_BYTES, 2);
    if (!pool)
        xl_fail("lab_pool_create(64 MiB, 2) failed (see its message above)");
    double t0 = xl_now_ms();
    if (lab_loop_naive(dev, LOOP_BYTES, LOOP_N, stamp, NULL, s) != 0)
        xl_fail("lab_loop_naive failed");
    f->naive_ms = xl_now_ms() - t0;
    t0 = xl_now_ms();
    if (lab_loop_pooled(pool, dev, LOOP_BYTES, LOOP_N, stamp, NULL, s) != 0)
        xl_fail("lab_loop_pooled failed");
    f->pooled_ms = xl_now_ms() - t0;
    lab_pool_destroy(pool);
    XL_RANGE_POP();
    printf("\n%d transfers of 64 MiB: pinning each %.0f ms, through the pool %.1f ms: %.1fx\n", LOOP_N, f->naive_ms,
           f->pooled_ms, f->naive_ms / f->pooled_ms);
    return dev;
}

/* round_trip - reps timed lab_round_trip of bytes through dev after one warm-up, printed (and a CSV row) */
static void round_trip(void *dev, size_t bytes, int reps, cudaStream_t s, xl_csv *csv)
{
    char sz[32];
    void *in = lab_pinned_alloc(bytes), *out = lab_pinned_alloc(bytes);
    if (!in || !out)
        xl_fail("lab_pinned_alloc failed (see its message above)");
    memset(in, 3, bytes);
    double trip[100];
    for (int r = 0; r <= reps; r++) {
        double t0 = xl_now_ms();
        if (lab_round_trip(out, in, dev, bytes, s) != 0)
            xl_fail("lab_round_trip failed");
        if (r > 0)
            trip[r - 1] = xl_now_ms() - t0;
    }
    xl_timing tt;
    xl_summarize(trip, reps, &tt);
    row(csv, "roundtrip", "pinned", 2 * bytes, &tt);
    printf("round trip of %s there and back: %.2f ms, %.1f GB/s counting both directions\n",
           xl_format_size(bytes, sz, sizeof sz), tt.median_ms, xl_gbps(2.0 * bytes, tt.median_ms));
    lab_pinned_free(in);
    lab_pinned_free(out);
}

/* print_payoff - after how many 64 MiB transfers a pinned buffer pays for itself against a pageable one, each
 * allocated and written once (nothing when 64 MiB was not among the sizes swept and timed) */
static void print_payoff(size_t min_b, const figures *f)
{
    int k = -1;
    for (int i = 0; i < f->n; i++)
        if (f->pin_t[0][i].reps && (min_b << i) == LOOP_BYTES)
            k = i;
    if (k < 0 || !f->have64)
        return;
    double saved = f->page_t[0][k].median_ms - f->pin_t[0][k].median_ms;
    double cost = f->at64[M_PINNED].median_ms + f->at64[M_PINNED_WRITE].median_ms - f->at64[M_MALLOC].median_ms;
    if (cost <= 0)
        printf("allocating and writing 64 MiB of pinned memory took %.1f ms less than malloc and the same write: "
               "it pays off at once; each H2D copy from it saves %.1f ms\n",
               -cost, saved);
    else if (saved > 0)
        printf("allocating and writing 64 MiB of pinned memory took %.1f ms more than malloc and the same write; "
               "each H2D copy from it saves %.1f ms: it pays off after %.1f transfers\n",
               cost, saved, cost / saved);
    else
        printf("pinned copies of 64 MiB were not faster than pageable ones here: pinning does not pay off\n");
}

/* print_summary - the summary line: the largest size's rates each way, and the pool's gain */
static void print_summary(size_t min_b, const figures *f)
{
    char sz[32];
    int n = f->n;
    size_t largest = min_b << (n - 1);
    printf("summary: pinned H2D %.1f GB/s, D2H %.1f GB/s at %s (%.1fx and %.1fx pageable); pool %.1fx faster "
           "than pinning each of %d transfers\n",
           xl_gbps(largest, f->pin_t[0][n - 1].median_ms), xl_gbps(largest, f->pin_t[1][n - 1].median_ms),
           xl_format_size(largest, sz, sizeof sz), f->page_t[0][n - 1].median_ms / f->pin_t[0][n - 1].median_ms,
           f->page_t[1][n - 1].median_ms / f->pin_t[1][n - 1].median_ms, f->naive_ms / f->pooled_ms, LOOP_N);
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    static figures f;
    char err[256];
    parse_options(argc, argv, &o);
    xl_gpu_require(prog, &g);
    if (o.max_b > g.total_mem_bytes / 2 || (size_t)LOOP_N * LOOP_BYTES > g.total_mem_bytes / 2)
        xl_cli_die(prog, "this GPU has too little memory for these sizes");
    xl_csv *csv = NULL;
    if (o.csv_path &&
        !(csv = xl_csv_open(o.csv_path, "kind,label,bytes,median_ms,min_ms,max_ms,gbps", err, sizeof err))) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    cudaStream_t s;
    XL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    printf("lab 02 on %s: pinned copies (yours) against pageable ones (cudaMemcpy), median of %d runs\n", g.name,
           o.reps);
    XL_RANGE_PUSH("lab 02: copy sweep");
    sweep_copies(o.min_b, o.max_b, o.reps, s, csv, f.pin_t, f.page_t, &f.n);
    XL_RANGE_POP();
    alloc_costs(o.alloc_max, o.reps, csv, &f);
    void *dev = pool_against_naive(s, &f);
    round_trip(dev, o.max_b, o.reps, s, csv);
    XL_CHECK(cudaFree(dev));
    print_payoff(o.min_b, &f);
    print_summary(o.min_b, &f);
    if (csv) {
        xl_write_run_info(csv, &g, prog, o.reps);
        if (xl_csv_close(csv, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return 1;
        }
        printf("wrote %s\n", o.csv_path);
    }
    return 0;
}
