/* workload.cu - lab 04's batches, kernel and right answers (see workload.h). The kit's; do not edit. */
#include "labs/04-double-buffering/workload.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/delay.h"
#include "common/gputime.cuh"
#include "common/stats.h"
#include "common/timeline.h"
#include "common/timing.h"

#define MAX_WORKERS 8

/* ===== The host's side: producing a batch with a few threads ===== */

/* One batch being written: worker k writes part k of n. */
struct wl_workers {
    pthread_t th[MAX_WORKERS];
    int n;                     /* threads besides the caller */
    pthread_barrier_t go, done;
    int quit;
    uint32_t *dst;
    const uint32_t *src;
    size_t items;
    uint32_t key;
};

/* write_part - part k of n of the batch: dst[j] = src[j] ^ key */
static void write_part(struct wl_workers *w, int k, int n)
{
    size_t a = w->items * (size_t)k / (size_t)n, b = w->items * (size_t)(k + 1) / (size_t)n;
    for (size_t j = a; j < b; j++)
        w->dst[j] = w->src[j] ^ w->key;
}

/* Arguments of one worker thread. */
typedef struct {
    struct wl_workers *w;
    int k;
} worker_arg;

/* worker - waits for a batch, writes its part, reports; until quit */
static void *worker(void *arg)
{
    worker_arg a = *(worker_arg *)arg;
    free(arg);
    for (;;) {
        pthread_barrier_wait(&a.w->go);
        if (a.w->quit)
            return NULL;
        write_part(a.w, a.k, a.w->n + 1);
        pthread_barrier_wait(&a.w->done);
    }
}

/* workers_start - n helper threads (0: the caller writes alone) */
static wl_workers *workers_start(int n)
{
    wl_workers *w = (wl_workers *)calloc(1, sizeof *w);
    if (!w)
        xl_fail("lab 04 workload: out of memory");
    w->n = n;
    pthread_barrier_init(&w->go, NULL, (unsigned)n + 1);
    pthread_barrier_init(&w->done, NULL, (unsigned)n + 1);
    for (int k = 0; k < n; k++) {
        worker_arg *a = (worker_arg *)malloc(sizeof *a);
        if (!a)
            xl_fail("lab 04 workload: out of memory");
        *a = (worker_arg){w, k + 1};
        if (pthread_create(&w->th[k], NULL, worker, a) != 0)
            xl_fail("lab 04 workload: cannot start a producer thread");
    }
    return w;
}

/* workers_stop - ends the helper threads and frees w */
static void workers_stop(wl_workers *w)
{
    w->quit = 1;
    pthread_barrier_wait(&w->go);
    for (int k = 0; k < w->n; k++)
        pthread_join(w->th[k], NULL);
    pthread_barrier_destroy(&w->go);
    pthread_barrier_destroy(&w->done);
    free(w);
}

/* batch_key, batch_offset - batch i is pool[offset(i) ...] ^ key(i) */
static uint32_t batch_key(int i)
{
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    return (uint32_t)(z ^ (z >> 29));
}
static size_t batch_offset(const wl_ctx *w, int i)
{
    return ((size_t)i * 2654435761u) % w->items;
}

/* helper_threads - how many threads help the caller write a batch: half the cores, less the caller */
static int helper_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int helpers = cpus >= 4 ? (int)(cpus / 2) - 1 : 0;
    return helpers < MAX_WORKERS ? helpers : MAX_WORKERS;
}

/* One share of work for in_parallel: part(arg, k, n) does share k of n. */
typedef struct {
    void (*part)(void *arg, int k, int n);
    void *arg;
    int k, n;
} share;

/* share_thread - runs one share */
static void *share_thread(void *s)
{
    share *h = (share *)s;
    h->part(h->arg, h->k, h->n);
    return NULL;
}

/* in_parallel - part(arg, k, n) for every k < n, with n = the caller and its helper threads (at most shares);
 * a thread that cannot start leaves its share to the caller */
static void in_parallel(void (*part)(void *arg, int k, int n), void *arg, int shares)
{
    pthread_t th[MAX_WORKERS + 1];
    share h[MAX_WORKERS + 1];
    int started[MAX_WORKERS + 1] = {0}, n = helper_threads() + 1;
    if (n > shares)
        n = shares > 1 ? shares : 1;
    for (int k = 0; k < n; k++)
        h[k] = (share){part, arg, k, n};
    for (int k = 1; k < n; k++)
        started[k] = pthread_create(&th[k], NULL, share_thread, &h[k]) == 0;
    for (int k = 0; k < n; k++)
        if (k == 0 || !started[k])
            share_thread(&h[k]);
    for (int k = 1; k < n; k++)
        if (started[k])
            pthread_join(th[k], NULL);
}

/* What fill_part fills: share k of the pool, from its own seed. */
typedef struct {
    unsigned char *pool;
    size_t bytes;
    uint64_t seed;
} pool_fill;

/* fill_part - share k of n of the pool: fresh random bytes from seed + k (8-byte aligned pieces) */
static void fill_part(void *arg, int k, int n)
{
    pool_fill *f = (pool_fill *)arg;
    size_t words = (f->bytes + 7) / 8;
    size_t a = words * (size_t)k / (size_t)n * 8, b = words * (size_t)(k + 1) / (size_t)n * 8;
    if (b > f->bytes)
        b = f->bytes;
    if (a < b)
        xl_fill_random(f->pool + a, b - a, f->seed + (uint64_t)k);
}

void wl_create(wl_ctx *w, size_t items, double produce_ms, uint64_t kernel_ns, int start_slots)
{
    memset(w, 0, sizeof *w);
    w->items = items;
    w->produce_ms = produce_ms;
    w->kernel_ns = kernel_ns;
    w->pool = (uint32_t *)malloc(2 * items * sizeof(uint32_t));
    if (!w->pool)
        xl_fail("lab 04 workload: cannot allocate %zu bytes for the data", 2 * items * sizeof(uint32_t));
    pool_fill f = {(unsigned char *)w->pool, 2 * items * sizeof(uint32_t), xl_fresh_seed()};
    in_parallel(fill_part, &f, (int)(f.bytes >> 20) + 1); /* a thread per MiB at most */
    if (start_slots > 0) {
        XL_CHECK(cudaMalloc(&w->start, (size_t)start_slots * sizeof(lab_result)));
        w->max_batches = start_slots;
    }
    w->slow_batch = -1;
    w->workers = workers_start(helper_threads());
}

/* stage_bufs_free - releases what wl_stages made, if it ran */
static void stage_bufs_free(wl_ctx *w);

void wl_destroy(wl_ctx *w)
{
    workers_stop(w->workers);
    stage_bufs_free(w);
    if (w->start)
        XL_CHECK(cudaFree(w->start));
    free(w->pool);
    memset(w, 0, sizeof *w);
}

lab_job wl_job(wl_ctx *w, int batches, lab_result *results)
{
    w->n_seen_host = 0;
    w->produced = 0;
    w->out_of_order = 0;
    w->computed = 0;
    w->compute_out_of_order = 0;
    lab_job j = {batches, w->items, wl_produce, wl_compute, results, w};
    return j;
}

void wl_slow_batch(wl_ctx *w, int i, double slow_ms)
{
    w->slow_batch = i;
    w->slow_ms = slow_ms;
}

/* note_host_buffer - remembers a host buffer produce was given */
static void note_host_buffer(wl_ctx *w, const uint32_t *host)
{
    for (int k = 0; k < w->n_seen_host; k++)
        if (w->seen_host[k] == host)
            return;
    if (w->n_seen_host < 64)
        w->seen_host[w->n_seen_host++] = host;
}

void wl_produce(uint32_t *host, size_t items, int i, void *ctx)
{
    wl_ctx *w = (wl_ctx *)ctx;
    double t0 = xl_now_ms();
    if (i != w->produced)
        w->out_of_order++;
    w->produced++;
    note_host_buffer(w, host);
    wl_workers *k = w->workers;
    k->dst = host;
    k->src = w->pool + batch_offset(w, i);
    k->items = items < w->items ? items : w->items;
    k->key = batch_key(i);
    pthread_barrier_wait(&k->go);
    write_part(k, 0, k->n + 1);
    pthread_barrier_wait(&k->done);
    while (xl_now_ms() - t0 < w->produce_ms) {
    }
    if (w->tl)
        xl_timeline_host(w->tl, w->run, "host", "produce", t0, xl_now_ms());
}

lab_result wl_expected(const wl_ctx *w, int i)
{
    const uint32_t *src = w->pool + batch_offset(w, i);
    uint32_t key = batch_key(i);
    lab_result r = {0, 0};
    for (size_t j = 0; j < w->items; j++) {
        long long v = (long long)((src[j] ^ key) & 0xFFFFu) - 32768;
        r.sum += (unsigned long long)v;
        r.sumsq += (unsigned long long)(v * v);
    }
    return r;
}

/* What expected_part computes: batches 0 to n - 1 of w into out. */
typedef struct {
    const wl_ctx *w;
    lab_result *out;
    int n;
} expected_job;

/* expected_part - share k of m of the batches: k, k + m, ... */
static void expected_part(void *arg, int k, int m)
{
    expected_job *e = (expected_job *)arg;
    for (int i = k; i < e->n; i += m)
        e->out[i] = wl_expected(e->w, i);
}

void wl_expected_all(const wl_ctx *w, int n, lab_result *out)
{
    expected_job e = {w, out, n};
    in_parallel(expected_part, &e, (double)n * (double)w->items >= 1e6 ? n : 1); /* threads for work worth them */
}

/* ===== The GPU's side: a kernel that fills the GPU ===== */

/* batch_kernel - after spin_ns, the batch's normalized items (low 16 bits, centred on 0) summed and
 * squared into *out (zeroed before). One block per multiprocessor (its shared memory sees to that). */
static __global__ void batch_kernel(const uint32_t *in, size_t n, lab_result *out, uint64_t spin_ns)
{
    xl_block_spin_ns(spin_ns);
    unsigned long long s = 0, q = 0;
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < n; j += (size_t)gridDim.x * blockDim.x) {
        long long v = (long long)(in[j] & 0xFFFFu) - 32768;
        s += (unsigned long long)v;
        q += (unsigned long long)(v * v);
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_down_sync(0xffffffffu, s, o);
        q += __shfl_down_sync(0xffffffffu, q, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out->sum, s);
        atomicAdd(&out->sumsq, q);
    }
}

/* hold_up - a host function in a stream: sleeps us microseconds (the pointer's value), holding up the stream,
 * not the GPU */
static void CUDART_CB hold_up(void *us)
{
    xl_sleep_ms((double)(uintptr_t)us * 1e-3);
}

void wl_compute(const uint32_t *dev, size_t items, lab_result *dev_result, int i, cudaStream_t stream, void *ctx)
{
    wl_ctx *w = (wl_ctx *)ctx;
    int blocks, smem, span = -1;
    if (i >= 0) {
        if (i != w->computed)
            w->compute_out_of_order++;
        w->computed++;
    }
    xl_one_block_per_sm((const void *)batch_kernel, &blocks, &smem);
    if (w->tl)
        span = xl_timeline_gpu_begin(w->tl, stream, w->run, xl_timeline_lane(w->tl, stream), "compute");
    if (w->start && i >= 0 && i < w->max_batches) { /* the batch as the kernel finds it */
        XL_CHECK(cudaMemsetAsync(&w->start[i], 0, sizeof(lab_result), stream));
        batch_kernel<<<blocks, 512, 0, stream>>>(dev, items, &w->start[i], 0);
        XL_CHECK_LAUNCH();
    }
    XL_CHECK(cudaMemsetAsync(dev_result, 0, sizeof(lab_result), stream));
    batch_kernel<<<blocks, 512, smem, stream>>>(dev, items, dev_result, w->kernel_ns);
    XL_CHECK_LAUNCH();
    if (i >= 0 && i == w->slow_batch && w->slow_ms > 0) /* what the pipe queues next (its copy back) waits */
        XL_CHECK(cudaLaunchHostFunc(stream, hold_up, (void *)(uintptr_t)(w->slow_ms * 1e3)));
    if (w->tl)
        xl_timeline_gpu_end(w->tl, span, stream);
}

void wl_start_results(const wl_ctx *w, lab_result *out, int n)
{
    if (!w->start || n > w->max_batches)
        xl_fail("lab 04 workload: %d start results asked, %d recorded", n, w->max_batches);
    XL_CHECK(cudaMemcpy(out, w->start, (size_t)n * sizeof(lab_result), cudaMemcpyDeviceToHost));
}

/* ===== Stage times ===== */

/* What wl_stages measures with: one batch's buffers, a stream and its events, kept for the next call. */
struct wl_stage_bufs {
    uint32_t *host, *dev;
    lab_result *dres, *hres;
    cudaStream_t s;
    cudaEvent_t e[5];
};

/* stage_bufs - w's stage buffers, made at the first call */
static wl_stage_bufs *stage_bufs(wl_ctx *w)
{
    if (w->stage_bufs)
        return w->stage_bufs;
    wl_stage_bufs *b = (wl_stage_bufs *)calloc(1, sizeof *b);
    if (!b)
        xl_fail("lab 04 workload: out of memory");
    size_t bytes = w->items * sizeof(uint32_t);
    XL_CHECK(cudaMallocHost(&b->host, bytes));
    XL_CHECK(cudaMallocHost(&b->hres, sizeof(lab_result)));
    XL_CHECK(cudaMalloc(&b->dev, bytes));
    XL_CHECK(cudaMalloc(&b->dres, sizeof(lab_result)));
    XL_CHECK(cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking));
    for (int x = 0; x < 5; x++)
        XL_CHECK(cudaEventCreate(&b->e[x]));
    return w->stage_bufs = b;
}

static void stage_bufs_free(wl_ctx *w)
{
    wl_stage_bufs *b = w->stage_bufs;
    if (!b)
        return;
    for (int x = 0; x < 5; x++)
        XL_CHECK(cudaEventDestroy(b->e[x]));
    XL_CHECK(cudaStreamDestroy(b->s));
    XL_CHECK(cudaFree(b->dev));
    XL_CHECK(cudaFree(b->dres));
    XL_CHECK(cudaFreeHost(b->host));
    XL_CHECK(cudaFreeHost(b->hres));
    free(b);
    w->stage_bufs = NULL;
}

void wl_stages(wl_ctx *w, int reps, wl_stage_ms *out)
{
    double p[32], h[32], f[32], k[32], d[32];
    wl_stage_bufs *b = stage_bufs(w);
    uint32_t *host = b->host, *dev = b->dev;
    lab_result *dres = b->dres, *hres = b->hres;
    cudaStream_t s = b->s;
    cudaEvent_t *e = b->e;
    xl_timing t;
    size_t bytes = w->items * sizeof(uint32_t);
    if (reps > 32)
        reps = 32;
    for (int r = -1; r < reps; r++) { /* r = -1: the warm-up */
        double t0 = xl_now_ms();
        wl_produce(host, w->items, 0, w);
        double pm = xl_now_ms() - t0;
        XL_CHECK(cudaEventRecord(e[0], s));
        XL_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s)); /* just produced */
        XL_CHECK(cudaEventRecord(e[1], s));
        wl_compute(dev, w->items, dres, -1, s, w);
        XL_CHECK(cudaEventRecord(e[2], s));
        XL_CHECK(cudaMemcpyAsync(hres, dres, sizeof(lab_result), cudaMemcpyDeviceToHost, s));
        XL_CHECK(cudaEventRecord(e[3], s));
        for (int q = 0; q < 3; q++) /* the same buffer again, back to back: the link's own rate */
            XL_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
        XL_CHECK(cudaEventRecord(e[4], s));
        XL_CHECK(cudaEventSynchronize(e[4]));
        if (r < 0)
            continue;
        float a, bb, c, g;
        XL_CHECK(cudaEventElapsedTime(&a, e[0], e[1]));
        XL_CHECK(cudaEventElapsedTime(&bb, e[1], e[2]));
        XL_CHECK(cudaEventElapsedTime(&c, e[2], e[3]));
        XL_CHECK(cudaEventElapsedTime(&g, e[3], e[4]));
        p[r] = pm, f[r] = a, k[r] = bb, d[r] = c, h[r] = g / 3;
    }
    out->produce_ms = xl_median(p, reps);
    xl_summarize(h, reps, &t);
    out->h2d_ms = t.min_ms;
    xl_summarize(f, reps, &t);
    out->h2d_fresh_ms = t.min_ms;
    xl_summarize(k, reps, &t);
    out->kernel_ms = t.min_ms;
    xl_summarize(d, reps, &t);
    out->d2h_ms = t.min_ms;
}

double wl_ideal_ms(const wl_stage_ms *s, int batches)
{
    double st[4] = {s->produce_ms, s->h2d_ms, s->kernel_ms, s->d2h_ms}, most = 0, one = 0;
    for (int x = 0; x < 4; x++) {
        one += st[x];
        if (st[x] > most)
            most = st[x];
    }
    return batches * most + (one - most);
}

double wl_produce_alone_ms(wl_ctx *w, int reps)
{
    double ms[32], keep = w->produce_ms;
    uint32_t *host = (uint32_t *)malloc(w->items * sizeof(uint32_t));
    if (!host)
        xl_fail("lab 04 workload: out of memory");
    if (reps > 32)
        reps = 32;
    w->produce_ms = 0;
    wl_produce(host, w->items, 0, w); /* warm-up: the pages are touched */
    for (int r = 0; r < reps; r++) {
        double t0 = xl_now_ms();
        wl_produce(host, w->items, r, w);
        ms[r] = xl_now_ms() - t0;
    }
    w->produce_ms = keep;
    free(host);
    return xl_median(ms, reps);
}

void wl_balance(wl_ctx *w, double slack, wl_stage_ms *out)
{
    wl_stage_ms alone;
    w->produce_ms = 0;
    w->kernel_ns = 0;
    wl_stages(w, 5, &alone); /* the copy in alone */
    double t = fmax(wl_produce_alone_ms(w, 5), alone.h2d_fresh_ms) / slack;
    w->produce_ms = slack * t;
    w->kernel_ns = (uint64_t)(t * 1e6);
    if (out)
        wl_stages(w, 5, out);
}
