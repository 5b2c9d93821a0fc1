/* 03-nonblocking-sync.c - the grader of lab 03 (the non-blocking sync bug). Course staff only.
 *
 * Races are made certain, not likely: the GPU is kept busy (the delay kernel) ahead of every
 * copy, so a read without a wait sees poison every time. Narrow waits are checked with an
 * unrelated long kernel on another stream; overlap with host work is a ratio measured in the
 * same run. Fresh random data on every repetition.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/delay.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "labs/03-nonblocking-sync/lab.h"

XL_LAB("03", "nonblocking-sync");

#define REPS 20
#define DELAY_NS 10000000ull     /* 10 ms of GPU work ahead of each copy */
#define OTHER_NS 300000000ull    /* an unrelated 300 ms kernel on another stream */
#define NARROW_MS 150.0          /* a narrow wait finishes well before that kernel */
#define GPU_WORK_MS 40.0         /* GPU work in the overlap test, longer than the host work: */
#define HOST_WORK_MS 20.0        /* a fetch without a wait reads poison 20 ms early, every time */
#define OVERLAP_NEED 0.8         /* (H + G - T) / min(H, G): 1 is perfect overlap, 0 none */
/* Seen for the reference (2026-11-22, make stability, 9 gradings on the H100 and 13 on the H200): overlap 0.99 to
 * 1.01 (on the H200 host 20.0 ms, GPU 40.1 ms, lab_fetch 40.2-40.3 ms); lab_fetch 2.1 to 2.2 ms and lab_send 3.5 to
 * 3.9 ms beside the 300 ms kernel. Every wrong wait planted in the mutants scores near 0 or takes >= 300 ms. Until
 * then host and GPU work were 30 ms each, so a fetch without a wait read the result just as the copy ended: the
 * skeleton got 10 of 45 points in one grading on the H200, and this was the only test a missing wait could pass. */

/* ===== Fetch fixtures ===== */

/* What a fetch moves and how its callbacks behave. */
typedef struct {
    void *dev;            /* the result buffer lab_fetch copies from */
    const void *src;      /* device copy of the expected data: gpu_work copies it into dev */
    const unsigned char *want; /* the expected bytes, on the host */
    size_t bytes;
    uint64_t gpu_ns;      /* delay before the result is written */
    double host_ms;       /* host work, spinning */
    int consumed;         /* how many times consume ran */
    int check;            /* consume verifies the data */
} fetch_ctx;

/* fetch_gpu_work - the GPU keeps busy, then writes the result into dev */
static void fetch_gpu_work(cudaStream_t s, void *ctx)
{
    fetch_ctx *f = ctx;
    xl_delay(s, f->gpu_ns);
    XL_CHECK(cudaMemcpyAsync(f->dev, f->src, f->bytes, cudaMemcpyDeviceToDevice, s));
}

/* spin_ms - keeps the CPU busy for ms, as real host work would */
static void spin_ms(double ms)
{
    double end = xl_now_ms() + ms;
    while (xl_now_ms() < end) {
    }
}

/* fetch_host_work - host work independent of the result */
static void fetch_host_work(void *ctx)
{
    spin_ms(((fetch_ctx *)ctx)->host_ms);
}

/* fetch_consume - reads the result: the last page first (a copy in flight writes it last) */
static void fetch_consume(const void *host, size_t bytes, void *ctx)
{
    fetch_ctx *f = ctx;
    size_t bad = 0, tail = bytes < 4096 ? bytes : 4096;
    f->consumed++;
    if (!f->check)
        return;
    const unsigned char *h = host;
    int tail_ok = xl_compare(h + bytes - tail, f->want + bytes - tail, tail, &bad) == 0;
    if (tail_ok)
        tail_ok = xl_compare(h, f->want, bytes, &bad) == 0;
    else
        bad += bytes - tail;
    cr_assert(tail_ok,
              "consume read byte %zu of %zu before the copy had written it (0x%02x, expected 0x%02x): wait for "
              "the copy (an event recorded after it, or its stream) before reading the result",
              bad, bytes, h[bad], f->want[bad]);
}

/* fetch_setup - fresh expected data of bytes, its device copy, a poisoned result buffer */
static void fetch_setup(fetch_ctx *f, size_t bytes, uint64_t gpu_ns, double host_ms)
{
    unsigned char *want = kit_host_alloc(bytes);
    void *src = kit_dev_alloc(bytes);
    xl_fill_random(want, bytes, xl_fresh_seed());
    XL_CHECK(cudaMemcpy(src, want, bytes, cudaMemcpyHostToDevice));
    *f = (fetch_ctx){kit_dev_alloc(bytes), src, want, bytes, gpu_ns, host_ms, 0, 1};
}

/* fetch_teardown - frees what fetch_setup allocated */
static void fetch_teardown(fetch_ctx *f)
{
    XL_CHECK(cudaFree(f->dev));
    XL_CHECK(cudaFree((void *)f->src));
    free((void *)f->want);
}

/* job_for - a lab_fetch_job on stream s into host, with f's callbacks */
static lab_fetch_job job_for(fetch_ctx *f, cudaStream_t s, void *host)
{
    lab_fetch_job j = {s, fetch_gpu_work, f->dev, host, f->bytes, fetch_host_work, fetch_consume, f};
    return j;
}

/* ===== Part A: fetch ===== */

XL_TEST(fetch, correct_under_delay, 10, XL_GPU,
        "lab_fetch: consume sees the whole result, 20 times, with the GPU 10 ms behind", 30)
{
    static const size_t sizes[] = {3, 4097, (1u << 20) + 5, 64u << 20};
    cudaStream_t s = kit_stream();
    for (int r = 0; r < REPS; r++) {
        size_t n = sizes[r % 4];
        fetch_ctx f;
        fetch_setup(&f, n, DELAY_NS, 0.1);
        void *host = lab_fetch_buffer(n);
        cr_assert(host != NULL, "lab_fetch_buffer(%zu) returned NULL", n);
        xl_poison(host, n);
        lab_fetch_job j = job_for(&f, s, host);
        xl_expect_ok(lab_fetch(&j), "lab_fetch");
        cr_assert(f.consumed == 1, "lab_fetch called consume %d times; it must call it once", f.consumed);
        XL_CHECK(cudaStreamSynchronize(s));
        lab_fetch_buffer_free(host);
        fetch_teardown(&f);
    }
}

/* What a narrow-wait test runs: one fetch into a poisoned buffer, so only a correct wait passes. */
typedef struct {
    fetch_ctx f;
    cudaStream_t s;
    void *host;
} fetch_run;

/* fetch_poisoned - xl_poison the destination, then one lab_fetch (consume checks every byte) */
static void fetch_poisoned(void *ctx)
{
    fetch_run *r = ctx;
    xl_poison(r->host, r->f.bytes);
    lab_fetch_job j = job_for(&r->f, r->s, r->host);
    xl_expect_ok(lab_fetch(&j), "lab_fetch");
}

XL_TEST(fetch, narrow_wait, 5, XL_GPU,
        "lab_fetch waits for its copy only, not for a 300 ms kernel on another stream", 15)
{
    fetch_run r = {.s = kit_stream()};
    fetch_setup(&r.f, 1u << 20, 2000000, 0.1);
    r.host = lab_fetch_buffer(r.f.bytes);
    cr_assert(r.host != NULL, "lab_fetch_buffer returned NULL");
    fetch_poisoned(&r); /* warm-up */
    double ms = kit_ms_beside_busy(fetch_poisoned, &r, OTHER_NS);
    cr_assert(ms < NARROW_MS,
              "lab_fetch took %.0f ms while an unrelated 300 ms kernel ran on another stream (its own work takes "
              "about 3 ms): it waited for more than its copy. cudaDeviceSynchronize waits for every stream, and "
              "so does anything on the legacy default stream (stream 0, cudaMemcpy); wait on an event recorded "
              "after the copy, or on its stream",
              ms);
    xl_note("lab_fetch took %.1f ms beside the 300 ms kernel", ms);
    lab_fetch_buffer_free(r.host);
    fetch_teardown(&r.f);
}

/* measure_overlap - xl_measure_fn: host work alone (H), GPU work and copy alone (G), then lab_fetch into a
 * poisoned buffer (T, and consume checks the result), all in this run; the efficiency (H + G - T) / min(H, G) */
static void measure_overlap(void *ctx, double *eff, char *figures, size_t len)
{
    fetch_run *o = ctx;
    double h[3], g[3], t[3];
    for (int r = 0; r < 3; r++) {
        double t0 = xl_now_ms();
        fetch_host_work(&o->f);
        h[r] = xl_now_ms() - t0;
        t0 = xl_now_ms();
        fetch_gpu_work(o->s, &o->f);
        XL_CHECK(cudaMemcpyAsync(o->host, o->f.dev, o->f.bytes, cudaMemcpyDeviceToHost, o->s));
        XL_CHECK(cudaStreamSynchronize(o->s));
        g[r] = xl_now_ms() - t0;
        xl_poison(o->host, o->f.bytes); /* a fetch that does not wait reads poison, however fast it is */
        lab_fetch_job j = job_for(&o->f, o->s, o->host);
        t0 = xl_now_ms();
        xl_expect_ok(lab_fetch(&j), "lab_fetch");
        t[r] = xl_now_ms() - t0;
    }
    double H = xl_median(h, 3), G = xl_median(g, 3), T = xl_median(t, 3);
    *eff = (H + G - T) / fmin(H, G);
    snprintf(figures, len,
             "host work %.1f ms, GPU work and copy %.1f ms, lab_fetch %.1f ms (spread %.1f-%.1f): overlap %.2f "
             "(1 = it took max(H, G) = %.1f ms, 0 = the sum %.1f ms)",
             H, G, T, fmin(fmin(t[0], t[1]), t[2]), fmax(fmax(t[0], t[1]), t[2]), *eff, fmax(H, G), H + G);
}

XL_TEST(fetch, overlap, 10, XL_GPU,
        "lab_fetch runs 20 ms of host work while the GPU works 40 ms: total near 40 ms, not 60", 30)
{
    fetch_run o = {.s = kit_stream()};
    fetch_setup(&o.f, 1u << 20, (uint64_t)(GPU_WORK_MS * 1e6), HOST_WORK_MS);
    o.host = lab_fetch_buffer(o.f.bytes);
    cr_assert(o.host != NULL, "lab_fetch_buffer returned NULL");
    xl_ratio_check(measure_overlap, &o, OVERLAP_NEED, 1, "overlap of host work with GPU work (need >= 0.8)");
    lab_fetch_buffer_free(o.host);
    fetch_teardown(&o.f);
}

/* pageable_copy_return_ms - how long cudaMemcpyAsync into pageable memory takes to return behind f's GPU work:
 * the premise of the pinned buffer (the host can do nothing else meanwhile) */
static double pageable_copy_return_ms(fetch_ctx *f, cudaStream_t s, void *pageable)
{
    fetch_gpu_work(s, f);
    double t0 = xl_now_ms();
    XL_CHECK(cudaMemcpyAsync(pageable, f->dev, f->bytes, cudaMemcpyDeviceToHost, s));
    double ms = xl_now_ms() - t0;
    XL_CHECK(cudaStreamSynchronize(s));
    return ms;
}

XL_TEST(fetch, pinned_destination, 5, XL_GPU,
        "lab_fetch delivers into lab_fetch_buffer memory, and that memory is pinned (pageable would not overlap)", 20)
{
    fetch_run r = {.s = kit_stream()};
    fetch_setup(&r.f, (1u << 20) + 3, DELAY_NS, 0.1);
    r.host = lab_fetch_buffer(r.f.bytes);
    cr_assert(r.host != NULL, "lab_fetch_buffer returned NULL");
    fetch_poisoned(&r);
    cr_assert(kit_is_pinned(r.host),
              "lab_fetch_buffer returned pageable memory. cudaMemcpyAsync into pageable memory does not return "
              "until the copy is done (the driver copies through its staging buffer), so the host work cannot "
              "overlap: allocate it with cudaMallocHost");
    lab_fetch_buffer_free(r.host);
    fetch_teardown(&r.f);
    /* the premise, measured: into malloc'd memory the "async" copy returns only once the GPU work and the copy
     * are done */
    fetch_ctx f;
    fetch_setup(&f, 1u << 20, 20000000, 20);
    void *pageable = kit_host_alloc(f.bytes);
    pageable_copy_return_ms(&f, r.s, pageable);
    xl_note("cudaMemcpyAsync into pageable memory returned after %.1f ms, behind 20 ms of GPU work: the host could "
            "do nothing meanwhile", pageable_copy_return_ms(&f, r.s, pageable));
    free(pageable);
    fetch_teardown(&f);
}

/* ===== Part B: send ===== */

/* What a send moves. */
typedef struct {
    uint64_t seed;
    uint64_t gpu_ns;
} send_ctx;

/* send_fill - batch i: fresh random bytes from the seed */
static void send_fill(void *host, size_t bytes, int i, void *ctx)
{
    xl_fill_random(host, bytes, ((send_ctx *)ctx)->seed + (uint64_t)i);
}

/* send_gpu_work - keeps the GPU busy before batch i's copy */
static void send_gpu_work(cudaStream_t s, int i, void *ctx)
{
    (void)i;
    xl_delay(s, ((send_ctx *)ctx)->gpu_ns);
}

/* send_setup - dev poisoned for n batches, then a job that sends them through host on s with fresh data */
static lab_send_job send_setup(send_ctx *c, cudaStream_t s, void *host, void *dev, size_t bytes, int n,
                               uint64_t gpu_ns)
{
    *c = (send_ctx){xl_fresh_seed(), gpu_ns};
    XL_CHECK(cudaMemset(dev, XL_POISON_BYTE, (size_t)n * bytes));
    lab_send_job j = {s, send_gpu_work, host, dev, bytes, n, send_fill, c};
    return j;
}

/* send_call - one lab_send, then the host buffer is poisoned at once (lab.h: it is free when lab_send returns) */
static void send_call(void *job)
{
    const lab_send_job *j = job;
    xl_expect_ok(lab_send(j), "lab_send");
    xl_poison(j->host, j->bytes);
}

/* send_expect - once the stream is done: every batch of j arrived intact; rep numbers the repetition */
static void send_expect(const lab_send_job *j, int rep)
{
    const send_ctx *c = j->ctx;
    unsigned char *want = kit_host_alloc(j->bytes);
    XL_CHECK(cudaStreamSynchronize(j->stream));
    for (int i = 0; i < j->n; i++) {
        char what[160];
        xl_fill_random(want, j->bytes, c->seed + (uint64_t)i);
        snprintf(what, sizeof what,
                 "batch %d of %d (repetition %d): the host buffer was overwritten before its copy had read it", i,
                 j->n, rep);
        kit_expect_dev_bytes((char *)j->dev + (size_t)i * j->bytes, want, j->bytes, 0, what);
    }
    free(want);
}

XL_TEST(send, correct_under_delay, 10, XL_GPU,
        "lab_send: every batch arrives intact, 10 times, though the host refills one buffer", 30)
{
    const size_t bytes = (1u << 20) + 13;
    const int n = 6;
    cudaStream_t s = kit_stream();
    void *host = kit_pinned_alloc(bytes), *dev = kit_dev_alloc(n * bytes);
    for (int r = 0; r < 10; r++) {
        send_ctx c;
        lab_send_job j = send_setup(&c, s, host, dev, bytes, n, 5000000);
        send_call(&j);
        send_expect(&j, r + 1);
    }
}

XL_TEST(send, narrow_wait, 5, XL_GPU,
        "lab_send waits for its own copies only, not for a 300 ms kernel on another stream; batches intact", 15)
{
    const size_t bytes = 1u << 20;
    void *host = kit_pinned_alloc(bytes), *dev = kit_dev_alloc(3 * bytes);
    send_ctx c;
    lab_send_job j = send_setup(&c, kit_stream(), host, dev, bytes, 3, 1000000);
    send_call(&j); /* warm-up */
    j = send_setup(&c, j.stream, host, dev, bytes, 3, 1000000);
    double ms = kit_ms_beside_busy(send_call, &j, OTHER_NS);
    send_expect(&j, 1);
    cr_assert(ms < NARROW_MS,
              "lab_send took %.0f ms while an unrelated 300 ms kernel ran on another stream (its own work takes "
              "about 4 ms): wait on an event recorded after each copy, or on its stream, not on the whole device",
              ms);
    xl_note("lab_send took %.1f ms beside the 300 ms kernel", ms);
}
