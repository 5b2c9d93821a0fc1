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

void wl_create(wl_ctx *w, size_t items, double produce_ms, uint64_t kernel_ns, int start_slots)
{
    memset(w, 0, sizeof *w);
    w->items = items;
    w->produce_ms = produce_ms;
    w->kernel_ns = kernel_ns;
    w->pool = (uint32_t *)malloc(2 * items * sizeof(uint32_t));
    if (!w->pool)
        xl_fail("lab 04 workload: cannot allocate %zu bytes for the data", 2 * items * sizeof(uint32_t));
    xl_fill_random(w->pool, 2 * items * sizeof(uint32_t), xl_fresh_seed());
    if (start_slots > 0) {
        XL_CHECK(cudaMalloc(&w->start, (size_t)start_slots * sizeof(lab_result)));
        w->max_batches = start_slots;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int helpers = cpus >= 4 ? (int)(cpus / 2) - 1 : 0;
    w->workers = workers_start(helpers < MAX_WORKERS ? helpers : MAX_WORKERS);
}

void wl_destroy(wl_ctx *w)
{
    workers_stop(w->workers);
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
    lab_job j = {batches, w->items, wl_produce, wl_compute, results, w};
    return j;
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

void wl_compute(const uint32_t *dev, size_t items, lab_result *dev_result, int i, cudaStream_t stream, void *ctx)
{
    wl_ctx *w = (wl_ctx *)ctx;
    int blocks, smem, span = -1;
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

void wl_stages(wl_ctx *w, int reps, wl_stage_ms *out)
{
    double p[32], h[32], f[32], k[32], d[32];
    uint32_t *host, *dev;
    lab_result *dres, *hres;
    cudaStream_t s;
    cudaEvent_t e[6];
    xl_timing t;
    size_t bytes = w->items * sizeof(uint32_t);
    if (reps > 32)
        reps = 32;
    XL_CHECK(cudaMallocHost(&host, bytes));
    XL_CHECK(cudaMallocHost(&hres, sizeof(lab_result)));
    XL_CHECK(cudaMalloc(&dev, bytes));
    XL_CHECK(cudaMalloc(&dres, sizeof(lab_result)));
    XL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int x = 0; x < 6; x++)
        XL_CHECK(cudaEventCreate(&e[x]));
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
        float a, b, c, g;
        XL_CHECK(cudaEventElapsedTime(&a, e[0], e[1]));
        XL_CHECK(cudaEventElapsedTime(&b, e[1], e[2]));
        XL_CHECK(cudaEventElapsedTime(&c, e[2], e[3]));
        XL_CHECK(cudaEventElapsedTime(&g, e[3], e[4]));
        p[r] = pm, f[r] = a, k[r] = b, d[r] = c, h[r] = g / 3;
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
    for (int x = 0; x < 6; x++)
        XL_CHECK(cudaEventDestroy(e[x]));
    XL_CHECK(cudaStreamDestroy(s));
    XL_CHECK(cudaFree(dev));
    XL_CHECK(cudaFree(dres));
    XL_CHECK(cudaFreeHost(host));
    XL_CHECK(cudaFreeHost(hres));
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
    w->produce_ms = 0;
    w->kernel_ns = 0;
    wl_stages(w, 5, out); /* the copy in alone */
    double t = fmax(wl_produce_alone_ms(w, 5), out->h2d_fresh_ms) / slack;
    w->produce_ms = slack * t;
    w->kernel_ns = (uint64_t)(t * 1e6);
    wl_stages(w, 5, out);
}
