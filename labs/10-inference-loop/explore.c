/* explore.c - lab 10's explorer: an inference loop three ways (blocking, async, pipelined) over a sweep of batch
 * sizes, beside the kit's own loop, the model alone and the ideal. Do not edit.
 *
 * First the machine: the GPU, its driver, toolkit and cuBLAS, the link, the memory free, the cores, and the batch
 * that fits for 1 to 4 streams (your lab_max_batch beside the formula of lab.h). Then the stages at the named batch,
 * each alone: decode on this thread (making the pixels, and with the spin), the workers' rate for 1, 2, 4, 8 ...
 * workers (the kit's threads), a copy in from pinned memory (repeated, and fresh: right after a thread wrote it), from
 * pageable memory, the copy pair, the model alone, and which of them bounds the ideal. Then the sweep: at each batch,
 * --reps runs of your three loops, the kit's pipelined loop and the kit's stages (the CPU step with the workers, the
 * link both ways, the model alone with no transfers: the ideal is the slowest of the three), in turn; each run's
 * results are checked (every frame's digest and scores, in order, once) before its figures are shown; frames/s and
 * latency (from a frame's decode to its deliver: median, 99th percentile, worst) are the source's own records
 * (fr_point). Then lab_choose_batch on your pipelined runs, the done-when figures at batch 64, and, with --csv, a
 * timeline of the pipelined loop at 64. A function of yours that is not written yet (a job of no frames returns -1,
 * or lab_loop_create NULL) is left out with one line, and so is a point whose results are wrong.
 *     make run LAB=10 ARGS="--csv loop.csv"
 * loop.csv: loop,impl,batch,frames,workers,streams,slots,cpu_us,fps,latency_p50_ms,latency_p99_ms,latency_max_ms,
 * ideal_fps,bound (loop blocking, async, pipelined or resident: the model alone; impl yours or kit; fps the median of
 * the runs, latency_p50_ms and latency_p99_ms their medians, latency_max_ms the worst of all the runs; ideal_fps and
 * bound from the kit's stages of the same runs: bound cpu, link or model). The kit's blocking loop is measured at
 * the named batch only (the done-when's second figure).
 * loop-stages.csv, beside it (xl_csv_sibling): one row per batch: batch,decode_us,make_us,cpu_fps_w1,cpu_fps,h2d_us,
 * h2d_fresh_us,pair_us,model_us,resident_fps,link_fps,max_batch_s1,max_batch_s3,h2d_pageable_us (us a frame; h2d_us
 * a pinned copy in repeated, h2d_fresh_us right after the CPU wrote it; cpu_fps_w1 one thread, cpu_fps the workers;
 * max_batch_* the formula of lab.h at the memory free when the explorer started).
 * loop-timeline.csv: run,lane,what,start_ms,end_ms,bytes: the pipelined loop (yours, else the kit's) at batch 64,
 * batches 10 to 21 of 32: lanes "worker 1" ... (decode: a worker's consecutive frames of one batch as one span),
 * "loop" (deliver), "stream 1" ... (H2D and D2H as the copies ran, and "model": from the end of a batch's copy in to
 * the start of its copy out on the same stream, two events the copy trace records around the model's work; the
 * model may share the GPU with another stream's there).
 */
#include <cublas_v2.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/copylog.h"
#include "common/csv.h"
#include "common/gpu.h"
#include "common/sizes.h"
#include "common/stats.h"
#include "common/timeline.h"
#include "common/timing.h"
#include "common/trace.h"
#include "labs/10-inference-loop/baseline.h"
#include "labs/10-inference-loop/frames.h"
#include "labs/10-inference-loop/lab.h"
#include "labs/10-inference-loop/model.h"

static const char *prog = "10-inference-loop-explore";

#define MAX_REPS 20
#define MAX_BATCHES 16
#define POINT_BATCHES 64     /* a point runs at most this many batches (or --frames frames, whichever is fewer) */
#define MIN_BATCHES 4        /* and at least this many */
#define DECODE_FRAMES 256    /* decode alone on this thread: frames timed */
#define COPY_REPS 5          /* a copy in alone: timed runs after a warm-up */
#define SCALE_FRAMES 2048    /* the workers' scaling row: frames a run */
#define BLOCKING_FRAMES 1024 /* the kit's blocking loop at the named batch: the grader's count */
#define TL_BATCHES 32        /* the timeline's run: batches of LAB_BATCH_NAMED */
#define TL_FIRST 10          /* and the batches it keeps */
#define TL_LAST 21
#define TL_SPANS 4096
#define MERGE_MS 0.005       /* the timeline: a worker's decodes of a batch less than this apart are one span */
#define PINNED_SHARE 0.25    /* the sweep's pinned buffers: at most this share of the host's memory */

/* The grader's bars (grader/10-inference-loop.c, speed.pipelined), repeated for the done-when lines. */
#define IDEAL_BAR 0.85
#define BLOCKING_BAR 1.5

/* ===== What is measured ===== */

/* The series: your three loops, the kit's pipelined loop, and the kit's blocking loop (at the named batch). */
enum { S_BLOCK, S_ASYNC, S_PIPE, S_KPIPE, S_KBLOCK, NSER };
static const char *const ser_loop[NSER] = {"blocking", "async", "pipelined", "pipelined", "blocking"};
static const char *const ser_impl[NSER] = {"yours", "yours", "yours", "kit", "kit"};
static const char *const ser_words[NSER] = {"your lab_run_blocking", "your lab_run_async", "your lab_run_pipelined",
                                            "the kit's base_run_pipelined", "the kit's base_run_blocking"};
#define YOURS(s) ((s) <= S_PIPE)

/* One batch size: every run of every series, the kit's stages, and their summaries. */
typedef struct {
    int batch, frames;
    int kblock_frames;                /* the kit's blocking runs' frames (the named batch only) */
    lab_point run[NSER][MAX_REPS];    /* the runs whose results were right */
    int nrun[NSER];
    lab_point sum[NSER];              /* fps and the two percentiles: medians of the runs; max: the worst */
    double cpu_fps, cpu_one_fps, link_fps, compute_fps, ideal_fps; /* medians of the kit's stages */
    const char *bound;                /* "cpu", "link" or "model": the slowest median */
    double h2d_fresh_us, pair_us, model_us; /* us a frame, medians of the kit's stages */
    double h2d_us, h2d_pageable_us;   /* a copy in of the whole batch alone, repeated: pinned, pageable; us a frame */
} point;

/* Everything the measurements share. */
typedef struct {
    int workers, streams, slots, reps, frames, tf32, cores;
    double cpu_us, make_us, decode_us, cpu_given;
    mdl_model *m;
    fr_source *src;
    lab_result *want;   /* the right results of frames 0 .. max_frames - 1 */
    int max_frames;
    lab_loop *L;        /* yours, at max_batch; NULL when lab_loop_create is not written */
    base_loop *K;       /* the kit's */
    base_stage_bufs *sb;
    int alive[NSER];    /* 1: the series runs */
    int batches[MAX_BATCHES], nb, max_batch;
    point pt[MAX_BATCHES + 1];
    int npt, named;     /* points measured; the named batch's index in pt (-1: none yet) */
    size_t free_bytes, total_bytes;
    int fit[LAB_STREAMS_MAX + 1]; /* the formula's batch at free_bytes for 1 .. 8 streams */
    cudaStream_t stream;
    uint8_t *pin, *pageable, *dev; /* one batch of max_batch frames each: the copies alone */
    xl_csv *csv;
    int chosen;         /* your lab_choose_batch on your pipelined runs; -1 not written, 0 none */
    int table_choice[NSER];
} ex;

/* ===== Small helpers ===== */

/* lab_batches - the sweep's default batch sizes (lab.h) */
static const int default_batches[LAB_N_BATCHES] = LAB_BATCHES;

/* formula_batch - the largest batch that lab.h's formula lets fit in free bytes with streams streams, to show
 * beside yours (long double arithmetic: exact enough at real memory sizes, not a model for lab_max_batch) */
static int formula_batch(size_t free_bytes, int streams)
{
    long double per = (long double)MDL_EXEC_PER_FRAME + LAB_IMAGE_BYTES + sizeof(lab_result);
    long double room = ((long double)free_bytes - LAB_MEM_RESERVE) / streams - MDL_EXEC_FIXED;
    if (room < per)
        return 0;
    long double b = floorl(room / per);
    return b > LAB_BATCH_MAX ? LAB_BATCH_MAX : (int)b;
}

/* fps_text - frames/s for a person ("245,300" as "245.3k"), "-" for NaN, into buf */
static const char *fps_text(double fps, char *buf, size_t len)
{
    if (!(fps == fps))
        snprintf(buf, len, "-");
    else if (fps >= 1e6)
        snprintf(buf, len, "%.2fM", fps * 1e-6);
    else if (fps >= 1e3)
        snprintf(buf, len, "%.1fk", fps * 1e-3);
    else
        snprintf(buf, len, "%.0f", fps);
    return buf;
}

/* ms_text - a latency in ms, "-" for NaN, into buf */
static const char *ms_text(double ms, char *buf, size_t len)
{
    if (!(ms == ms))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, ms < 10 ? "%.2f" : "%.1f", ms);
    return buf;
}

/* frames_for - the frames of a point at batch b: at most POINT_BATCHES batches or --frames, at least MIN_BATCHES */
static int frames_for(const ex *e, int b)
{
    long n = (long)POINT_BATCHES * b < e->frames ? (long)POINT_BATCHES * b : e->frames;
    if (n < (long)MIN_BATCHES * b)
        n = (long)MIN_BATCHES * b;
    return (int)n;
}

/* ===== Running one loop and checking it ===== */

/* check_job - 0 when the job just run delivered every frame's right result, once, in order (fr_check; under
 * --math tf32 the digests, order and counts alone: TF32 scores differ from the FP32 reference by design); else -1
 * with one line in why */
static int check_job(const ex *e, int frames, char *why, size_t len)
{
    if (fr_check(e->src, e->want, frames, why, len) == 0)
        return 0;
    if (!e->tf32)
        return -1;
    fr_log lg = fr_log_get(e->src);
    int next = 0;
    for (int i = 0; i < lg.delivers; i++) {
        if (lg.deliver[i].first != next) {
            snprintf(why, len, "deliver %d gave frames from %d, not %d: out of order, or a batch lost or repeated", i,
                     lg.deliver[i].first, next);
            return -1;
        }
        next += lg.deliver[i].n;
    }
    for (int k = 0; k < frames; k++) {
        if (lg.frame[k].delivered != 1) {
            snprintf(why, len, "frame %d was delivered %d times", k, lg.frame[k].delivered);
            return -1;
        }
        if (lg.results[k].digest != e->want[k].digest) {
            snprintf(why, len, "frame %d: digest 0x%08x, not 0x%08x", k, lg.results[k].digest, e->want[k].digest);
            return -1;
        }
    }
    return 0;
}

/* start_run - runs series s on job; what the loop returned */
static int start_run(ex *e, int s, const lab_job *job)
{
    switch (s) {
    case S_BLOCK: return lab_run_blocking(e->L, job);
    case S_ASYNC: return lab_run_async(e->L, job);
    case S_PIPE: return lab_run_pipelined(e->L, job);
    case S_KPIPE: return base_run_pipelined(e->K, job);
    default: return base_run_blocking(e->K, job);
    }
}

/* run_one - one run of series s: frames frames in batches of batch, checked; its figures into out. 0, or -1 after
 * one line (yours: the point is left out); the kit's code failing ends the program. */
static int run_one(ex *e, int s, int batch, int frames, lab_point *out)
{
    char why[256];
    lab_job job = fr_job(e->src, frames, batch, 0);
    int rc = start_run(e, s, &job);
    fr_close(e->src);
    if (rc != 0) {
        if (!YOURS(s))
            xl_fail("%s failed at batch %d (see the message above)", ser_words[s], batch);
        printf("  %s at batch %d returned -1 (its message is above): the point is left out\n", ser_words[s], batch);
        return -1;
    }
    if (check_job(e, frames, why, sizeof why) != 0) {
        if (!YOURS(s))
            xl_fail("%s at batch %d gave wrong results: %s", ser_words[s], batch, why);
        printf("  %s at batch %d, %d frames: wrong results (%s): the point is left out; make grade LAB=10 says "
               "more\n", ser_words[s], batch, frames, why);
        return -1;
    }
    if (fr_point(e->src, out) != 0) {
        if (!YOURS(s))
            xl_fail("%s at batch %d: the source has no figures of the run", ser_words[s], batch);
        printf("  %s at batch %d: a frame was never decoded or delivered: the point is left out\n", ser_words[s],
               batch);
        return -1;
    }
    return 0;
}

/* summarize - p's summaries of its runs: medians of fps and the percentiles, the worst latency; NaN without runs */
static void summarize(point *p)
{
    double v[MAX_REPS];
    for (int s = 0; s < NSER; s++) {
        int n = p->nrun[s];
        lab_point *r = p->run[s], *o = &p->sum[s];
        o->batch = p->batch;
        if (n == 0) {
            o->fps = o->latency_p50_ms = o->latency_p99_ms = o->latency_max_ms = NAN;
            continue;
        }
        for (int i = 0; i < n; i++)
            v[i] = r[i].fps;
        o->fps = xl_median(v, n);
        for (int i = 0; i < n; i++)
            v[i] = r[i].latency_p50_ms;
        o->latency_p50_ms = xl_median(v, n);
        for (int i = 0; i < n; i++)
            v[i] = r[i].latency_p99_ms;
        o->latency_p99_ms = xl_median(v, n);
        o->latency_max_ms = r[0].latency_max_ms;
        for (int i = 1; i < n; i++)
            if (r[i].latency_max_ms > o->latency_max_ms)
                o->latency_max_ms = r[i].latency_max_ms;
    }
}

/* copy_us - a copy in of batch frames from src (pinned or pageable) alone, repeated: us a frame, median */
static double copy_us(ex *e, const uint8_t *src, int batch)
{
    xl_timing t;
    xl_copy_job j = {e->dev, src, (size_t)batch * LAB_IMAGE_BYTES, cudaMemcpyHostToDevice};
    xl_time_gpu(xl_memcpy_async_work, &j, e->stream, 1, COPY_REPS, &t);
    return t.median_ms * 1000.0 / batch;
}

/* ===== A point of the sweep ===== */

/* measure - the point at batch b: --reps rounds of every series still running and the kit's stages, then the copies
 * alone; the kit's blocking loop too at the named batch */
static void measure(ex *e, point *p, int b)
{
    char nm[48];
    double v[7][MAX_REPS];
    base_stages st;
    memset(p, 0, sizeof *p);
    p->batch = b;
    p->frames = frames_for(e, b);
    p->kblock_frames = p->frames < BLOCKING_FRAMES ? p->frames : BLOCKING_FRAMES;
    snprintf(nm, sizeof nm, "batch %d", b);
    XL_RANGE_PUSH(nm);
    for (int r = 0; r < e->reps; r++) {
        for (int s = 0; s < NSER; s++) {
            if (!e->alive[s] || (s == S_KBLOCK && b != LAB_BATCH_NAMED))
                continue;
            int n = s == S_KBLOCK ? p->kblock_frames : p->frames;
            if (run_one(e, s, b, n, &p->run[s][p->nrun[s]]) == 0)
                p->nrun[s]++;
        }
        if (base_stages_run(e->sb, p->frames, b, &st) != 0)
            xl_fail("the kit's base_stages_run failed at batch %d (see the message above)", b);
        v[0][r] = st.cpu_fps, v[1][r] = st.cpu_fps_one, v[2][r] = st.link_fps, v[3][r] = st.compute_fps;
        v[4][r] = st.h2d_us, v[5][r] = st.pair_us, v[6][r] = st.model_us;
    }
    p->cpu_fps = xl_median(v[0], e->reps);
    p->cpu_one_fps = xl_median(v[1], e->reps);
    p->link_fps = xl_median(v[2], e->reps);
    p->compute_fps = xl_median(v[3], e->reps);
    p->h2d_fresh_us = xl_median(v[4], e->reps);
    p->pair_us = xl_median(v[5], e->reps);
    p->model_us = xl_median(v[6], e->reps);
    p->ideal_fps = p->cpu_fps, p->bound = "cpu";
    if (p->link_fps < p->ideal_fps)
        p->ideal_fps = p->link_fps, p->bound = "link";
    if (p->compute_fps < p->ideal_fps)
        p->ideal_fps = p->compute_fps, p->bound = "model";
    p->h2d_us = copy_us(e, e->pin, b);
    p->h2d_pageable_us = copy_us(e, e->pageable, b);
    summarize(p);
    XL_RANGE_POP();
}

/* print_head - the sweep's two header lines */
static void print_head(void)
{
    printf("\n%6s %6s | %9s %9s %9s %9s %9s | %9s %-5s %6s | %-17s %-17s %-17s\n", "batch", "frames", "blocking",
           "async", "pipelined", "kit pipe", "no xfer", "ideal", "bound", "p/idl", "blocking latency",
           "async latency", "pipelined latency");
    printf("%6s %6s | %9s %9s %9s %9s %9s | %9s %-5s %6s | %-17s %-17s %-17s\n", "", "", "frames/s", "", "", "", "",
           "frames/s", "", "", "p50 / p99 / max", "ms", "");
}

/* print_point - one line of the sweep */
static void print_point(const point *p)
{
    char f[7][16], l[9][12], lat[3][112];
    const int lsers[3] = {S_BLOCK, S_ASYNC, S_PIPE};
    for (int k = 0; k < 3; k++) {
        const lab_point *s = &p->sum[lsers[k]];
        snprintf(lat[k], sizeof lat[k], "%s/%s/%s", ms_text(s->latency_p50_ms, l[3 * k], 12),
                 ms_text(s->latency_p99_ms, l[3 * k + 1], 12), ms_text(s->latency_max_ms, l[3 * k + 2], 12));
    }
    double eff = p->sum[S_PIPE].fps / p->ideal_fps;
    if (eff == eff)
        snprintf(f[6], sizeof f[6], "%.2f", eff);
    else
        snprintf(f[6], sizeof f[6], "-");
    printf("%6d %6d | %9s %9s %9s %9s %9s | %9s %-5s %6s | %-17s %-17s %-17s\n", p->batch, p->frames,
           fps_text(p->sum[S_BLOCK].fps, f[0], 16), fps_text(p->sum[S_ASYNC].fps, f[1], 16),
           fps_text(p->sum[S_PIPE].fps, f[2], 16), fps_text(p->sum[S_KPIPE].fps, f[3], 16),
           fps_text(p->compute_fps, f[4], 16), fps_text(p->ideal_fps, f[5], 16), p->bound, f[6], lat[0], lat[1],
           lat[2]);
}

/* csv_rows - p's rows in the figures' CSV: each series with runs, and the model alone */
static void csv_rows(ex *e, const point *p)
{
    if (!e->csv)
        return;
    for (int s = 0; s < NSER; s++) {
        const lab_point *q = &p->sum[s];
        if (p->nrun[s] == 0)
            continue;
        xl_csv_row(e->csv, "%s,%s,%d,%d,%d,%d,%d,%.2f,%.1f,%.4f,%.4f,%.4f,%.1f,%s", ser_loop[s], ser_impl[s],
                   p->batch, s == S_KBLOCK ? p->kblock_frames : p->frames, e->workers, e->streams, e->slots,
                   e->cpu_us, q->fps, q->latency_p50_ms, q->latency_p99_ms, q->latency_max_ms, p->ideal_fps,
                   p->bound);
    }
    xl_csv_row(e->csv, "resident,kit,%d,%d,%d,%d,%d,%.2f,%.1f,nan,nan,nan,%.1f,%s", p->batch, p->frames, e->workers,
               e->streams, e->slots, e->cpu_us, p->compute_fps, p->ideal_fps, p->bound);
}

/* ===== The machine and the stages ===== */

/* print_machine - the GPU, driver, toolkit, cuBLAS, link, memory, cores and the batch that fits */
static void print_machine(ex *e, const xl_gpu_info *g)
{
    char drv[64], v1[16], v2[16], a[32], b[32];
    int gen, width, maj = 0, min = 0, patch = 0;
    double line;
    if (cublasGetProperty(MAJOR_VERSION, &maj) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(MINOR_VERSION, &min) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
        maj = min = patch = -1;
    printf("lab 10 on %s: driver %s (CUDA %s), built with CUDA %s, cuBLAS %d.%d.%d", g->name,
           xl_driver_release(drv, sizeof drv), xl_version_string(g->driver_version, v1, sizeof v1),
           xl_version_string(g->runtime_version, v2, sizeof v2), maj, min, patch);
    if (xl_pcie_link(&gen, &width, &line) == 0)
        printf("; PCIe gen %d x%d, %.1f GB/s a direction on paper", gen, width, line);
    printf("\n  %d CPU cores; GPU memory %s free of %s; the model's math: %s\n", e->cores,
           xl_format_size(e->free_bytes, a, sizeof a), xl_format_size(e->total_bytes, b, sizeof b),
           e->tf32 ? "TF32 tensor cores (--math tf32: scores checked by digest only)" : "FP32, pedantic");
    printf("  the largest batch that fits in the memory free, lab_max_batch (yours) and lab.h's formula:\n");
    for (int s = 1; s <= 4; s++) {
        int yours = lab_max_batch(e->free_bytes, s);
        printf("    %d stream%s: yours %d, the formula %d%s\n", s, s > 1 ? "s" : "", yours, e->fit[s],
               yours == -1 ? " (yours not written yet?)" : yours == e->fit[s] ? "" : "   <- differs");
    }
}

/* decode_alone - making a frame, and decoding it (with the spin), on this thread: us a frame */
static void decode_alone(ex *e)
{
    uint8_t *buf = malloc(LAB_IMAGE_BYTES);
    if (!buf)
        xl_fail("out of host memory for one frame");
    fr_make(e->src, 0, buf, 0); /* the pages touched once */
    double t0 = xl_now_ms();
    for (int f = 0; f < DECODE_FRAMES; f++)
        fr_make(e->src, f, buf, 0);
    double t1 = xl_now_ms();
    for (int f = 0; f < DECODE_FRAMES; f++)
        fr_make(e->src, f, buf, 1);
    double t2 = xl_now_ms();
    free(buf);
    e->make_us = (t1 - t0) * 1000.0 / DECODE_FRAMES;
    e->decode_us = (t2 - t1) * 1000.0 / DECODE_FRAMES;
}

/* scaling - the kit's workers alone at the named batch for 1, 2, 4, 8 ... workers up to the cores (and
 * LAB_WORKERS_MAX): frames/s, and how far from W times one thread */
static void scaling(ex *e)
{
    int ws[8], nw = 0, top = e->cores < LAB_WORKERS_MAX ? e->cores : LAB_WORKERS_MAX;
    char f[16];
    base_stages st;
    for (int w = 1; w <= top && nw < 7; w *= 2)
        ws[nw++] = w;
    if (ws[nw - 1] != top)
        ws[nw++] = top;
    printf("  the workers alone (the kit's threads, decode with the spin into pinned slots, no GPU), %d frames:\n"
           "    %-9s", SCALE_FRAMES, "workers");
    XL_RANGE_PUSH("workers' scaling");
    double fps[8], one[8];
    for (int i = 0; i < nw; i++) {
        base_stage_bufs *b = base_stages_create(e->m, e->src, LAB_BATCH_NAMED, ws[i], e->streams);
        if (!b)
            xl_fail("the kit's base_stages_create failed for %d workers (see the message above)", ws[i]);
        if (base_stages_run(b, SCALE_FRAMES, LAB_BATCH_NAMED, &st) != 0)
            xl_fail("the kit's base_stages_run failed for %d workers (see the message above)", ws[i]);
        base_stages_destroy(b);
        fps[i] = st.cpu_fps;
        one[i] = st.cpu_fps_one;
        printf(" %8d", ws[i]);
    }
    XL_RANGE_POP();
    printf("\n    %-9s", "frames/s");
    for (int i = 0; i < nw; i++)
        printf(" %8s", fps_text(fps[i], f, sizeof f));
    printf("\n    %-9s", "of W x 1");
    for (int i = 0; i < nw; i++)
        printf(" %8.2f", fps[i] / (ws[i] * one[i]));
    printf("   (the grader needs 0.8 at its W: below it the host could not give the workers W cores)\n");
}

/* print_stages - the named batch's stages, each alone, and which bounds */
static void print_stages(const ex *e, const point *p)
{
    char a[16], b[16], c[16], d[16];
    printf("  at batch %d, %d frames, medians of %d (us a frame):\n", p->batch, p->frames, e->reps);
    printf("    decode on one thread: making the pixels %.1f us, with the spin %.1f us (cpu_us %.1f%s)\n", e->make_us,
           e->decode_us, e->cpu_us, e->cpu_given >= 0 ? ", --cpu-us" : ": the kit's balance");
    printf("    the CPU stage, %d workers: %s frames/s (one thread %s frames/s)\n", e->workers,
           fps_text(p->cpu_fps, a, sizeof a), fps_text(p->cpu_one_fps, b, sizeof b));
    printf("    copy in, pinned: %.2f us repeated, %.2f us fresh (right after the CPU wrote it); pageable %.2f us\n",
           p->h2d_us, p->h2d_fresh_us, p->h2d_pageable_us);
    printf("    the copy pair (in, and the results out on another stream, timed together): %.2f us\n", p->pair_us);
    printf("    the model alone, %d streams, no transfers: %.2f us (%s frames/s)\n", e->streams, p->model_us,
           fps_text(p->compute_fps, a, sizeof a));
    printf("    the ideal: the slowest of CPU %s, link %s, model %s frames/s = %s frames/s, bound by the %s\n",
           fps_text(p->cpu_fps, a, sizeof a), fps_text(p->link_fps, b, sizeof b),
           fps_text(p->compute_fps, c, sizeof c), fps_text(p->ideal_fps, d, sizeof d),
           strcmp(p->bound, "cpu") == 0 ? "CPU step" : p->bound);
}

/* ===== Choosing the batch, and the done-when figures ===== */

/* choose - your lab_choose_batch on every run of your pipelined sweep; and what the sweep's table gives (the
 * fastest median whose worst latency is within the margin) for your loop and the kit's */
static void choose(ex *e)
{
    lab_point pts[(MAX_BATCHES + 1) * MAX_REPS];
    int n = 0;
    double lim = LAB_LATENCY_MARGIN * LAB_LATENCY_MS;
    printf("\nchoosing the batch: worst latency within %g x %g ms = %g ms, the fastest such; max_batch %d\n",
           LAB_LATENCY_MARGIN, LAB_LATENCY_MS, lim, e->max_batch);
    for (int s = S_PIPE; s <= S_KPIPE; s++) {
        double best = -1;
        e->table_choice[s] = 0;
        for (int i = 0; i < e->npt; i++) {
            const lab_point *q = &e->pt[i].sum[s];
            if (e->pt[i].nrun[s] && q->latency_max_ms <= lim && q->fps > best)
                best = q->fps, e->table_choice[s] = q->batch;
        }
    }
    e->chosen = -1;
    if (e->alive[S_PIPE]) {
        for (int i = 0; i < e->npt; i++)
            for (int r = 0; r < e->pt[i].nrun[S_PIPE]; r++)
                pts[n++] = e->pt[i].run[S_PIPE][r];
        e->chosen = lab_choose_batch(pts, n, LAB_LATENCY_MS, e->max_batch);
        if (e->chosen == -1)
            printf("  your lab_choose_batch: -1 (not written yet?)\n");
        else
            printf("  your lab_choose_batch on your %d pipelined runs: %d%s\n", n, e->chosen,
                   e->chosen == 0 ? " (none eligible)" : "");
        printf("  from the table, your pipelined loop: %d\n", e->table_choice[S_PIPE]);
    }
    printf("  from the table, the kit's pipelined loop: %d%s\n", e->table_choice[S_KPIPE],
           e->table_choice[S_KPIPE] ? "" : " (none within the margin)");
}

/* done_when - the lab's two bars at the named batch, from its point */
static void done_when(const ex *e)
{
    const point *p = &e->pt[e->named];
    printf("\ndone-when at batch %d, %d workers, %d streams, %d slots (the grader: %d, %d, %d), medians of %d:\n",
           p->batch, e->workers, e->streams, e->slots, LAB_WORKERS_NAMED, LAB_STREAMS_NAMED, LAB_SLOTS_NAMED,
           e->reps);
    if (!p->nrun[S_PIPE]) {
        printf("  not measured: your lab_run_pipelined does not run yet (the kit's reaches %.2f of the ideal)\n",
               p->sum[S_KPIPE].fps / p->ideal_fps);
        return;
    }
    double eff = p->sum[S_PIPE].fps / p->ideal_fps, x = p->sum[S_PIPE].fps / p->sum[S_KBLOCK].fps;
    printf("  your pipelined loop over the ideal: %.2f (needs %.2f; the kit's pipelined loop %.2f)%s\n", eff,
           IDEAL_BAR, p->sum[S_KPIPE].fps / p->ideal_fps, eff >= IDEAL_BAR ? "" : "   <- short");
    printf("  your pipelined loop over the kit's blocking loop (%d frames): %.1fx (needs %.1fx)%s\n",
           p->kblock_frames, x, BLOCKING_BAR, x >= BLOCKING_BAR ? "" : "   <- short");
}

/* ===== The timeline ===== */

/* The timeline run's job: the kit's callbacks, with each deliver's start and end noted. */
typedef struct {
    lab_job inner;
    double at[TL_BATCHES][2];
    int n;
} tl_ctx;

/* tl_decode - the kit's decode, passed on */
static int tl_decode(int frame, uint8_t *dst, void *ctx)
{
    tl_ctx *c = ctx;
    return c->inner.decode(frame, dst, c->inner.ctx);
}

/* tl_deliver - the kit's deliver, passed on, timed */
static void tl_deliver(int first, int n, const lab_result *results, void *ctx)
{
    tl_ctx *c = ctx;
    double t0 = xl_now_ms();
    c->inner.deliver(first, n, results, c->inner.ctx);
    if (c->n < TL_BATCHES) {
        c->at[c->n][0] = t0;
        c->at[c->n][1] = xl_now_ms();
    }
    c->n++;
}

/* tracer_name - a copy's name on the timeline as common/tracecopy.c gives it, from its kind as passed */
static const char *tracer_name(enum cudaMemcpyKind k)
{
    return k == cudaMemcpyHostToDevice ? "H2D" : k == cudaMemcpyDeviceToHost ? "D2H"
                                               : k == cudaMemcpyDeviceToDevice ? "D2D" : "copy";
}

/* timeline - the pipelined loop (yours, else the kit's) at the named batch, TL_BATCHES batches, into a CSV at path:
 * batches TL_FIRST to TL_LAST; exits 1 after one line on failure */
static void timeline(ex *e, const char *path, const xl_gpu_info *g)
{
    enum { MAXC = 4 * TL_BATCHES + 64 };
    static xl_copy_rec recs[MAXC];
    static double pairs[4][2 * MAXC];
    static tl_ctx c;
    char err[256];
    int s = e->alive[S_PIPE] ? S_PIPE : S_KPIPE, b = LAB_BATCH_NAMED, frames = TL_BATCHES * b;
    const char *names[4] = {"H2D", "D2H", "D2D", "copy"};
    int npairs[4], used[4] = {0, 0, 0, 0};
    xl_timeline *t = xl_timeline_create(TL_SPANS);
    if (!t)
        xl_fail("out of host memory for the timeline");
    XL_RANGE_PUSH("timeline");
    memset(&c, 0, sizeof c);
    c.inner = fr_job(e->src, frames, b, 0);
    lab_job job = c.inner;
    job.decode = tl_decode, job.deliver = tl_deliver, job.ctx = &c;
    xl_copylog_start(recs, MAXC);
    xl_timeline_trace_copies(t, "pipelined");
    int rc = s == S_PIPE ? lab_run_pipelined(e->L, &job) : base_run_pipelined(e->K, &job);
    xl_timeline_trace_copies(NULL, NULL);
    int ncopies = xl_copylog_stop();
    fr_close(e->src);
    if (rc != 0 || check_job(e, frames, err, sizeof err) != 0) {
        printf("\ntimeline: %s at batch %d did not run right (%s): no timeline written\n", ser_words[s], b,
               rc ? "it returned -1" : err);
        xl_timeline_destroy(t);
        XL_RANGE_POP();
        return;
    }
    /* the host clock against the timeline's origin: a span of no length at a known time */
    double probe = xl_now_ms(), at[2];
    xl_timeline_host(t, "origin", "origin", "origin", probe, probe);
    xl_timeline_collect(t, "origin", "origin", at, 1);
    double shift = at[0] - probe; /* host clock + shift = the timeline's time */
    for (int k = 0; k < 4; k++)
        npairs[k] = xl_timeline_collect(t, "pipelined", names[k], pairs[k], MAXC);

    xl_csv *o = xl_csv_open(path, "run,lane,what,start_ms,end_ms,bytes", err, sizeof err);
    if (!o)
        xl_fail("%s", err);
    fr_log lg = fr_log_get(e->src);
    int f0 = TL_FIRST * b, f1 = (TL_LAST + 1) * b;
    double lo = INFINITY, hi = -INFINITY;
    /* the workers, numbered by their first decode in the window; a worker's frames of one batch that follow each
     * other in time (less than MERGE_MS apart) as one span */
    long tids[LAB_WORKERS_MAX + 8];
    int ntids = 0, idx[LAB_BATCH_NAMED];
    for (int f = f0; f < f1; f++) {
        if (lg.frame[f].start_ms < lo)
            lo = lg.frame[f].start_ms;
        int w = 0;
        while (w < ntids && tids[w] != lg.frame[f].tid)
            w++;
        if (w == ntids && ntids < LAB_WORKERS_MAX + 8)
            tids[ntids++] = lg.frame[f].tid;
    }
    for (int bt = TL_FIRST; bt <= TL_LAST; bt++)
        for (int w = 0; w < ntids; w++) {
            int n = 0;
            for (int f = bt * b; f < (bt + 1) * b; f++) { /* this worker's frames of the batch, by start */
                if (lg.frame[f].tid != tids[w])
                    continue;
                int k = n++;
                while (k > 0 && lg.frame[idx[k - 1]].start_ms > lg.frame[f].start_ms) {
                    idx[k] = idx[k - 1];
                    k--;
                }
                idx[k] = f;
            }
            for (int i = 0; i < n;) {
                double start = lg.frame[idx[i]].start_ms, end = lg.frame[idx[i]].end_ms;
                int j = i + 1;
                while (j < n && lg.frame[idx[j]].start_ms - end < MERGE_MS)
                    end = lg.frame[idx[j++]].end_ms;
                xl_csv_row(o, "pipelined,worker %d,decode,%.4f,%.4f,%zu", w + 1, start + shift, end + shift,
                           (size_t)(j - i) * LAB_IMAGE_BYTES);
                i = j;
            }
        }
    for (int k = TL_FIRST; k <= TL_LAST && k < c.n; k++) {
        xl_csv_row(o, "pipelined,loop,deliver,%.4f,%.4f,%zu", c.at[k][0] + shift, c.at[k][1] + shift,
                   (size_t)(lg.deliver[k].n * sizeof(lab_result)));
        if (c.at[k][1] > hi)
            hi = c.at[k][1];
    }
    lo += shift, hi += shift;
    /* the copies, each on its stream's lane (the copy record says which stream, in the order the trace has them);
     * the model between a batch's copy in and its copy out on the same stream */
    cudaStream_t lanes[LAB_STREAMS_MAX + 8];
    double last_in[LAB_STREAMS_MAX + 8];
    int nl = 0;
    if (ncopies > MAXC)
        ncopies = MAXC;
    for (int i = 0; i < ncopies; i++) {
        int k = 0;
        const char *nm = tracer_name(recs[i].kind);
        while (strcmp(names[k], nm) != 0)
            k++;
        if (used[k] >= npairs[k] || used[k] >= MAXC)
            continue;
        double a = pairs[k][2 * used[k]], z = pairs[k][2 * used[k] + 1];
        used[k]++;
        int l = 0;
        while (l < nl && lanes[l] != recs[i].stream)
            l++;
        if (l == nl && nl < LAB_STREAMS_MAX + 8)
            lanes[nl] = recs[i].stream, last_in[nl++] = NAN;
        if (l == nl)
            continue;
        enum cudaMemcpyKind dir = xl_copy_dir(&recs[i]);
        if (dir == cudaMemcpyDeviceToHost && last_in[l] == last_in[l] && last_in[l] >= lo && last_in[l] <= hi)
            xl_csv_row(o, "pipelined,stream %d,model,%.4f,%.4f,0", l + 1, last_in[l], a);
        if (dir == cudaMemcpyHostToDevice)
            last_in[l] = z;
        else if (dir == cudaMemcpyDeviceToHost)
            last_in[l] = NAN;
        if (a >= lo && a <= hi)
            xl_csv_row(o, "pipelined,stream %d,%s,%.4f,%.4f,%zu", l + 1,
                       dir == cudaMemcpyHostToDevice ? "H2D" : dir == cudaMemcpyDeviceToHost ? "D2H" : nm, a, z,
                       recs[i].bytes);
    }
    xl_csv_comment(o, "%s at batch %d, %d workers, %d streams, %d slots, cpu_us %.1f: batches %d to %d of %d; "
                      "decode spans: a worker's consecutive frames of one batch; model: from the end of a batch's "
                      "copy in to the start of its copy out on its stream", ser_words[s], b, e->workers, e->streams,
                   e->slots, e->cpu_us, TL_FIRST, TL_LAST, TL_BATCHES);
    xl_write_run_info(o, g, prog, 1);
    if (xl_csv_close(o, err, sizeof err) != 0)
        xl_fail("%s", err);
    printf("wrote %s (%s, batches %d to %d at %d)\n", path, ser_words[s], TL_FIRST, TL_LAST, b);
    xl_timeline_destroy(t);
    XL_RANGE_POP();
}

/* ===== Setting up ===== */

/* Options, as given on the command line. */
typedef struct {
    const char *batches, *math, *csv;
    int frames, workers, streams, slots, cpu_us, reps;
} options;

/* parse_batches - --batches "1,2,4" into e's list, ascending, without repeats; exits 2 after one line when bad */
static void parse_batches(ex *e, const char *text)
{
    const char *p = text;
    char msg[160];
    e->nb = 0;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > LAB_BATCH_MAX || (*end && *end != ',')) {
            snprintf(msg, sizeof msg, "--batches %s: need batch sizes from 1 to %d, separated by commas", text,
                     LAB_BATCH_MAX);
            xl_cli_die(prog, msg);
        }
        int k = 0;
        while (k < e->nb && e->batches[k] < v)
            k++;
        if (k == e->nb || e->batches[k] != v) {
            if (e->nb == MAX_BATCHES) {
                snprintf(msg, sizeof msg, "--batches: at most %d batch sizes", MAX_BATCHES);
                xl_cli_die(prog, msg);
            }
            memmove(&e->batches[k + 1], &e->batches[k], (size_t)(e->nb - k) * sizeof(int));
            e->batches[k] = (int)v;
            e->nb++;
        }
        p = *end ? end + 1 : end;
    }
    if (e->nb == 0)
        xl_cli_die(prog, "--batches: no batch size given");
}

/* parse_options - the command line into o and e; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o, ex *e)
{
    *o = (options){.frames = 4096, .workers = -1, .streams = LAB_STREAMS_NAMED, .slots = LAB_SLOTS_NAMED,
                   .cpu_us = -1, .reps = 3, .math = "fp32"};
    const xl_opt opts[] = {
        {"batches", XL_OPT_TEXT, &o->batches, 0, 0,
         "batch sizes, e.g. 16,64,256 (default 1,2,4,...,1024, up to what fits)"},
        {"frames", XL_OPT_INT, &o->frames, 256, 65536,
         "frames a point, 256 to 65536 (default 4096): at most 64 batches, at least 4"},
        {"workers", XL_OPT_INT, &o->workers, 1, LAB_WORKERS_MAX,
         "worker threads, 1 to 12 (default 8, or the cores less 4 where fewer)"},
        {"streams", XL_OPT_INT, &o->streams, 1, LAB_STREAMS_MAX, "streams, 1 to 8 (default 3)"},
        {"slots", XL_OPT_INT, &o->slots, 2, LAB_SLOTS_MAX, "pinned slots, 2 to 16 (default 6)"},
        {"cpu-us", XL_OPT_INT, &o->cpu_us, 0, 100000,
         "the CPU step per frame in us, 0 to 100000 (default: the kit's balance for this machine)"},
        {"math", XL_OPT_TEXT, &o->math, 0, 0, "fp32 (default) or tf32: the model's GEMMs on TF32 tensor cores"},
        {"reps", XL_OPT_INT, &o->reps, 1, MAX_REPS, "runs a point, 1 to 20 (default 3)"},
        {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0,
         "also write the figures as CSV (NAME-stages.csv and NAME-timeline.csv beside it)"}};
    xl_cli_or_exit(prog, "An inference loop three ways (blocking, async, pipelined) over a sweep of batch sizes: "
                   "frames/s and latency beside the kit's loop, the model alone and the ideal.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
    if (strcmp(o->math, "fp32") != 0 && strcmp(o->math, "tf32") != 0)
        xl_cli_die(prog, "--math: fp32 or tf32");
    e->tf32 = strcmp(o->math, "tf32") == 0;
    e->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (e->cores < 1)
        e->cores = 1;
    e->workers = o->workers > 0 ? o->workers
                                : (e->cores - 4 < LAB_WORKERS_NAMED ? (e->cores - 4 > 1 ? e->cores - 4 : 1)
                                                                    : LAB_WORKERS_NAMED);
    e->streams = o->streams, e->slots = o->slots, e->reps = o->reps, e->frames = o->frames;
    e->cpu_given = o->cpu_us;
    if (o->batches)
        parse_batches(e, o->batches);
    else
        for (e->nb = 0; e->nb < LAB_N_BATCHES; e->nb++)
            e->batches[e->nb] = default_batches[e->nb];
}

/* limit - drops the batches whose buffers would not fit (device: three loops' worth, yours, the kit's and the kit's
 * stages, with the formula's sizes; host: their pinned slots within PINNED_SHARE of the memory); a line if any */
static void limit(ex *e)
{
    double per = (double)MDL_EXEC_PER_FRAME + LAB_IMAGE_BYTES + sizeof(lab_result);
    double host = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    int keep = 0;
    for (int i = 0; i < e->nb; i++) {
        double b = e->batches[i];
        double dev = 3.0 * e->streams * (MDL_EXEC_FIXED + b * per) + LAB_MEM_RESERVE + b * LAB_IMAGE_BYTES;
        double pinned = (3.0 * e->slots + 1) * b * LAB_IMAGE_BYTES;
        if (dev <= (double)e->free_bytes && pinned <= PINNED_SHARE * host)
            e->batches[keep++] = e->batches[i];
        else
            printf("  batch %d left out: %s\n", e->batches[i],
                   dev > (double)e->free_bytes ? "three loops' device memory would not fit in what is free"
                                                : "the pinned slots would pass a quarter of the host's memory");
    }
    e->nb = keep;
    if (e->nb == 0)
        xl_fail("no batch size of the sweep fits this machine (try --batches 64 --streams 1)");
    e->max_batch = e->batches[e->nb - 1];
    if (e->max_batch < LAB_BATCH_NAMED)
        e->max_batch = LAB_BATCH_NAMED; /* the done-when and the timeline run at the named batch */
    e->max_frames = frames_for(e, e->max_batch);
    if (e->max_frames < TL_BATCHES * LAB_BATCH_NAMED)
        e->max_frames = TL_BATCHES * LAB_BATCH_NAMED;
    for (int i = 0; i < e->nb; i++)
        if (frames_for(e, e->batches[i]) > e->max_frames)
            e->max_frames = frames_for(e, e->batches[i]);
}

/* probe - which of your functions run: lab_loop_create at max_batch, then each run with a job of no frames (0);
 * a line for each left out */
static void probe(ex *e)
{
    e->alive[S_KPIPE] = e->alive[S_KBLOCK] = 1;
    e->L = lab_loop_create(e->m, e->max_batch, e->streams, e->workers, e->slots);
    if (!e->L) {
        printf("left out: your three loops: lab_loop_create(model, %d, %d, %d, %d) returned NULL (not written "
               "yet?)\n", e->max_batch, e->streams, e->workers, e->slots);
        return;
    }
    for (int s = S_BLOCK; s <= S_PIPE; s++) {
        lab_job none = fr_job(e->src, 0, 1, 0);
        e->alive[s] = start_run(e, s, &none) == 0;
        fr_close(e->src);
        if (!e->alive[s])
            printf("left out: %s: a job of no frames returned -1, not 0 (not written yet?)\n", ser_words[s]);
    }
    cudaGetLastError(); /* a refusal may leave an error; the kit's calls must not stop on it */
}

/* setup - the model (TF32 when asked), the frame source (fresh seed), the balance, the right results, your loop,
 * the kit's loop and stages, and the buffers of the copies alone; exits 1 when something cannot be had */
static void setup(ex *e)
{
    double model_us, h2d_us;
    mdl_set_tf32(e->tf32);
    if (!(e->m = mdl_create()))
        xl_fail("the kit's mdl_create failed (see the message above)");
    limit(e);
    if (!(e->src = fr_create(xl_fresh_seed(), e->max_frames)))
        xl_fail("the kit's fr_create failed for %d frames (see the message above)", e->max_frames);
    if (base_balance(e->m, e->src, e->workers, LAB_BATCH_NAMED, &e->cpu_us, &e->make_us, &model_us, &h2d_us) != 0)
        xl_fail("the kit's base_balance failed (see the message above)");
    if (e->cpu_given >= 0)
        e->cpu_us = e->cpu_given;
    fr_set_cpu_us(e->src, e->cpu_us);
    if (!(e->want = malloc((size_t)e->max_frames * sizeof(lab_result))))
        xl_fail("out of host memory for %d results", e->max_frames);
    if (fr_expected(e->src, e->m, 0, e->max_frames, e->want) != 0)
        xl_fail("the kit's fr_expected failed (see the message above)");
    XL_CHECK(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
    XL_CHECK(cudaMallocHost((void **)&e->pin, (size_t)e->max_batch * LAB_IMAGE_BYTES));
    XL_CHECK(cudaMalloc((void **)&e->dev, (size_t)e->max_batch * LAB_IMAGE_BYTES));
    if (!(e->pageable = malloc((size_t)e->max_batch * LAB_IMAGE_BYTES)))
        xl_fail("out of host memory for a pageable batch");
    memset(e->pin, 0x5a, (size_t)e->max_batch * LAB_IMAGE_BYTES);
    memset(e->pageable, 0x5a, (size_t)e->max_batch * LAB_IMAGE_BYTES);
    if (!(e->K = base_loop_create(e->m, e->max_batch, e->streams, e->workers, e->slots)))
        xl_fail("the kit's base_loop_create failed at batch %d (see the message above)", e->max_batch);
    if (!(e->sb = base_stages_create(e->m, e->src, e->max_batch, e->workers, e->streams)))
        xl_fail("the kit's base_stages_create failed at batch %d (see the message above)", e->max_batch);
    probe(e);
    e->named = -1;
}

/* teardown - releases what setup made */
static void teardown(ex *e)
{
    lab_loop_destroy(e->L);
    base_loop_destroy(e->K);
    base_stages_destroy(e->sb);
    XL_CHECK(cudaStreamSynchronize(e->stream));
    XL_CHECK(cudaStreamDestroy(e->stream));
    XL_CHECK(cudaFreeHost(e->pin));
    XL_CHECK(cudaFree(e->dev));
    free(e->pageable);
    free(e->want);
    fr_destroy(e->src);
    mdl_destroy(e->m);
}

/* ===== Results ===== */

/* write_stages - the stages' rows at the CSV beside path (xl_csv_sibling "stages"); exits 1 after one line */
static void write_stages(const ex *e, const char *path, const xl_gpu_info *g)
{
    char where[4096], err[256];
    if (xl_csv_sibling(path, "stages", where, sizeof where) != 0)
        xl_fail("--csv %s: the path is too long for the stages' file beside it", path);
    xl_csv *c = xl_csv_open(where, "batch,decode_us,make_us,cpu_fps_w1,cpu_fps,h2d_us,h2d_fresh_us,pair_us,model_us,"
                                   "resident_fps,link_fps,max_batch_s1,max_batch_s3,h2d_pageable_us", err,
                            sizeof err);
    if (!c)
        xl_fail("%s", err);
    for (int i = 0; i < e->npt; i++) {
        const point *p = &e->pt[i];
        xl_csv_row(c, "%d,%.3f,%.3f,%.1f,%.1f,%.4f,%.4f,%.4f,%.4f,%.1f,%.1f,%d,%d,%.4f", p->batch, e->decode_us,
                   e->make_us, p->cpu_one_fps, p->cpu_fps, p->h2d_us, p->h2d_fresh_us, p->pair_us, p->model_us,
                   p->compute_fps, p->link_fps, e->fit[1], e->fit[3], p->h2d_pageable_us);
    }
    xl_csv_comment(c, "us a frame; the kit's stages over each point's frames, medians of %d; cpu_fps: %d workers; "
                      "max_batch_*: lab.h's formula at %zu bytes free", e->reps, e->workers, e->free_bytes);
    xl_write_run_info(c, g, prog, e->reps);
    if (xl_csv_close(c, err, sizeof err) != 0)
        xl_fail("%s", err);
    printf("wrote %s\n", where);
}

/* print_summary - the summary line */
static void print_summary(const ex *e)
{
    const point *p = &e->pt[e->named];
    char f[6][16];
    printf("\nsummary at batch %d: blocking %s, async %s, pipelined %s (the kit's %s) frames/s; the model alone %s; "
           "the ideal %s, bound by the %s; ",
           p->batch, fps_text(p->sum[S_BLOCK].fps, f[0], 16), fps_text(p->sum[S_ASYNC].fps, f[1], 16),
           fps_text(p->sum[S_PIPE].fps, f[2], 16), fps_text(p->sum[S_KPIPE].fps, f[3], 16),
           fps_text(p->compute_fps, f[4], 16), fps_text(p->ideal_fps, f[5], 16), p->bound);
    if (e->chosen > 0)
        printf("your lab_choose_batch picks %d\n", e->chosen);
    else
        printf("the kit's loop would run at %d\n", e->table_choice[S_KPIPE]);
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    static ex e;
    char err[256], tl_path[4096];
    parse_options(argc, argv, &o, &e);
    xl_gpu_require(prog, &g);
    if (o.csv) {
        if (xl_csv_sibling(o.csv, "timeline", tl_path, sizeof tl_path) != 0)
            xl_cli_die(prog, "--csv: the path is too long for the files beside it");
        if (!(e.csv = xl_csv_open(o.csv, "loop,impl,batch,frames,workers,streams,slots,cpu_us,fps,latency_p50_ms,"
                                         "latency_p99_ms,latency_max_ms,ideal_fps,bound", err, sizeof err)))
            xl_fail("%s", err);
    }
    XL_CHECK(cudaMemGetInfo(&e.free_bytes, &e.total_bytes));
    for (int s = 1; s <= LAB_STREAMS_MAX; s++)
        e.fit[s] = formula_batch(e.free_bytes, s);
    print_machine(&e, &g);
    setup(&e);
    printf("  the sweep: batches");
    for (int i = 0; i < e.nb; i++)
        printf(" %d", e.batches[i]);
    printf("; loops created at %d, %d workers, %d streams, %d slots; %d runs a point; decode %.1f us a frame\n",
           e.max_batch, e.workers, e.streams, e.slots, e.reps, e.cpu_us);

    printf("\nthe stages, each alone:\n");
    decode_alone(&e);
    scaling(&e);
    measure(&e, &e.pt[0], LAB_BATCH_NAMED);
    print_stages(&e, &e.pt[0]);
    e.npt = 1, e.named = 0; /* the named point also serves the sweep when 64 is in it */

    print_head();
    point named = e.pt[0];
    e.npt = 0;
    for (int i = 0; i < e.nb; i++) {
        point *p = &e.pt[e.npt];
        if (e.batches[i] == LAB_BATCH_NAMED)
            *p = named;
        else
            measure(&e, p, e.batches[i]);
        if (e.batches[i] == LAB_BATCH_NAMED)
            e.named = e.npt;
        print_point(p);
        csv_rows(&e, p);
        e.npt++;
    }
    if (e.named < 0) { /* 64 not swept: its point is kept for the done-when, after the sweep's */
        e.pt[e.npt] = named;
        csv_rows(&e, &e.pt[e.npt]);
        e.named = e.npt;
    }
    choose(&e);
    done_when(&e);
    print_summary(&e);
    if (e.csv) {
        const point *p = &e.pt[e.named];
        xl_csv_comment(e.csv, "latency bound: %g ms, margin %g; lab_choose_batch (yours): %d; from the table: yours "
                              "%d, the kit's %d; done-when at %d: pipelined / ideal %.3f, / the kit's blocking %.2f",
                       LAB_LATENCY_MS, LAB_LATENCY_MARGIN, e.chosen, e.table_choice[S_PIPE],
                       e.table_choice[S_KPIPE], p->batch, p->sum[S_PIPE].fps / p->ideal_fps,
                       p->sum[S_PIPE].fps / p->sum[S_KBLOCK].fps);
        xl_csv_comment(e.csv, "fps: frames / (last deliver - first decode start), median of the runs; latency: a "
                              "frame's deliver - its decode start; model math %s; the stages: NAME-stages.csv, the "
                              "timeline: NAME-timeline.csv", e.tf32 ? "TF32" : "FP32 (pedantic)");
        xl_write_run_info(e.csv, &g, prog, e.reps);
        if (xl_csv_close(e.csv, err, sizeof err) != 0)
            xl_fail("%s", err);
        printf("wrote %s\n", o.csv);
        write_stages(&e, o.csv, &g);
        timeline(&e, tl_path, &g);
    }
    teardown(&e);
    return 0;
}
