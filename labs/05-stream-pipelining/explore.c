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

/* What every measurement shares. */
typedef struct {
    size_t items;
    uint32_t *in, *out;
    lab_kernel k;
    wl_kernel_ctx kc;
    int reps;
    sweep_row rows[2 * NSTREAMS + NCHUNKS]; /* the sweeps, in the order measured */
    int nrows;
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

/* write_csv - the sweep rows (then the sequential run) at path and the timeline beside it
 * (xl_timeline_write_beside); 0, or -1 after one line on stderr */
static int write_csv(const char *path, const ex *e, xl_timeline *tl, double seq, size_t total, const wl_link *l8,
                     double cost, int spans, const xl_gpu_info *g)
{
    char err[256];
    xl_csv *c = xl_csv_open(path, "version,streams,chunk_mib,ms,efficiency", err, sizeof err);
    if (!c) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    for (int i = 0; i < e->nrows; i++) {
        const sweep_row *r = &e->rows[i];
        xl_csv_row(c, "%s,%d,%zu,%.4f,%.4f", r->version, r->streams, r->chunk_mib, r->ms, r->efficiency);
    }
    xl_csv_row(c, "sequential,1,%zu,%.4f,0", total >> 20, seq);
    xl_csv_comment(c, "link: in %.2f, out %.2f, both at once %.2f GB/s; tracing added %.4f ms to a run of %d spans",
                   l8->h2d_gbps, l8->d2h_gbps, l8->duplex_gbps, cost, spans);
    return xl_timeline_write_beside(tl, c, g, prog, e->reps);
}

int main(int argc, char **argv)
{
    size_t total = (size_t)256 << 20;
    int reps = 5;
    const char *csv = NULL;
    const xl_opt opts[] = {
        {"total", XL_OPT_SIZE, &total, 32 << 20, (long long)1 << 30, "the array, 32M to 1G (default 256M) each way"},
        {"reps", XL_OPT_INT, &reps, 1, 30, "timed runs per point after one warm-up, 1 to 30 (default 5)"},
        {"csv", XL_OPT_TEXT, &csv, 0, 0, "also write the sweeps and a timeline as CSV"}};
    xl_cli_or_exit(prog, "Your pipeline over 1 to 16 streams and over chunk sizes, against the ideal.", opts, 3, argc,
                   argv);
    xl_gpu_info g;
    xl_gpu_require(prog, &g);
    ex e = {.items = total / sizeof(uint32_t), .reps = reps};
    e.in = lab_host_alloc(e.items * sizeof(uint32_t));
    e.out = lab_host_alloc(e.items * sizeof(uint32_t));
    if (!e.in || !e.out)
        xl_fail("lab_host_alloc could not give two buffers of %zu MiB", total >> 20);
    xl_fill_random(e.in, e.items * sizeof(uint32_t), xl_fresh_seed());
    wl_calibrate(&e.kc, e.items, KERNEL_SHARE);
    e.k = wl_kernel(&e.kc);

    size_t ref_chunk = (size_t)8 << 18;
    wl_link l, l8;
    wl_measure(e.items, ref_chunk, &e.k, 5, &l8);
    l = l8;
    double seq = time_sequential(&e);
    printf("lab 05 on %s (%d copy engines): %zu MiB each way; link in %.1f GB/s, out %.1f GB/s, both at once %.1f "
           "GB/s (%.2fx one direction); the kernels take %.0f%% of the copy in\n",
           g.name, g.copy_engines, total >> 20, l.h2d_gbps, l.d2h_gbps, l.duplex_gbps,
           l.duplex_gbps / fmax(l.h2d_gbps, l.d2h_gbps), 100 * KERNEL_SHARE);
    printf("sequential (one stream, the whole array in, kernel, out): %.2f ms\n", seq);
    printf("  %-14s %7s %11s %12s %12s %8s\n", "order", "streams", "chunk", "time", "ideal", "efficiency");
    double best = 1e30;
    for (int o = 0; o < 2; o++)
        for (int s = 0; s < NSTREAMS; s++) {
            double ms = time_pipeline(&e, stream_counts[s], ref_chunk, (lab_order)o);
            best = fmin(best, ms);
            row(&e, o ? "breadth-first" : "depth-first", stream_counts[s], 8, ms, seq,
                wl_ideal_ms(&l8, e.items, ref_chunk));
        }
    for (int c = 0; c < NCHUNKS; c++) {
        size_t chunk = chunk_mib[c] << 18;
        wl_measure(e.items, chunk, &e.k, 3, &l);
        double ms = time_pipeline(&e, 4, chunk, LAB_DEPTH_FIRST);
        row(&e, "depth-first", 4, chunk_mib[c], ms, seq, wl_ideal_ms(&l, e.items, chunk));
    }
    int spans;
    double cost = tracing_cost(&e, &spans);
    printf("tracing a run of %d copies and kernels added %.3f ms (%.1f us each)\n", spans, cost, 1e3 * cost / spans);
    if (csv) {
        xl_timeline *tl = xl_timeline_create(64);
        if (!tl)
            xl_fail("out of memory");
        record(&e, tl);
        if (write_csv(csv, &e, tl, seq, total, &l8, cost, spans, &g) != 0)
            return 1;
        xl_timeline_destroy(tl);
    }
    printf("summary: link both ways at once %.1f GB/s (in %.1f, out %.1f); sequential %.2f ms, your best %.2f ms, "
           "ideal at 8 MiB chunks %.2f ms\n",
           l8.duplex_gbps, l8.h2d_gbps, l8.d2h_gbps, seq, best, wl_ideal_ms(&l8, e.items, ref_chunk));
    lab_host_free(e.in);
    lab_host_free(e.out);
    return 0;
}
