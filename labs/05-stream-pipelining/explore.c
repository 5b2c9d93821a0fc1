/* explore.c - lab 05's explorer: your pipeline against the number of streams and the chunk size. Do not edit.
 *
 * Measures the link (each direction alone and both at once) and the kernel, then times the kit's sequential
 * run and your lab_pipeline_run, depth-first and breadth-first, over 1 to 16 streams and over chunk sizes,
 * beside the ideal; checks every output; measures what tracing costs. With --csv it also records one
 * sequential and one pipelined run as a timeline of every copy and kernel on its stream, beside the sweeps:
 *     make run LAB=05 ARGS="--csv pipe.csv"
 * pipe.csv: version,streams,chunk_mib,ms,efficiency (the sequential run last, its chunk the whole array);
 * pipe-timeline.csv: run,lane,what,start_ms,end_ms,bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/csv.h"
#include "common/gpu.h"
#include "common/stats.h"
#include "common/timeline.h"
#include "common/timing.h"
#include "labs/05-stream-pipelining/lab.h"
#include "labs/05-stream-pipelining/workload.h"

#define KERNEL_SHARE 0.6
#define NSTREAMS 5
#define NCHUNKS 6
#define REF_CHUNK ((size_t)8 << 18) /* 8 MiB of 32-bit words: the chunk of the stream sweep */

static const char *prog = "05-stream-pipelining-explore";
static const int stream_counts[NSTREAMS] = {1, 2, 4, 8, 16};
static const size_t chunk_mib[NCHUNKS] = {1, 2, 4, 8, 16, 32};

/* One point of a sweep, as the CSV holds it. */
typedef struct {
    const char *version; /* "depth-first" or "breadth-first" */
    int streams;
    size_t chunk_mib;
    double ms, efficiency; /* median time; (sequential - ms) / (sequential - ideal) */
} sweep_row;

/* What every measurement shares, and what they found. */
typedef struct {
    size_t items;
    uint32_t *in, *out;
    lab_kernel k;
    wl_kernel_ctx kc;
    int reps;
    sweep_row rows[2 * NSTREAMS + NCHUNKS]; /* the sweeps, in the order measured */
    int nrows;
    wl_link link8;      /* the link and the kernel at 8 MiB chunks */
    double seq_ms;      /* the kit's sequential run, median */
    double best_ms;     /* your fastest point of the stream sweep */
    double tracing_ms;  /* what tracing added to a run of spans copies and kernels */
    int spans;
} ex;

/* check - every output word right, or one line and exit */
static void check(const ex *e, const char *what)
{
    for (size_t i = 0; i < e->items; i++)
        if (e->out[i] != wl_expected(e->in[i]))
            xl_fail("%s: word %zu of %zu is wrong (make grade LAB=05 says more)", what, i, e->items);
}

/* time_pipeline - median ms of reps runs of your pipeline (after a warm-up), outputs checked */
static double time_pipeline(ex *e, int streams, size_t chunk_items, lab_order order)
{
    double ms[32];
    lab_pipeline *p = lab_pipeline_create(chunk_items, streams);
    if (!p)
        xl_fail("lab_pipeline_create(%zu words, %d streams) returned NULL (see its message above)", chunk_items,
                streams);
    for (int r = -1; r < e->reps; r++) {
        xl_poison(e->out, e->items * sizeof(uint32_t));
        double t0 = xl_now_ms();
        if (lab_pipeline_run(p, e->in, e->out, e->items, order, &e->k) != 0)
            xl_fail("lab_pipeline_run returned an error (see its message above)");
        if (r >= 0)
            ms[r] = xl_now_ms() - t0;
        check(e, "lab_pipeline_run");
    }
    lab_pipeline_destroy(p);
    return xl_median(ms, e->reps);
}

/* time_sequential - median ms of the kit's sequential run */
static double time_sequential(ex *e)
{
    double ms[32];
    base_pipe *b = base_create(e->items);
    if (!b)
        xl_fail("cannot create the sequential baseline (out of memory?)");
    for (int r = -1; r < e->reps; r++) {
        double t0 = xl_now_ms();
        base_run(b, e->in, e->out, e->items, &e->k);
        if (r >= 0)
            ms[r] = xl_now_ms() - t0;
    }
    check(e, "the baseline");
    base_destroy(b);
    return xl_median(ms, e->reps);
}

/* row - one sweep row on stdout and in the CSV */
static void row(ex *e, const char *version, int streams, size_t mib, double ms, double seq, double ideal)
{
    double eff = (seq - ms) / (seq - ideal);
    printf("  %-14s %7d %7zu MiB %9.2f ms %9.2f ms %8.2f\n", version, streams, mib, ms, ideal, eff);
    e->rows[e->nrows++] = (sweep_row){version, streams, mib, ms, eff};
}

/* record - one sequential run and one pipelined run (4 streams, 8 chunks) on the timeline */
static void record(ex *e, xl_timeline *tl)
{
    base_pipe *b = base_create(e->items);
    lab_pipeline *p = lab_pipeline_create(e->items / 8, 4);
    if (!b || !p)
        xl_fail("cannot create the pipelines for the timeline");
    e->kc.tl = tl;
    e->kc.run = "sequential";
    xl_timeline_trace_copies(tl, "sequential");
    base_run(b, e->in, e->out, e->items, &e->k);
    e->kc.run = "4 streams";
    xl_timeline_trace_copies(tl, "4 streams");
    if (lab_pipeline_run(p, e->in, e->out, e->items, LAB_DEPTH_FIRST, &e->k) != 0)
        xl_fail("lab_pipeline_run returned an error (see its message above)");
    xl_timeline_trace_copies(NULL, NULL);
    e->kc.tl = NULL;
    check(e, "the traced run");
    base_destroy(b);
    lab_pipeline_destroy(p);
}

/* tracing_cost - ms per run that tracing adds (4 streams, 8 MiB chunks), and how many spans a run records */
static double tracing_cost(ex *e, int *spans)
{
    double off[32], on[32];
    size_t chunk = (size_t)8 << 18;
    lab_pipeline *p = lab_pipeline_create(chunk, 4);
    if (!p)
        xl_fail("lab_pipeline_create returned NULL");
    int per_run = 3 * (int)((e->items + chunk - 1) / chunk);
    for (int r = -1; r < e->reps; r++) {
        xl_timeline *tl = xl_timeline_create(per_run + 8);
        double t0 = xl_now_ms();
        lab_pipeline_run(p, e->in, e->out, e->items, LAB_DEPTH_FIRST, &e->k);
        double t1 = xl_now_ms();
        e->kc.tl = tl, e->kc.run = "cost";
        xl_timeline_trace_copies(tl, "cost");
        lab_pipeline_run(p, e->in, e->out, e->items, LAB_DEPTH_FIRST, &e->k);
        double t2 = xl_now_ms();
        xl_timeline_trace_copies(NULL, NULL);
        e->kc.tl = NULL;
        xl_timeline_destroy(tl);
        if (r >= 0)
            off[r] = t1 - t0, on[r] = t2 - t1;
    }
    lab_pipeline_destroy(p);
    *spans = per_run;
    return xl_median(on, e->reps) - xl_median(off, e->reps);
}

/* write_csv - records one sequential and one pipelined run (record), then writes the sweep rows (then the
 * sequential run) at path and the timeline beside them (xl_timeline_write_beside); exits 1 after one line on
 * failure */
static void write_csv(const char *path, ex *e, const xl_gpu_info *g)
{
    char err[256];
    xl_timeline *tl = xl_timeline_create(64);
    if (!tl)
        xl_fail("out of memory");
    record(e, tl);
    xl_csv *c = xl_csv_open(path, "version,streams,chunk_mib,ms,efficiency", err, sizeof err);
    if (!c) {
        fprintf(stderr, "%s: %s\n", prog, err);
        exit(1);
    }
    for (int i = 0; i < e->nrows; i++) {
        const sweep_row *r = &e->rows[i];
        xl_csv_row(c, "%s,%d,%zu,%.4f,%.4f", r->version, r->streams, r->chunk_mib, r->ms, r->efficiency);
    }
    xl_csv_row(c, "sequential,1,%zu,%.4f,0", e->items * sizeof(uint32_t) >> 20, e->seq_ms);
    xl_csv_comment(c, "link: in %.2f, out %.2f, both at once %.2f GB/s; tracing added %.4f ms to a run of %d spans",
                   e->link8.h2d_gbps, e->link8.d2h_gbps, e->link8.duplex_gbps, e->tracing_ms, e->spans);
    if (xl_timeline_write_beside(tl, c, g, prog, e->reps) != 0)
        exit(1);
    xl_timeline_destroy(tl);
}

/* prepare - e's buffers from lab_host_alloc, random input, and the kernel calibrated to KERNEL_SHARE of the copy
 * in; exits 1 after one line on failure */
static void prepare(ex *e, size_t total, int reps)
{
    *e = (ex){.items = total / sizeof(uint32_t), .reps = reps};
    e->in = lab_host_alloc(e->items * sizeof(uint32_t));
    e->out = lab_host_alloc(e->items * sizeof(uint32_t));
    if (!e->in || !e->out)
        xl_fail("lab_host_alloc could not give two buffers of %zu MiB", total >> 20);
    xl_fill_random(e->in, e->items * sizeof(uint32_t), xl_fresh_seed());
    wl_calibrate(&e->kc, e->items, KERNEL_SHARE);
    e->k = wl_kernel(&e->kc);
}

/* measure_baseline - the link and the kernel at 8 MiB chunks, then the kit's sequential run, a line each */
static void measure_baseline(ex *e, const xl_gpu_info *g)
{
    const wl_link *l = &e->link8;
    wl_measure(e->items, REF_CHUNK, &e->k, 5, &e->link8);
    e->seq_ms = time_sequential(e);
    printf("lab 05 on %s (%d copy engines): %zu MiB each way; link in %.1f GB/s, out %.1f GB/s, both at once %.1f "
           "GB/s (%.2fx one direction); the kernels take %.0f%% of the copy in\n",
           g->name, g->copy_engines, e->items * sizeof(uint32_t) >> 20, l->h2d_gbps, l->d2h_gbps, l->duplex_gbps,
           l->duplex_gbps / fmax(l->h2d_gbps, l->d2h_gbps), 100 * KERNEL_SHARE);
    printf("sequential (one stream, the whole array in, kernel, out): %.2f ms\n", e->seq_ms);
}

/* sweep - your pipeline over 1 to 16 streams in both orders (8 MiB chunks), then over chunk sizes (4 streams,
 * depth-first, the link measured again at each), a line and a row each; the fastest of the first into best_ms */
static void sweep(ex *e)
{
    wl_link l;
    printf("  %-14s %7s %11s %12s %12s %8s\n", "order", "streams", "chunk", "time", "ideal", "efficiency");
    e->best_ms = 1e30;
    for (int o = 0; o < 2; o++)
        for (int s = 0; s < NSTREAMS; s++) {
            double ms = time_pipeline(e, stream_counts[s], REF_CHUNK, (lab_order)o);
            e->best_ms = fmin(e->best_ms, ms);
            row(e, o ? "breadth-first" : "depth-first", stream_counts[s], 8, ms, e->seq_ms,
                wl_ideal_ms(&e->link8, e->items, REF_CHUNK));
        }
    for (int c = 0; c < NCHUNKS; c++) {
        size_t chunk = chunk_mib[c] << 18;
        wl_measure(e->items, chunk, &e->k, 3, &l);
        double ms = time_pipeline(e, 4, chunk, LAB_DEPTH_FIRST);
        row(e, "depth-first", 4, chunk_mib[c], ms, e->seq_ms, wl_ideal_ms(&l, e->items, chunk));
    }
}

/* Options, as given on the command line. */
typedef struct {
    size_t total; /* bytes each way */
    int reps;
    const char *csv; /* NULL: no CSV */
} options;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.total = (size_t)256 << 20, .reps = 5};
    const xl_opt opts[] = {
        {"total", XL_OPT_SIZE, &o->total, 32 << 20, (long long)1 << 30, "the array, 32M to 1G (default 256M) each way"},
        {"reps", XL_OPT_INT, &o->reps, 1, 30, "timed runs per point after one warm-up, 1 to 30 (default 5)"},
        {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0, "also write the sweeps and a timeline as CSV"}};
    xl_cli_or_exit(prog, "Your pipeline over 1 to 16 streams and over chunk sizes, against the ideal.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    static ex e;
    parse_options(argc, argv, &o);
    xl_gpu_require(prog, &g);
    prepare(&e, o.total, o.reps);
    measure_baseline(&e, &g);
    sweep(&e);
    e.tracing_ms = tracing_cost(&e, &e.spans);
    printf("tracing a run of %d copies and kernels added %.3f ms (%.1f us each)\n", e.spans, e.tracing_ms,
           1e3 * e.tracing_ms / e.spans);
    if (o.csv)
        write_csv(o.csv, &e, &g);
    printf("summary: link both ways at once %.1f GB/s (in %.1f, out %.1f); sequential %.2f ms, your best %.2f ms, "
           "ideal at 8 MiB chunks %.2f ms\n",
           e.link8.duplex_gbps, e.link8.h2d_gbps, e.link8.d2h_gbps, e.seq_ms, e.best_ms,
           wl_ideal_ms(&e.link8, e.items, REF_CHUNK));
    lab_host_free(e.in);
    lab_host_free(e.out);
    return 0;
}
