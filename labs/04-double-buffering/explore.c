/* explore.c - lab 04's explorer: your pipeline against the sequential baseline. Do not edit.
 *
 * At three batch sizes, with the stages balanced from this machine's own figures, it times the kit's
 * sequential baseline and your lab_pipe at depths 1 to 3, beside the ideal, checks every result, and
 * prints the overlap efficiency. With --csv it also writes the figures, and records a few batches of the baseline
 * and of your depth-2 pipe as a timeline (every copy and kernel on its stream, produce on the host) beside them:
 *     make run LAB=04 ARGS="--csv pipe.csv"
 * pipe.csv: version,batch_mib,mitems_per_s (million items per second),efficiency;
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
#include "labs/04-double-buffering/lab.h"
#include "labs/04-double-buffering/workload.h"

#define NSIZES 3
#define MAX_DEPTH 3
#define TIMELINE_BATCHES 6

static const char *prog = "04-double-buffering-explore";
static const size_t sizes_mib[NSIZES] = {4, 16, 64};

/* One batch size's figures. */
typedef struct {
    size_t mib;
    wl_stage_ms st;
    double seq_ms, ideal_ms, depth_ms[MAX_DEPTH + 1]; /* medians; depth_ms[0] unused */
} row;

/* wrong_results - how many of j's results differ from the CPU's */
static int wrong_results(const wl_ctx *w, const lab_job *j)
{
    int bad = 0;
    for (int i = 0; i < j->batches; i++) {
        lab_result want = wl_expected(w, i);
        bad += j->results[i].sum != want.sum || j->results[i].sumsq != want.sumsq;
    }
    return bad;
}

/* time_run - the median of reps runs of lab_pipe_run (p) or the baseline (b), results checked */
static double time_run(lab_pipe *p, base_pipe *b, wl_ctx *w, const lab_job *j, int reps)
{
    double ms[64];
    for (int r = 0; r < reps; r++) {
        xl_poison(j->results, (size_t)j->batches * sizeof(lab_result));
        double t0 = xl_now_ms();
        int rc = p ? lab_pipe_run(p, j) : base_pipe_run(b, j);
        ms[r] = xl_now_ms() - t0;
        if (rc != 0)
            xl_fail("%s returned an error (see its message above)", p ? "lab_pipe_run" : "the baseline");
        int bad = wrong_results(w, j);
        if (bad)
            xl_fail("%s: %d of %d results were wrong (make grade LAB=04 says which hazard)",
                    p ? "lab_pipe_run" : "the baseline", bad, j->batches);
    }
    return xl_median(ms, reps);
}

/* measure - one batch size: stages balanced, then the baseline and depths 1 to 3 */
static void measure(row *r, int batches, int reps, lab_result *res)
{
    wl_ctx w;
    wl_create(&w, r->mib << 18, 0, 0, 0);
    wl_balance(&w, 0.8, &r->st);
    lab_job j = wl_job(&w, batches, res);
    base_pipe *b = base_pipe_create(w.items);
    if (!b)
        xl_fail("cannot create the baseline (out of memory?)");
    time_run(NULL, b, &w, &j, 1); /* warm-up */
    r->seq_ms = time_run(NULL, b, &w, &j, reps);
    base_pipe_destroy(b);
    for (int d = 1; d <= MAX_DEPTH; d++) {
        lab_pipe *p = lab_pipe_create(w.items, d);
        if (!p)
            xl_fail("lab_pipe_create(%zu items, depth %d) returned NULL (see its message above)", w.items, d);
        time_run(p, NULL, &w, &j, 1);
        r->depth_ms[d] = time_run(p, NULL, &w, &j, reps);
        lab_pipe_destroy(p);
    }
    r->ideal_ms = wl_ideal_ms(&r->st, batches);
    wl_destroy(&w);
}

/* efficiency - (T_seq - T) / (T_seq - T_ideal) */
static double efficiency(const row *r, double t)
{
    return (r->seq_ms - t) / (r->seq_ms - r->ideal_ms);
}

/* record - a few batches of the baseline and of a depth-2 pipe on the timeline, 16 MiB batches */
static void record(xl_timeline *tl, lab_result *res)
{
    wl_ctx w;
    wl_stage_ms st;
    wl_create(&w, (size_t)16 << 18, 0, 0, 0);
    wl_balance(&w, 0.8, &st);
    lab_job j = wl_job(&w, TIMELINE_BATCHES, res);
    base_pipe *b = base_pipe_create(w.items);
    lab_pipe *p = lab_pipe_create(w.items, 2);
    if (!b || !p)
        xl_fail("cannot create the pipes for the timeline");
    base_pipe_run(b, &j); /* warm-ups */
    lab_pipe_run(p, &j);
    w.tl = tl;
    w.run = "sequential";
    xl_timeline_trace_copies(tl, w.run);
    base_pipe_run(b, &j);
    w.run = "depth 2";
    xl_timeline_trace_copies(tl, w.run);
    if (lab_pipe_run(p, &j) != 0)
        xl_fail("lab_pipe_run returned an error (see its message above)");
    xl_timeline_trace_copies(NULL, NULL);
    w.tl = NULL;
    XL_CHECK(cudaDeviceSynchronize());
    base_pipe_destroy(b);
    lab_pipe_destroy(p);
    wl_destroy(&w);
}

/* measure_all - every batch size into rows (NSIZES), a line each with its stages, times and efficiencies */
static void measure_all(row *rows, int batches, int reps, lab_result *res, const char *gpu)
{
    printf("lab 04 on %s: %d batches per run, median of %d runs, stages balanced from this machine's figures\n", gpu,
           batches, reps);
    printf("%-7s %-35s %10s %10s %10s %10s %10s  %s\n", "batch", "stages per batch (ms)", "sequential", "depth 1",
           "depth 2", "depth 3", "ideal", "efficiency d1/d2/d3");
    for (int s = 0; s < NSIZES; s++) {
        row *r = &rows[s];
        char stages[64];
        r->mib = sizes_mib[s];
        measure(r, batches, reps, res);
        snprintf(stages, sizeof stages, "P %.2f H %.2f/%.2f K %.2f D %.3f", r->st.produce_ms, r->st.h2d_ms,
                 r->st.h2d_fresh_ms, r->st.kernel_ms, r->st.d2h_ms);
        printf("%3zu MiB %-35s %7.1f ms %7.1f ms %7.1f ms %7.1f ms %7.1f ms  %.2f / %.2f / %.2f\n", r->mib, stages,
               r->seq_ms, r->depth_ms[1], r->depth_ms[2], r->depth_ms[3], r->ideal_ms, efficiency(r, r->depth_ms[1]),
               efficiency(r, r->depth_ms[2]), efficiency(r, r->depth_ms[3]));
    }
    printf("P produce (host), H copy in (copied again / right after produce), K kernel, D copy out\n"
           "efficiency = (sequential - yours) / (sequential - ideal): 1 is the ideal, 0 no better than sequential\n");
}

/* write_csv - records the timeline (record), then writes the throughput rows at path and the timeline beside them
 * (xl_timeline_write_beside); exits 1 after one line on failure */
static void write_csv(const char *path, const row *rows, int batches, int reps, lab_result *res, const xl_gpu_info *g)
{
    char err[256];
    xl_timeline *tl = xl_timeline_create(8 * TIMELINE_BATCHES * 2);
    if (!tl)
        xl_fail("out of memory");
    record(tl, res);
    xl_csv *c = xl_csv_open(path, "version,batch_mib,mitems_per_s,efficiency", err, sizeof err);
    if (!c) {
        fprintf(stderr, "%s: %s\n", prog, err);
        exit(1);
    }
    xl_csv_comment(c, "%d batches per run; mitems_per_s: million items per second; the timeline: NAME-timeline.csv",
                   batches);
    for (int s = 0; s < NSIZES; s++) {
        const row *r = &rows[s];
        double items = (double)batches * (double)(r->mib << 18) * 1e-3; /* millions of items, per ms */
        xl_csv_row(c, "sequential,%zu,%.2f,0", r->mib, items / r->seq_ms);
        for (int d = 1; d <= MAX_DEPTH; d++)
            xl_csv_row(c, "depth %d,%zu,%.2f,%.3f", d, r->mib, items / r->depth_ms[d], efficiency(r, r->depth_ms[d]));
        xl_csv_row(c, "ideal,%zu,%.2f,1", r->mib, items / r->ideal_ms);
    }
    if (xl_timeline_write_beside(tl, c, g, prog, reps) != 0)
        exit(1);
    xl_timeline_destroy(tl);
}

/* Options, as given on the command line. */
typedef struct {
    int reps, batches;
    const char *csv; /* NULL: no CSV */
} options;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.reps = 5, .batches = 16};
    const xl_opt opts[] = {
        {"batches", XL_OPT_INT, &o->batches, 2, 64, "batches per run, 2 to 64 (default 16)"},
        {"reps", XL_OPT_INT, &o->reps, 1, 50, "timed runs of each version after one warm-up, 1 to 50 (default 5)"},
        {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0, "also write the figures and a timeline of both versions as CSV"}};
    xl_cli_or_exit(prog, "Your lab_pipe at depths 1 to 3 against the sequential baseline and the ideal.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    lab_result *res;
    row rows[NSIZES];
    parse_options(argc, argv, &o);
    xl_gpu_require(prog, &g);
    XL_CHECK(cudaMallocHost((void **)&res, (size_t)o.batches * sizeof(lab_result)));
    measure_all(rows, o.batches, o.reps, res, g.name);
    if (o.csv)
        write_csv(o.csv, rows, o.batches, o.reps, res, &g);
    printf("summary: depth 2 efficiency %.2f (4 MiB), %.2f (16 MiB), %.2f (64 MiB); depth 3 %.2f, %.2f, %.2f\n",
           efficiency(&rows[0], rows[0].depth_ms[2]), efficiency(&rows[1], rows[1].depth_ms[2]),
           efficiency(&rows[2], rows[2].depth_ms[2]), efficiency(&rows[0], rows[0].depth_ms[3]),
           efficiency(&rows[1], rows[1].depth_ms[3]), efficiency(&rows[2], rows[2].depth_ms[3]));
    XL_CHECK(cudaFreeHost(res));
    return 0;
}
