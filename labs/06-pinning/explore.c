/* explore.c - lab 06's explorer: what each way to pinned data costs, in time and in peak memory. Do not edit.
 *
 * For sizes from 16 MiB up to --max, runs your three ways and a plain malloc + fill, and reports for each
 * the time (fill included; median and spread of --reps runs after one warm-up run of each), the rise of peak
 * resident memory as a multiple of the buffer, the time to release, the copy rate to the GPU from the result,
 * and from your lab_breakeven how many transfers it takes before the pinning has paid for itself against
 * pageable copies:
 *     make run LAB=06 ARGS="--csv pin.csv"
 * CSV rows: method,bytes,ms,min_ms,max_ms,peak_x,release_ms,h2d_gbps,breakeven (medians but min_ms, max_ms).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/csv.h"
#include "common/gpu.h"
#include "common/memacct.h"
#include "common/sizes.h"
#include "common/stats.h"
#include "common/timing.h"
#include "labs/06-pinning/lab.h"

static const char *prog = "06-pinning-explore";

/* fill - lab_fill_fn: random bytes, a fresh seed each time */
static void fill(void *buf, size_t bytes, void *ctx)
{
    (void)ctx;
    xl_fill_random(buf, bytes, xl_fresh_seed());
}

/* malloc_fill - the baseline: ordinary memory, filled (as lab_pinned, method 0) */
static int malloc_fill(size_t bytes, lab_fill_fn f, void *ctx, lab_pinned *out)
{
    void *p = malloc(bytes);
    if (!p)
        return -1;
    f(p, bytes, ctx);
    *out = (lab_pinned){p, bytes, (lab_method)0, p, bytes};
    return 0;
}

/* One way to ready data. */
typedef struct {
    const char *name;
    int (*pin)(size_t, lab_fill_fn, void *, lab_pinned *);
} way;

/* The ways, the baseline first (the others are measured against it). */
static const way ways[] = {{"malloc + fill", malloc_fill},
                           {"(a) at alloc", lab_pin_at_alloc},
                           {"(b) by copy", lab_pin_by_copy},
                           {"(c) in place", lab_pin_in_place}};
#define NWAYS ((int)(sizeof ways / sizeof ways[0]))

/* One way's figures at one size: medians over the runs, and the spread of its time. */
typedef struct {
    xl_timing t;  /* the time to make the data (fill included) */
    double peak;  /* rise of peak resident memory / buffer, median */
    double rel_ms; /* the release, median */
    double gbps;  /* copy rate to the GPU from the result, median */
} way_figures;

/* h2d_gbps - median rate of 3 copies from host to dev after a warm-up */
static double h2d_gbps(void *dev, const void *host, size_t bytes)
{
    xl_timing t;
    xl_copy_job c = {dev, host, bytes, cudaMemcpyHostToDevice};
    xl_time_gpu(xl_memcpy_work, &c, 0, 1, 3, &t);
    return xl_gbps(bytes, t.median_ms);
}

/* release - frees what w made (the baseline's malloc, or your lab_unpin) */
static void release(int w, lab_pinned *b)
{
    if (w == 0)
        free(b->base);
    else
        lab_unpin(b);
}

/* measure_way - runs ways[w] reps times on bytes (1 <= reps <= 10) into f; dev holds bytes; exits on failure */
static void measure_way(int w, size_t bytes, int reps, void *dev, way_figures *f)
{
    double ms[10], peak[10], rel[10], gbps[10];
    for (int r = 0; r < reps; r++) {
        lab_pinned b;
        xl_mem before, after;
        XL_CHECK(cudaDeviceSynchronize());
        if (xl_mem_reset_peak() != 0 || xl_mem_read(&before) != 0)
            xl_fail("cannot read or reset this process's memory figures (/proc/self)");
        double t0 = xl_now_ms();
        char sz[32];
        if (ways[w].pin(bytes, fill, NULL, &b) != 0)
            xl_fail("%s of %s failed (see its message above)", ways[w].name, xl_format_size(bytes, sz, sizeof sz));
        ms[r] = xl_now_ms() - t0;
        if (xl_mem_read(&after) != 0)
            xl_fail("cannot read this process's memory figures (/proc/self)");
        peak[r] = (after.hwm_kib - before.rss_kib) * 1024.0 / (double)bytes;
        gbps[r] = h2d_gbps(dev, b.data, bytes);
        t0 = xl_now_ms();
        release(w, &b);
        rel[r] = xl_now_ms() - t0;
    }
    xl_summarize(ms, reps, &f->t);
    f->peak = xl_median(peak, reps);
    f->rel_ms = xl_median(rel, reps);
    f->gbps = xl_median(gbps, reps);
}

/* sweep_sizes - every way at each size from 16 MiB up to max_bytes (x4), a line each (and a CSV row when out is
 * open); the largest size's figures into last, that size into *last_bytes */
static void sweep_sizes(size_t max_bytes, int reps, void *dev, xl_csv *out, way_figures last[NWAYS],
                        size_t *last_bytes)
{
    printf("%-9s %-14s %10s %13s %7s %11s %10s %s\n", "size", "way", "time", "spread (ms)", "peak", "release",
           "copy in", "break-even (transfers)");
    for (int w = 0; w < NWAYS; w++) { /* warm-up: each way once, untimed (first-touch costs of the CUDA calls) */
        way_figures f;
        measure_way(w, (size_t)16 << 20, 1, dev, &f);
    }
    for (size_t bytes = (size_t)16 << 20; bytes <= max_bytes; bytes *= 4) {
        way_figures base;
        *last_bytes = bytes;
        for (int w = 0; w < NWAYS; w++) {
            way_figures f;
            measure_way(w, bytes, reps, dev, &f);
            last[w] = f;
            if (w == 0)
                base = f;
            long be = w ? lab_breakeven(f.t.median_ms - base.t.median_ms, bytes, f.gbps, base.gbps) : 0;
            char sz[32], spread[48];
            snprintf(spread, sizeof spread, "%.1f-%.1f", f.t.min_ms, f.t.max_ms);
            printf("%-9s %-14s %7.1f ms %13s %6.2fx %8.1f ms %5.1f GB/s %ld\n", xl_format_size(bytes, sz, sizeof sz),
                   ways[w].name, f.t.median_ms, spread, f.peak, f.rel_ms, f.gbps, be);
            if (out)
                xl_csv_row(out, "%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%ld", ways[w].name, bytes, f.t.median_ms,
                           f.t.min_ms, f.t.max_ms, f.peak, f.rel_ms, f.gbps, be);
        }
    }
    printf("break-even: transfers of the whole buffer until the pinning's extra time (over malloc + fill) is won "
           "back against pageable copies (lab_breakeven)\n");
}

/* print_summary - the summary line: each way's peak and extra time at the largest size */
static void print_summary(const way_figures last[NWAYS], size_t last_bytes)
{
    char sz[32];
    printf("summary: at %s, peak (a) %.2fx, (b) %.2fx, (c) %.2fx the buffer; time over malloc + fill (a) %+.0f ms, "
           "(b) %+.0f ms, (c) %+.0f ms\n",
           xl_format_size(last_bytes, sz, sizeof sz), last[1].peak, last[2].peak, last[3].peak,
           last[1].t.median_ms - last[0].t.median_ms, last[2].t.median_ms - last[0].t.median_ms,
           last[3].t.median_ms - last[0].t.median_ms);
}

/* Options, as given on the command line. */
typedef struct {
    size_t max_bytes;
    int reps;
    const char *csv; /* NULL: no CSV */
} options;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.max_bytes = (size_t)1 << 30, .reps = 3};
    const xl_opt opts[] = {
        {"max", XL_OPT_SIZE, &o->max_bytes, 16 << 20, (long long)4 << 30, "largest buffer, 16M to 4G (default 1G)"},
        {"reps", XL_OPT_INT, &o->reps, 1, 10, "runs of each way per size (medians shown), 1 to 10 (default 3)"},
        {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0, "also write the figures as CSV"}};
    xl_cli_or_exit(prog, "Your three ways to pinned data: time, peak memory, copy rate, break-even.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
}

/* open_csv - the CSV of figures at path, or NULL when path is; exits 1 after one line when it cannot be opened */
static xl_csv *open_csv(const char *path)
{
    char err[256];
    xl_csv *out = NULL;
    if (path && !(out = xl_csv_open(path, "method,bytes,ms,min_ms,max_ms,peak_x,release_ms,h2d_gbps,breakeven", err,
                                    sizeof err)))
        xl_fail("%s", err);
    return out;
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    parse_options(argc, argv, &o);
    /* every buffer of 1 MiB or more its own mapping, given back on free: otherwise glibc raises this threshold
     * after the first free (up to 32 MiB), and a later 16 MiB buffer reuses heap pages still resident, which
     * hides its peak (measured: 0.00x for malloc + fill at 16 MiB after a warm-up) */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    xl_gpu_require(prog, &g);
    if (o.max_bytes > g.total_mem_bytes / 2)
        xl_cli_die(prog, "--max is more than half of the GPU's memory");
    xl_csv *out = open_csv(o.csv);
    char err[256];
    void *dev;
    way_figures last[NWAYS]; /* the largest size's figures, for the summary */
    size_t last_bytes = 0;
    XL_CHECK(cudaMalloc(&dev, o.max_bytes));
    printf("lab 06 on %s: each way's time includes the fill; peak = rise of peak resident memory / buffer; "
           "medians of %d runs\n", g.name, o.reps);
    sweep_sizes(o.max_bytes, o.reps, dev, out, last, &last_bytes);
    print_summary(last, last_bytes);
    XL_CHECK(cudaFree(dev));
    if (out) {
        xl_write_run_info(out, &g, prog, o.reps);
        if (xl_csv_close(out, err, sizeof err) != 0)
            xl_fail("%s", err);
        printf("wrote %s\n", o.csv);
    }
    return 0;
}
