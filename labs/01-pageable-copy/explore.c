/* explore.c - lab 01's explorer: your own figures, as a table. Do not edit.
 *
 * Runs your lab.cu (or the reference, as build/bin/01-pageable-copy-explore-solution):
 * sweeps pageable copies in both directions, prints median, spread and GB/s per
 * size, fits latency and bandwidth, and writes the CSV when asked.
 *     make run LAB=01 ARGS="--min 4K --max 256M --reps 5 --csv sweep.csv"
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/cli.h"
#include "common/gpu.h"
#include "common/sizes.h"
#include "common/trace.h"
#include "labs/01-pageable-copy/lab.h"

#define MAX_POINTS 40

static const char *prog = "01-pageable-copy-explore";

/* Options, as given on the command line. */
typedef struct {
    size_t min_bytes, max_bytes;
    int reps;
    const char *csv; /* NULL: no CSV */
} options;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.min_bytes = XL_SWEEP_MIN, .max_bytes = XL_SWEEP_MAX, .reps = 5};
    const xl_opt opts[] = {
        XL_SWEEP_OPTS(&o->min_bytes, &o->max_bytes),
        {"reps", XL_OPT_INT, &o->reps, 1, 100, "timed runs per size after one warm-up, 1 to 100 (default 5)"},
        {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0, "also write the sweep as CSV (lab_write_csv)"}};
    xl_cli_or_exit(prog, "Your pageable copies against the kit's, over a sweep of sizes.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
    xl_sweep_check(prog, o->min_bytes, o->max_bytes);
}

/* sweep_both - lab_sweep in each direction into h2d and d2h (MAX_POINTS each); how many sizes, or exits 1 after
 * one line */
static int sweep_both(const options *o, lab_point *h2d, lab_point *d2h)
{
    XL_RANGE_PUSH("lab 01: H2D sweep");
    int n = lab_sweep(LAB_H2D, o->min_bytes, o->max_bytes, o->reps, h2d, MAX_POINTS);
    XL_RANGE_POP();
    XL_RANGE_PUSH("lab 01: D2H sweep");
    int n2 = n > 0 ? lab_sweep(LAB_D2H, o->min_bytes, o->max_bytes, o->reps, d2h, MAX_POINTS) : -1;
    XL_RANGE_POP();
    if (n <= 0 || n2 != n) {
        fprintf(stderr, "%s: lab_sweep failed (see its message above)\n", prog);
        exit(1);
    }
    return n;
}

/* print_sweeps - the table of both sweeps, a line per size, then the fit of each direction and the summary line */
static void print_sweeps(const char *gpu, int reps, const lab_point *h2d, const lab_point *d2h, int n)
{
    char s1[32];
    printf("lab 01, pageable copies on %s; median of %d runs after a warm-up (min-max in brackets)\n", gpu, reps);
    printf("%10s  %26s %9s  %26s %9s\n", "size", "H2D ms", "H2D GB/s", "D2H ms", "D2H GB/s");
    for (int i = 0; i < n; i++)
        printf("%10s  %8.4f (%7.4f-%8.4f) %9.2f  %8.4f (%7.4f-%8.4f) %9.2f\n",
               xl_format_size(h2d[i].bytes, s1, sizeof s1), h2d[i].t.median_ms, h2d[i].t.min_ms, h2d[i].t.max_ms,
               xl_gbps(h2d[i].bytes, h2d[i].t.median_ms), d2h[i].t.median_ms, d2h[i].t.min_ms, d2h[i].t.max_ms,
               xl_gbps(d2h[i].bytes, d2h[i].t.median_ms));
    double lh, bh, ld, bd;
    if (lab_fit(h2d, n, &lh, &bh) == 0 && lab_fit(d2h, n, &ld, &bd) == 0)
        printf("fit T(n) = L + n/B:  H2D L = %.1f us, B = %.2f GB/s;  D2H L = %.1f us, B = %.2f GB/s\n", lh, bh, ld,
               bd);
    else
        printf("fit T(n) = L + n/B: lab_fit did not give a result (see its message above)\n");
    printf("summary: pageable copies of %s: H2D %.2f GB/s, D2H %.2f GB/s (medians)\n",
           xl_format_size(h2d[n - 1].bytes, s1, sizeof s1), xl_gbps(h2d[n - 1].bytes, h2d[n - 1].t.median_ms),
           xl_gbps(d2h[n - 1].bytes, d2h[n - 1].t.median_ms));
}

/* write_csv - both sweeps to path through lab_write_csv, then where they were measured; exits 1 after one line
 * when lab_write_csv fails */
static void write_csv(const char *path, const xl_gpu_info *g, int reps, const lab_point *h2d, const lab_point *d2h,
                      int n)
{
    if (lab_write_csv(path, h2d, d2h, n) != 0) {
        fprintf(stderr, "%s: lab_write_csv could not write %s\n", prog, path);
        exit(1);
    }
    xl_append_run_info(path, g, prog, reps);
    printf("wrote %s\n", path);
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    lab_point h2d[MAX_POINTS], d2h[MAX_POINTS];
    parse_options(argc, argv, &o);
    xl_gpu_require(prog, &g);
    if (o.max_bytes > g.total_mem_bytes / 2)
        xl_cli_die(prog, "--max is more than half of the GPU's memory");
    int n = sweep_both(&o, h2d, d2h);
    print_sweeps(g.name, o.reps, h2d, d2h, n);
    if (o.csv)
        write_csv(o.csv, &g, o.reps, h2d, d2h, n);
    return 0;
}
