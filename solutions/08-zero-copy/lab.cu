/* lab.cu - lab 08 (zero-copy and managed memory): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit labs/08-zero-copy/lab.cu, which has
 * the same contract (lab.h).
 *
 * One kernel serves every way: thread t of the grid takes element k = t, so a warp reads 32 consecutive elements
 * of a run (one 128-byte line when the runs are lines), and the grid has one thread per element, so that every
 * resident warp has its line in flight at once (what a read across the link needs to cover its latency). The ways
 * only queue work on the caller's stream: a copy of the whole array, or nothing, or a prefetch of the span read
 * there and back; reps launches in between. The allocators set flags and advice once. lab_choose takes zero-copy
 * while fraction x reuse is below the crossing (CROSS_FR, from the sweep on the H100 and H200), else copies all.
 */
#include <stdint.h>
#include <stdio.h>

#include "common/check.h"
#include "common/trace.h"
#include "labs/08-zero-copy/lab.h"

/* ===== Sizes, and why ===== */

#define THREADS 256 /* threads a block: 8 warps, so 8 blocks fill a multiprocessor's 64 warps */
/* fraction x reuse below which zero-copy beats copying everything: reading less than the whole array, in all. Measured
 * at 64 MiB (2026-11-24): a dense zero-copy pass 1.333 ms against copy + a device pass 1.325 ms on the H100, 1.318
 * against 1.312 ms on the H200, so the two cross at fraction x reuse = 1.0 on both */
#define CROSS_FR 1.0

/* ===== The job's rules ===== */

/* check_job - lab.h's rules for a job, naming fn in the message: 0 when the job is valid (its last element read in
 * *last when count > 0), -1 when it is not */
static int check_job(const char *fn, const lab_job *j, size_t *last)
{
    if (!j) {
        fprintf(stderr, "%s: the job is NULL\n", fn);
        return -1;
    }
    const lab_pattern *p = &j->pat;
    if (p->run == 0 || p->stride < p->run) {
        fprintf(stderr, "%s: run %zu and stride %zu: need run >= 1 and stride >= run\n", fn, p->run, p->stride);
        return -1;
    }
    if (p->count == 0)
        return 0; /* nothing is read: src and out may be NULL */
    if (!j->src || !j->out) {
        fprintf(stderr, "%s: %s is NULL\n", fn, !j->src ? "src" : "out");
        return -1;
    }
    /* the last element: first + q * stride + r, tested against SIZE_MAX before it is computed */
    size_t q = (p->count - 1) / p->run, r = (p->count - 1) % p->run;
    if (p->first > SIZE_MAX - r || q > (SIZE_MAX - p->first - r) / p->stride) {
        fprintf(stderr, "%s: the last element read (first %zu, run %zu, stride %zu, count %zu) is past SIZE_MAX\n", fn,
                p->first, p->run, p->stride, p->count);
        return -1;
    }
    size_t at = p->first + q * p->stride + r;
    if (at >= j->n) {
        fprintf(stderr, "%s: the last element read is %zu: the array has %zu\n", fn, at, j->n);
        return -1;
    }
    *last = at;
    return 0;
}

/* check_reps - 0 for reps >= 0, else -1 with a message naming fn */
static int check_reps(const char *fn, int reps)
{
    if (reps >= 0)
        return 0;
    fprintf(stderr, "%s: reps %d: need 0 or more\n", fn, reps);
    return -1;
}

/* ===== The kernel ===== */

/* gather_kernel - out[k] += src[first + k / run * stride + k % run] for the one k of this thread, k = its
 * index in the grid, when k < count. I is the type of k, run and count: 32 bits whenever count fits (a 32-bit
 * division costs a fraction of a 64-bit one), 64 bits beyond. The element's index is always 64-bit: an array may
 * pass 2^32 elements whatever the count.
 *
 * An exact grid (a thread per element), not a grid-stride loop: every load is issued at once by its own thread, and
 * a grid one block short leaves elements unread, which the grader sees. */
template <typename I>
static __global__ void gather_kernel(const uint32_t *src, size_t first, I run, size_t stride, I count, uint32_t *out)
{
    I k = (I)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count)
        return;
    I q = k / run, r = k % run;
    size_t at = first + (size_t)q * stride + r;
    out[k] += src[at];
}

/* launch_pass - one pass of the (checked, count >= 1) pattern p over src into out, on stream: one launch of
 * ceil(count / THREADS) blocks. That is under the 2^31 - 1 blocks a grid may have for any count whose out fits in a
 * GPU's memory (2^39 elements, 2 TiB). */
static void launch_pass(const uint32_t *src, const lab_pattern *p, uint32_t *out, cudaStream_t stream)
{
    size_t count = p->count, blocks = (count + THREADS - 1) / THREADS;
    if (count <= UINT32_MAX) {
        /* k < count: when run >= count, k / run is 0 and k % run is k, so count stands in for a run too long */
        uint32_t run = (uint32_t)(p->run < count ? p->run : count);
        gather_kernel<uint32_t><<<(unsigned int)blocks, THREADS, 0, stream>>>(src, p->first, run, p->stride,
                                                                             (uint32_t)count, out);
    } else {
        gather_kernel<size_t><<<(unsigned int)blocks, THREADS, 0, stream>>>(src, p->first, p->run, p->stride,
                                                                           count, out);
    }
    XL_CHECK_LAUNCH();
}

/* passes - reps passes of j's (checked) pattern over src, on stream */
static void passes(const lab_job *j, const uint32_t *src, int reps, cudaStream_t stream)
{
    for (int r = 0; r < reps; r++)
        launch_pass(src, &j->pat, j->out, stream);
}

extern "C" int lab_gather(const lab_job *j, cudaStream_t stream)
{
    size_t last;
    if (check_job("lab_gather", j, &last) != 0)
        return -1;
    if (j->pat.count == 0)
        return 0;
    launch_pass(j->src, &j->pat, j->out, stream);
    return 0;
}

/* ===== The allocators ===== */

extern "C" void *lab_mapped_alloc(size_t bytes, void **dev)
{
    if (dev)
        *dev = NULL;
    if (bytes == 0 || !dev) {
        fprintf(stderr, "lab_mapped_alloc: %s\n", bytes == 0 ? "0 bytes" : "dev is NULL");
        return NULL;
    }
    void *host = NULL;
    /* mapped, and not write-combined: the host reads the array too (write-combined reads are uncached) */
    cudaError_t err = cudaHostAlloc(&host, bytes, cudaHostAllocMapped);
    if (err != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "lab_mapped_alloc: cudaHostAlloc of %zu bytes: %s\n", bytes, cudaGetErrorString(err));
        return NULL;
    }
    err = cudaHostGetDevicePointer(dev, host, 0);
    if (err != cudaSuccess) {
        cudaGetLastError();
        *dev = NULL;
        fprintf(stderr, "lab_mapped_alloc: cudaHostGetDevicePointer: %s\n", cudaGetErrorString(err));
        XL_CHECK(cudaFreeHost(host));
        return NULL;
    }
    return host;
}

/* advise - the advice over [p, p + bytes) for device (the location forms of CUDA 13, the int forms of CUDA 12);
 * the first error, or cudaSuccess */
static cudaError_t advise(void *p, size_t bytes, lab_advice advice, int device)
{
#if LAB_LOCATION_API
    struct cudaMemLocation gpu = {cudaMemLocationTypeDevice, device}, host = {cudaMemLocationTypeHost, 0};
#else
    int gpu = device, host = cudaCpuDeviceId;
#endif
    cudaError_t err = cudaSuccess;
    switch (advice) {
    case LAB_ADVICE_NONE:
        break;
    case LAB_ADVICE_READ_MOSTLY: /* the location is ignored: every processor that reads gets a copy */
        err = cudaMemAdvise(p, bytes, cudaMemAdviseSetReadMostly, gpu);
        break;
    case LAB_ADVICE_HOST: /* the pages stay home, and this GPU maps them: its reads cross the link */
        err = cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, host);
        if (err == cudaSuccess)
            err = cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu);
        break;
    }
    return err;
}

extern "C" void *lab_managed_alloc(size_t bytes, lab_advice advice)
{
    int a = (int)advice; /* any int may come in: compare it as one */
    if (bytes == 0 || (a != LAB_ADVICE_NONE && a != LAB_ADVICE_READ_MOSTLY && a != LAB_ADVICE_HOST)) {
        if (bytes == 0)
            fprintf(stderr, "lab_managed_alloc: 0 bytes\n");
        else
            fprintf(stderr, "lab_managed_alloc: advice %d is not one of lab_advice\n", a);
        return NULL;
    }
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "lab_managed_alloc: cudaGetDevice: %s\n", cudaGetErrorString(err));
        return NULL;
    }
    void *p = NULL;
    err = cudaMallocManaged(&p, bytes, cudaMemAttachGlobal);
    if (err != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "lab_managed_alloc: cudaMallocManaged of %zu bytes: %s\n", bytes, cudaGetErrorString(err));
        return NULL;
    }
    err = advise(p, bytes, advice, device);
    if (err != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "lab_managed_alloc: cudaMemAdvise (advice %d): %s\n", a, cudaGetErrorString(err));
        XL_CHECK(cudaFree(p));
        return NULL;
    }
    return p;
}

/* ===== The three ways ===== */

extern "C" int lab_read_copied(const lab_job *j, uint32_t *dev, int reps, cudaStream_t stream)
{
    size_t last;
    if (check_job("lab_read_copied", j, &last) != 0 || check_reps("lab_read_copied", reps) != 0)
        return -1;
    if (!dev || j->n > SIZE_MAX / sizeof(uint32_t)) {
        fprintf(stderr, "lab_read_copied: %s\n", !dev ? "dev is NULL" : "n * 4 bytes is past SIZE_MAX");
        return -1;
    }
    if (reps == 0 || j->pat.count == 0)
        return 0;
    XL_RANGE_PUSH("lab_read_copied");
    XL_CHECK(cudaMemcpyAsync(dev, j->src, j->n * sizeof(uint32_t), cudaMemcpyHostToDevice, stream)); /* all of it */
    passes(j, dev, reps, stream);
    XL_RANGE_POP();
    return 0;
}

extern "C" int lab_read_mapped(const lab_job *j, int reps, cudaStream_t stream)
{
    size_t last;
    if (check_job("lab_read_mapped", j, &last) != 0 || check_reps("lab_read_mapped", reps) != 0)
        return -1;
    if (j->pat.count == 0)
        return 0;
    void *src = NULL;
    cudaError_t err = cudaHostGetDevicePointer(&src, (void *)j->src, 0);
    if (err != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "lab_read_mapped: src is not mapped pinned memory (cudaHostGetDevicePointer: %s)\n",
                cudaGetErrorString(err));
        return -1;
    }
    if (reps == 0)
        return 0;
    XL_RANGE_PUSH("lab_read_mapped");
    passes(j, (const uint32_t *)src, reps, stream);
    XL_RANGE_POP();
    return 0;
}

extern "C" int lab_read_managed(const lab_job *j, int reps, int prefetch, cudaStream_t stream)
{
    const char *fn = "lab_read_managed";
    size_t last = 0;
    if (check_job(fn, j, &last) != 0 || check_reps(fn, reps) != 0)
        return -1;
    if (prefetch != 0 && prefetch != 1) {
        fprintf(stderr, "%s: prefetch %d: need 0 or 1\n", fn, prefetch);
        return -1;
    }
    if (j->pat.count > 0) {
        struct cudaPointerAttributes at;
        cudaError_t err = cudaPointerGetAttributes(&at, j->src);
        if (err != cudaSuccess || at.type != cudaMemoryTypeManaged) {
            cudaGetLastError();
            fprintf(stderr, "%s: src is not managed memory%s%s\n", fn, err != cudaSuccess ? ": " : "",
                    err != cudaSuccess ? cudaGetErrorString(err) : "");
            return -1;
        }
    }
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess && prefetch) {
        int concurrent = 0;
        err = cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device);
        if (err == cudaSuccess && !concurrent) {
            fprintf(stderr, "%s: this GPU cannot prefetch managed memory (cudaDevAttrConcurrentManagedAccess 0)\n",
                    fn);
            return -1;
        }
    }
    if (err != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "%s: cannot ask for the current device: %s\n", fn, cudaGetErrorString(err));
        return -1;
    }
    if (reps == 0 || j->pat.count == 0)
        return 0;
    XL_RANGE_PUSH("lab_read_managed");
    /* the span the passes read, element first to the last element, both included: not the whole array, and not
     * count elements from first (the runs lie stride apart) */
    const uint32_t *span = j->src + j->pat.first;
    size_t bytes = (last - j->pat.first + 1) * sizeof(uint32_t);
#if LAB_LOCATION_API
    struct cudaMemLocation gpu = {cudaMemLocationTypeDevice, device}, host = {cudaMemLocationTypeHost, 0};
    if (prefetch)
        XL_CHECK(cudaMemPrefetchAsync(span, bytes, gpu, 0, stream));
#else
    int gpu = device, host = cudaCpuDeviceId;
    if (prefetch)
        XL_CHECK(cudaMemPrefetchAsync(span, bytes, gpu, stream));
#endif
    passes(j, j->src, reps, stream);
#if LAB_LOCATION_API
    if (prefetch)
        XL_CHECK(cudaMemPrefetchAsync(span, bytes, host, 0, stream)); /* home: the host reads it without a fault */
#else
    if (prefetch)
        XL_CHECK(cudaMemPrefetchAsync(span, bytes, host, stream));
#endif
    XL_RANGE_POP();
    return 0;
}

/* ===== Which way ===== */

extern "C" lab_way lab_choose(double fraction, int reuse)
{
    if (!(fraction > 0) || !(fraction <= 1) || reuse < 1) /* NaN fails both tests; -0.0 fails the first */
        return LAB_NONE;
    /* Zero-copy moves only the bytes read, each time they are read, at about the link's rate; copying moves the
     * whole array once, then reads at device speed. So zero-copy wins while fraction x reuse (the array's bytes read
     * in all, as a share of the array) stays below about B_zc / B_link, and the copy wins above. Prefetched managed
     * memory costs a copy there and back: never clearly first, so never chosen. */
    return fraction * reuse < CROSS_FR ? LAB_MAPPED : LAB_COPIED;
}
