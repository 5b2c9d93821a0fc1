/* lab.cu - lab 09 (GPU to GPU): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit labs/09-gpu-to-gpu/lab.cu, which has
 * the same contract (lab.h).
 *
 * Design. A group asks about each pair of distinct devices once (a device is not its own peer), enables both
 * directions only when both can, and keeps the list of directions it enabled itself, so that destroy undoes exactly
 * those. Its events are made first, one pair a rank on the rank's device, so a failed event needs no undo of
 * peer access. The ring is three rounds over the ranks: each stream marks where its queued work ends (ready); each
 * sender waits for its receiver's mark, copies and marks the copy (done); each receiver waits for the copy into it.
 * A read sets the output's device current and launches an exact grid, one thread a word. The stage owns one pinned
 * allocation of two chunks, portable so that both devices see it pinned; chunk c uses half c % 2, and two events a
 * half say when it was filled (recorded by the copy out, on the source's device) and drained (recorded by the copy
 * in, on the destination's device): the next copy out into that half waits for drained, the copy in for filled. No
 * host waits anywhere. Every function that sets a device puts the caller's current device back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "common/trace.h"
#include "labs/09-gpu-to-gpu/lab.h"

/* ===== Sizes, and why ===== */

#define THREADS 256 /* threads a block: 8 warps, so 8 blocks fill a multiprocessor's 64 warps */
/* directions a group may own: every ordered pair of distinct devices among LAB_MAX_RANKS ranks */
#define MAX_DIRECTIONS (LAB_MAX_RANKS * (LAB_MAX_RANKS - 1))

/* ===== Devices ===== */

/* device_ok - 0 when d names a device (0 <= d < cudaGetDeviceCount()); else -1 with one line naming fn and what */
static int device_ok(const char *fn, const char *what, int d)
{
    int count = 0;
    XL_CHECK(cudaGetDeviceCount(&count));
    if (d < 0 || d >= count) {
        fprintf(stderr, "%s: %s %d is not a device: this host has %d (0 to %d)\n", fn, what, d, count, count - 1);
        return -1;
    }
    return 0;
}

/* ends_given - 0 when a copy of bytes (> 0) has both ends; else -1 with one line naming fn and the missing end */
static int ends_given(const char *fn, const void *dst, const void *src, size_t bytes)
{
    if (!dst) {
        fprintf(stderr, "%s: dst is NULL, with %zu bytes to copy\n", fn, bytes);
        return -1;
    }
    if (!src) {
        fprintf(stderr, "%s: src is NULL, with %zu bytes to copy\n", fn, bytes);
        return -1;
    }
    return 0;
}

/* current_device - the caller's current device, to be put back with XL_CHECK(cudaSetDevice(...)) */
static int current_device(void)
{
    int d = 0;
    XL_CHECK(cudaGetDevice(&d));
    return d;
}

/* ===== A group of ranks, and peer access ===== */

struct lab_group {
    int n;
    int devs[LAB_MAX_RANKS];
    cudaEvent_t ready[LAB_MAX_RANKS]; /* on devs[r]: the end of what was queued on rank r's stream before a ring */
    cudaEvent_t done[LAB_MAX_RANKS];  /* on devs[r]: rank r's copy out in a ring has finished */
    int owns;                         /* directions this group enabled: from[d] -> to[d], d < owns */
    int from[MAX_DIRECTIONS];
    int to[MAX_DIRECTIONS];
};

/* make_event - *e = a new event without timing, on the current device; 0, or -1 with the error cleared and one line */
static int make_event(cudaEvent_t *e)
{
    cudaError_t err = cudaEventCreateWithFlags(e, cudaEventDisableTiming);
    if (err == cudaSuccess)
        return 0;
    cudaGetLastError();
    *e = NULL;
    fprintf(stderr, "lab_group_create: cudaEventCreateWithFlags: %s\n", cudaGetErrorString(err));
    return -1;
}

/* enable - peer access from device a to device b (a current while it is asked); a direction this call enabled is
 * added to g's list, one already enabled is left to its owner (the error it leaves is cleared). 0, or -1 with the
 * error cleared and one line. */
static int enable(lab_group *g, int a, int b)
{
    XL_CHECK(cudaSetDevice(a));
    cudaError_t err = cudaDeviceEnablePeerAccess(b, 0);
    if (err == cudaSuccess) {
        g->from[g->owns] = a;
        g->to[g->owns] = b;
        g->owns++;
        return 0;
    }
    cudaGetLastError();
    if (err == cudaErrorPeerAccessAlreadyEnabled)
        return 0; /* someone else's: not ours to disable */
    fprintf(stderr, "lab_group_create: enabling peer access from GPU %d to GPU %d: %s\n", a, b,
            cudaGetErrorString(err));
    return -1;
}

extern "C" lab_group *lab_group_create(const int *devs, int n, int *peer)
{
    const char *fn = "lab_group_create";
    if (!devs) {
        fprintf(stderr, "%s: devs is NULL\n", fn);
        return NULL;
    }
    if (!peer) {
        fprintf(stderr, "%s: peer is NULL\n", fn);
        return NULL;
    }
    if (n < 1) {
        fprintf(stderr, "%s: %d ranks: need at least 1\n", fn, n);
        return NULL;
    }
    if (n > LAB_MAX_RANKS) {
        fprintf(stderr, "%s: %d ranks: at most %d\n", fn, n, LAB_MAX_RANKS);
        return NULL;
    }
    for (int r = 0; r < n; r++)
        if (device_ok(fn, "a rank's device", devs[r]) != 0)
            return NULL;

    lab_group *g = (lab_group *)calloc(1, sizeof *g);
    if (!g) {
        fprintf(stderr, "%s: out of host memory\n", fn);
        return NULL;
    }
    int prev = current_device();
    g->n = n;
    for (int r = 0; r < n; r++) {
        g->devs[r] = devs[r];
        XL_CHECK(cudaSetDevice(devs[r]));
        if (make_event(&g->ready[r]) != 0 || make_event(&g->done[r]) != 0) {
            XL_CHECK(cudaSetDevice(prev));
            lab_group_destroy(g);
            return NULL;
        }
    }

    /* the distinct devices, in the order the ranks name them */
    int uniq[LAB_MAX_RANKS], nu = 0;
    for (int r = 0; r < n; r++) {
        int seen = 0;
        for (int u = 0; u < nu; u++)
            seen |= uniq[u] == devs[r];
        if (!seen)
            uniq[nu++] = devs[r];
    }
    int lacking = 0, lack_a = 0, lack_b = 0; /* pairs without a path both ways; the first of them */
    for (int x = 0; x < nu; x++) {
        for (int y = x + 1; y < nu; y++) {
            int a = uniq[x], b = uniq[y], ab = 0, ba = 0;
            XL_CHECK(cudaDeviceCanAccessPeer(&ab, a, b));
            XL_CHECK(cudaDeviceCanAccessPeer(&ba, b, a));
            if (!ab || !ba) { /* one way only is no way: both copies of the pair go through the host */
                if (!lacking) {
                    lack_a = a;
                    lack_b = b;
                }
                lacking++;
                continue;
            }
            if (enable(g, a, b) != 0 || enable(g, b, a) != 0) {
                XL_CHECK(cudaSetDevice(prev));
                lab_group_destroy(g); /* undoes what this call enabled */
                return NULL;
            }
        }
    }
    XL_CHECK(cudaSetDevice(prev));
    if (lacking)
        fprintf(stderr, "%s: GPU %d and GPU %d have no peer path: their copies go through the host\n", fn, lack_a,
                lack_b);
    *peer = !lacking;
    return g;
}

extern "C" void lab_group_destroy(lab_group *g)
{
    if (!g)
        return;
    int prev = current_device();
    for (int d = 0; d < g->owns; d++) { /* only what this group enabled, each with its device current */
        XL_CHECK(cudaSetDevice(g->from[d]));
        XL_CHECK(cudaDeviceDisablePeerAccess(g->to[d]));
    }
    for (int r = 0; r < g->n; r++) { /* a create that failed part-way made some of them */
        if (g->ready[r])
            XL_CHECK(cudaEventDestroy(g->ready[r]));
        if (g->done[r])
            XL_CHECK(cudaEventDestroy(g->done[r]));
    }
    XL_CHECK(cudaSetDevice(prev));
    free(g);
}

/* ===== Copies ===== */

extern "C" int lab_peer_copy(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes, cudaStream_t stream)
{
    const char *fn = "lab_peer_copy";
    if (device_ok(fn, "dst_dev", dst_dev) != 0 || device_ok(fn, "src_dev", src_dev) != 0)
        return -1;
    if (bytes == 0)
        return 0;
    if (ends_given(fn, dst, src, bytes) != 0)
        return -1;
    XL_RANGE_PUSH("lab_peer_copy");
    XL_CHECK(cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, stream)); /* with or without peer access */
    XL_RANGE_POP();
    return 0;
}

extern "C" int lab_ring_exchange(lab_group *g, void *const *send, void *const *recv, size_t bytes,
                                 const cudaStream_t *streams)
{
    const char *fn = "lab_ring_exchange";
    if (!g) {
        fprintf(stderr, "%s: the group is NULL\n", fn);
        return -1;
    }
    if (!send) {
        fprintf(stderr, "%s: send is NULL\n", fn);
        return -1;
    }
    if (!recv) {
        fprintf(stderr, "%s: recv is NULL\n", fn);
        return -1;
    }
    if (!streams) {
        fprintf(stderr, "%s: streams is NULL\n", fn);
        return -1;
    }
    if (bytes == 0)
        return 0;
    int n = g->n;
    for (int r = 0; r < n; r++) {
        if (!send[r]) {
            fprintf(stderr, "%s: send[%d] is NULL, with %zu bytes to send\n", fn, r, bytes);
            return -1;
        }
        if (!recv[r]) {
            fprintf(stderr, "%s: recv[%d] is NULL, with %zu bytes to receive\n", fn, r, bytes);
            return -1;
        }
    }
    XL_RANGE_PUSH("lab_ring_exchange");
    int prev = current_device();
    /* 1: where each stream's earlier work ends (the sender may still write send[r], the receiver read recv[r]) */
    for (int r = 0; r < n; r++) {
        XL_CHECK(cudaSetDevice(g->devs[r]));
        XL_CHECK(cudaEventRecord(g->ready[r], streams[r]));
    }
    /* 2: every copy at once, each after its own stream's work and its receiver's */
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        XL_CHECK(cudaSetDevice(g->devs[i]));
        XL_CHECK(cudaStreamWaitEvent(streams[i], g->ready[j], 0));
        XL_CHECK(cudaMemcpyPeerAsync(recv[j], g->devs[j], send[i], g->devs[i], bytes, streams[i]));
        XL_CHECK(cudaEventRecord(g->done[i], streams[i]));
    }
    /* 3: what each receiver's stream does next sees its block complete (a wait needs no device current) */
    for (int j = 0; j < n; j++)
        XL_CHECK(cudaStreamWaitEvent(streams[j], g->done[(j + n - 1) % n], 0));
    XL_CHECK(cudaSetDevice(prev));
    XL_RANGE_POP();
    return 0;
}

/* ===== A kernel reading another GPU's memory ===== */

/* add_kernel - out[k] += src[k] for this thread's word k (its index in the grid), when k < words. An exact grid:
 * every load is issued at once by its own thread, which is what a read across the link needs to hide its latency. */
static __global__ void add_kernel(uint32_t *out, const uint32_t *src, size_t words)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= words)
        return;
    out[k] += src[k];
}

/* check_read - lab.h's refusals for a read job, naming fn: 0 when j and reps may be run (*bytes = words * 4), else
 * -1 with one line. scratch_needed: 1 for lab_read_copied, whose scratch may not be NULL either. */
static int check_read(const char *fn, const lab_read_job *j, int reps, const uint32_t *scratch, int scratch_needed,
                      size_t *bytes)
{
    if (!j) {
        fprintf(stderr, "%s: the job is NULL\n", fn);
        return -1;
    }
    if (reps < 0) {
        fprintf(stderr, "%s: reps %d: need 0 or more\n", fn, reps);
        return -1;
    }
    if (device_ok(fn, "out_dev", j->out_dev) != 0 || device_ok(fn, "src_dev", j->src_dev) != 0)
        return -1;
    if (__builtin_mul_overflow(j->words, sizeof(uint32_t), bytes)) {
        fprintf(stderr, "%s: %zu words are past SIZE_MAX bytes\n", fn, j->words);
        return -1;
    }
    if (j->words == 0)
        return 0; /* nothing is read: the pointers may be NULL */
    if (!j->out) {
        fprintf(stderr, "%s: out is NULL, with %zu words\n", fn, j->words);
        return -1;
    }
    if (!j->src) {
        fprintf(stderr, "%s: src is NULL, with %zu words\n", fn, j->words);
        return -1;
    }
    if (scratch_needed && !scratch) {
        fprintf(stderr, "%s: scratch is NULL, with %zu words\n", fn, j->words);
        return -1;
    }
    return 0;
}

/* add_passes - reps launches of add_kernel (out += src, words >= 1) on stream, with the current device out's */
static void add_passes(uint32_t *out, const uint32_t *src, size_t words, int reps, cudaStream_t stream)
{
    size_t blocks = (words + THREADS - 1) / THREADS;
    for (int r = 0; r < reps; r++) {
        add_kernel<<<(unsigned int)blocks, THREADS, 0, stream>>>(out, src, words);
        XL_CHECK_LAUNCH();
    }
}

extern "C" int lab_read_direct(const lab_read_job *j, int reps, cudaStream_t stream)
{
    size_t bytes = 0;
    if (check_read("lab_read_direct", j, reps, NULL, 0, &bytes) != 0)
        return -1;
    if (reps == 0 || j->words == 0)
        return 0;
    XL_RANGE_PUSH("lab_read_direct");
    int prev = current_device();
    XL_CHECK(cudaSetDevice(j->out_dev)); /* a launch goes to the current device: the stream's */
    add_passes(j->out, j->src, j->words, reps, stream);
    XL_CHECK(cudaSetDevice(prev));
    XL_RANGE_POP();
    return 0;
}

extern "C" int lab_read_copied(const lab_read_job *j, uint32_t *scratch, int reps, cudaStream_t stream)
{
    size_t bytes = 0;
    if (check_read("lab_read_copied", j, reps, scratch, 1, &bytes) != 0)
        return -1;
    if (reps == 0 || j->words == 0)
        return 0;
    XL_RANGE_PUSH("lab_read_copied");
    int prev = current_device();
    XL_CHECK(cudaSetDevice(j->out_dev));
    XL_CHECK(cudaMemcpyPeerAsync(scratch, j->out_dev, j->src, j->src_dev, bytes, stream)); /* once, whatever reps */
    add_passes(j->out, scratch, j->words, reps, stream);
    XL_CHECK(cudaSetDevice(prev));
    XL_RANGE_POP();
    return 0;
}

/* ===== The road through the host ===== */

struct lab_stage {
    int src_dev, dst_dev;
    size_t chunk;          /* bytes a chunk */
    char *buf;             /* pinned, portable: two halves of chunk bytes, half k at buf + k * chunk */
    cudaEvent_t filled[2]; /* on src_dev: the copy out into half k has finished */
    cudaEvent_t drained[2]; /* on dst_dev: the copy in from half k has finished */
};

/* stage_events - makes the two events of each kind, each on the device whose stream records it; 0, or -1 with the
 * error cleared and one line (what was made stays in s for lab_stage_destroy) */
static int stage_events(lab_stage *s)
{
    for (int k = 0; k < 2; k++) {
        XL_CHECK(cudaSetDevice(s->src_dev));
        cudaError_t err = cudaEventCreateWithFlags(&s->filled[k], cudaEventDisableTiming);
        if (err == cudaSuccess) {
            XL_CHECK(cudaSetDevice(s->dst_dev));
            err = cudaEventCreateWithFlags(&s->drained[k], cudaEventDisableTiming);
        }
        if (err != cudaSuccess) {
            cudaGetLastError();
            fprintf(stderr, "lab_stage_create: cudaEventCreateWithFlags: %s\n", cudaGetErrorString(err));
            return -1;
        }
    }
    return 0;
}

extern "C" lab_stage *lab_stage_create(int src_dev, int dst_dev, size_t chunk_bytes)
{
    const char *fn = "lab_stage_create";
    if (chunk_bytes == 0) {
        fprintf(stderr, "%s: chunk_bytes is 0\n", fn);
        return NULL;
    }
    if (chunk_bytes > LAB_CHUNK_MAX) {
        fprintf(stderr, "%s: chunk_bytes %zu: at most LAB_CHUNK_MAX (%zu)\n", fn, chunk_bytes, LAB_CHUNK_MAX);
        return NULL;
    }
    if (device_ok(fn, "src_dev", src_dev) != 0 || device_ok(fn, "dst_dev", dst_dev) != 0)
        return NULL;
    lab_stage *s = (lab_stage *)calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "%s: out of host memory\n", fn);
        return NULL;
    }
    s->src_dev = src_dev;
    s->dst_dev = dst_dev;
    s->chunk = chunk_bytes;
    /* one allocation for both halves, pinned for every device: one GPU writes it, another reads it */
    cudaError_t err = cudaHostAlloc((void **)&s->buf, 2 * chunk_bytes, cudaHostAllocPortable);
    if (err != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "%s: cudaHostAlloc of 2 x %zu bytes: %s\n", fn, chunk_bytes, cudaGetErrorString(err));
        free(s); /* nothing else is held yet */
        return NULL;
    }
    int prev = current_device();
    int made = stage_events(s);
    XL_CHECK(cudaSetDevice(prev));
    if (made != 0) {
        lab_stage_destroy(s);
        return NULL;
    }
    return s;
}

extern "C" int lab_stage_copy(lab_stage *s, void *dst, const void *src, size_t bytes, cudaStream_t src_stream,
                              cudaStream_t dst_stream)
{
    const char *fn = "lab_stage_copy";
    if (!s) {
        fprintf(stderr, "%s: the stage is NULL\n", fn);
        return -1;
    }
    if (bytes == 0)
        return 0;
    if (ends_given(fn, dst, src, bytes) != 0)
        return -1;
    XL_RANGE_PUSH("lab_stage_copy");
    int prev = current_device();
    size_t chunk = s->chunk, chunks = (bytes - 1) / chunk + 1, last = bytes - (chunks - 1) * chunk;
    for (size_t c = 0; c < chunks; c++) {
        int k = (int)(c % 2);
        size_t n = c == chunks - 1 ? last : chunk, at = c * chunk;
        char *half = s->buf + k * chunk;
        /* out: into half k once the copy in that last read it is done (an earlier call's too) */
        XL_CHECK(cudaSetDevice(s->src_dev));
        XL_CHECK(cudaStreamWaitEvent(src_stream, s->drained[k], 0));
        XL_CHECK(cudaMemcpyAsync(half, (const char *)src + at, n, cudaMemcpyDeviceToHost, src_stream));
        XL_CHECK(cudaEventRecord(s->filled[k], src_stream));
        /* in: out of half k once the copy out has filled it; meanwhile the next chunk goes out into the other half */
        XL_CHECK(cudaSetDevice(s->dst_dev));
        XL_CHECK(cudaStreamWaitEvent(dst_stream, s->filled[k], 0));
        XL_CHECK(cudaMemcpyAsync((char *)dst + at, half, n, cudaMemcpyHostToDevice, dst_stream));
        XL_CHECK(cudaEventRecord(s->drained[k], dst_stream));
    }
    XL_CHECK(cudaSetDevice(prev));
    XL_RANGE_POP();
    return 0;
}

extern "C" void lab_stage_destroy(lab_stage *s)
{
    if (!s)
        return;
    for (int k = 0; k < 2; k++) { /* a create that failed part-way made some of them */
        if (s->filled[k])
            XL_CHECK(cudaEventDestroy(s->filled[k]));
        if (s->drained[k])
            XL_CHECK(cudaEventDestroy(s->drained[k]));
    }
    if (s->buf)
        XL_CHECK(cudaFreeHost(s->buf)); /* waits for the copies still using it */
    free(s);
}
