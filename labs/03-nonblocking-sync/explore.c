/* explore.c - lab 03's explorer: the race, made visible. Do not edit.
 *
 * Runs the bug (no wait) and your lab_fetch side by side with the GPU slowed down, counts how often
 * each reads a result that is not there yet, measures the overlap of host work with GPU work, shows
 * what a pageable destination does, checks your lab_send, and records one fetch of each as a
 * timeline (host lane and GPU lane) for the chart:
 *     make run LAB=03 ARGS="--csv timeline.csv"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/delay.h"
#include "common/devmem.h"
#include "common/gpu.h"
#include "common/stats.h"
#include "common/timeline.h"
#include "common/timing.h"
#include "labs/03-nonblocking-sync/lab.h"

#define BYTES ((size_t)64 << 20) /* a result large enough that its copy shows on the timeline */
#define GPU_MS 5.0
#define HOST_MS 4.0

static const char *prog = "03-nonblocking-sync-explore";

/* What one fetch uses; the timeline is NULL when not recording. */
typedef struct {
    void *dev;
    const void *src;
    const unsigned char *want;
    int wrong;         /* reads that saw anything but the result */
    double read_ms;    /* time spent in consume during the last fetch (left out of its time) */
    xl_timeline *tl;   /* records this fetch when not NULL */
    const char *run;   /* its name on the timeline */
    int gpu_span;
    cudaStream_t s;
} fx;

/* gpu_work - 5 ms of GPU work, then the result is written into dev */
static void gpu_work(cudaStream_t s, void *ctx)
{
    fx *f = ctx;
    if (f->tl)
        f->gpu_span = xl_timeline_gpu_begin(f->tl, s, f->run, "GPU", "GPU work");
    xl_delay(s, (uint64_t)(GPU_MS * 1e6));
    XL_CHECK(cudaMemcpyAsync(f->dev, f->src, BYTES, cudaMemcpyDeviceToDevice, s));
    if (f->tl) {
        xl_timeline_gpu_end(f->tl, f->gpu_span, s);
        f->gpu_span = xl_timeline_gpu_begin(f->tl, s, f->run, "GPU", "copy to host"); /* ended in host_work */
    }
}

/* host_work - 4 ms of CPU work. lab_fetch calls it after queueing the copy, so an event recorded here on the
 * stream marks the end of the copy on the timeline. */
static void host_work(void *ctx)
{
    fx *f = ctx;
    if (f->tl)
        xl_timeline_gpu_end(f->tl, f->gpu_span, f->s);
    double t0 = xl_now_ms();
    while (xl_now_ms() < t0 + HOST_MS) {
    }
    if (f->tl)
        xl_timeline_host(f->tl, f->run, "host", "host work", t0, xl_now_ms());
}

/* consume - reads the result (last page first; on the timeline, only that page) and counts a wrong read */
static void consume(const void *host, size_t bytes, void *ctx)
{
    fx *f = ctx;
    double t0 = xl_now_ms();
    const unsigned char *h = host;
    if (memcmp(h + bytes - 4096, f->want + bytes - 4096, 4096) != 0 || (!f->tl && memcmp(h, f->want, bytes) != 0))
        f->wrong++;
    f->read_ms = xl_now_ms() - t0;
    if (f->tl)
        xl_timeline_host(f->tl, f->run, "host", "read result", t0, xl_now_ms());
}

/* bug_fetch - the bug this lab is about: the copy is queued, and the result read without a wait */
static int bug_fetch(const lab_fetch_job *j)
{
    j->gpu_work(j->stream, j->ctx);
    XL_CHECK(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, j->stream));
    j->host_work(j->ctx);
    j->consume(j->host, j->bytes, j->ctx);
    return 0;
}

/* run_fetches - reps fetches with fetch_fn into host; returns the median time up to the read (the check of
 * the result left out), and counts wrong reads in f */
static double run_fetches(int (*fetch_fn)(const lab_fetch_job *), fx *f, void *host, int reps)
{
    double ms[100];
    lab_fetch_job j = {f->s, gpu_work, f->dev, host, BYTES, host_work, consume, f};
    f->wrong = 0;
    for (int r = 0; r < reps; r++) {
        xl_poison(host, BYTES);
        xl_dev_fill(f->dev, XL_POISON_BYTE, BYTES);
        double t0 = xl_now_ms();
        if (fetch_fn(&j) != 0)
            xl_fail("lab_fetch returned an error (see its message above)");
        ms[r] = xl_now_ms() - t0 - f->read_ms; /* the fetch, without checking 64 MiB */
        XL_CHECK(cudaStreamSynchronize(f->s));
    }
    return xl_median(ms, reps);
}

/* record - one fetch of fetch_fn on the timeline, as run */
static void record(int (*fetch_fn)(const lab_fetch_job *), fx *f, void *host, xl_timeline *tl, const char *run)
{
    lab_fetch_job j = {f->s, gpu_work, f->dev, host, BYTES, host_work, consume, f};
    xl_poison(host, BYTES);
    xl_dev_fill(f->dev, XL_POISON_BYTE, BYTES);
    XL_CHECK(cudaDeviceSynchronize());
    f->tl = tl;
    f->run = run;
    fetch_fn(&j);
    XL_CHECK(cudaStreamSynchronize(f->s));
    f->tl = NULL;
}

/* send_fill - batch i from a seed */
static void send_fill(void *host, size_t bytes, int i, void *ctx)
{
    xl_fill_random(host, bytes, *(uint64_t *)ctx + (uint64_t)i);
}

/* send_gpu - 2 ms of GPU work before each batch */
static void send_gpu(cudaStream_t s, int i, void *ctx)
{
    (void)i, (void)ctx;
    xl_delay(s, 2000000);
}

/* check_send - reps sends of 6 batches; returns how many had a corrupted batch */
static int check_send(cudaStream_t s, int reps)
{
    const size_t bytes = 1u << 20;
    const int n = 6;
    unsigned char *host, *want = malloc(bytes), *got = malloc(bytes);
    void *dev;
    int bad_reps = 0;
    XL_CHECK(cudaMallocHost((void **)&host, bytes));
    XL_CHECK(cudaMalloc(&dev, n * bytes));
    for (int r = 0; r < reps; r++) {
        uint64_t seed = xl_fresh_seed();
        lab_send_job j = {s, send_gpu, host, dev, bytes, n, send_fill, &seed};
        if (lab_send(&j) != 0)
            xl_fail("lab_send returned an error (see its message above)");
        XL_CHECK(cudaStreamSynchronize(s));
        int bad = 0;
        for (int i = 0; i < n; i++) {
            xl_fill_random(want, bytes, seed + (uint64_t)i);
            XL_CHECK(cudaMemcpy(got, (char *)dev + (size_t)i * bytes, bytes, cudaMemcpyDeviceToHost));
            bad |= memcmp(got, want, bytes) != 0;
        }
        bad_reps += bad;
    }
    XL_CHECK(cudaFreeHost(host));
    XL_CHECK(cudaFree(dev));
    free(want);
    free(got);
    return bad_reps;
}

/* The host buffers besides f's: what the result must be, and where fetches land. */
typedef struct {
    unsigned char *want; /* the result, on the host */
    void *src;           /* the result, on the device: gpu_work copies it into f.dev */
    void *pageable;      /* malloc'd */
    void *pinned;        /* from your lab_fetch_buffer */
} buffers;

/* What the fetches measured, for the summary. */
typedef struct {
    double bug_ms, your_ms, page_ms; /* median time up to the read */
    int bug_wrong, your_wrong;       /* reads that saw anything but the result */
    int send_bad, send_reps;         /* lab_send repetitions that delivered a corrupted batch, of how many */
} figures;

/* prepare - the buffers, a random result on the device, and f's stream; exits 1 after one line on failure */
static void prepare(fx *f, buffers *b)
{
    *f = (fx){0};
    b->want = malloc(BYTES);
    b->pageable = malloc(BYTES);
    b->pinned = lab_fetch_buffer(BYTES);
    if (!b->want || !b->pageable || !b->pinned)
        xl_fail("cannot allocate the host buffers (lab_fetch_buffer or malloc of 64 MiB)");
    xl_fill_random(b->want, BYTES, xl_fresh_seed());
    memset(b->pageable, 0, BYTES);
    XL_CHECK(cudaMalloc(&b->src, BYTES));
    XL_CHECK(cudaMalloc(&f->dev, BYTES));
    xl_dev_upload(b->src, b->want, BYTES);
    f->src = b->src;
    f->want = b->want;
    XL_CHECK(cudaStreamCreateWithFlags(&f->s, cudaStreamNonBlocking));
}

/* compare_fetches - reps fetches of each kind (the bug, yours, yours into pageable memory) and reps sends (10 at
 * most), a line each, into r */
static void compare_fetches(fx *f, const buffers *b, int reps, const char *gpu, figures *r)
{
    printf("lab 03 on %s: %.0f ms of GPU work then a 64 MiB result copied back, %.0f ms of host work meanwhile\n",
           gpu, GPU_MS, HOST_MS);
    printf("%-34s %12s %12s\n", "", "wrong reads", "time to read");
    r->bug_ms = run_fetches(bug_fetch, f, b->pinned, reps);
    r->bug_wrong = f->wrong;
    printf("%-34s %9d/%-2d %9.2f ms\n", "no wait (the bug)", r->bug_wrong, reps, r->bug_ms);
    r->your_ms = run_fetches(lab_fetch, f, b->pinned, reps);
    r->your_wrong = f->wrong;
    printf("%-34s %9d/%-2d %9.2f ms\n", "your lab_fetch", r->your_wrong, reps, r->your_ms);
    r->page_ms = run_fetches(lab_fetch, f, b->pageable, reps);
    printf("%-34s %9d/%-2d %9.2f ms\n", "your lab_fetch into malloc'd memory", f->wrong, reps, r->page_ms);
    double copy_ms = 64.0 * 1048576 * 1e-6 / 55.0; /* about 1.2 ms at the link's pinned rate */
    printf("overlap: the sum of the work is %.1f ms, its maximum %.1f ms (plus about %.1f ms of copy)\n",
           GPU_MS + HOST_MS, GPU_MS > HOST_MS ? GPU_MS : HOST_MS, copy_ms);
    r->send_reps = reps < 10 ? reps : 10;
    r->send_bad = check_send(f->s, r->send_reps);
    printf("your lab_send: %d of %d repetitions delivered a corrupted batch\n", r->send_bad, r->send_reps);
}

/* write_timeline - one fetch of each kind on a timeline, written to path; exits 1 when it cannot be written (the
 * line on stderr already said why) */
static void write_timeline(const char *path, fx *f, const buffers *b, const xl_gpu_info *g)
{
    xl_timeline *tl = xl_timeline_create(32);
    if (!tl)
        xl_fail("out of memory");
    record(bug_fetch, f, b->pinned, tl, "no wait");
    record(lab_fetch, f, b->pinned, tl, "lab_fetch");
    record(lab_fetch, f, b->pageable, tl, "pageable");
    if (xl_timeline_write(tl, path, g, prog, 1) != 0)
        exit(1);
    xl_timeline_destroy(tl);
    printf("wrote %s\n", path);
}

/* release - frees what prepare made */
static void release(fx *f, buffers *b)
{
    lab_fetch_buffer_free(b->pinned);
    free(b->pageable);
    free(b->want);
    XL_CHECK(cudaFree(b->src));
    XL_CHECK(cudaFree(f->dev));
}

/* Options, as given on the command line. */
typedef struct {
    int reps;
    const char *csv; /* NULL: no timeline */
} options;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.reps = 20};
    const xl_opt opts[] = {{"reps", XL_OPT_INT, &o->reps, 1, 100, "fetches of each kind, 1 to 100 (default 20)"},
                           {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0,
                            "write a timeline of one fetch of each kind (run,lane,what,start_ms,end_ms)"}};
    xl_cli_or_exit(prog, "The race made visible: the bug, your lab_fetch and lab_send, against a slowed GPU.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    fx f;
    buffers b;
    figures r;
    parse_options(argc, argv, &o);
    xl_gpu_require(prog, &g);
    prepare(&f, &b);
    compare_fetches(&f, &b, o.reps, g.name, &r);
    if (o.csv)
        write_timeline(o.csv, &f, &b, &g);
    printf("summary: the bug read a missing result %d of %d times, your lab_fetch %d times, in %.1f ms against "
           "%.1f ms (into pageable memory %.1f ms); lab_send corrupted %d of %d\n",
           r.bug_wrong, o.reps, r.your_wrong, r.your_ms, r.bug_ms, r.page_ms, r.send_bad, r.send_reps);
    release(&f, &b);
    return 0;
}
