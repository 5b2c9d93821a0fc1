/* baseline.cu - lab 08's plain ways (the base_* functions of lab.h) and the kit's helpers of baseline.h.
 *
 * The kit's; do not edit. Read it first: each base_* function is the plain version of yours, with the same rules
 * (lab.h): the same arguments refused with -1 (or NULL) and a one-line message, everything queued on the caller's
 * stream, nothing waited for. The explorer and the grader measure your ways against these in the same run, and use
 * the helpers at the end (result hashes, the host's read of an array, the measurement lab_choose is graded against).
 * One kernel serves every way: a grid-stride loop with plain 64-bit index arithmetic.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/check.h"
#include "common/timing.h"
#include "labs/08-zero-copy/baseline.h"

#define THREADS 256       /* threads a block */
#define BLOCKS_PER_SM 32  /* the grid-stride kernels' cap: this many blocks per multiprocessor */
#define MAX_DEVICES 64    /* devices whose multiprocessor count is remembered */
#define MAX_REPS 64       /* base_measure_rates: timed runs a figure, at most */

/* ===== Small helpers ===== */

/* cleared - clears the CUDA error err left and says what failed, naming fn; 1 when err is an error, else 0 */
static int cleared(cudaError_t err, const char *fn, const char *what)
{
    if (err == cudaSuccess)
        return 0;
    cudaGetLastError();
    fprintf(stderr, "%s: %s: %s\n", fn, what, cudaGetErrorString(err));
    return 1;
}

/* sm_count - the current device's multiprocessor count, asked once per device */
static int sm_count(void)
{
    static int known[MAX_DEVICES]; /* 0: not asked yet */
    int device = 0, sms = 0;
    XL_CHECK(cudaGetDevice(&device));
    if (device >= 0 && device < MAX_DEVICES && known[device] > 0)
        return known[device];
    XL_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if (device >= 0 && device < MAX_DEVICES)
        known[device] = sms;
    return sms;
}

/* grid_for - blocks for a grid-stride kernel over count items: enough for one item a thread, at most
 * BLOCKS_PER_SM per multiprocessor; count >= 1 */
static unsigned int grid_for(size_t count)
{
    size_t want = (count + THREADS - 1) / THREADS, cap = (size_t)BLOCKS_PER_SM * (size_t)sm_count();
    return (unsigned int)(want < cap ? want : cap);
}

/* ===== The job's rules (lab.h) ===== */

/* check_job - lab.h's rules for a job, naming fn in the message: 0 when the job is valid (its last element read in
 * *last when count > 0), -1 when not */
static int check_job(const char *fn, const lab_job *j, size_t *last)
{
    if (!j) {
        fprintf(stderr, "%s: no job (j is NULL)\n", fn);
        return -1;
    }
    size_t first = j->pat.first, run = j->pat.run, stride = j->pat.stride, count = j->pat.count;
    if (run == 0 || stride < run) {
        fprintf(stderr, "%s: run %zu, stride %zu: need run >= 1 and stride >= run\n", fn, run, stride);
        return -1;
    }
    if (count > 0 && (!j->src || !j->out)) {
        fprintf(stderr, "%s: %s is NULL, with %zu elements to read\n", fn, j->src ? "out" : "src", count);
        return -1;
    }
    if (count == 0)
        return 0;
    size_t q = (count - 1) / run, r = (count - 1) % run, at;
    if (__builtin_mul_overflow(q, stride, &at) || __builtin_add_overflow(at, r, &at) ||
        __builtin_add_overflow(at, first, &at)) {
        fprintf(stderr, "%s: the last element read (first %zu, run %zu, stride %zu, count %zu) is past SIZE_MAX\n", fn,
                first, run, stride, count);
        return -1;
    }
    if (at >= j->n) {
        fprintf(stderr, "%s: the last element read is %zu, past the array's %zu elements\n", fn, at, j->n);
        return -1;
    }
    *last = at;
    return 0;
}

/* check_reps - 0 for reps >= 0; else -1 with a message naming fn */
static int check_reps(const char *fn, int reps)
{
    if (reps >= 0)
        return 0;
    fprintf(stderr, "%s: reps is %d: need 0 or more\n", fn, reps);
    return -1;
}

/* ===== One pass ===== */

/* gather_kernel - out[k] += src[first + k / run * stride + k % run] for every k < count, grid-stride */
static __global__ void gather_kernel(const uint32_t *src, size_t first, size_t run, size_t stride, size_t count,
                                     uint32_t *out)
{
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < count; k += step)
        out[k] += src[first + k / run * stride + k % run];
}

/* pass - one gather of the (checked, count >= 1) pattern p over src into out, on stream */
static void pass(const uint32_t *src, const lab_pattern *p, uint32_t *out, cudaStream_t stream)
{
    gather_kernel<<<grid_for(p->count), THREADS, 0, stream>>>(src, p->first, p->run, p->stride, p->count, out);
    XL_CHECK_LAUNCH();
}

extern "C" int base_gather(const lab_job *j, cudaStream_t stream)
{
    size_t last;
    if (check_job("base_gather", j, &last) != 0)
        return -1;
    if (j->pat.count > 0)
        pass(j->src, &j->pat, j->out, stream);
    return 0;
}

/* ===== The two allocators ===== */

extern "C" void *base_mapped_alloc(size_t bytes, void **dev)
{
    if (dev)
        *dev = NULL;
    if (bytes == 0 || !dev) {
        fprintf(stderr, "base_mapped_alloc: %s\n", bytes == 0 ? "0 bytes" : "dev is NULL");
        return NULL;
    }
    void *host = NULL;
    if (cleared(cudaHostAlloc(&host, bytes, cudaHostAllocMapped), "base_mapped_alloc", "cudaHostAlloc"))
        return NULL;
    if (cleared(cudaHostGetDevicePointer(dev, host, 0), "base_mapped_alloc", "cudaHostGetDevicePointer")) {
        *dev = NULL;
        XL_CHECK(cudaFreeHost(host));
        return NULL;
    }
    return host;
}

/* advise - the advice over [p, p + bytes) for device; the first error, or cudaSuccess */
static cudaError_t advise(void *p, size_t bytes, lab_advice advice, int device)
{
#if LAB_LOCATION_API
    struct cudaMemLocation gpu = {cudaMemLocationTypeDevice, device}, host = {cudaMemLocationTypeHost, 0};
#else
    int gpu = device, host = cudaCpuDeviceId;
#endif
    cudaError_t err = cudaSuccess;
    if (advice == LAB_ADVICE_READ_MOSTLY) {
        err = cudaMemAdvise(p, bytes, cudaMemAdviseSetReadMostly, gpu); /* the location is ignored */
    } else if (advice == LAB_ADVICE_HOST) {
        err = cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, host);
        if (err == cudaSuccess)
            err = cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu);
    }
    return err;
}

extern "C" void *base_managed_alloc(size_t bytes, lab_advice advice)
{
    int a = (int)advice;
    if (bytes == 0 || (a != LAB_ADVICE_NONE && a != LAB_ADVICE_READ_MOSTLY && a != LAB_ADVICE_HOST)) {
        if (bytes == 0)
            fprintf(stderr, "base_managed_alloc: 0 bytes\n");
        else
            fprintf(stderr, "base_managed_alloc: advice %d is not one of lab_advice\n", a);
        return NULL;
    }
    int device = 0;
    if (cleared(cudaGetDevice(&device), "base_managed_alloc", "cudaGetDevice"))
        return NULL;
    void *p = NULL;
    if (cleared(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal), "base_managed_alloc", "cudaMallocManaged"))
        return NULL;
    if (cleared(advise(p, bytes, advice, device), "base_managed_alloc", "cudaMemAdvise")) {
        XL_CHECK(cudaFree(p));
        return NULL;
    }
    return p;
}

/* ===== The three ways ===== */

/* passes - reps passes of j's (checked) pattern over src, on stream, one launch each */
static void passes(const uint32_t *src, const lab_job *j, int reps, cudaStream_t stream)
{
    for (int left = reps; left > 0; left--)
        pass(src, &j->pat, j->out, stream);
}

extern "C" int base_read_copied(const lab_job *j, uint32_t *dev, int reps, cudaStream_t stream)
{
    size_t last;
    if (check_job("base_read_copied", j, &last) != 0 || check_reps("base_read_copied", reps) != 0)
        return -1;
    if (!dev || j->n > SIZE_MAX / sizeof(uint32_t)) {
        fprintf(stderr, "base_read_copied: %s\n", !dev ? "dev is NULL" : "n * 4 bytes is past SIZE_MAX");
        return -1;
    }
    if (reps == 0 || j->pat.count == 0)
        return 0;
    XL_CHECK(cudaMemcpyAsync(dev, j->src, j->n * sizeof(uint32_t), cudaMemcpyHostToDevice, stream));
    passes(dev, j, reps, stream);
    return 0;
}

extern "C" int base_read_mapped(const lab_job *j, int reps, cudaStream_t stream)
{
    size_t last;
    if (check_job("base_read_mapped", j, &last) != 0 || check_reps("base_read_mapped", reps) != 0)
        return -1;
    if (j->pat.count == 0)
        return 0;
    void *src = NULL;
    if (cleared(cudaHostGetDevicePointer(&src, (void *)j->src, 0), "base_read_mapped",
                "src is not mapped pinned memory (cudaHostGetDevicePointer)"))
        return -1;
    passes((const uint32_t *)src, j, reps, stream);
    return 0;
}

/* prefetch_span - cudaMemPrefetchAsync of [span, span + bytes) on stream, to device d, or to the host when d is
 * cudaCpuDeviceId (CUDA 13 takes a location, CUDA 12 the int) */
static void prefetch_span(const void *span, size_t bytes, int d, cudaStream_t stream)
{
#if LAB_LOCATION_API
    struct cudaMemLocation to = {cudaMemLocationTypeDevice, d};
    if (d == cudaCpuDeviceId)
        to.type = cudaMemLocationTypeHost, to.id = 0;
    XL_CHECK(cudaMemPrefetchAsync(span, bytes, to, 0, stream));
#else
    XL_CHECK(cudaMemPrefetchAsync(span, bytes, d, stream));
#endif
}

extern "C" int base_read_managed(const lab_job *j, int reps, int prefetch, cudaStream_t stream)
{
    const char *fn = "base_read_managed";
    size_t last = 0;
    if (check_reps(fn, reps) != 0 || check_job(fn, j, &last) != 0)
        return -1;
    if (prefetch != 0 && prefetch != 1) {
        fprintf(stderr, "%s: prefetch is %d: need 0 or 1\n", fn, prefetch);
        return -1;
    }
    int device = 0, concurrent = 0;
    if (cleared(cudaGetDevice(&device), fn, "cudaGetDevice"))
        return -1;
    if (j->pat.count > 0) {
        struct cudaPointerAttributes at;
        if (cleared(cudaPointerGetAttributes(&at, j->src), fn, "cudaPointerGetAttributes"))
            return -1;
        if (at.type != cudaMemoryTypeManaged) {
            fprintf(stderr, "%s: src is not managed memory\n", fn);
            return -1;
        }
    }
    if (prefetch) {
        if (cleared(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device), fn,
                    "cudaDeviceGetAttribute"))
            return -1;
        if (!concurrent) {
            fprintf(stderr, "%s: this GPU cannot prefetch (cudaDevAttrConcurrentManagedAccess is 0)\n", fn);
            return -1;
        }
    }
    if (reps == 0 || j->pat.count == 0)
        return 0;
    /* the span read, element first to the last element read, both included */
    const char *span = (const char *)(j->src + j->pat.first);
    size_t span_bytes = (last + 1 - j->pat.first) * sizeof(uint32_t);
    if (prefetch)
        prefetch_span(span, span_bytes, device, stream);
    passes(j->src, j, reps, stream);
    if (prefetch)
        prefetch_span(span, span_bytes, cudaCpuDeviceId, stream);
    return 0;
}

/* ===== The sweep's pattern ===== */

extern "C" lab_pattern base_pattern(size_t n, double fraction, size_t run)
{
    lab_pattern p = {0, 1, 1, 0};
    if (n == 0)
        return p;
    if (run == 0)
        run = 1;
    if (!(fraction < 1) || run >= n) { /* all of it (NaN too) */
        p.run = p.stride = p.count = n;
        return p;
    }
    double want = fraction * (double)n / (double)run;
    size_t runs = want < 1.5 ? 1 : (size_t)(want + 0.5), most = n / run; /* n >= run: most >= 1 */
    if (runs > most)
        runs = most;
    size_t even = n / runs; /* >= run */
    size_t stride = even / LAB_LINE_ELEMS * LAB_LINE_ELEMS;
    if (stride < run)
        stride = even; /* run 1 above 1/32 of the array: runs closer than a line cannot each start one */
    p.run = run;
    p.stride = stride;
    p.count = runs * run; /* last = (runs - 1) * stride + run - 1 <= n - stride + run - 1 < n */
    return p;
}

/* ===== Result hashes ===== */

/* The word the hash kernel adds into: one per device (a module's globals are per context). The explorer and the
 * grader hash one result at a time. */
static __device__ unsigned long long hash_word;

/* hash_kernel - adds sum over k < count of (2k + 1) * out[k] (mod 2^64) into hash_word: block sums, one atomicAdd
 * a block */
static __global__ void hash_kernel(const uint32_t *out, size_t count)
{
    __shared__ unsigned long long warp_sums[THREADS / 32];
    unsigned long long sum = 0;
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < count; k += step)
        sum += (2ull * k + 1) * out[k];
    for (int d = 16; d > 0; d /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, d);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long block = 0;
        for (int w = 0; w < THREADS / 32; w++)
            block += warp_sums[w];
        atomicAdd(&hash_word, block);
    }
}

extern "C" uint64_t base_out_hash(const uint32_t *out, size_t count, cudaStream_t s, int *ok)
{
    const char *fn = "base_out_hash";
    unsigned long long got = 0;
    void *word = NULL;
    if (ok)
        *ok = 0;
    if (count == 0) {
        if (ok)
            *ok = 1;
        return 0;
    }
    if (!out) {
        fprintf(stderr, "%s: out is NULL\n", fn);
        return 0;
    }
    if (cleared(cudaGetSymbolAddress(&word, hash_word), fn, "cudaGetSymbolAddress") ||
        cleared(cudaMemsetAsync(word, 0, sizeof got, s), fn, "cudaMemsetAsync"))
        return 0;
    hash_kernel<<<grid_for(count), THREADS, 0, s>>>(out, count);
    if (cleared(cudaGetLastError(), fn, "the hash kernel's launch") ||
        cleared(cudaMemcpyAsync(&got, word, sizeof got, cudaMemcpyDeviceToHost, s), fn, "cudaMemcpyAsync") ||
        cleared(cudaStreamSynchronize(s), fn, "cudaStreamSynchronize"))
        return 0;
    if (ok)
        *ok = 1;
    return got;
}

extern "C" uint64_t base_expect_hash(const uint32_t *host_src, const lab_job *j, uint32_t init, int reps)
{
    if (!j || !host_src || j->pat.count == 0 || j->pat.run == 0)
        return 0;
    const lab_pattern *p = &j->pat;
    uint32_t times = (uint32_t)reps;
    uint64_t h = 0;
    /* run by run: no division per element. Each element wraps as uint32_t, so H(init) + reps * H(elements) in
     * 64 bits would not be the same sum. */
    for (size_t k = 0, start = p->first; k < p->count; start += p->stride) {
        size_t end = p->count - k < p->run ? p->count : k + p->run;
        for (const uint32_t *at = host_src + start; k < end; k++, at++)
            h += (2 * (uint64_t)k + 1) * (uint32_t)(init + times * *at);
    }
    return h;
}

/* ===== The host's read ===== */

extern "C" uint64_t base_host_touch(const void *p, size_t bytes)
{
    if (!p || bytes == 0)
        return 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const unsigned char *at = (const unsigned char *)p, *end = at + bytes;
    uint64_t sum = 0;
    while (at < end) {
        if (end - at >= (ptrdiff_t)sizeof(uint32_t) && (uintptr_t)at % sizeof(uint32_t) == 0)
            sum += *(const volatile uint32_t *)at;
        else
            sum += *(const volatile unsigned char *)at;
        size_t left = (size_t)(end - at), to_next = page - (uintptr_t)at % page; /* the next page's first byte */
        if (to_next >= left)
            break;
        at += to_next;
    }
    return sum;
}

/* ===== The kit's measurement for lab_choose ===== */

/* mix - the word at index i of an array filled from seed: every bit of i and seed moves it */
static __device__ uint32_t mix(size_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i ^ (uint32_t)(i >> 32) * 0x9e3779b9u ^ seed;
    x ^= x >> 16, x *= 0x7feb352du, x ^= x >> 15, x *= 0x846ca68bu, x ^= x >> 16;
    return x;
}

/* fill_kernel - p[i] = mix(i, seed), for every i < n, grid-stride */
static __global__ void fill_kernel(uint32_t *p, size_t n, uint32_t seed)
{
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        p[i] = mix(i, seed);
}

extern "C" int base_fill_mix(uint32_t *p, size_t n, uint32_t seed, cudaStream_t s)
{
    if (n == 0)
        return 0;
    fill_kernel<<<grid_for(n), THREADS, 0, s>>>(p, n, seed);
    return cleared(cudaGetLastError(), "base_fill_mix", "the fill kernel's launch") ? -1 : 0;
}

/* The words count_wrong_kernel adds into: how many out[k] are wrong, and the least such k. */
static __device__ unsigned long long wrong_count, wrong_first;

/* count_wrong_kernel - counts the k < count whose out[k] is not init + reps * mix(element k's index, seed) */
static __global__ void count_wrong_kernel(const uint32_t *out, lab_pattern p, uint32_t seed, uint32_t init,
                                          uint32_t reps)
{
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < p.count; k += step)
        if (out[k] != init + reps * mix(p.first + k / p.run * p.stride + k % p.run, seed)) {
            atomicAdd(&wrong_count, 1ull);
            atomicMin(&wrong_first, (unsigned long long)k);
        }
}

extern "C" uint64_t base_count_wrong(const uint32_t *out, const lab_pattern *p, uint32_t seed, uint32_t init,
                                     int reps, size_t *first_bad, cudaStream_t s, int *ok)
{
    const char *fn = "base_count_wrong";
    unsigned long long got[2] = {0, ~0ull};
    void *count_word = NULL, *first_word = NULL;
    *ok = 0, *first_bad = SIZE_MAX;
    if (p->count == 0) {
        *ok = 1;
        return 0;
    }
    if (cleared(cudaGetSymbolAddress(&count_word, wrong_count), fn, "cudaGetSymbolAddress") ||
        cleared(cudaGetSymbolAddress(&first_word, wrong_first), fn, "cudaGetSymbolAddress") ||
        cleared(cudaMemcpyAsync(count_word, &got[0], sizeof got[0], cudaMemcpyHostToDevice, s), fn, "a reset") ||
        cleared(cudaMemcpyAsync(first_word, &got[1], sizeof got[1], cudaMemcpyHostToDevice, s), fn, "a reset"))
        return 0;
    count_wrong_kernel<<<grid_for(p->count), THREADS, 0, s>>>(out, *p, seed, init, (uint32_t)reps);
    if (cleared(cudaGetLastError(), fn, "the check kernel's launch") ||
        cleared(cudaMemcpyAsync(&got[0], count_word, sizeof got[0], cudaMemcpyDeviceToHost, s), fn, "a read") ||
        cleared(cudaMemcpyAsync(&got[1], first_word, sizeof got[1], cudaMemcpyDeviceToHost, s), fn, "a read") ||
        cleared(cudaStreamSynchronize(s), fn, "cudaStreamSynchronize"))
        return 0;
    *ok = 1;
    if (got[0])
        *first_bad = (size_t)got[1];
    return got[0];
}

/* What one measurement works on. */
typedef struct {
    const uint32_t *mapped_dev; /* the device pointer of the mapped array */
    const uint32_t *mapped;     /* its host pointer: the copy's source */
    uint32_t *dev, *managed, *out;
    size_t n;
    lab_pattern pat[LAB_N_FRACTIONS]; /* base_pattern(n, fraction, LAB_LINE_ELEMS) */
    int dense;                        /* the index of fraction 1 in LAB_FRACTIONS */
    cudaStream_t s;
    cudaEvent_t t0, t1;
    char *why;
    size_t why_len;
} meter;

/* say - writes one line into the meter's why; -1 */
static int say(const meter *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(const meter *m, const char *fmt, ...)
{
    if (m->why && m->why_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->why, m->why_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* TRY - inside a meter function: a CUDA call whose error clears, says which call failed and returns -1 */
#define TRY(call)                                                                            \
    do {                                                                                     \
        cudaError_t try_err_ = (call);                                                       \
        if (try_err_ != cudaSuccess) {                                                       \
            cudaGetLastError();                                                              \
            return say(m, "%s: %s (%s:%d)", #call, cudaGetErrorString(try_err_), __FILE__, __LINE__); \
        }                                                                                    \
    } while (0)

enum { PIECE_COPY, PIECE_DEV, PIECE_MAP, PIECE_MANAGED };

/* time_piece - one run of a piece of the measurement (at fraction index fi), its time in *ms: CUDA events on the
 * stream, or the host clock for the managed round (prefetch there, a dense pass, prefetch back, the host's read);
 * 0 or -1 */
static int time_piece(const meter *m, int piece, int fi, double *ms)
{
    if (piece == PIECE_MANAGED) {
        lab_job job = {m->managed, m->n, m->pat[m->dense], m->out};
        TRY(cudaStreamSynchronize(m->s));
        double start = xl_now_ms();
        if (base_read_managed(&job, 1, 1, m->s) != 0)
            return say(m, "base_read_managed refused the dense job of %zu elements", m->n);
        TRY(cudaStreamSynchronize(m->s));
        base_host_touch(m->managed, m->n * sizeof(uint32_t));
        *ms = xl_now_ms() - start;
        return 0;
    }
    TRY(cudaEventRecord(m->t0, m->s));
    if (piece == PIECE_COPY) {
        TRY(cudaMemcpyAsync(m->dev, m->mapped, m->n * sizeof(uint32_t), cudaMemcpyHostToDevice, m->s));
    } else {
        lab_job job = {piece == PIECE_DEV ? m->dev : m->mapped_dev, m->n, m->pat[fi], m->out};
        if (base_gather(&job, m->s) != 0)
            return say(m, "base_gather refused the job at fraction index %d", fi);
    }
    TRY(cudaEventRecord(m->t1, m->s));
    TRY(cudaEventSynchronize(m->t1));
    float t = 0;
    TRY(cudaEventElapsedTime(&t, m->t0, m->t1));
    *ms = t;
    return 0;
}

/* by_value - qsort's comparison of doubles */
static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* summary - the median of v[0..n) into *median, and the spread of the kept readings (all but the slowest), max/min,
 * raised into *spread; v is sorted */
static void summary(double *v, int n, double *median, double *spread)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    *median = xl_median(v, n);
    double s = v[0] > 0 ? v[n - 2] / v[0] : INFINITY;
    if (s > *spread)
        *spread = s;
}

/* measure - base_measure_rates' work, once the arguments are checked and the events made */
static int measure(meter *m, base_rates *r, int reps)
{
    static const double fractions[LAB_N_FRACTIONS] = LAB_FRACTIONS;
    double copy[MAX_REPS], dev[LAB_N_FRACTIONS][MAX_REPS], map[LAB_N_FRACTIONS][MAX_REPS], managed[MAX_REPS];
    void *mapped_dev = NULL;
    TRY(cudaHostGetDevicePointer(&mapped_dev, (void *)m->mapped, 0));
    m->mapped_dev = (const uint32_t *)mapped_dev;
    m->dense = -1;
    for (int f = 0; f < LAB_N_FRACTIONS; f++) {
        m->pat[f] = base_pattern(m->n, fractions[f], LAB_LINE_ELEMS);
        if (fractions[f] == 1.0)
            m->dense = f;
    }
    if (m->dense < 0)
        return say(m, "LAB_FRACTIONS has no 1.0");

    /* data: the mapped array written through its mapping, the managed one on the GPU (the warm-up's prefetch back
     * brings it home before the first timed round), out zeroed; the copy fills dev */
    unsigned int grid = grid_for(m->n);
    fill_kernel<<<grid, THREADS, 0, m->s>>>((uint32_t *)mapped_dev, m->n, 0x5eed0001u);
    TRY(cudaGetLastError());
    fill_kernel<<<grid, THREADS, 0, m->s>>>(m->managed, m->n, 0x5eed0002u);
    TRY(cudaGetLastError());
    TRY(cudaMemsetAsync(m->out, 0, m->n * sizeof(uint32_t), m->s));
    TRY(cudaStreamSynchronize(m->s));

    /* rounds of every piece in turn, the first a warm-up: a figure's readings are apart in time (drift hits all
     * alike), and between two readings of one pattern the others read more than an L2 of other data */
    double ms = 0;
    for (int k = -1; k < reps; k++) {
        if (time_piece(m, PIECE_COPY, 0, &ms) != 0)
            return -1;
        if (k >= 0)
            copy[k] = ms;
        for (int f = 0; f < LAB_N_FRACTIONS; f++) {
            if (time_piece(m, PIECE_DEV, f, &ms) != 0)
                return -1;
            if (k >= 0)
                dev[f][k] = ms;
            if (time_piece(m, PIECE_MAP, f, &ms) != 0)
                return -1;
            if (k >= 0)
                map[f][k] = ms;
        }
        if (time_piece(m, PIECE_MANAGED, 0, &ms) != 0)
            return -1;
        if (k >= 0)
            managed[k] = ms;
    }

    double round_ms = 0;
    r->n = m->n;
    r->spread = 1;
    summary(copy, reps, &r->copy_ms, &r->spread);
    for (int f = 0; f < LAB_N_FRACTIONS; f++) {
        summary(dev[f], reps, &r->dev_ms[f], &r->spread);
        summary(map[f], reps, &r->map_ms[f], &r->spread);
    }
    summary(managed, reps, &round_ms, &r->spread);
    r->prefetch_ms = round_ms - r->dev_ms[m->dense];
    if (r->prefetch_ms < 0)
        r->prefetch_ms = 0;
    return 0;
}

extern "C" int base_measure_rates(base_rates *r, uint32_t *mapped, uint32_t *dev, uint32_t *managed, uint32_t *out,
                                  size_t n, int reps, cudaStream_t s, char *why, size_t why_len)
{
    meter m;
    memset(&m, 0, sizeof m);
    m.mapped = mapped, m.dev = dev, m.managed = managed, m.out = out, m.n = n, m.s = s;
    m.why = why, m.why_len = why_len;
    if (why && why_len > 0)
        why[0] = '\0';
    if (!r || !mapped || !dev || !managed || !out)
        return say(&m, "base_measure_rates: %s is NULL", !r ? "r" : !mapped ? "mapped" : !dev ? "dev"
                                                         : !managed ? "managed" : "out");
    if (n < ((size_t)1 << 20) || n > SIZE_MAX / sizeof(uint32_t) || reps < 3 || reps > MAX_REPS)
        return say(&m, "base_measure_rates: n %zu and reps %d: need n >= 2^20 and reps 3 to %d", n, reps,
                   MAX_REPS);
    memset(r, 0, sizeof *r);
    if (cudaEventCreate(&m.t0) != cudaSuccess || cudaEventCreate(&m.t1) != cudaSuccess) {
        cudaError_t err = cudaGetLastError();
        if (m.t0)
            XL_CHECK(cudaEventDestroy(m.t0));
        return say(&m, "base_measure_rates: cudaEventCreate: %s", cudaGetErrorString(err));
    }
    int rc = measure(&m, r, reps);
    XL_CHECK(cudaEventDestroy(m.t0));
    XL_CHECK(cudaEventDestroy(m.t1));
    return rc;
}

extern "C" double base_way_ms(const base_rates *r, int fi, int reuse, lab_way way)
{
    if (!r || fi < 0 || fi >= LAB_N_FRACTIONS || reuse < 0)
        return NAN;
    switch ((int)way) {
    case LAB_COPIED:
        return r->copy_ms + reuse * r->dev_ms[fi];
    case LAB_MAPPED:
        return reuse * r->map_ms[fi];
    case LAB_MANAGED:
        return r->prefetch_ms + reuse * r->dev_ms[fi];
    default:
        return NAN;
    }
}

extern "C" int base_accepted(const base_rates *r, int fi, int reuse, int way)
{
    if (way != LAB_COPIED && way != LAB_MAPPED && way != LAB_MANAGED)
        return 0;
    double best = INFINITY;
    for (int w = LAB_COPIED; w <= LAB_MANAGED; w++) {
        double t = base_way_ms(r, fi, reuse, (lab_way)w);
        if (t < best)
            best = t;
    }
    double t = base_way_ms(r, fi, reuse, (lab_way)way);
    return t <= BASE_DECIDE_MARGIN * best; /* NaN: 0 */
}
