/* lab.cu - lab 07 (many small transfers): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit
 * labs/07-small-transfers/lab.cu, which has the same contract (lab.h).
 *
 * The packed path. Each call lays the pieces out in one staging buffer: the offsets table first, then each piece at
 * an offset that agrees with its dev address modulo 64, so that on the GPU a 16-byte word of staging maps onto a
 * 16-byte word of the piece (aligned vector loads and stores, whatever the pieces' alignment). The layout is cut
 * into chunks (1, 2, then 4 MiB, shrinking back to about 1 MiB at the end), each one copy and one kernel, and each
 * chunk into units of host work (64 KiB) that the packer's threads (common/pool.h) take in order from a shared
 * cursor. One pool job per call: thread 0, the caller, makes every CUDA call; the others only copy bytes.
 *
 *   send   threads pack units, post each chunk's count   -> thread 0 waits for a chunk's count, copies it on the
 *          caller's stream, and the side stream scatters it (move_tiles) once the copy is done (event 'hop')
 *   fetch  side stream gathers a chunk into device staging, the caller's stream copies it back (event 'gathered');
 *          thread 0 waits for each copy (a ring of events 'back'), posts 'ready', and the threads unpack it
 *
 * Nothing sleeps or wakes per chunk: within a job the threads spin on counters. One pinned staging buffer serves
 * every call, so a call first waits until the last call's copies have read it (event 'staging_free'), and the
 * caller's stream waits (on the GPU) until the last call's kernels are done with the device staging ('side_done').
 * The batch path hands the pieces to cudaMemcpyBatchAsync in one call.
 */
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/pool.h"
#include "common/streamcopy.h"
#include "common/trace.h"
#include "labs/07-small-transfers/lab.h"

/* ===== Sizes, and why ===== */

#define FIRST_CHUNK_BYTES LAB_TRIP_BYTES /* the first copy starts once 1 MiB is packed; chunks grow to 4 MiB (~80 us on
                                         * the link, where the per-copy cost of a few us is lost) */
#define UNIT_BYTES ((size_t)64 << 10)     /* a thread's share of host work at a time: 16 to 64 units a chunk */
#define SOLO_BYTES ((size_t)256 << 10)    /* below this thread 0 packs alone: a wake-up costs as much as it saves */
/* Threads that pack for a send, at most. Packing only has to outrun the link; more threads than that take memory
 * bandwidth from the copy engine's reads of the staging (on the H100 host a 64 MiB H2D copy fell from 53 to 45
 * GB/s beside a 12-thread host copy, and stayed at 52 beside a 4-thread one). 1024 pieces of 64 KiB, median of 30
 * sends, two runs each on one machine: 41 to 42 GB/s packed by 12 threads, 44 to 45 by 8, 42 to 46 by 6, 35 to 41
 * by 5. Fetches unpack with every thread: they unpack each chunk as it arrives, at the link's pace. */
#define SEND_THREADS 8
#define LINE 64                           /* pieces agree with their dev address modulo a cache line */
#define RING 4                            /* fetch: chunks in flight ahead of the unpacking, one 'back' event each */
#define TILE_THREADS 128                  /* move_tiles: a block's threads, 16 bytes each */
#define VEC 16
#define TILE_BYTES (TILE_THREADS * VEC)

typedef unsigned long long u64;

/* The offsets table, at the start of staging, m entries in three arrays: off[m], end[m], dev[m] (u64 each). Piece
 * j's bytes are staging[off[j], end[j]); off[j] == dev[j] modulo LINE; off and end ascend. */
#define TABLE_ENTRY_BYTES (3 * sizeof(u64))

/* One chunk: a copy, a kernel and its units of host work. A cache line of its own (its count is posted to). */
struct alignas(64) chunk {
    size_t start, end;  /* staging offsets: the copy's bytes */
    long unit0, units;  /* its host units: unit0 .. unit0 + units - 1 of the call */
    int lo, hi;         /* table entries that overlap [start, end) */
    xl_pool_count done; /* send: units packed */
};

struct lab_packer {
    size_t max_bytes;
    int max_pieces;
    size_t staging_bytes;      /* table, max_bytes, and a line of alignment per piece */
    unsigned char *host;       /* pinned staging, cudaHostAllocDefault: the host writes and reads it */
    unsigned char *dev;        /* device staging, the same layout */
    unsigned char **host_of;   /* host address of table entry j (max_pieces) */
    struct chunk *chunks;      /* max_chunks */
    long max_chunks;
    cudaStream_t side;         /* non-blocking: the kernels, so that they overlap the caller's copies */
    cudaEvent_t staging_free;  /* on the caller's stream after a call's last copy: pinned staging may be rewritten */
    cudaEvent_t side_done;     /* on side after a call's last kernel: device staging may be rewritten */
    cudaEvent_t hop;           /* caller's stream -> side: a chunk is on the device (send), the table (fetch) */
    cudaEvent_t gathered;      /* side -> caller's stream: a chunk is gathered (fetch) */
    cudaEvent_t back[RING];    /* fetch: chunk k's copy back is done, in back[k % RING] */
    xl_pool *pool;

    /* the call in progress, set by thread 0 before the job */
    int m;                     /* table entries: the non-empty pieces */
    size_t data_start;         /* where the pieces begin: after the table, a line boundary */
    size_t packed_end;         /* where the last piece ends */
    int chunk_count;
    long units;                /* host units in all */
    cudaStream_t stream;       /* the caller's */
    alignas(64) long cursor;   /* the next unit to take */
    alignas(64) xl_pool_count ready; /* fetch: chunks back on the host */
};

/* ===== Checking a call's arguments ===== */

/* check_pieces - 0 when pieces[0..n) are valid for a call of at most max_pieces pieces and max_bytes bytes, with
 * their sum in *total and the non-empty ones counted in *m; else -1 with a one-line message naming fn */
static int check_pieces(const char *fn, const lab_piece *pieces, int n, int max_pieces, size_t max_bytes,
                        size_t *total, int *m)
{
    if (!pieces) {
        fprintf(stderr, "%s: pieces is NULL\n", fn);
        return -1;
    }
    if (n < 0 || n > max_pieces) {
        fprintf(stderr, "%s: %d pieces: need 0 to %d\n", fn, n, max_pieces);
        return -1;
    }
    size_t sum = 0;
    int nonempty = 0;
    for (int i = 0; i < n; i++) {
        if (pieces[i].bytes == 0)
            continue;
        if (!pieces[i].host || !pieces[i].dev) {
            fprintf(stderr, "%s: piece %d has %zu bytes and a NULL %s pointer\n", fn, i, pieces[i].bytes,
                    pieces[i].host ? "dev" : "host");
            return -1;
        }
        if (pieces[i].bytes > max_bytes - sum) { /* sum + bytes > max_bytes, without overflow */
            fprintf(stderr, "%s: the pieces add up to more than %zu bytes (at piece %d)\n", fn, max_bytes, i);
            return -1;
        }
        sum += pieces[i].bytes;
        nonempty++;
    }
    *total = sum;
    *m = nonempty;
    return 0;
}

/* check_packed_call - check_pieces for a packed call, after checking p */
static int check_packed_call(const char *fn, const lab_packer *p, const lab_piece *pieces, int n, size_t *total,
                             int *m)
{
    if (!p) {
        fprintf(stderr, "%s: packer is NULL\n", fn);
        return -1;
    }
    return check_pieces(fn, pieces, n, p->max_pieces, p->max_bytes, total, m);
}

/* ===== The packing threads: one team for the process ===== */

/* Starting and stopping a dozen threads with every packer costs a millisecond and leaves the C library's thread
 * caches changed from one create to the next; so every packer shares one team, started by the first packer and
 * kept until the process ends, and calls from several packers at once take turns with it. */
static xl_pool *pool_made;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pool_turn = PTHREAD_MUTEX_INITIALIZER;

/* make_pool - pthread_once's routine: starts the team (pool_made stays NULL when it cannot) */
static void make_pool(void)
{
    pool_made = xl_pool_create(xl_pool_default_threads());
}

/* shared_pool - the process's packing team, started on first use; NULL when its threads cannot be made */
static xl_pool *shared_pool(void)
{
    pthread_once(&pool_once, make_pool);
    return pool_made;
}

/* run_job - xl_pool_run on the shared team, one packer's job at a time */
static void run_job(xl_pool *pool, xl_pool_fn fn, void *ctx)
{
    pthread_mutex_lock(&pool_turn);
    xl_pool_run(pool, fn, ctx);
    pthread_mutex_unlock(&pool_turn);
}

/* ===== Create and destroy ===== */

/* ok - 1 when err is cudaSuccess; otherwise clears it, says what failed, 0 */
static int ok(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return 1;
    cudaGetLastError();
    fprintf(stderr, "lab_packer_create: %s: %s\n", what, cudaGetErrorString(err));
    return 0;
}

/* add_sizes, mul_sizes - a + b, a * b; SIZE_MAX past the range (a size no allocation can give: out of memory) */
static size_t add_sizes(size_t a, size_t b)
{
    size_t r;
    return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}
static size_t mul_sizes(size_t a, size_t b)
{
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

extern "C" lab_packer *lab_packer_create(size_t max_bytes, int max_pieces)
{
    if (max_bytes == 0 || max_pieces < 1) {
        fprintf(stderr, "lab_packer_create: need max_bytes >= 1 and max_pieces >= 1 (got %zu, %d)\n", max_bytes,
                max_pieces);
        return NULL;
    }
    lab_packer *p = NULL;
    if (posix_memalign((void **)&p, 64, sizeof *p) != 0) {
        fprintf(stderr, "lab_packer_create: out of memory\n");
        return NULL;
    }
    memset(p, 0, sizeof *p);
    p->max_bytes = max_bytes;
    p->max_pieces = max_pieces;
    size_t table = add_sizes(mul_sizes(TABLE_ENTRY_BYTES, (size_t)max_pieces), LINE - 1) & ~(size_t)(LINE - 1);
    p->staging_bytes = add_sizes(add_sizes(table, max_bytes), mul_sizes(LINE, (size_t)max_pieces));
    /* a call's chunks: all but the last at least 1 MiB of staging (staging_bytes is at most SIZE_MAX, so this is
     * at most 2^44 + 2: no overflow) */
    p->max_chunks = (long)(p->staging_bytes / FIRST_CHUNK_BYTES + 2);
    if (!ok(cudaHostAlloc((void **)&p->host, p->staging_bytes, cudaHostAllocDefault), "pinning the staging buffer") ||
        !ok(cudaMalloc((void **)&p->dev, p->staging_bytes), "the device staging buffer")) {
        lab_packer_destroy(p);
        return NULL;
    }
    size_t chunk_bytes = mul_sizes(sizeof(struct chunk), (size_t)p->max_chunks);
    if (!(p->host_of = (unsigned char **)malloc(mul_sizes(sizeof *p->host_of, (size_t)max_pieces))) ||
        posix_memalign((void **)&p->chunks, 64, chunk_bytes) != 0) {
        p->chunks = NULL;
        fprintf(stderr, "lab_packer_create: out of host memory for %d pieces\n", max_pieces);
        lab_packer_destroy(p);
        return NULL;
    }
    if (!ok(cudaStreamCreateWithFlags(&p->side, cudaStreamNonBlocking), "the side stream") ||
        !ok(cudaEventCreateWithFlags(&p->staging_free, cudaEventDisableTiming), "an event") ||
        !ok(cudaEventCreateWithFlags(&p->side_done, cudaEventDisableTiming), "an event") ||
        !ok(cudaEventCreateWithFlags(&p->hop, cudaEventDisableTiming), "an event") ||
        !ok(cudaEventCreateWithFlags(&p->gathered, cudaEventDisableTiming), "an event")) {
        lab_packer_destroy(p);
        return NULL;
    }
    for (int r = 0; r < RING; r++)
        if (!ok(cudaEventCreateWithFlags(&p->back[r], cudaEventDisableTiming), "an event")) {
            lab_packer_destroy(p);
            return NULL;
        }
    if (!(p->pool = shared_pool())) {
        fprintf(stderr, "lab_packer_create: cannot start the packing threads\n");
        lab_packer_destroy(p);
        return NULL;
    }
    return p;
}

extern "C" void lab_packer_destroy(lab_packer *p)
{
    if (!p)
        return;
    if (p->staging_free)
        XL_CHECK(cudaEventSynchronize(p->staging_free)); /* the last send's copies out of pinned staging */
    if (p->side)
        XL_CHECK(cudaStreamSynchronize(p->side));        /* its kernels: this packer's work, not the device's */
    cudaEvent_t *events[] = {&p->staging_free, &p->side_done, &p->hop, &p->gathered,
                             &p->back[0], &p->back[1], &p->back[2], &p->back[3]};
    static_assert(RING == 4, "list every back event above");
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (*events[i])
            XL_CHECK(cudaEventDestroy(*events[i]));
    if (p->side)
        XL_CHECK(cudaStreamDestroy(p->side));
    XL_CHECK(cudaFree(p->dev));      /* cudaFree(NULL) does nothing */
    XL_CHECK(cudaFreeHost(p->host)); /* nor cudaFreeHost(NULL) */
    free(p->host_of); /* the pool is the process's: it stays for the next packer */
    free(p->chunks);
    free(p);
}

/* ===== The layout: table, pieces, chunks, units ===== */

/* table_off, table_end, table_dev - the three arrays of the table at the start of staging s, for m entries */
__host__ __device__ static inline u64 *table_off(unsigned char *s) { return (u64 *)s; }
__host__ __device__ static inline u64 *table_end(unsigned char *s, int m) { return (u64 *)s + m; }
__host__ __device__ static inline u64 *table_dev(unsigned char *s, int m) { return (u64 *)s + 2 * (size_t)m; }

/* first_above - the first index in [lo, hi) whose a[i] > x (a ascending); hi when none */
__host__ __device__ static inline int first_above(const u64 *a, int lo, int hi, u64 x)
{
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* lay_out - writes the table of the n pieces (m non-empty) into pinned staging and the host addresses into
 * host_of; sets m, data_start and packed_end */
static void lay_out(lab_packer *p, const lab_piece *pieces, int n, int m)
{
    u64 *off = table_off(p->host), *end = table_end(p->host, m), *dev = table_dev(p->host, m);
    size_t pos = (TABLE_ENTRY_BYTES * (size_t)m + LINE - 1) & ~(size_t)(LINE - 1);
    p->m = m;
    p->data_start = pos;
    for (int i = 0, j = 0; i < n; i++) {
        if (pieces[i].bytes == 0)
            continue;
        uintptr_t d = (uintptr_t)pieces[i].dev;
        pos += (d - pos) & (LINE - 1); /* the next offset that agrees with dev modulo LINE: 0..63 bytes of padding */
        off[j] = pos;
        end[j] = pos + pieces[i].bytes;
        dev[j] = d;
        p->host_of[j] = (unsigned char *)pieces[i].host;
        pos += pieces[i].bytes;
        j++;
    }
    p->packed_end = pos;
}

/* plan_chunks - cuts staging [from, to) into chunks: 1, 2, then 4 MiB, each at most half of what is left (the last
 * ones shrink back to about 1 MiB, so the work after the last copy is short), and a remainder under 1/2 MiB joins
 * the chunk before it. Every chunk but the last is at least FIRST_CHUNK_BYTES; at most `most` chunks: where
 * padding and the table would make more (many tiny pieces), the bytes are cut into `most` equal chunks instead.
 * Then the units of each chunk, and the table entries each one overlaps. */
static void plan_chunks(lab_packer *p, size_t from, size_t to, long most)
{
    struct chunk *c = p->chunks;
    long k = 0;
    for (size_t pos = from; pos < to; k++) {
        size_t left = to - pos;
        size_t grow = FIRST_CHUNK_BYTES << (k < 2 ? k : 2); /* 1, 2, then 4 MiB */
        size_t half = (left / 2) & ~(size_t)(LINE - 1), bytes = grow < half ? grow : half;
        if (bytes < FIRST_CHUNK_BYTES)
            bytes = FIRST_CHUNK_BYTES;
        if (bytes >= left || left - bytes < FIRST_CHUNK_BYTES / 2)
            bytes = left;
        c[k].start = pos;
        c[k].end = pos += bytes;
    }
    if (k > most) { /* then to - from > most MiB, so each of `most` equal chunks is over 1 MiB */
        size_t bytes = ((to - from) / (size_t)most) & ~(size_t)(LINE - 1);
        for (k = 0; k < most; k++) {
            c[k].start = from + (size_t)k * bytes;
            c[k].end = k == most - 1 ? to : c[k].start + bytes;
        }
    }
    p->chunk_count = (int)k;
    const u64 *off = table_off(p->host), *end = table_end(p->host, p->m);
    long units = 0;
    for (long j = 0; j < k; j++) {
        c[j].unit0 = units;
        c[j].units = (long)((c[j].end - c[j].start + UNIT_BYTES - 1) / UNIT_BYTES);
        units += c[j].units;
        c[j].lo = first_above(end, 0, p->m, c[j].start);
        c[j].hi = first_above(off, c[j].lo, p->m, c[j].end - 1);
        c[j].done.n = 0;
    }
    p->units = units;
    p->cursor = 0;
    p->ready.n = 0;
}

/* ===== The kernel: scatter (send) and gather (fetch) ===== */

/* move_tiles - moves the pieces' bytes in staging [begin, finish) of the chunk whose table entries are [lo, hi):
 * TO_DEV from staging into each piece's dev (scatter), else from dev into staging (gather). Block b owns a tile of
 * TILE_BYTES from begin + b * TILE_BYTES, each thread 16 bytes of it: consecutive threads, consecutive addresses,
 * however the bytes are split among pieces, so a large piece among small ones spreads over many blocks. A 16-byte
 * word wholly in one piece is one aligned vector load and store (staging and dev agree modulo 64); a word at a
 * piece's edge is moved byte by byte, so that no byte outside the pieces is written. begin is a multiple of 16. */
template <bool TO_DEV>
__global__ void __launch_bounds__(TILE_THREADS)
    move_tiles(unsigned char *stage, int m, size_t begin, size_t finish, int lo, int hi)
{
    const u64 *off = table_off(stage), *end = table_end(stage, m), *dev = table_dev(stage, m);
    __shared__ int tile_lo, tile_hi;
    size_t tile0 = begin + (size_t)blockIdx.x * TILE_BYTES;
    size_t tile1 = tile0 + TILE_BYTES < finish ? tile0 + TILE_BYTES : finish;
    if (threadIdx.x == 0)
        tile_lo = first_above(end, lo, hi, tile0);      /* the first entry that ends inside or after the tile */
    if (threadIdx.x == 32)
        tile_hi = first_above(off, lo, hi, tile1 - 1);  /* the first entry that starts after it */
    __syncthreads();
    size_t q = tile0 + (size_t)threadIdx.x * VEC;
    if (q >= finish)
        return;
    size_t qe = q + VEC < finish ? q + VEC : finish;
    for (int i = first_above(end, tile_lo, tile_hi, q); i < tile_hi && off[i] < qe; i++) {
        size_t a = off[i] > q ? off[i] : q, b = end[i] < qe ? end[i] : qe;
        u64 shift = dev[i] - off[i]; /* staging byte x's place in dev: shift + x (modulo 2^64) */
        if (a == q && b == q + VEC) {
            uint4 *word = (uint4 *)(shift + q);
            if (TO_DEV)
                *word = *(const uint4 *)(stage + q);
            else
                *(uint4 *)(stage + q) = *word;
        } else {
            for (size_t x = a; x < b; x++)
                if (TO_DEV)
                    *(unsigned char *)(shift + x) = stage[x];
                else
                    stage[x] = *(const unsigned char *)(shift + x);
        }
    }
}

/* launch_tiles - move_tiles over chunk k's pieces on the side stream (none when it holds only table or padding) */
template <bool TO_DEV>
static void launch_tiles(lab_packer *p, int k)
{
    const struct chunk *c = &p->chunks[k];
    size_t begin = c->start > p->data_start ? c->start : p->data_start;
    if (c->end <= begin || c->lo >= c->hi)
        return;
    size_t tiles = (c->end - begin + TILE_BYTES - 1) / TILE_BYTES;
    move_tiles<TO_DEV><<<(unsigned)tiles, TILE_THREADS, 0, p->side>>>(p->dev, p->m, begin, c->end, c->lo, c->hi);
    XL_CHECK_LAUNCH();
}

/* ===== Host work: units of packing and unpacking ===== */

/* move_unit - packs (to_staging) or unpacks unit u of chunk k: the pieces' bytes in its staging range */
static void move_unit(lab_packer *p, int k, long u, bool to_staging)
{
    const struct chunk *c = &p->chunks[k];
    size_t a = c->start + (size_t)(u - c->unit0) * UNIT_BYTES;
    size_t b = a + UNIT_BYTES < c->end ? a + UNIT_BYTES : c->end;
    const u64 *off = table_off(p->host), *end = table_end(p->host, p->m);
    for (int i = first_above(end, c->lo, c->hi, a); i < c->hi && off[i] < b; i++) {
        size_t s = off[i] > a ? off[i] : a, e = end[i] < b ? end[i] : b;
        if (to_staging)
            xl_stream_copy(p->host + s, p->host_of[i] + (s - off[i]), e - s);
        else
            xl_stream_copy(p->host_of[i] + (s - off[i]), p->host + s, e - s);
    }
}

/* take_unit - the next unit of the call, or -1 past the last (threads other than 0) */
static long take_unit(lab_packer *p)
{
    long u = __atomic_fetch_add(&p->cursor, 1, __ATOMIC_RELAXED);
    return u < p->units ? u : -1;
}

/* take_unit_of - the next unit if it belongs to chunk k or before, else -1 (thread 0: it helps with the chunk it
 * waits for, never runs ahead of it) */
static long take_unit_of(lab_packer *p, int k)
{
    long limit = p->chunks[k].unit0 + p->chunks[k].units;
    long u = __atomic_load_n(&p->cursor, __ATOMIC_RELAXED);
    while (u < limit)
        if (__atomic_compare_exchange_n(&p->cursor, &u, u + 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return u;
    return -1;
}

/* chunk_of - the chunk of unit u, searching on from chunk k (units are taken in order) */
static int chunk_of(const lab_packer *p, int k, long u)
{
    while (u >= p->chunks[k].unit0 + p->chunks[k].units)
        k++;
    return k;
}

/* ===== Send ===== */

/* issue_send_chunk - chunk k (packed) to the device on the caller's stream, then scattered on the side stream */
static void issue_send_chunk(lab_packer *p, int k)
{
    const struct chunk *c = &p->chunks[k];
    XL_CHECK(cudaMemcpyAsync(p->dev + c->start, p->host + c->start, c->end - c->start, cudaMemcpyHostToDevice,
                             p->stream));
    XL_CHECK(cudaEventRecord(p->hop, p->stream));
    XL_CHECK(cudaStreamWaitEvent(p->side, p->hop, 0)); /* takes the record as it is now: hop can be reused */
    launch_tiles<true>(p, k);
}

/* send_job - xl_pool_fn: threads 0 .. SEND_THREADS - 1 pack units in order and post them to their chunk; thread 0
 * helps with the chunk it waits for and sends each chunk once every unit of it is packed */
static void send_job(int t, int threads, void *ctx)
{
    lab_packer *p = (lab_packer *)ctx;
    (void)threads;
    if (t >= SEND_THREADS)
        return;
    if (t != 0) {
        int k = 0;
        for (long u; (u = take_unit(p)) >= 0;) {
            k = chunk_of(p, k, u);
            move_unit(p, k, u, true);
            xl_pool_post(&p->chunks[k].done); /* xl_stream_copy fenced its streaming stores */
        }
        return;
    }
    for (int k = 0; k < p->chunk_count; k++) {
        for (long u; (u = take_unit_of(p, k)) >= 0;) {
            move_unit(p, k, u, true);
            xl_pool_post(&p->chunks[k].done);
        }
        xl_pool_wait(&p->chunks[k].done, p->chunks[k].units);
        issue_send_chunk(p, k);
    }
}

extern "C" int lab_send_packed(lab_packer *p, const lab_piece *pieces, int n, cudaStream_t stream)
{
    size_t total;
    int m;
    if (check_packed_call("lab_send_packed", p, pieces, n, &total, &m) != 0)
        return -1;
    if (m == 0)
        return 0;
    XL_RANGE_PUSH("lab_send_packed");
    XL_CHECK(cudaEventSynchronize(p->staging_free)); /* the last call's copies have read pinned staging */
    lay_out(p, pieces, n, m);
    plan_chunks(p, 0, p->packed_end, 1 + (long)((total + LAB_TRIP_BYTES - 1) / LAB_TRIP_BYTES));
    p->stream = stream;
    XL_CHECK(cudaStreamWaitEvent(stream, p->side_done, 0)); /* the last call's kernels are done with dev staging */
    if (p->packed_end < SOLO_BYTES)
        send_job(0, 1, p);
    else
        run_job(p->pool, send_job, p);
    XL_CHECK(cudaEventRecord(p->staging_free, stream));
    XL_CHECK(cudaEventRecord(p->side_done, p->side));
    XL_CHECK(cudaStreamWaitEvent(stream, p->side_done, 0)); /* work queued on stream from now on sees the pieces */
    XL_RANGE_POP();
    return 0;
}

/* ===== Fetch ===== */

/* issue_fetch_chunk - chunk k gathered on the side stream, then copied back on the caller's stream into pinned
 * staging; back[k % RING] says when it is there */
static void issue_fetch_chunk(lab_packer *p, int k)
{
    const struct chunk *c = &p->chunks[k];
    launch_tiles<false>(p, k);
    XL_CHECK(cudaEventRecord(p->gathered, p->side));
    XL_CHECK(cudaStreamWaitEvent(p->stream, p->gathered, 0));
    XL_CHECK(cudaMemcpyAsync(p->host + c->start, p->dev + c->start, c->end - c->start, cudaMemcpyDeviceToHost,
                             p->stream));
    XL_CHECK(cudaEventRecord(p->back[k % RING], p->stream));
}

/* fetch_job - xl_pool_fn: thread 0 waits for each chunk's copy back, posts it ready and keeps RING chunks in
 * flight; every thread unpacks units in order once their chunk is ready */
static void fetch_job(int t, int threads, void *ctx)
{
    lab_packer *p = (lab_packer *)ctx;
    (void)threads;
    if (t != 0) {
        int k = 0;
        for (long u; (u = take_unit(p)) >= 0;) {
            k = chunk_of(p, k, u);
            xl_pool_wait(&p->ready, k + 1);
            move_unit(p, k, u, false);
        }
        return;
    }
    for (int k = 0; k < p->chunk_count; k++) {
        XL_CHECK(cudaEventSynchronize(p->back[k % RING]));
        xl_pool_post(&p->ready);
        if (k + RING < p->chunk_count)
            issue_fetch_chunk(p, k + RING); /* back[k % RING] was just waited for: free to record again */
        for (long u; (u = take_unit_of(p, k)) >= 0;)
            move_unit(p, k, u, false);
    }
}

extern "C" int lab_fetch_packed(lab_packer *p, const lab_piece *pieces, int n, cudaStream_t stream)
{
    size_t total;
    int m;
    if (check_packed_call("lab_fetch_packed", p, pieces, n, &total, &m) != 0)
        return -1;
    if (m == 0)
        return 0;
    XL_RANGE_PUSH("lab_fetch_packed");
    XL_CHECK(cudaEventSynchronize(p->staging_free)); /* the last send's copies have read pinned staging */
    lay_out(p, pieces, n, m);
    plan_chunks(p, p->data_start, p->packed_end, (long)((total + LAB_TRIP_BYTES - 1) / LAB_TRIP_BYTES));
    p->stream = stream;
    XL_CHECK(cudaStreamWaitEvent(stream, p->side_done, 0)); /* the last call's kernels are done with dev staging */
    XL_CHECK(cudaMemcpyAsync(p->dev, p->host, p->data_start, cudaMemcpyHostToDevice, stream)); /* the table */
    XL_CHECK(cudaEventRecord(p->hop, stream));
    XL_CHECK(cudaStreamWaitEvent(p->side, p->hop, 0)); /* gathers read dev after the work queued on stream */
    for (int k = 0; k < p->chunk_count && k < RING; k++)
        issue_fetch_chunk(p, k);
    if (p->packed_end - p->data_start < SOLO_BYTES)
        fetch_job(0, 1, p);
    else
        run_job(p->pool, fetch_job, p);
    XL_RANGE_POP();
    return 0; /* every copy back is done, so the side stream's gathers are too */
}

/* ===== Batch ===== */

/* batch_copy - the non-empty pieces in one cudaMemcpyBatchAsync on stream, to the device or from it */
static int batch_copy(const char *fn, const lab_piece *pieces, int n, cudaStream_t stream, bool to_dev)
{
#if !LAB_HAVE_BATCH
    (void)pieces, (void)n, (void)stream, (void)to_dev;
    fprintf(stderr, "%s: cudaMemcpyBatchAsync needs CUDA 12.8 or later\n", fn);
    return -1;
#else
    size_t total;
    int m;
    if (check_pieces(fn, pieces, n, INT32_MAX, SIZE_MAX, &total, &m) != 0)
        return -1;
    if (stream == 0 || stream == cudaStreamLegacy) {
        fprintf(stderr, "%s: cudaMemcpyBatchAsync refuses the legacy default stream: pass a stream of yours\n", fn);
        return -1;
    }
    if (m == 0)
        return 0;
    /* the call's own arrays of pointers and sizes (host memory only: nothing pinned or on the GPU is made) */
    void **dsts = (void **)malloc((size_t)m * sizeof *dsts);
    const void **srcs = (const void **)malloc((size_t)m * sizeof *srcs);
    size_t *sizes = (size_t *)malloc((size_t)m * sizeof *sizes);
    if (!dsts || !srcs || !sizes) {
        free(dsts), free(srcs), free(sizes);
        fprintf(stderr, "%s: out of host memory for %d pieces\n", fn, m);
        return -1;
    }
    int j = 0;
    for (const lab_piece *pc = pieces; pc < pieces + n; pc++) {
        if (!pc->bytes)
            continue; /* the call refuses copies of 0 bytes */
        if (to_dev) {
            srcs[j] = pc->host;
            dsts[j] = pc->dev;
        } else {
            srcs[j] = pc->dev;
            dsts[j] = pc->host;
        }
        sizes[j++] = pc->bytes;
    }
    int device = -1;
    XL_CHECK(cudaGetDevice(&device));
    struct cudaMemcpyAttributes attr = {}; /* every field the call does not name: 0 */
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream; /* read the sources after the work queued on stream */
    attr.srcLocHint.type = to_dev ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    attr.srcLocHint.id = to_dev ? 0 : device;
    attr.dstLocHint.type = to_dev ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    attr.dstLocHint.id = to_dev ? device : 0;
    attr.flags = cudaMemcpyFlagDefault; /* the driver picks how: copy engines, or SMs for small pieces */
    size_t attr_first = 0;              /* the one attribute applies from copy 0 on */
#if CUDART_VERSION >= 13000
    cudaError_t err = cudaMemcpyBatchAsync(dsts, srcs, sizes, (size_t)m, &attr, &attr_first, 1, stream);
#else
    size_t fail_idx = 0;
    cudaError_t err = cudaMemcpyBatchAsync(dsts, srcs, sizes, (size_t)m, &attr, &attr_first, 1, &fail_idx, stream);
#endif
    free(dsts), free(srcs), free(sizes);
    XL_CHECK(err);
    return 0;
#endif
}

extern "C" int lab_send_batch(const lab_piece *pieces, int n, cudaStream_t stream)
{
    return batch_copy("lab_send_batch", pieces, n, stream, true);
}

extern "C" int lab_fetch_batch(const lab_piece *pieces, int n, cudaStream_t stream)
{
    return batch_copy("lab_fetch_batch", pieces, n, stream, false);
}

/* ===== When packing pays ===== */

extern "C" double lab_pack_pays_below(double latency_us, double link_gbps, double pack_gbps)
{
    if (!(latency_us > 0) || !(link_gbps > 0) || !(pack_gbps > 0)) /* NaN, 0, -0.0 and below all fail > 0 */
        return -1;
    if (pack_gbps >= link_gbps)
        return INFINITY; /* the packed path is as fast as the link: it always pays */
    /* L + s / link = s / pack  =>  s = L / (1/pack - 1/link) = L * pack * link / (link - pack), in us * GB/s;
     * 1 GB/s is 1000 bytes per us. Written so that exact inputs give exact answers, and an infinite link too. */
    if (isinf(link_gbps))
        return 1000.0 * latency_us * pack_gbps;
    return 1000.0 * latency_us * pack_gbps * (link_gbps / (link_gbps - pack_gbps));
}
