/* baseline.cu - lab 09's plain ways and helpers (baseline.h).
 *
 * The kit's; do not edit. Read it first: each base_* way follows lab.h's rules (the same refusals with a one-line
 * message, everything queued on the caller's streams, nothing waited for, the current device put back). The
 * explorer and the grader measure your functions against these in the same run. What is here is plain on purpose:
 * the road through the host goes one chunk at a time through one buffer (out, in, out, in), and its ideal is the
 * same copies with nothing ordering them, a ceiling rather than a copy. The kernels are grid-stride loops over a
 * capped grid. At the end: fresh data on a GPU and a hash of device memory, so that large results are checked
 * without downloading them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/09-gpu-to-gpu/baseline.h"

#define THREADS 256       /* threads a block */
#define GRID_CAP 4096     /* blocks of a grid-stride kernel, at most: ~32 a multiprocessor on an H100 or H200 */

/* ===== Small helpers ===== */

/* no_device - 1 (with a line naming fn and role) when d is not an ordinal of this host's devices, else 0 */
static int no_device(const char *fn, const char *role, int d)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) {
        (void)cudaGetLastError();
        devices = 0;
    }
    if (d >= 0 && d < devices)
        return 0;
    xl_refuse(fn, "%s is %d, not a device of this host (it has %d)", role, d, devices);
    return 1;
}

/* grid_of - blocks for a grid-stride loop over items (>= 1): one item a thread, capped at GRID_CAP */
static unsigned int grid_of(size_t items)
{
    size_t blocks = items / THREADS + (items % THREADS != 0);
    if (blocks > GRID_CAP)
        blocks = GRID_CAP;
    return (unsigned int)blocks;
}

/* ===== Peer access and copies ===== */

extern "C" int base_peer_enable(int a, int b, int *owned)
{
    static const char fn[] = "base_peer_enable";
    if (owned == NULL)
        return xl_refuse(fn, "owned is NULL");
    *owned = 0;
    if (no_device(fn, "a", a) || no_device(fn, "b", b))
        return -1;
    if (a == b)
        return 1; /* a device reaches its own memory: nothing to enable */
    int yes_ab = 0, yes_ba = 0;
    XL_CHECK(cudaDeviceCanAccessPeer(&yes_ab, a, b));
    XL_CHECK(cudaDeviceCanAccessPeer(&yes_ba, b, a));
    if (yes_ab == 0 || yes_ba == 0)
        return 0;
    int was = 0;
    XL_CHECK(cudaGetDevice(&was));
    const int from[2] = {a, b}, to[2] = {b, a}, bit[2] = {BASE_OWN_AB, BASE_OWN_BA};
    for (int w = 0; w < 2; w++) {
        XL_CHECK(cudaSetDevice(from[w]));
        cudaError_t err = cudaDeviceEnablePeerAccess(to[w], 0);
        if (err == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cudaGetLastError(); /* enabled before us: leave it to whoever did */
        } else if (xl_cuda_failed(err, fn, "cudaDeviceEnablePeerAccess")) {
            XL_CHECK(cudaSetDevice(was));
            base_peer_disable(a, b, *owned);
            *owned = 0;
            return -1;
        } else {
            *owned |= bit[w];
        }
    }
    XL_CHECK(cudaSetDevice(was));
    return 1;
}

extern "C" void base_peer_disable(int a, int b, int owned)
{
    int devices = 0;
    XL_CHECK(cudaGetDeviceCount(&devices));
    if (owned == 0 || a < 0 || b < 0 || a >= devices || b >= devices)
        return;
    int was = 0;
    XL_CHECK(cudaGetDevice(&was));
    if (owned & BASE_OWN_AB) {
        XL_CHECK(cudaSetDevice(a));
        xl_cuda_failed(cudaDeviceDisablePeerAccess(b), "base_peer_disable", "cudaDeviceDisablePeerAccess");
    }
    if (owned & BASE_OWN_BA) {
        XL_CHECK(cudaSetDevice(b));
        xl_cuda_failed(cudaDeviceDisablePeerAccess(a), "base_peer_disable", "cudaDeviceDisablePeerAccess");
    }
    XL_CHECK(cudaSetDevice(was));
}

extern "C" int base_peer_copy(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes, cudaStream_t stream)
{
    static const char fn[] = "base_peer_copy";
    if (no_device(fn, "dst_dev", dst_dev) || no_device(fn, "src_dev", src_dev))
        return -1;
    if (bytes > 0 && (dst == NULL || src == NULL))
        return xl_refuse(fn, "%s is NULL and bytes is %zu", dst == NULL ? "dst" : "src", bytes);
    if (bytes > 0)
        XL_CHECK(cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, stream));
    return 0;
}

/* ===== The road through the host, plain ===== */

struct base_stage {
    int src_dev, dst_dev;
    size_t chunk_bytes;
    void *buf_a, *buf_b;     /* pinned, portable, chunk_bytes each: A carries the serial copy; B is the ideal's */
    cudaEvent_t out_done;    /* on src_dev: the latest copy out into A has finished */
    cudaEvent_t in_done;     /* on dst_dev: the latest copy in out of A has finished */
};

extern "C" void base_stage_destroy(base_stage *s)
{
    if (s == NULL)
        return;
    if (s->out_done != NULL)
        XL_CHECK(cudaEventDestroy(s->out_done));
    if (s->in_done != NULL)
        XL_CHECK(cudaEventDestroy(s->in_done));
    if (s->buf_a != NULL)
        XL_CHECK(cudaFreeHost(s->buf_a));
    if (s->buf_b != NULL)
        XL_CHECK(cudaFreeHost(s->buf_b));
    free(s);
}

extern "C" base_stage *base_stage_create(int src_dev, int dst_dev, size_t chunk_bytes)
{
    static const char fn[] = "base_stage_create";
    if (chunk_bytes < 1 || chunk_bytes > LAB_CHUNK_MAX) {
        xl_refuse(fn, "chunk_bytes is %zu: it must be 1 to %zu", chunk_bytes, LAB_CHUNK_MAX);
        return NULL;
    }
    if (no_device(fn, "src_dev", src_dev) || no_device(fn, "dst_dev", dst_dev))
        return NULL;
    base_stage *s = (base_stage *)calloc(1, sizeof(base_stage));
    if (s == NULL) {
        xl_refuse(fn, "no host memory for the stage");
        return NULL;
    }
    s->src_dev = src_dev;
    s->dst_dev = dst_dev;
    s->chunk_bytes = chunk_bytes;
    int was = 0;
    XL_CHECK(cudaGetDevice(&was));
    int bad = xl_cuda_failed(cudaHostAlloc(&s->buf_a, chunk_bytes, cudaHostAllocPortable), fn, "cudaHostAlloc (A)") ||
              xl_cuda_failed(cudaHostAlloc(&s->buf_b, chunk_bytes, cudaHostAllocPortable), fn, "cudaHostAlloc (B)");
    if (!bad) {
        XL_CHECK(cudaSetDevice(src_dev));
        bad = xl_cuda_failed(cudaEventCreateWithFlags(&s->out_done, cudaEventDisableTiming), fn, "cudaEventCreate (out)");
    }
    if (!bad) {
        XL_CHECK(cudaSetDevice(dst_dev));
        bad = xl_cuda_failed(cudaEventCreateWithFlags(&s->in_done, cudaEventDisableTiming), fn, "cudaEventCreate (in)");
    }
    XL_CHECK(cudaSetDevice(was));
    if (bad) {
        base_stage_destroy(s);
        return NULL;
    }
    return s;
}

/* stage_refused - lab_stage_copy's refusals for fn: -1 (with a line) when refused, 0 otherwise */
static int stage_refused(const char *fn, const base_stage *s, const void *dst, const void *src, size_t bytes)
{
    if (s == NULL)
        return xl_refuse(fn, "s is NULL");
    if (bytes > 0 && dst == NULL)
        return xl_refuse(fn, "dst is NULL and bytes is %zu", bytes);
    if (bytes > 0 && src == NULL)
        return xl_refuse(fn, "src is NULL and bytes is %zu", bytes);
    return 0;
}

extern "C" int base_stage_serial(base_stage *s, void *dst, const void *src, size_t bytes, cudaStream_t src_stream,
                                 cudaStream_t dst_stream)
{
    if (stage_refused("base_stage_serial", s, dst, src, bytes) != 0)
        return -1;
    int was = 0;
    XL_CHECK(cudaGetDevice(&was));
    for (size_t done = 0; done < bytes;) {
        size_t piece = bytes - done;
        if (piece > s->chunk_bytes)
            piece = s->chunk_bytes;
        /* out into A, once the copy in before it has emptied A */
        XL_CHECK(cudaSetDevice(s->src_dev));
        XL_CHECK(cudaStreamWaitEvent(src_stream, s->in_done, 0));
        XL_CHECK(cudaMemcpyAsync(s->buf_a, (const char *)src + done, piece, cudaMemcpyDeviceToHost, src_stream));
        XL_CHECK(cudaEventRecord(s->out_done, src_stream));
        /* in out of A, once that copy out has filled it; the next copy out waits for this one */
        XL_CHECK(cudaSetDevice(s->dst_dev));
        XL_CHECK(cudaStreamWaitEvent(dst_stream, s->out_done, 0));
        XL_CHECK(cudaMemcpyAsync((char *)dst + done, s->buf_a, piece, cudaMemcpyHostToDevice, dst_stream));
        XL_CHECK(cudaEventRecord(s->in_done, dst_stream));
        done += piece;
    }
    XL_CHECK(cudaSetDevice(was));
    return 0;
}

extern "C" int base_stage_ideal(base_stage *s, void *scratch_dst, const void *src, size_t bytes,
                                cudaStream_t src_stream, cudaStream_t dst_stream)
{
    if (stage_refused("base_stage_ideal", s, scratch_dst, src, bytes) != 0)
        return -1;
    if (bytes == 0)
        return 0;
    int was = 0;
    XL_CHECK(cudaGetDevice(&was));
    /* A may still feed an earlier serial copy's last copy in */
    XL_CHECK(cudaSetDevice(s->src_dev));
    XL_CHECK(cudaStreamWaitEvent(src_stream, s->in_done, 0));
    for (size_t done = 0; done < bytes;) {
        size_t piece = bytes - done;
        if (piece > s->chunk_bytes)
            piece = s->chunk_bytes;
        XL_CHECK(cudaSetDevice(s->src_dev));
        XL_CHECK(cudaMemcpyAsync(s->buf_a, (const char *)src + done, piece, cudaMemcpyDeviceToHost, src_stream));
        XL_CHECK(cudaSetDevice(s->dst_dev));
        XL_CHECK(cudaMemcpyAsync((char *)scratch_dst + done, s->buf_b, piece, cudaMemcpyHostToDevice, dst_stream));
        done += piece;
    }
    /* what comes next on dst_stream follows the copies out too */
    XL_CHECK(cudaSetDevice(s->src_dev));
    XL_CHECK(cudaEventRecord(s->out_done, src_stream));
    XL_CHECK(cudaSetDevice(s->dst_dev));
    XL_CHECK(cudaStreamWaitEvent(dst_stream, s->out_done, 0));
    XL_CHECK(cudaSetDevice(was));
    return 0;
}

/* ===== Reads ===== */

/* add_words - out[i] += src[i] for every i < words, grid-stride */
static __global__ void add_words(uint32_t *out, const uint32_t *src, size_t words)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
        out[i] = out[i] + src[i];
}

/* read_refused - the read functions' refusals for fn (scratch checked when check_scratch): -1 (with a line) when
 * refused, else 0 */
static int read_refused(const char *fn, const lab_read_job *j, int reps, int check_scratch, const uint32_t *scratch)
{
    if (j == NULL)
        return xl_refuse(fn, "j is NULL");
    if (reps < 0)
        return xl_refuse(fn, "reps is %d: it must be 0 or more", reps);
    if (no_device(fn, "out_dev", j->out_dev) || no_device(fn, "src_dev", j->src_dev))
        return -1;
    if (j->words > SIZE_MAX / sizeof(uint32_t))
        return xl_refuse(fn, "words is %zu: its bytes are past SIZE_MAX", j->words);
    if (j->words > 0 && (j->out == NULL || j->src == NULL || (check_scratch && scratch == NULL)))
        return xl_refuse(fn, "a pointer is NULL (out %p, src %p, scratch %p) with %zu words", (void *)j->out,
                      (const void *)j->src, (const void *)scratch, j->words);
    return 0;
}

/* add_reps - reps launches of add_words over words (>= 1) on stream, with device dev current for them */
static void add_reps(int dev, uint32_t *out, const uint32_t *src, size_t words, int reps, cudaStream_t stream)
{
    int was = 0;
    XL_CHECK(cudaGetDevice(&was));
    XL_CHECK(cudaSetDevice(dev));
    for (int rep = 0; rep < reps; rep++) {
        add_words<<<grid_of(words), THREADS, 0, stream>>>(out, src, words);
        XL_CHECK_LAUNCH();
    }
    XL_CHECK(cudaSetDevice(was));
}

extern "C" int base_read_direct(const lab_read_job *j, int reps, cudaStream_t stream)
{
    if (read_refused("base_read_direct", j, reps, 0, NULL) != 0)
        return -1;
    if (j->words > 0 && reps > 0)
        add_reps(j->out_dev, j->out, j->src, j->words, reps, stream);
    return 0;
}

extern "C" int base_read_copied(const lab_read_job *j, uint32_t *scratch, int reps, cudaStream_t stream)
{
    if (read_refused("base_read_copied", j, reps, 1, scratch) != 0)
        return -1;
    if (j->words == 0 || reps == 0)
        return 0;
    XL_CHECK(cudaMemcpyPeerAsync(scratch, j->out_dev, j->src, j->src_dev, j->words * sizeof(uint32_t), stream));
    add_reps(j->out_dev, j->out, scratch, j->words, reps, stream);
    return 0;
}

/* ===== Data and checks ===== */

/* byte_term - what byte value v at offset i adds to a hash: (v + 1) times an odd number drawn from i, so that any
 * one byte changed changes the sum (two multiplies a byte: the hash keeps up with device memory) */
static __host__ __device__ uint64_t byte_term(size_t i, unsigned char v)
{
    uint64_t k = ((uint64_t)i + 1) * 0x9E3779B97F4A7C15ull;
    k ^= k >> 29;
    return (k | 1) * ((uint64_t)v + 1);
}

/* fill_bytes - p[i] = a byte mixed from seed and i for every i < bytes, grid-stride */
static __global__ void fill_bytes(unsigned char *p, size_t bytes, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < bytes; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t x = (seed ^ (i * 0x9E3779B97F4A7C15ull)) * 0xD6E8FEB86659FD93ull;
        x = (x ^ (x >> 32)) * 0xD6E8FEB86659FD93ull;
        p[i] = (unsigned char)(x >> 56);
    }
}

/* The hash's sum, one per device (each device has its own copy of a __device__ variable). base_hash waits before it
 * returns, so one call at a time uses it. */
static __device__ unsigned long long hash_sum;

/* hash_zero - hash_sum = 0 */
static __global__ void hash_zero(void)
{
    hash_sum = 0;
}

/* hash_bytes - hash_sum += byte_term(i, p[i]) for every i < bytes, grid-stride, one atomic add a thread */
static __global__ void hash_bytes(const unsigned char *p, size_t bytes)
{
    uint64_t sum = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < bytes; i += (size_t)gridDim.x * blockDim.x)
        sum += byte_term(i, p[i]);
    atomicAdd(&hash_sum, (unsigned long long)sum);
}

extern "C" int base_fill_mix(void *p, int dev, size_t bytes, uint64_t seed, cudaStream_t s)
{
    static const char fn[] = "base_fill_mix";
    if (no_device(fn, "dev", dev))
        return -1;
    if (bytes == 0)
        return 0;
    int was = 0;
    if (xl_cuda_failed(cudaGetDevice(&was), fn, "cudaGetDevice") || xl_cuda_failed(cudaSetDevice(dev), fn, "cudaSetDevice"))
        return -1;
    fill_bytes<<<grid_of(bytes), THREADS, 0, s>>>((unsigned char *)p, bytes, seed);
    int bad = xl_cuda_failed(cudaGetLastError(), fn, "the fill kernel's launch");
    bad |= xl_cuda_failed(cudaSetDevice(was), fn, "cudaSetDevice (back)");
    return bad ? -1 : 0;
}

extern "C" uint64_t base_hash(const void *p, int dev, size_t bytes, cudaStream_t s, int *ok)
{
    static const char fn[] = "base_hash";
    if (no_device(fn, "dev", dev)) {
        if (ok != NULL)
            *ok = 0;
        return 0;
    }
    if (bytes == 0)
        return 0;
    int was = 0;
    if (xl_cuda_failed(cudaGetDevice(&was), fn, "cudaGetDevice")) {
        if (ok != NULL)
            *ok = 0;
        return 0;
    }
    unsigned long long sum = 0;
    int bad = xl_cuda_failed(cudaSetDevice(dev), fn, "cudaSetDevice");
    if (!bad) {
        hash_zero<<<1, 1, 0, s>>>();
        hash_bytes<<<grid_of(bytes), THREADS, 0, s>>>((const unsigned char *)p, bytes);
        bad = xl_cuda_failed(cudaGetLastError(), fn, "the hash kernels' launch") ||
              xl_cuda_failed(cudaMemcpyFromSymbolAsync(&sum, hash_sum, sizeof sum, 0, cudaMemcpyDeviceToHost, s), fn,
                     "cudaMemcpyFromSymbolAsync") ||
              xl_cuda_failed(cudaStreamSynchronize(s), fn, "cudaStreamSynchronize");
    }
    bad |= xl_cuda_failed(cudaSetDevice(was), fn, "cudaSetDevice (back)");
    if (bad) {
        if (ok != NULL)
            *ok = 0;
        return 0;
    }
    return (uint64_t)sum;
}

extern "C" uint64_t base_hash_host(const void *p, size_t bytes)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t sum = 0;
    for (size_t i = 0; i < bytes; i++)
        sum += byte_term(i, b[i]);
    return sum;
}
