/* baseline.cu - lab 07's baselines: a copy per piece, one batch call, and a plain packed path.
 *
 * The kit's; do not edit. Read it first: the loop is what you beat, the batch call is the driver's own answer,
 * and the packed path below is the plain version of yours (one thread packs with memcpy, one copy, one kernel).
 * The explorer and the grader measure your functions against these, in the same run. They follow lab.h's rules
 * for yours: the same arguments refused with -1 and a one-line message, everything queued on the caller's stream.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "labs/07-small-transfers/lab.h"

/* ===== The arguments (lab.h's rules) ===== */

/* check_pieces - the rules every call shares: pieces not NULL, n >= 0, no piece of 1 byte or more with a NULL
 * end, and bytes that add up within SIZE_MAX (into *total). 0, or -1 with a one-line message naming fn. */
static int check_pieces(const char *fn, const lab_piece *pieces, int n, size_t *total)
{
    if (!pieces || n < 0) {
        fprintf(stderr, "%s: %s\n", fn, !pieces ? "pieces is NULL" : "n is negative");
        return -1;
    }
    size_t sum = 0;
    for (int i = 0; i < n; i++) {
        size_t b = pieces[i].bytes;
        if (b > 0 && (!pieces[i].host || !pieces[i].dev)) {
            fprintf(stderr, "%s: piece %d (%zu bytes) has a NULL %s pointer\n", fn, i, b,
                    !pieces[i].host ? "host" : "device");
            return -1;
        }
        if (b > SIZE_MAX - sum) {
            fprintf(stderr, "%s: the pieces' bytes add up past SIZE_MAX\n", fn);
            return -1;
        }
        sum += b;
    }
    *total = sum;
    return 0;
}

/* ===== A copy per piece ===== */

/* loop - one cudaMemcpyAsync per piece that has bytes, on stream, host to device or back; 0 or -1 */
static int loop(const char *fn, const lab_piece *pieces, int n, cudaStream_t stream, int to_device)
{
    size_t total;
    if (check_pieces(fn, pieces, n, &total) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        const lab_piece *q = &pieces[i];
        if (q->bytes == 0)
            continue;
        if (to_device)
            XL_CHECK(cudaMemcpyAsync(q->dev, q->host, q->bytes, cudaMemcpyHostToDevice, stream));
        else
            XL_CHECK(cudaMemcpyAsync(q->host, q->dev, q->bytes, cudaMemcpyDeviceToHost, stream));
    }
    return 0;
}

extern "C" int base_send_loop(const lab_piece *pieces, int n, cudaStream_t stream)
{
    return loop("base_send_loop", pieces, n, stream, 1);
}

extern "C" int base_fetch_loop(const lab_piece *pieces, int n, cudaStream_t stream)
{
    return loop("base_fetch_loop", pieces, n, stream, 0);
}

/* ===== One batch call ===== */

/* batch - the pieces that have bytes in one cudaMemcpyBatchAsync on stream, in stream order; 0 or -1 */
static int batch(const char *fn, const lab_piece *pieces, int n, cudaStream_t stream, int to_device)
{
#if LAB_HAVE_BATCH
    size_t total;
    if (check_pieces(fn, pieces, n, &total) != 0)
        return -1;
    if (stream == 0 || stream == cudaStreamLegacy) {
        fprintf(stderr, "%s: cudaMemcpyBatchAsync refuses the legacy stream 0: pass a stream of your own\n", fn);
        return -1;
    }
    if (total == 0)
        return 0; /* nothing to copy (the driver refuses a batch of no copies) */
    void **dsts = (void **)malloc((size_t)n * sizeof *dsts), **srcs = (void **)malloc((size_t)n * sizeof *srcs);
    size_t *sizes = (size_t *)malloc((size_t)n * sizeof *sizes), count = 0;
    if (!dsts || !srcs || !sizes) {
        fprintf(stderr, "%s: out of host memory for %d pieces\n", fn, n);
        free(dsts), free(srcs), free(sizes);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (pieces[i].bytes > 0) {
            dsts[count] = to_device ? pieces[i].dev : pieces[i].host;
            srcs[count] = to_device ? pieces[i].host : pieces[i].dev;
            sizes[count++] = pieces[i].bytes;
        }
    /* one set of attributes for every copy: read the source in stream order, after the work queued before */
    cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t first = 0; /* the attributes apply from copy 0 on */
#if CUDART_VERSION >= 13000
    XL_CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &first, 1, stream));
#else
    size_t failed = 0;
    XL_CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &first, 1, &failed, stream));
#endif
    free(dsts), free(srcs), free(sizes); /* the driver has read the arrays when the call returns */
    return 0;
#else
    (void)pieces, (void)n, (void)stream, (void)to_device;
    fprintf(stderr, "%s: cudaMemcpyBatchAsync needs CUDA 12.8 or later (this is CUDA %d.%d)\n", fn,
            CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    return -1;
#endif
}

extern "C" int base_send_batch(const lab_piece *pieces, int n, cudaStream_t stream)
{
    return batch("base_send_batch", pieces, n, stream, 1);
}

extern "C" int base_fetch_batch(const lab_piece *pieces, int n, cudaStream_t stream)
{
    return batch("base_fetch_batch", pieces, n, stream, 0);
}

/* ===== The plain packed path ===== */

/* Where one piece lies in the staging buffer: the offsets table, at the start of the staging, holds one slot per
 * piece that has bytes, in packing order (so by offset); the pieces follow it, each at a 16-byte aligned offset. */
typedef struct {
    unsigned char *dev; /* the piece on the GPU */
    size_t off;         /* its first byte in the staging buffer, a multiple of 16 */
    size_t bytes;
} slot;

#define ALIGN 16 /* every piece starts at a multiple of this in the staging buffer */
#define THREADS 256
#define MAX_BLOCKS 4096

struct base_packer {
    size_t max_bytes;
    int max_pieces;
    size_t cap;           /* staging bytes: the table for max_pieces and max_bytes, each piece aligned */
    unsigned char *host;  /* pinned staging (cudaHostAlloc, default flags: the host reads it too) */
    unsigned char *dev;   /* device staging, cap bytes */
    cudaEvent_t copied;   /* recorded after the last call's copy that reads the host staging */
    cudaEvent_t done;     /* recorded after the last call's kernel that reads the device staging */
};

/* round_up - n rounded up to a multiple of ALIGN */
static size_t round_up(size_t n)
{
    return (n + ALIGN - 1) / ALIGN * ALIGN;
}

/* find - the slot whose piece holds staging byte at: the last slot with off <= at (slots sorted by off) */
static __device__ int find(const slot *slots, int m, size_t at)
{
    int lo = 0, hi = m - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (slots[mid].off <= at)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* scatter - each thread takes 16-byte blocks of the packed data, grid-stride: a block lies in one piece (pieces
 * start at multiples of 16), so one search finds where its bytes go, and the padding after a piece is skipped */
static __global__ void scatter(const unsigned char *staging, const slot *slots, int m, size_t begin, size_t end)
{
    size_t stride = (size_t)gridDim.x * blockDim.x * ALIGN;
    for (size_t at = begin + ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * ALIGN; at < end; at += stride) {
        slot s = slots[find(slots, m, at)];
        size_t from = at - s.off;
        if (from >= s.bytes)
            continue;
        size_t n = s.bytes - from < ALIGN ? s.bytes - from : ALIGN;
        uint4 v = *(const uint4 *)(staging + at); /* one aligned load; the piece may lie at any alignment */
        const unsigned char *b = (const unsigned char *)&v;
        for (size_t k = 0; k < n; k++)
            s.dev[from + k] = b[k];
    }
}

/* gather - the reverse: each 16-byte block of the staging buffer filled from its piece */
static __global__ void gather(unsigned char *staging, const slot *slots, int m, size_t begin, size_t end)
{
    size_t stride = (size_t)gridDim.x * blockDim.x * ALIGN;
    for (size_t at = begin + ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * ALIGN; at < end; at += stride) {
        slot s = slots[find(slots, m, at)];
        size_t from = at - s.off;
        if (from >= s.bytes)
            continue;
        size_t n = s.bytes - from < ALIGN ? s.bytes - from : ALIGN;
        uint4 v = make_uint4(0, 0, 0, 0);
        unsigned char *b = (unsigned char *)&v;
        for (size_t k = 0; k < n; k++)
            b[k] = s.dev[from + k];
        *(uint4 *)(staging + at) = v; /* one aligned store */
    }
}

/* blocks_for - a grid for the 16-byte blocks of [begin, end) */
static unsigned int blocks_for(size_t begin, size_t end)
{
    size_t blocks = ((end - begin) / ALIGN + THREADS - 1) / THREADS;
    return (unsigned int)(blocks < 1 ? 1 : blocks > MAX_BLOCKS ? MAX_BLOCKS : blocks);
}

/* release_made - frees what a create that failed half way made, and p; clears the error it left */
static void release_made(base_packer *p)
{
    if (p->done)
        cudaEventDestroy(p->done);
    if (p->copied)
        cudaEventDestroy(p->copied);
    if (p->dev)
        cudaFree(p->dev);
    if (p->host)
        cudaFreeHost(p->host);
    cudaGetLastError();
    free(p);
}

extern "C" base_packer *base_packer_create(size_t max_bytes, int max_pieces)
{
    if (max_bytes == 0 || max_pieces < 1) {
        fprintf(stderr, "base_packer_create: need max_bytes >= 1 and max_pieces >= 1 (got %zu and %d)\n", max_bytes,
                max_pieces);
        return NULL;
    }
    /* the table, then the data: each piece may need up to ALIGN - 1 bytes of padding. No sum may wrap. */
    size_t table = round_up((size_t)max_pieces * sizeof(slot)), pad = (size_t)max_pieces * (ALIGN - 1);
    if (max_bytes > SIZE_MAX - table - pad - ALIGN) {
        fprintf(stderr, "base_packer_create: %zu bytes and %d pieces do not fit in memory\n", max_bytes, max_pieces);
        return NULL;
    }
    base_packer *p = (base_packer *)calloc(1, sizeof *p);
    if (!p) {
        fprintf(stderr, "base_packer_create: out of host memory\n");
        return NULL;
    }
    p->max_bytes = max_bytes, p->max_pieces = max_pieces;
    p->cap = round_up(table + max_bytes + pad);
    if (cudaHostAlloc((void **)&p->host, p->cap, cudaHostAllocDefault) != cudaSuccess || !p->host ||
        cudaMalloc((void **)&p->dev, p->cap) != cudaSuccess ||
        cudaEventCreateWithFlags(&p->copied, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming) != cudaSuccess) {
        fprintf(stderr, "base_packer_create: cannot make its staging (2 x %zu bytes) and events: %s\n", p->cap,
                cudaGetErrorString(cudaGetLastError()));
        release_made(p);
        return NULL;
    }
    return p;
}

extern "C" void base_packer_destroy(base_packer *p)
{
    if (!p)
        return;
    XL_CHECK(cudaEventSynchronize(p->done)); /* the last call's kernel has read the device staging */
    XL_CHECK(cudaEventDestroy(p->done));
    XL_CHECK(cudaEventDestroy(p->copied));
    XL_CHECK(cudaFree(p->dev));
    XL_CHECK(cudaFreeHost(p->host));
    free(p);
}

/* check_call - lab.h's rules for a packed call; the total into *total. 0, or -1 with a message naming fn. */
static int check_call(const char *fn, const base_packer *p, const lab_piece *pieces, int n, size_t *total)
{
    if (!p) {
        fprintf(stderr, "%s: the packer is NULL\n", fn);
        return -1;
    }
    if (check_pieces(fn, pieces, n, total) != 0)
        return -1;
    if (n > p->max_pieces || *total > p->max_bytes) {
        fprintf(stderr, "%s: %d pieces of %zu bytes in all; the packer holds %d pieces and %zu bytes\n", fn, n,
                *total, p->max_pieces, p->max_bytes);
        return -1;
    }
    return 0;
}

/* lay_out - the table for the pieces that have bytes, into the host staging; how many slots in *m, where the data
 * begins in *begin and ends in *end. The host staging must be free (the last copy that read it done). */
static void lay_out(base_packer *p, const lab_piece *pieces, int n, int *m, size_t *begin, size_t *end)
{
    slot *slots = (slot *)p->host;
    int k = 0;
    for (int i = 0; i < n; i++)
        k += pieces[i].bytes > 0;
    size_t at = round_up((size_t)k * sizeof(slot));
    *begin = at;
    k = 0;
    for (int i = 0; i < n; i++)
        if (pieces[i].bytes > 0) {
            slots[k].dev = (unsigned char *)pieces[i].dev;
            slots[k].off = at;
            slots[k++].bytes = pieces[i].bytes;
            at = round_up(at + pieces[i].bytes);
        }
    *m = k;
    *end = at;
}

extern "C" int base_send_packed(base_packer *p, const lab_piece *pieces, int n, cudaStream_t stream)
{
    size_t total, begin, end;
    int m;
    if (check_call("base_send_packed", p, pieces, n, &total) != 0)
        return -1;
    if (total == 0)
        return 0;
    XL_CHECK(cudaEventSynchronize(p->copied)); /* the last call's copy has read the host staging */
    lay_out(p, pieces, n, &m, &begin, &end);
    const slot *slots = (const slot *)p->host;
    for (int i = 0, k = 0; i < n; i++) /* one thread packs: the pieces in order, after the table */
        if (pieces[i].bytes > 0)
            memcpy(p->host + slots[k++].off, pieces[i].host, pieces[i].bytes);
    XL_CHECK(cudaStreamWaitEvent(stream, p->done, 0)); /* the device staging: the last kernel has read it */
    XL_CHECK(cudaMemcpyAsync(p->dev, p->host, end, cudaMemcpyHostToDevice, stream)); /* table and data at once */
    XL_CHECK(cudaEventRecord(p->copied, stream));
    scatter<<<blocks_for(begin, end), THREADS, 0, stream>>>(p->dev, (const slot *)p->dev, m, begin, end);
    XL_CHECK_LAUNCH();
    XL_CHECK(cudaEventRecord(p->done, stream));
    return 0;
}

extern "C" int base_fetch_packed(base_packer *p, const lab_piece *pieces, int n, cudaStream_t stream)
{
    size_t total, begin, end;
    int m;
    if (check_call("base_fetch_packed", p, pieces, n, &total) != 0)
        return -1;
    if (total == 0)
        return 0;
    XL_CHECK(cudaEventSynchronize(p->copied)); /* the last call's copy has read the host staging */
    lay_out(p, pieces, n, &m, &begin, &end);
    XL_CHECK(cudaStreamWaitEvent(stream, p->done, 0));
    XL_CHECK(cudaMemcpyAsync(p->dev, p->host, begin, cudaMemcpyHostToDevice, stream)); /* the table */
    XL_CHECK(cudaEventRecord(p->copied, stream));
    gather<<<blocks_for(begin, end), THREADS, 0, stream>>>(p->dev, (const slot *)p->dev, m, begin, end);
    XL_CHECK_LAUNCH();
    XL_CHECK(cudaMemcpyAsync(p->host + begin, p->dev + begin, end - begin, cudaMemcpyDeviceToHost, stream));
    XL_CHECK(cudaEventRecord(p->done, stream));
    XL_CHECK(cudaStreamSynchronize(stream)); /* this call's work, and what was queued before it on stream */
    const slot *slots = (const slot *)p->host;
    for (int i = 0, k = 0; i < n; i++) /* one thread unpacks */
        if (pieces[i].bytes > 0)
            memcpy(pieces[i].host, p->host + slots[k++].off, pieces[i].bytes);
    return 0;
}
