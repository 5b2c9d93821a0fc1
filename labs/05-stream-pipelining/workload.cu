/* workload.cu - lab 05's kernel, answers, baseline and link rates (see workload.h). The kit's; do not edit. */
#include "labs/05-stream-pipelining/workload.h"

#include <math.h>
#include <stdlib.h>

#include "common/check.h"
#include "common/delay.h"
#include "common/devmem.h"
#include "common/gputime.cuh"
#include "common/stats.h"
#include "common/timeline.h"

/* ===== The kernel ===== */

/* f(x) is wl_transform (workload.h): a mix of shifts and a multiply, exact in 32 bits */
uint32_t wl_expected(uint32_t x)
{
    return wl_transform(x);
}

/* chunk_kernel - after spin_ns of work, out[i] = f(in[i]); one block per multiprocessor */
static __global__ void chunk_kernel(const uint32_t *in, uint32_t *out, size_t n, uint64_t spin_ns)
{
    xl_block_spin_ns(spin_ns);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = wl_transform(in[i]);
}

/* launch - lab_kernel.launch for the kit's kernel */
static void launch(const uint32_t *dev_in, uint32_t *dev_out, size_t items, cudaStream_t stream, void *ctx)
{
    wl_kernel_ctx *c = (wl_kernel_ctx *)ctx;
    int blocks, smem, span = -1;
    xl_one_block_per_sm((const void *)chunk_kernel, &blocks, &smem);
    if (c->tl)
        span = xl_timeline_gpu_begin(c->tl, stream, c->run, xl_timeline_lane(c->tl, stream), "kernel");
    chunk_kernel<<<blocks, 512, smem, stream>>>(dev_in, dev_out, items, (uint64_t)(c->ns_per_item * (double)items));
    XL_CHECK_LAUNCH();
    if (c->tl) {
        xl_timeline_gpu_end(c->tl, span, stream);
        xl_timeline_bytes(c->tl, span, items * sizeof(uint32_t));
    }
    c->launches++;
}

lab_kernel wl_kernel(wl_kernel_ctx *c)
{
    lab_kernel k = {launch, c};
    return k;
}

/* ===== The sequential baseline ===== */

struct base_pipe {
    uint32_t *din, *dout;
    cudaStream_t s;
    size_t items;
};

base_pipe *base_create(size_t items)
{
    base_pipe *b = (base_pipe *)calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->items = items;
    XL_CHECK(cudaMalloc(&b->din, items * sizeof(uint32_t)));
    XL_CHECK(cudaMalloc(&b->dout, items * sizeof(uint32_t)));
    XL_CHECK(cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking));
    return b;
}

int base_run(base_pipe *b, const uint32_t *in, uint32_t *out, size_t items, const lab_kernel *k)
{
    if (!b || items > b->items)
        return -1;
    XL_CHECK(cudaMemcpyAsync(b->din, in, items * sizeof(uint32_t), cudaMemcpyHostToDevice, b->s));
    k->launch(b->din, b->dout, items, b->s, k->ctx);
    XL_CHECK(cudaMemcpyAsync(out, b->dout, items * sizeof(uint32_t), cudaMemcpyDeviceToHost, b->s));
    XL_CHECK(cudaStreamSynchronize(b->s));
    return 0;
}

void base_destroy(base_pipe *b)
{
    if (!b)
        return;
    XL_CHECK(cudaStreamDestroy(b->s));
    XL_CHECK(cudaFree(b->din));
    XL_CHECK(cudaFree(b->dout));
    free(b);
}

/* ===== The link and the kernel alone ===== */

/* elapsed - ms between two recorded events, once the second has happened */
static double elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms;
    XL_CHECK(cudaEventSynchronize(b));
    XL_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

void wl_bufs_alloc(wl_bufs *b, size_t items)
{
    size_t bytes = items * sizeof(uint32_t);
    b->items = items;
    XL_CHECK(cudaMallocHost(&b->hin, bytes));
    XL_CHECK(cudaMallocHost(&b->hout, bytes));
    XL_CHECK(cudaMalloc(&b->din, bytes));
    XL_CHECK(cudaMalloc(&b->dout, bytes));
}

void wl_bufs_free(wl_bufs *b)
{
    XL_CHECK(cudaFree(b->din));
    XL_CHECK(cudaFree(b->dout));
    XL_CHECK(cudaFreeHost(b->hin));
    XL_CHECK(cudaFreeHost(b->hout));
}

void wl_measure(size_t items, size_t chunk_items, const lab_kernel *k, int reps, wl_link *out)
{
    wl_bufs b;
    wl_bufs_alloc(&b, items);
    wl_measure_on(&b, items, chunk_items, k, reps, out);
    wl_bufs_free(&b);
}

void wl_measure_on(const wl_bufs *b, size_t items, size_t chunk_items, const lab_kernel *k, int reps, wl_link *out)
{
    size_t bytes = items * sizeof(uint32_t);
    uint32_t *hin = b->hin, *hout = b->hout, *din = b->din, *dout = b->dout;
    cudaStream_t s1, s2;
    cudaEvent_t e[4];
    double h[16], d[16], x[16], kc[16];
    if (items > b->items)
        xl_fail("wl_measure_on: buffers of %zu words for %zu", b->items, items);
    if (reps > 16)
        reps = 16;
    xl_dev_fill(dout, 0, bytes);
    XL_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    XL_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    for (int i = 0; i < 4; i++)
        XL_CHECK(cudaEventCreate(&e[i]));
    for (int r = -1; r < reps; r++) { /* r = -1: the warm-up */
        XL_CHECK(cudaEventRecord(e[0], s1));
        XL_CHECK(cudaMemcpyAsync(din, hin, bytes, cudaMemcpyHostToDevice, s1));
        XL_CHECK(cudaEventRecord(e[1], s1));
        XL_CHECK(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, s1));
        XL_CHECK(cudaEventRecord(e[2], s1));
        double hm = elapsed(e[0], e[1]), dm = elapsed(e[1], e[2]);
        /* both directions at once: s2 starts with s1, and s1 ends after s2 */
        XL_CHECK(cudaEventRecord(e[0], s1));
        XL_CHECK(cudaStreamWaitEvent(s2, e[0], 0));
        XL_CHECK(cudaMemcpyAsync(din, hin, bytes, cudaMemcpyHostToDevice, s1));
        XL_CHECK(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, s2));
        XL_CHECK(cudaEventRecord(e[1], s2));
        XL_CHECK(cudaStreamWaitEvent(s1, e[1], 0));
        XL_CHECK(cudaEventRecord(e[2], s1));
        double xm = elapsed(e[0], e[2]);
        XL_CHECK(cudaEventRecord(e[0], s1));
        k->launch(din, dout, chunk_items, s1, k->ctx);
        XL_CHECK(cudaEventRecord(e[3], s1));
        double km = elapsed(e[0], e[3]);
        if (r >= 0)
            h[r] = hm, d[r] = dm, x[r] = xm, kc[r] = km;
    }
    xl_timing t;
    xl_summarize(h, reps, &t);
    out->h2d_gbps = bytes * 1e-6 / t.min_ms;
    xl_summarize(d, reps, &t);
    out->d2h_gbps = bytes * 1e-6 / t.min_ms;
    xl_summarize(x, reps, &t);
    out->duplex_gbps = 2.0 * bytes * 1e-6 / t.min_ms;
    xl_summarize(kc, reps, &t);
    out->kernel_chunk_ms = t.min_ms;
    for (int i = 0; i < 4; i++)
        XL_CHECK(cudaEventDestroy(e[i]));
    XL_CHECK(cudaStreamDestroy(s1));
    XL_CHECK(cudaStreamDestroy(s2));
}

double wl_ideal_ms(const wl_link *l, size_t items, size_t chunk_items)
{
    double bytes = (double)items * sizeof(uint32_t), cb = (double)chunk_items * sizeof(uint32_t);
    double link = fmax(fmax(bytes * 1e-6 / l->h2d_gbps, bytes * 1e-6 / l->d2h_gbps), 2 * bytes * 1e-6 / l->duplex_gbps);
    double kernels = l->kernel_chunk_ms * (double)items / (double)chunk_items;
    double hc = cb * 1e-6 / l->h2d_gbps, dc = cb * 1e-6 / l->d2h_gbps, kc = l->kernel_chunk_ms;
    return fmax(link, kernels) + (hc + kc + dc - fmax(fmax(hc, kc), dc));
}

void wl_calibrate(wl_kernel_ctx *c, size_t items, double share)
{
    wl_bufs b;
    wl_bufs_alloc(&b, items);
    wl_calibrate_on(c, &b, items, share);
    wl_bufs_free(&b);
}

void wl_calibrate_on(wl_kernel_ctx *c, const wl_bufs *b, size_t items, double share)
{
    wl_link l; /* the copy in of the whole array, measured here, sets the kernels' total */
    lab_kernel k = wl_kernel(c);
    c->ns_per_item = 0;
    wl_measure_on(b, items, items, &k, 2, &l);
    c->ns_per_item = share * (items * sizeof(uint32_t) * 1e-6 / l.h2d_gbps) * 1e6 / (double)items;
}
