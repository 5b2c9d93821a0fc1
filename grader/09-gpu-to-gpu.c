/* 09-gpu-to-gpu.c - the grader of lab 09 (GPU to GPU: peer access, and the road through the host). Course staff only.
 *
 * Every function of lab.h also works with ranks on one device, so most of the lab is graded on one GPU: a copy from
 * device 0 to itself is a copy, and the road through the host from device 0 to device 0 is a copy out and a copy in
 * on two streams with exactly the hazards it has between two GPUs. Tests declared XL_GPU2 / XL_TIMED2 need a second
 * GPU (peer access itself, streams and events of two devices, the peer rates) and are skipped with one line on a
 * host with one.
 *
 * Every block is drawn fresh: random bytes at odd offsets, awkward sizes, destinations poisoned with guard bytes
 * after them. Before each call the kit queues work on the call's streams (a delay, then the copy of the source's
 * real data, or a late write of stale data into a destination), so that a copy or a kernel queued on any other
 * stream, the legacy one included, reads poison or is overwritten; a third of the calls run on the legacy stream.
 * The ring and the staged copy are graded with one stream held up at a time, so that each missing wait (the
 * sender's, the receiver's, the copy-in's, the copy-out's, the buffer's refill) leaves wrong bytes for certain.
 * Every copy (common/copylog.h, common/peerlog.h), launch (common/memlog.h) and peer-access call (peerlog) a call
 * makes is recorded and checked: count, size, pointers, devices and stream. A call that creates nothing has every
 * create fail under it (common/faults.h); a create is made to fail at each of its creates and enables in turn.
 * Speed is a ratio against the kit's ways (labs/09-gpu-to-gpu/baseline.cu) measured in the same run, every timed
 * result hashed on the GPU.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/copylog.h"
#include "common/delay.h"
#include "common/devmem.h"
#include "common/faults.h"
#include "common/memlog.h"
#include "common/peerlog.h"
#include "common/pincount.h"
#include "common/stats.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "labs/09-gpu-to-gpu/baseline.h"
#include "labs/09-gpu-to-gpu/lab.h"

XL_LAB("09", "gpu-to-gpu");
XL_LAB_SWITCHES_DEVICES; /* its functions set the device of each stream and event, and put the caller's back */

#define MIB ((size_t)1 << 20)
#define R LAB_MAX_RANKS
#define GUARD 256                 /* poisoned bytes after every destination */
#define OFF_MAX 63                /* blocks lie at a random byte (or word) offset into their buffer, up to this */
#define BUSY_NS 2000000ull        /* work queued on a call's stream before the kit's copies that the call must follow */
#define HOLD_NS 10000000ull       /* ring.exact, host.hazards: one stream held up this long before the call */
#define MAX_COPIES 2048           /* copies kept per watched call (more are counted) */
#define MAX_PEER 256              /* peer records kept per watched call */
#define MAX_MEM 256               /* launches kept per watched call */
#define MAX_SYNC (4 * MAX_COPIES) /* waits and event records kept per watched call: a few per copy */
#define RING_MAX (2 * MIB + 77)   /* ring.exact, peer.exact: the largest block */
#define STAGE_MAX (64 * MIB + 1)  /* host.exact: the largest copy */
#define READ_MAX_WORDS (4 * MIB + 17)
#define READ_BIG_WORDS (16 * MIB + 8192) /* read.exact's two largest jobs: past 65535 x 256 words */
#define READ_HUGE_WORDS (32 * MIB + 8192) /* read.exact's one-pass jobs: past 128 MiB */
#define NARROW_BYTES MIB          /* wait.narrow: each call's block */
#define OWN_HOLD_NS 50000000ull   /* wait.narrow #2: the call's own streams held this long */
#define OWN_MS 25                 /* and the call must return in less: half the hold, hundreds of times a queueing */
#define GATE_NS 8000000000ull     /* ring cases: the longest a gate holds a stream up (the grader opens it sooner) */
#define GATE_WAIT_MS 2000.0       /* meanwhile, how long the work that does not depend on it gets to finish */

/* ===== The bars (every one to be measured by make stability on the H100, the H200 and nvidia-h200-x2) =====
 * STAGE_EFF_NEED: lab 04's EFF_NEED, the same measure: (T_serial - T_yours) / (T_serial - T_ideal), the kit's serial
 * staging (one buffer: out, in, out, in) and its ideal (the same chunked copies with no dependency) interleaved with
 * yours. Estimated 0.9 for the reference on one H100 (32 chunks: fill and drain under 1/32); one buffer gives about 0.
 * STAGE_X_NEED (#2): the issue's 1.6x over the kit's serial staging; estimated 1.9 between two GPUs (a link each,
 * about 50 against 27.7 GB/s). On one GPU both copies share its link: the design expected the duplex limit to cap it
 * near 1.4x, but the H100 measured 1.80x (the explorer, 128 MiB in 4 MiB chunks, 46.2 against 25.5 GB/s), so the
 * bar holds there too.
 * PEER_KIT_NEED: the issue's 90% of the kit's cudaMemcpyPeerAsync rate under the kit's own enabling (the same call:
 * about 100%); never enabled, the driver stages it at 38.6 of 390 GB/s (0.1). PEER_STAGED_NEED (#2): the issue's 5x
 * the kit's serial staging (390 / 27.7, about 14x; never enabled 1.4x). BOTH_NEED: the issue's 1.6x, the ring of two
 * (both directions at once) against the kit's one direction: 753 / 392, about 1.92x; one stream for both, 1.0x. */
#define STAGE_EFF_NEED 0.7
#define STAGE_X_NEED 1.6
#define READ_KIT_NEED 70          /* speed.host #3: lab_read_direct on one GPU, % of the kit's rate */
#define PEER_KIT_NEED 90
#define PEER_STAGED_NEED 5
#define BOTH_NEED 1.6
#define BOTH_MAX_X 2.2            /* two directions can carry at most twice one, and a little for noise */
#define SPEED_HOST_BYTES (128 * MIB)
#define SPEED_HOST_CHUNK (4 * MIB)
#define SPEED_PEER_BYTES (256 * MIB)
#define SPEED_ROUNDS 5            /* rounds per attempt, medians (interleaved where the states allow) */

/* ===== Small helpers ===== */

/* rndz - kit_rand for sizes */
static size_t rndz(size_t lo, size_t hi)
{
    return (size_t)kit_rand(lo, hi);
}

/* gpus - how many GPUs this process sees */
static int gpus(void)
{
    int n = 0;
    XL_CHECK(cudaGetDeviceCount(&n));
    return n;
}

/* dev_alloc - kit_dev_alloc on device d (poisoned), d left current */
static void *dev_alloc(int d, size_t bytes)
{
    kit_use_device(d);
    return kit_dev_alloc(bytes);
}

/* dev_stream - a non-blocking stream of device d, d left current */
static cudaStream_t dev_stream(int d)
{
    kit_use_device(d);
    return kit_stream();
}

/* fill_on, upload_on - xl_dev_fill and xl_dev_upload of memory of device d, with d current */
static void fill_on(int d, void *p, int byte, size_t bytes)
{
    kit_use_device(d);
    xl_dev_fill(p, byte, bytes);
}
static void upload_on(int d, void *p, const void *host, size_t bytes)
{
    kit_use_device(d);
    xl_dev_upload(p, host, bytes);
}

/* sync_all - waits for every device; an error there fails the test, named by what */
static void sync_all(const char *what)
{
    int was = 0, n = gpus();
    XL_CHECK(cudaGetDevice(&was));
    for (int d = 0; d < n; d++) {
        XL_CHECK(cudaSetDevice(d));
        cudaError_t e = cudaDeviceSynchronize();
        cr_assert(e == cudaSuccess, "%s: GPU %d reported %s (%s) when the work was done: did a copy or a kernel touch "
                  "memory outside its blocks, or read another GPU's memory without peer access?", what, d,
                  cudaGetErrorName(e), cudaGetErrorString(e));
    }
    XL_CHECK(cudaSetDevice(was));
}

/* host_bytes - malloc'd bytes, or the test fails */
static unsigned char *host_bytes(size_t bytes)
{
    unsigned char *p = malloc(bytes ? bytes : 1);
    cr_assert(p != NULL, "the grader could not allocate %zu bytes of host memory", bytes);
    return p;
}

/* stream_text - a stream as messages name it */
static const char *stream_text(cudaStream_t s, char *buf, size_t len)
{
    if (s == 0)
        return "the legacy stream 0";
    snprintf(buf, len, "stream %p", (void *)s);
    return buf;
}

/* expect_no_error_left - the call left no CUDA error for the next cudaGetLastError to find */
static void expect_no_error_left(const char *what, const char *fn)
{
    cudaError_t left = cudaGetLastError();
    cr_assert(left == cudaSuccess,
              "%s: %s left %s (%s) for the next cudaGetLastError to find: check every call, and clear the error of "
              "one you handle (cudaGetLastError)", what, fn, cudaGetErrorName(left), cudaGetErrorString(left));
}

/* expect_device_kept - the current device is still was after fn */
static void expect_device_kept(int was, const char *what, const char *fn)
{
    int now = -1;
    XL_CHECK(cudaGetDevice(&now));
    cr_assert(now == was, "%s: device %d was current before %s and device %d after it: lab.h: each function leaves the "
              "current device as it found it (cudaGetDevice first, cudaSetDevice back before every return)", what,
              was, fn, now);
}

/* gate_word - the word that opens the grader's gates (xl_delay_released on a stream: held up until it is set),
 * pinned, mapped and portable (a gate on any GPU), made once a process */
static volatile unsigned *gate_word(void)
{
    static unsigned *word;
    if (!word)
        XL_CHECK(cudaHostAlloc((void **)&word, sizeof *word, cudaHostAllocMapped | cudaHostAllocPortable));
    return word;
}

/* ===== A call under watch ===== */

/* What one call did. */
typedef struct {
    int rc;
    int ncopies;                  /* cudaMemcpy and cudaMemcpyAsync calls */
    xl_copy_rec copies[MAX_COPIES];
    xl_batch_log batches;
    int npeer;                    /* peer copies and peer-access calls */
    xl_peer_rec peer[MAX_PEER];
    int nmem;                     /* launches (and any prefetch or advice) */
    xl_mem_rec mem[MAX_MEM];
    int ndev;                     /* every copy, merged in call order */
    kit_dev_copy dev[MAX_COPIES];
    int lines;                    /* lines written to stderr (W_CAPTURE) */
    char text[1024];
    int nsync;                    /* waits and event orderings */
    xl_sync_rec sync[MAX_SYNC];
} seen;

typedef int (*call_fn)(void *ctx);

enum { W_GUARD = 1, W_CAPTURE = 2, W_REFUSAL = 4 }; /* watch's ways: every create fails in it; stderr taken; the
                                                     * call is one lab.h refuses (its messages say so) */

typedef struct {
    call_fn fn;
    void *ctx;
    int rc;
} guarded;

static void run_guarded(void *ctx)
{
    guarded *g = ctx;
    g->rc = -1;
    g->rc = g->fn(g->ctx);
}

/* watch - one call of fn(ctx), its copies, peer calls and launches recorded into *w; with W_GUARD every CUDA create
 * in it fails as out of memory (lab.h: a copy or a read creates nothing), with W_CAPTURE its stderr is taken into
 * w->text; what names the call */
static void watch(call_fn fn, void *ctx, seen *w, int how, const char *what, const char *fname)
{
    static char failure[2048];
    int saved = -1, fired = 0, stopped = 0;
    xl_copylog_start(w->copies, MAX_COPIES);
    xl_peerlog_start(w->peer, MAX_PEER);
    xl_memlog_start(w->mem, MAX_MEM);
    xl_synclog_start(w->sync, MAX_SYNC);
    if (how & W_CAPTURE)
        saved = kit_capture_begin();
    if (how & W_GUARD) {
        guarded g = {fn, ctx, -1};
        kit_guarded_call(run_guarded, &g, &fired, &stopped, failure, sizeof failure);
        w->rc = g.rc;
    } else
        w->rc = fn(ctx);
    w->lines = (how & W_CAPTURE) ? kit_capture_end(saved, w->text, sizeof w->text) : 0;
    w->nsync = xl_synclog_stop();
    w->nmem = xl_memlog_stop();
    w->npeer = xl_peerlog_stop();
    w->ncopies = xl_copylog_stop();
    w->batches = xl_copylog_batches();
    w->ndev = kit_dev_copies(w->peer, w->npeer < MAX_PEER ? w->npeer : MAX_PEER, w->copies,
                             w->ncopies < MAX_COPIES ? w->ncopies : MAX_COPIES, w->dev, MAX_COPIES);
    if (fired && (how & W_REFUSAL))
        cr_fatal("%s: %s tried to create something before it refused the call (a device or pinned buffer, a stream or "
                 "an event: the kit made it fail as out of memory%s). lab.h: a refusal comes before any work, nothing "
                 "created: check every argument (every rank's, every element's) before the first create", what, fname,
                 stopped ? ", and your code stopped on that error" : "");
    if (fired)
        cr_fatal("%s: %s tried to create something while it ran (a device or pinned buffer, a stream or an event: the "
                 "kit made it fail as out of memory%s). lab.h: it creates nothing: the group and the stage are made "
                 "once, by their create", what, fname, stopped ? ", and your code stopped on that error" : "");
    if (stopped)
        cr_fatal("%s: %s", what, failure);
    if (how & W_GUARD) {
        char call[1024];
        snprintf(call, sizeof call, "%s: %s", what, fname);
        kit_expect_no_host_wait(w->sync, w->nsync < MAX_SYNC ? w->nsync : MAX_SYNC, call,
                                "lab.h: a function that takes streams queues its work and returns without waiting; "
                                "order it with events on the streams (cudaEventRecord, cudaStreamWaitEvent), never a "
                                "wait on the host");
    }
    cr_assert(w->ncopies <= MAX_COPIES && w->npeer <= MAX_PEER && w->nmem <= MAX_MEM && w->nsync <= MAX_SYNC,
              "%s: %s made %d copies, %d peer calls, %d launches and %d waits or event records: far more than it needs",
              what, fname, w->ncopies, w->npeer, w->nmem, w->nsync);
}

/* NO_WAIT_RULE - lab.h's rule for the calls that take no stream: set up and release, never wait on the host */
#define NO_WAIT_RULE "lab.h: lab_group_create, lab_group_destroy and lab_stage_create wait for no queued work (no " \
                     "cudaStreamSynchronize or cudaEventSynchronize, of the legacy stream either): other work shares " \
                     "the devices, and a group or stage may be made or dropped while it runs"

/* destroy_group - lab_group_destroy(g), its waits recorded: it must wait on the host for nothing (what names it) */
static void destroy_group(lab_group *g, const char *what)
{
    static xl_sync_rec recs[64];
    char call[600];
    xl_synclog_start(recs, 64);
    lab_group_destroy(g);
    int n = xl_synclog_stop();
    snprintf(call, sizeof call, "lab_group_destroy (%s)", what);
    kit_expect_no_host_wait(recs, n < 64 ? n : 64, call, NO_WAIT_RULE);
}

/* count_peer - how many of w's peer records are of kind k (successful ones only, when ok) */
static int count_peer(const seen *w, xl_peer_kind k, int ok)
{
    int n = 0;
    for (int i = 0; i < w->npeer && i < MAX_PEER; i++)
        n += w->peer[i].kind == k && (!ok || w->peer[i].result == cudaSuccess);
    return n;
}

/* count_launches - how many <<< >>> launches w recorded */
static int count_launches(const seen *w)
{
    int n = 0;
    for (int i = 0; i < w->nmem && i < MAX_MEM; i++)
        n += w->mem[i].kind == XL_MEM_LAUNCH;
    return n;
}

/* dev_copy_text - one recorded copy in words */
static const char *dev_copy_text(const kit_dev_copy *c, char *buf, size_t len)
{
    char st[48];
    snprintf(buf, len, "%s of %zu bytes %s, from GPU %d to GPU %d, on %s", c->call, c->bytes,
             c->dir == cudaMemcpyDeviceToDevice ? "device to device"
             : c->dir == cudaMemcpyDeviceToHost ? "device to host"
             : c->dir == cudaMemcpyHostToDevice ? "host to device" : "host to host",
             c->src_dev, c->dst_dev, c->async ? stream_text(c->stream, st, sizeof st) : "the legacy stream (blocking)");
    return buf;
}

/* expect_nothing_enabled - w made no enable, disable or peer copy that worked (asking is allowed) */
static void expect_no_peer_setup(const seen *w, const char *what, const char *fname)
{
    cr_assert(count_peer(w, XL_PEER_ENABLE, 0) == 0 && count_peer(w, XL_PEER_DISABLE, 0) == 0,
              "%s: %s called cudaDeviceEnablePeerAccess %d times and cudaDeviceDisablePeerAccess %d times: lab.h: only "
              "lab_group_create enables and only lab_group_destroy disables", what, fname,
              count_peer(w, XL_PEER_ENABLE, 0), count_peer(w, XL_PEER_DISABLE, 0));
}

/* ===== Refusals ===== */

/* expect_refused - fn(ctx) is a call with one bad argument (why), every other valid: -1 (a create: NULL, fn gives -1)
 * with exactly one line on stderr naming fname, before any work: nothing created (every create fails under it), no
 * copy, launch, event record, stream wait or enable, no CUDA error left, nothing held */
static void expect_refused(call_fn fn, void *ctx, const char *fname, const char *why)
{
    static seen w;
    char what[400];
    int create = strstr(fname, "_create") != NULL;
    snprintf(what, sizeof what, "%s with %s", fname, why);
    kit_held before = kit_held_now();
    watch(fn, ctx, &w, W_GUARD | W_CAPTURE | W_REFUSAL, what, fname);
    cudaError_t left = cudaGetLastError();
    cr_assert(w.rc == -1, "%s (every other argument valid) %s: lab.h: %s, with one line on stderr, before any work",
              what, create ? "returned an object" : "did not return -1", create ? "NULL" : "-1");
    cr_assert(w.ncopies == 0 && w.batches.calls == 0 && w.ndev == 0 && count_launches(&w) == 0,
              "%s was refused, but only after %d copies and %d launches: check every argument before any work "
              "(lab.h)", what, w.ncopies + w.batches.calls + count_peer(&w, XL_PEER_COPY, 0), count_launches(&w));
    expect_no_peer_setup(&w, what, fname);
    int queued = 0;
    for (int k = 0; k < w.nsync && k < MAX_SYNC; k++)
        queued += w.sync[k].kind == XL_SYNC_RECORD || w.sync[k].kind == XL_SYNC_WAIT_EVENT;
    cr_assert(queued == 0, "%s was refused, but only after %d event records and stream waits: check every argument "
              "before any work (lab.h)", what, queued);
    cr_assert(left == cudaSuccess, "%s was refused but left %s for the next cudaGetLastError to find: where you handle "
              "a failed call, clear its error", what, cudaGetErrorName(left));
    cr_assert(w.lines == 1 && strstr(w.text, fname) != NULL,
              "%s was refused, but wrote %d lines to stderr%s%s: lab.h: exactly one line, naming the function (%s) "
              "and the rule", what, w.lines, w.lines ? ": " : "", w.text, fname);
    kit_expect_released(before, what);
}

/* expect_done_nothing - fn(ctx) is the cheapest valid call (bytes 0, words 0, reps 0): 0 and no work, no error */
static void expect_done_nothing(call_fn fn, void *ctx, const char *fname, const char *why)
{
    static seen w;
    char what[400];
    snprintf(what, sizeof what, "%s with %s", fname, why);
    kit_held before = kit_held_now();
    watch(fn, ctx, &w, W_GUARD, what, fname);
    cr_assert(w.rc == 0, "%s returned %d: lab.h: 0, and nothing done (see its message above; not written yet?)", what,
              w.rc);
    cr_assert(w.ncopies == 0 && w.batches.calls == 0 && w.ndev == 0 && count_launches(&w) == 0,
              "%s made %d copies and %d launches: lab.h: 0, and nothing done", what, w.ncopies + w.ndev,
              count_launches(&w));
    expect_no_peer_setup(&w, what, fname);
    expect_no_error_left(what, fname);
    kit_held after = kit_held_now();
    cr_assert(after.res.events == before.res.events && after.pinned.allocations == before.pinned.allocations,
              "%s holds something new afterwards", what);
}

/* The arguments of every call, for the refusal table. */
typedef struct {
    const int *devs;
    int n;
    int *peer;
    lab_group *g;
    void *dst, *src;
    int dst_dev, src_dev;
    size_t bytes;
    cudaStream_t stream, stream2;
    void *const *send;
    void *const *recv;
    const cudaStream_t *streams;
    const lab_read_job *job;
    uint32_t *scratch;
    int reps;
    lab_stage *stage;
    size_t chunk;
} args;

static int call_group_create(void *ctx)
{
    args *a = ctx;
    lab_group *g = lab_group_create(a->devs, a->n, a->peer);
    if (!g)
        return -1;
    lab_group_destroy(g);
    return 0;
}
static int call_peer_copy(void *ctx)
{
    args *a = ctx;
    return lab_peer_copy(a->dst, a->dst_dev, a->src, a->src_dev, a->bytes, a->stream);
}
static int call_ring(void *ctx)
{
    args *a = ctx;
    return lab_ring_exchange(a->g, a->send, a->recv, a->bytes, a->streams);
}
static int call_read_direct(void *ctx)
{
    args *a = ctx;
    return lab_read_direct(a->job, a->reps, a->stream);
}
static int call_read_copied(void *ctx)
{
    args *a = ctx;
    return lab_read_copied(a->job, a->scratch, a->reps, a->stream);
}
static int call_stage_create(void *ctx)
{
    args *a = ctx;
    lab_stage *s = lab_stage_create(a->src_dev, a->dst_dev, a->chunk);
    if (!s)
        return -1;
    lab_stage_destroy(s);
    return 0;
}
static int call_stage_copy(void *ctx)
{
    args *a = ctx;
    return lab_stage_copy(a->stage, a->dst, a->src, a->bytes, a->stream, a->stream2);
}

#define BAD_N_MAX 1000 /* args.refused: the largest n past LAB_MAX_RANKS tried */

/* bad_device - a device out of range, of kind k: -1, INT_MIN, the count, INT_MAX, or a random one past the count */
static int bad_device(int k, int count)
{
    switch (k % 5) {
    case 0: return -1;
    case 1: return INT_MIN;
    case 2: return count;
    case 3: return INT_MAX;
    default: return (int)kit_rand_int(count + 1, INT_MAX - 1);
    }
}

XL_TEST(args, refused, 5, XL_GPU,
        "every refusal of lab.h alone, every other argument valid (NULL pointers, n 0 and 9, devices -1 and the count, "
        "a bad device or block past the first rank, chunk 0 and past LAB_CHUNK_MAX, reps -1, words x 4 past "
        "SIZE_MAX), also with bytes, words or reps 0: -1 or NULL, one line, no work (nothing created, copied, "
        "launched or queued), no error left, nothing held; the cheapest valid calls return 0 and do nothing",
        20)
{
    int count = gpus(), last = count - 1, peer = -7;
    char why[200];
    kit_use_device(0);
    cudaStream_t s = kit_stream();
    unsigned char *a = kit_dev_alloc(4096), *b = kit_dev_alloc(4096);
    static int devs[BAD_N_MAX + 1]; /* as many valid devices as the largest bad n: a check of the devices made before
                                     * the check of n reads only valid memory */
    for (int i = 0; i <= BAD_N_MAX; i++)
        devs[i] = last; /* ranks on one device: nothing to enable */

    /* lab_group_create */
    args A = {.devs = devs, .n = (int)kit_rand_int(1, R), .peer = &peer};
    args x = A;
    x.devs = NULL;
    expect_refused(call_group_create, &x, "lab_group_create", "devs NULL");
    x = A, x.peer = NULL;
    expect_refused(call_group_create, &x, "lab_group_create", "peer NULL");
    const int bad_n[] = {0, -1, R + 1, INT_MIN, (int)kit_rand_int(R + 2, BAD_N_MAX)};
    for (size_t k = 0; k < sizeof bad_n / sizeof bad_n[0]; k++) {
        x = A, x.n = bad_n[k];
        snprintf(why, sizeof why, "n = %d (1 to LAB_MAX_RANKS = %d)", bad_n[k], R);
        expect_refused(call_group_create, &x, "lab_group_create", why);
    }
    for (int k = 0; k < 5; k++) { /* past the first rank too: every device checked before the first rank's events */
        x = A, x.n = k == 0 ? A.n : (int)kit_rand_int(2, R);
        int i = k == 0 ? (int)kit_rand_int(0, x.n - 1) : k % 2 ? x.n - 1 : (int)kit_rand_int(1, x.n - 1),
            keep = devs[i];
        devs[i] = bad_device(k, count);
        snprintf(why, sizeof why, "devs[%d] = %d, out of range (%d GPU%s), n = %d", i, devs[i], count,
                 count == 1 ? "" : "s", x.n);
        expect_refused(call_group_create, &x, "lab_group_create", why);
        devs[i] = keep;
    }
    x = A, x.n = R;
    snprintf(why, sizeof why, "n = LAB_MAX_RANKS (%d), every rank on GPU %d, the last one (a valid group)", R, last);
    x.peer = &peer, peer = -7;
    cr_assert(call_group_create(&x) == 0, "lab_group_create with %s returned NULL (see its message above; not written "
              "yet?)", why);
    cr_assert(peer == 1, "lab_group_create with %s set *peer to %d: lab.h: 1 (ranks on one device need no peer "
              "access)", why, peer);
    lab_group_destroy(NULL);

    /* lab_peer_copy */
    args C = {.dst = b, .src = a, .dst_dev = 0, .src_dev = 0, .bytes = rndz(1, 4096), .stream = s};
    x = C, x.dst = NULL;
    expect_refused(call_peer_copy, &x, "lab_peer_copy", "dst NULL (bytes > 0)");
    x = C, x.src = NULL;
    expect_refused(call_peer_copy, &x, "lab_peer_copy", "src NULL (bytes > 0)");
    for (int k = 0; k < 5; k++) {
        x = C, x.dst_dev = bad_device(k, count), x.bytes = k % 2 ? 0 : C.bytes;
        snprintf(why, sizeof why, "dst_dev = %d, out of range (%d GPUs), bytes %zu", x.dst_dev, count, x.bytes);
        expect_refused(call_peer_copy, &x, "lab_peer_copy", why);
        x = C, x.src_dev = bad_device(k + 2, count), x.bytes = k % 2 ? C.bytes : 0;
        snprintf(why, sizeof why, "src_dev = %d, out of range (%d GPUs), bytes %zu", x.src_dev, count, x.bytes);
        expect_refused(call_peer_copy, &x, "lab_peer_copy", why);
    }
    x = C, x.bytes = 0, x.dst = x.src = NULL;
    expect_done_nothing(call_peer_copy, &x, "lab_peer_copy", "bytes 0 and dst, src NULL");

    /* lab_ring_exchange */
    int n = (int)kit_rand_int(2, R);
    lab_group *g = lab_group_create(devs, n, &peer);
    cr_assert(g != NULL, "lab_group_create of %d ranks on GPU %d returned NULL (see its message above)", n, last);
    void *send[R], *recv[R];
    cudaStream_t streams[R];
    kit_use_device(last); /* the ranks' device: their blocks and stream */
    cudaStream_t sl = kit_stream();
    unsigned char *al = kit_dev_alloc(4096), *bl = kit_dev_alloc(4096);
    for (int i = 0; i < n; i++)
        send[i] = al + 64 * i, recv[i] = bl + 64 * i, streams[i] = sl;
    args G = {.g = g, .send = send, .recv = recv, .streams = streams, .bytes = rndz(1, 64)};
    x = G, x.g = NULL;
    expect_refused(call_ring, &x, "lab_ring_exchange", "g NULL");
    x.bytes = 0;
    expect_refused(call_ring, &x, "lab_ring_exchange", "g NULL and bytes 0");
    x = G, x.send = NULL;
    expect_refused(call_ring, &x, "lab_ring_exchange", "send NULL");
    x = G, x.recv = NULL;
    expect_refused(call_ring, &x, "lab_ring_exchange", "recv NULL");
    x = G, x.streams = NULL;
    expect_refused(call_ring, &x, "lab_ring_exchange", "streams NULL");
    /* bytes 0 excuses send[i] and recv[i] only: g, send, recv and streams NULL are refused before its early return */
    x = G, x.send = NULL, x.bytes = 0;
    expect_refused(call_ring, &x, "lab_ring_exchange", "send NULL and bytes 0 (lab.h: -1 for send NULL whatever the "
                   "bytes; bytes 0 excuses only send[i] and recv[i])");
    x = G, x.recv = NULL, x.bytes = 0;
    expect_refused(call_ring, &x, "lab_ring_exchange", "recv NULL and bytes 0 (lab.h: -1 for recv NULL whatever the "
                   "bytes; bytes 0 excuses only send[i] and recv[i])");
    x = G, x.streams = NULL, x.bytes = 0;
    expect_refused(call_ring, &x, "lab_ring_exchange", "streams NULL and bytes 0 (lab.h: -1 for streams NULL whatever "
                   "the bytes)");
    for (int t = 0; t < 2; t++) { /* the last rank, then any: every block checked before the first rank's work */
        int i = t ? (int)kit_rand_int(0, n - 1) : n - 1;
        void *keep = send[i];
        send[i] = NULL;
        snprintf(why, sizeof why, "send[%d] NULL (n = %d, bytes > 0)", i, n);
        expect_refused(call_ring, &G, "lab_ring_exchange", why);
        send[i] = keep, i = t ? (int)kit_rand_int(0, n - 1) : n - 1, keep = recv[i], recv[i] = NULL;
        snprintf(why, sizeof why, "recv[%d] NULL (n = %d, bytes > 0)", i, n);
        expect_refused(call_ring, &G, "lab_ring_exchange", why);
        recv[i] = keep;
    }
    x = G, x.bytes = 0;
    expect_done_nothing(call_ring, &x, "lab_ring_exchange", "bytes 0");
    destroy_group(g, "a group of args.refused, after its refused calls");

    /* lab_read_direct and lab_read_copied */
    kit_use_device(0);
    lab_read_job J = {(uint32_t *)b, 0, (const uint32_t *)a, 0, rndz(1, 256)}, j;
    args D = {.job = &J, .reps = (int)kit_rand_int(1, 5), .stream = s, .scratch = (uint32_t *)(b + 2048)};
    for (int f = 0; f < 2; f++) {
        call_fn fn = f ? call_read_copied : call_read_direct;
        const char *name = f ? "lab_read_copied" : "lab_read_direct";
        x = D, x.job = NULL;
        expect_refused(fn, &x, name, "j NULL");
        x = D, x.reps = -1;
        expect_refused(fn, &x, name, "reps -1");
        x.reps = INT_MIN;
        expect_refused(fn, &x, name, "reps INT_MIN");
        for (int k = 0; k < 4; k++) {
            j = J, j.out_dev = bad_device(k, count), x = D, x.job = &j, x.reps = k % 2 ? 0 : D.reps;
            snprintf(why, sizeof why, "out_dev = %d, out of range (%d GPUs), reps %d", j.out_dev, count, x.reps);
            expect_refused(fn, &x, name, why);
            j = J, j.src_dev = bad_device(k + 1, count), j.words = k % 2 ? J.words : 0, x = D, x.job = &j;
            snprintf(why, sizeof why, "src_dev = %d, out of range (%d GPUs), words %zu", j.src_dev, count, j.words);
            expect_refused(fn, &x, name, why);
        }
        for (int z = 0; z < 2; z++) { /* reps 0 excuses none of these (lab.h: refusals come first) */
            const char *rz = z ? ", reps 0" : "";
            j = J, j.words = kit_wrapping_count(4), x = D, x.job = &j, x.reps = z ? 0 : D.reps;
            snprintf(why, sizeof why, "words = %zu, so words x 4 wraps past SIZE_MAX to %zu bytes%s", j.words,
                     j.words * 4, rz);
            expect_refused(fn, &x, name, why);
            j = J, j.out = NULL, x = D, x.job = &j, x.reps = z ? 0 : D.reps;
            snprintf(why, sizeof why, "out NULL (words > 0)%s", rz);
            expect_refused(fn, &x, name, why);
            j = J, j.src = NULL, x = D, x.job = &j, x.reps = z ? 0 : D.reps;
            snprintf(why, sizeof why, "src NULL (words > 0)%s", rz);
            expect_refused(fn, &x, name, why);
            if (f) {
                x = D, x.scratch = NULL, x.reps = z ? 0 : D.reps;
                snprintf(why, sizeof why, "scratch NULL (words > 0)%s", rz);
                expect_refused(fn, &x, name, why);
            }
        }
        x = D, x.reps = 0;
        expect_done_nothing(fn, &x, name, "reps 0");
        j = J, j.words = 0, j.out = NULL, j.src = NULL, x = D, x.job = &j, x.scratch = NULL;
        expect_done_nothing(fn, &x, name, "words 0 (out, src and scratch NULL)");
    }

    /* lab_stage_create, lab_stage_copy */
    args S = {.src_dev = 0, .dst_dev = last, .chunk = rndz(1, 1 << 16)};
    const size_t bad_chunk[] = {0, LAB_CHUNK_MAX + 1, SIZE_MAX, LAB_CHUNK_MAX + rndz(2, (size_t)1 << 40)};
    for (size_t k = 0; k < sizeof bad_chunk / sizeof bad_chunk[0]; k++) {
        x = S, x.chunk = bad_chunk[k];
        snprintf(why, sizeof why, "chunk_bytes = %zu (1 to LAB_CHUNK_MAX = %zu)", bad_chunk[k], LAB_CHUNK_MAX);
        expect_refused(call_stage_create, &x, "lab_stage_create", why);
    }
    for (int k = 0; k < 4; k++) {
        x = S, x.src_dev = bad_device(k, count);
        snprintf(why, sizeof why, "src_dev = %d, out of range (%d GPUs)", x.src_dev, count);
        expect_refused(call_stage_create, &x, "lab_stage_create", why);
        x = S, x.dst_dev = bad_device(k + 1, count);
        snprintf(why, sizeof why, "dst_dev = %d, out of range (%d GPUs)", x.dst_dev, count);
        expect_refused(call_stage_create, &x, "lab_stage_create", why);
    }
    lab_stage *st = lab_stage_create(0, 0, S.chunk);
    cr_assert(st != NULL, "lab_stage_create(0, 0, %zu) returned NULL (see its message above; not written yet?)",
              S.chunk);
    args T = {.stage = st, .dst = b, .src = a, .bytes = rndz(1, 4096), .stream = s, .stream2 = s};
    x = T, x.stage = NULL;
    expect_refused(call_stage_copy, &x, "lab_stage_copy", "s NULL");
    x.bytes = 0;
    expect_refused(call_stage_copy, &x, "lab_stage_copy", "s NULL and bytes 0");
    x = T, x.dst = NULL;
    expect_refused(call_stage_copy, &x, "lab_stage_copy", "dst NULL (bytes > 0)");
    x = T, x.src = NULL;
    expect_refused(call_stage_copy, &x, "lab_stage_copy", "src NULL (bytes > 0)");
    x = T, x.bytes = 0, x.dst = x.src = NULL;
    expect_done_nothing(call_stage_copy, &x, "lab_stage_copy", "bytes 0 (dst, src NULL)");
    lab_stage_destroy(st);
    lab_stage_destroy(NULL);

    sync_all("after the refused calls");
    unsigned char got[4096];
    size_t bad;
    XL_CHECK(cudaMemcpy(got, b, sizeof got, cudaMemcpyDeviceToHost));
    cr_assert(xl_check_poison(got, sizeof got, &bad) == 0, "byte %zu of the kit's destination changed after the refused "
              "calls: a refused call does no work (lab.h)", bad);
    XL_CHECK(cudaFree(a));
    XL_CHECK(cudaFree(b));
    XL_CHECK(cudaFree(al));
    XL_CHECK(cudaFree(bl));
    XL_CHECK(cudaStreamDestroy(s));
    XL_CHECK(cudaStreamDestroy(sl));
}

/* ===== Copies: lab_peer_copy ===== */

/* One copy case: blocks at random offsets into buffers of their devices. */
typedef struct {
    int dst_dev, src_dev;
    unsigned char *src_buf, *right, *dst_buf; /* src_buf, right on src_dev; dst_buf on dst_dev */
    size_t cap;                               /* each buffer's bytes */
    unsigned char *want, *got;                /* host */
} copy_bufs;

static void copy_bufs_alloc(copy_bufs *b, int dst_dev, int src_dev, size_t max_bytes)
{
    b->dst_dev = dst_dev, b->src_dev = src_dev;
    b->cap = max_bytes + OFF_MAX + GUARD + 1;
    b->src_buf = dev_alloc(src_dev, b->cap);
    b->right = dev_alloc(src_dev, b->cap);
    b->dst_buf = dev_alloc(dst_dev, b->cap);
    b->want = host_bytes(b->cap);
    b->got = host_bytes(b->cap);
}

static void copy_bufs_free(copy_bufs *b)
{
    XL_CHECK(cudaFree(b->src_buf));
    XL_CHECK(cudaFree(b->right));
    XL_CHECK(cudaFree(b->dst_buf));
    free(b->want), free(b->got);
}

/* expect_block - got (a download of bytes + GUARD) equals want over bytes, and the guard holds the poison */
static void expect_block(const unsigned char *got, const unsigned char *want, size_t bytes, int guard,
                         const unsigned char *stale, const char *what, const char *where, const char *hint)
{
    size_t bad;
    if (xl_compare(got, want, bytes, &bad) != 0) {
        const char *kind = got[bad] == XL_POISON_BYTE ? " (the poison)" : "";
        if (stale && got[bad] == stale[bad])
            kind = " (the stale data the kit wrote there late, on the receiver's stream)";
        cr_fatal("%s: %s, byte %zu of %zu is 0x%02x%s, expected 0x%02x%s%s", what, where, bad, bytes, got[bad], kind,
                 want[bad], *hint ? ": " : "", hint);
    }
    if (guard && xl_check_poison(got + bytes, GUARD, &bad) != 0)
        cr_fatal("%s: %s, byte %zu past the end (bytes %zu) changed: it wrote past the end of the destination", what,
                 where, bad + 1, bytes);
}

/* one_copy - lab_peer_copy of bytes from src_dev to dst_dev on stream (a stream of src_dev or dst_dev; 0 only where
 * both are the current device cur), after BUSY_NS of work and the copy of the real data into src on it; then the
 * result and the one copy it made */
static void one_copy(copy_bufs *b, size_t bytes, cudaStream_t stream, int stream_dev, int cur, const char *label)
{
    static seen w;
    char what[400], st[48], t[200];
    size_t os = rndz(0, OFF_MAX), od = rndz(0, OFF_MAX);
    unsigned char *src = b->src_buf + os, *dst = b->dst_buf + od;
    snprintf(what, sizeof what, "%s: lab_peer_copy of %zu bytes from GPU %d (src at offset %zu) to GPU %d (dst at "
             "offset %zu) on %s", label, bytes, b->src_dev, os, b->dst_dev, od, stream_text(stream, st, sizeof st));
    xl_fill_random(b->want, bytes, xl_fresh_seed());
    upload_on(b->src_dev, b->right, b->want, bytes);
    fill_on(b->src_dev, b->src_buf, XL_POISON_BYTE, b->cap);
    fill_on(b->dst_dev, b->dst_buf, XL_POISON_BYTE, b->cap);
    kit_use_device(stream_dev);
    kit_queue_busy_copy(stream, BUSY_NS, src, b->right, bytes);
    kit_use_device(cur);
    args a = {.dst = dst, .dst_dev = b->dst_dev, .src = src, .src_dev = b->src_dev, .bytes = bytes, .stream = stream};
    watch(call_peer_copy, &a, &w, W_GUARD, what, "lab_peer_copy");
    expect_device_kept(cur, what, "lab_peer_copy");
    cr_assert(w.rc == 0, "%s returned %d (see its message above; not written yet?)", what, w.rc);
    expect_no_error_left(what, "lab_peer_copy");
    expect_no_peer_setup(&w, what, "lab_peer_copy");
    cr_assert(count_launches(&w) == 0, "%s launched %d kernels: lab.h: one copy, no kernel", what, count_launches(&w));
    cr_assert(w.ndev == 1 && w.batches.calls == 0,
              "%s made %d copies%s%s: lab.h: one asynchronous copy (cudaMemcpyPeerAsync, or cudaMemcpyAsync with "
              "cudaMemcpyDefault or cudaMemcpyDeviceToDevice) on the stream given", what, w.ndev + w.batches.calls,
              w.ndev ? ", the first a " : "", w.ndev ? dev_copy_text(&w.dev[0], t, sizeof t) : "");
    const kit_dev_copy *c = &w.dev[0];
    cr_assert(c->async && c->stream == stream,
              "%s made a %s: lab.h: the copy is queued on the stream given (and returns without waiting)", what,
              dev_copy_text(c, t, sizeof t));
    cr_assert(c->dir == cudaMemcpyDeviceToDevice && c->dst == dst && c->src == src && c->bytes == bytes &&
                  c->dst_dev == b->dst_dev && c->src_dev == b->src_dev,
              "%s made a %s, dst %p, src %p: lab.h: from src (%p) on GPU %d to dst (%p) on GPU %d, all bytes in one "
              "copy", what, dev_copy_text(c, t, sizeof t), c->dst, c->src, (void *)src, b->src_dev, (void *)dst,
              b->dst_dev);
    sync_all(what);
    XL_CHECK(cudaMemcpy(b->got, dst, bytes + GUARD, cudaMemcpyDefault));
    expect_block(b->got, b->want, bytes, 1, NULL, what, "once the GPUs had finished",
                 "the kit queued a delay and then the copy of src's real data on the stream before the call: was the "
                 "copy queued on that stream, after the work already there?");
}

XL_TEST(copy, exact, 5, XL_GPU,
        "lab_peer_copy from GPU 0 to itself: sizes from 1 byte to 64 MiB + 1 at odd offsets, fresh data, poisoned "
        "guards; one asynchronous copy on the stream given, after the work queued there (the legacy stream in a "
        "third), enabling nothing",
        20)
{
    copy_bufs b;
    copy_bufs_alloc(&b, 0, 0, kit_awkward_sizes[kit_n_awkward - 1]);
    cudaStream_t s = dev_stream(0);
    int third = (int)kit_rand_int(0, 2);
    for (size_t k = 0; k < kit_n_awkward; k++) {
        char label[64];
        snprintf(label, sizeof label, "size %zu of %zu", k + 1, kit_n_awkward);
        one_copy(&b, kit_awkward_sizes[k], (int)k % 3 == third ? 0 : s, 0, 0, label);
    }
    copy_bufs_free(&b);
    XL_CHECK(cudaStreamDestroy(s));
}

/* ===== Groups ===== */

/* devs_text - "{0, 0, 1}" into buf */
static const char *devs_text(const int *devs, int n, char *buf, size_t len)
{
    size_t used = snprintf(buf, len, "{");
    for (int i = 0; i < n && used < len; i++)
        used += snprintf(buf + used, len - used, "%s%d", i ? ", " : "", devs[i]);
    if (used < len)
        snprintf(buf + used, len - used, "}");
    return buf;
}

/* What a group create did. */
typedef struct {
    lab_group *g;
    int peer;
    seen w;
} made_group;

static const int *mk_devs;
static int mk_n;
static made_group *mk_out;

static int call_made_group(void *ctx)
{
    (void)ctx;
    mk_out->peer = -7;
    mk_out->g = lab_group_create(mk_devs, mk_n, &mk_out->peer);
    return mk_out->g ? 0 : -1;
}

/* make_group - lab_group_create(devs, n, &peer) with cur current, watched, stderr taken; the group must be made and
 * the current device kept, no error left */
static void make_group(made_group *m, const int *devs, int n, int cur, const char *what)
{
    mk_devs = devs, mk_n = n, mk_out = m;
    kit_use_device(cur);
    watch(call_made_group, NULL, &m->w, W_CAPTURE, what, "lab_group_create");
    cr_assert(m->g != NULL, "%s returned NULL%s%s (not written yet?)", what, m->w.lines ? ", saying: " : "",
              m->w.text);
    expect_device_kept(cur, what, "lab_group_create");
    expect_no_error_left(what, "lab_group_create");
    kit_expect_no_host_wait(m->w.sync, m->w.nsync < MAX_SYNC ? m->w.nsync : MAX_SYNC, what, NO_WAIT_RULE);
}

/* group_attempt - kit_expect_create_failures' attempt: lab_group_create of the devices in ctx, quiet; on NULL, no
 * direction left enabled where none was (a fresh peer state); else destroyed */
typedef struct {
    const int *devs;
    int n;
    int fresh; /* 1: no direction was enabled before: none may be after a failure */
} group_try;

static int group_attempt(void *ctx)
{
    group_try *t = ctx;
    int peer = -7;
    char d[64];
    int q = kit_quiet_begin();
    lab_group *g = lab_group_create(t->devs, t->n, &peer);
    kit_quiet_end(q);
    if (!g) {
        if (t->fresh)
            cr_assert(0 == (kit_peer_enabled(0, 1) || kit_peer_enabled(1, 0)),
                      "lab_group_create(%s) failed (one of its creates or enables made to fail) but left peer access "
                      "enabled (0 to 1: %d, 1 to 0: %d): lab.h: NULL, with no direction this call enabled left "
                      "enabled: undo the enables it made before returning", devs_text(t->devs, t->n, d, sizeof d),
                      kit_peer_enabled(0, 1), kit_peer_enabled(1, 0));
        return 1;
    }
    lab_group_destroy(g);
    return 0;
}

XL_TEST(group, local, 5, XL_GPU,
        "lab_group_create of 1 to 8 ranks on one device: *peer 1, nothing printed, nothing asked or enabled (a device "
        "is not its own peer), the current device kept; destroy releases everything and disables nothing; each event "
        "it creates made to fail in turn: NULL, nothing held, no error left",
        20)
{
    int count = gpus(), devs[R];
    char what[200], d[64];
    static made_group m;
    const int ns[] = {1, 2, (int)kit_rand_int(3, R - 1), R};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k], dev = (int)kit_rand_int(0, count - 1), cur = (int)kit_rand_int(0, count - 1);
        for (int i = 0; i < n; i++)
            devs[i] = dev;
        snprintf(what, sizeof what, "lab_group_create(%s, %d, &peer) with GPU %d current",
                 devs_text(devs, n, d, sizeof d), n, cur);
        int *gdevs = kit_guarded(devs, (size_t)n * sizeof *devs); /* n devices, no more: a read past them crashes */
        kit_held before = kit_held_now();
        make_group(&m, gdevs, n, cur, what);
        cr_assert(m.peer == 1, "%s set *peer to %d: lab.h: 1 when every pair of distinct devices has access both ways, "
                  "so also with one device", what, m.peer);
        cr_assert(m.w.lines == 0, "%s wrote to stderr: %s; lab.h: nothing printed with *peer 1", what, m.w.text);
        cr_assert(count_peer(&m.w, XL_PEER_CAN, 0) == 0,
                  "%s asked cudaDeviceCanAccessPeer %d times (the first: device %d about %d): lab.h: a device is not "
                  "its own peer: nothing is asked or enabled for ranks on one device (the runtime answers 0 for a "
                  "device and itself)", what, count_peer(&m.w, XL_PEER_CAN, 0), m.w.peer[0].device, m.w.peer[0].peer);
        expect_no_peer_setup(&m.w, what, "lab_group_create");
        cr_assert(m.w.ndev == 0 && count_launches(&m.w) == 0, "%s copied or launched something: it only sets up", what);
        static seen w2;
        snprintf(what + strlen(what), sizeof what - strlen(what), ", then lab_group_destroy");
        kit_use_device(cur);
        xl_peerlog_start(w2.peer, MAX_PEER);
        destroy_group(m.g, what);
        w2.npeer = xl_peerlog_stop();
        expect_device_kept(cur, what, "lab_group_destroy");
        expect_no_error_left(what, "lab_group_destroy");
        expect_no_peer_setup(&w2, what, "lab_group_destroy");
        kit_expect_released(before, what);
        kit_guarded_free(gdevs, (size_t)n * sizeof *devs);
    }
    devs[0] = devs[1] = devs[2] = (int)kit_rand_int(0, count - 1);
    int n = (int)kit_rand_int(2, R);
    for (int i = 0; i < n; i++)
        devs[i] = devs[0];
    int *gdevs = kit_guarded(devs, (size_t)n * sizeof *devs);
    group_try t = {gdevs, n, 0};
    snprintf(what, sizeof what, "lab_group_create(%s, %d, &peer)", devs_text(devs, n, d, sizeof d), n);
    long creates = kit_expect_create_failures(group_attempt, &t, what);
    kit_guarded_free(gdevs, (size_t)n * sizeof *devs);
    cr_assert(creates >= 1, "%s created no event: lab.h: the events lab_ring_exchange needs are made here, once", what);
}

/* ===== The ring ===== */

enum { S_OWN, S_SHARED, S_LEGACY, S_MIXED }; /* a ring case's streams: one a rank, shared by two ranks, the legacy
                                               * stream, the legacy stream for even ranks and its own for odd ones
                                               * (the legacy stream does not order itself with non-blocking ones) */

/* A rank's buffers, kept per device and rank slot (ring cases reuse them). */
typedef struct {
    unsigned char *send, *recv, *right, *stale, *probe; /* device, RING_MAX + OFF_MAX + GUARD + 1 bytes each */
    cudaStream_t s;                                      /* a stream of the kit's on that device */
} rank_slot;

#define RING_CAP (RING_MAX + OFF_MAX + GUARD + 1)

static rank_slot slots[2][R]; /* [device][rank] */
static unsigned char *ring_want[R], *ring_stale[R], *ring_got;

/* slot - rank i's buffers on device d, made the first time */
static rank_slot *slot(int d, int i)
{
    rank_slot *s = &slots[d][i];
    if (!s->send) {
        s->send = dev_alloc(d, RING_CAP), s->recv = dev_alloc(d, RING_CAP), s->right = dev_alloc(d, RING_CAP);
        s->stale = dev_alloc(d, RING_CAP), s->probe = dev_alloc(d, RING_CAP);
        s->s = dev_stream(d);
    }
    if (!ring_got) {
        for (int k = 0; k < R; k++)
            ring_want[k] = host_bytes(RING_CAP), ring_stale[k] = host_bytes(RING_CAP);
        ring_got = host_bytes(RING_CAP);
    }
    return s;
}

static void slots_free(void)
{
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < R; i++) {
            rank_slot *s = &slots[d][i];
            if (!s->send)
                continue;
            unsigned char *p[] = {s->send, s->recv, s->right, s->stale, s->probe};
            for (int k = 0; k < 5; k++)
                XL_CHECK(cudaFree(p[k]));
            XL_CHECK(cudaStreamDestroy(s->s));
            memset(s, 0, sizeof *s);
        }
    for (int k = 0; k < R; k++)
        free(ring_want[k]), free(ring_stale[k]), ring_want[k] = ring_stale[k] = NULL;
    free(ring_got), ring_got = NULL;
}

/* ring_expect_unheld - rank slow's stream held up by a gate, the kit's readback of recv[j] queued on streams[j] after
 * the call: it needs rank j - 1's copy into recv[j] and rank j's copy (before it on streams[j]), which lab.h starts
 * after the work queued before the call on streams[j - 1], streams[j] and streams[j + 1] only. Every such readback
 * with none of them held must finish while the gate stays shut (a copy that waits for another rank's copy does not);
 * then the gate is opened. cur is made current again. */
static void ring_expect_unheld(const int *devs, int n, const cudaStream_t *st, int slow, volatile unsigned *gate,
                               int cur, const char *what)
{
    cudaEvent_t ev[R] = {0};
    int late = -1;
    for (int j = 0; j < n; j++)
        if (slow != j && slow != (j + 1) % n && slow != (j + n - 1) % n) {
            kit_use_device(devs[j]);
            XL_CHECK(cudaEventCreateWithFlags(&ev[j], cudaEventDisableTiming));
            XL_CHECK(cudaEventRecord(ev[j], st[j]));
        }
    double t0 = xl_now_ms(), waited = 0;
    for (int j = 0; j < n && late < 0; j++) {
        if (!ev[j])
            continue;
        cudaError_t e;
        while ((e = cudaEventQuery(ev[j])) == cudaErrorNotReady && (waited = xl_now_ms() - t0) < GATE_WAIT_MS)
            ;
        if (e == cudaErrorNotReady)
            late = j;
        else if (e != cudaSuccess)
            *gate = 1;
        XL_CHECK(e == cudaErrorNotReady ? cudaSuccess : e);
    }
    *gate = 1;
    cudaGetLastError(); /* a query's answer "not yet" is no error of the code under test */
    for (int j = 0; j < n; j++)
        if (ev[j])
            XL_CHECK(cudaEventDestroy(ev[j]));
    kit_use_device(cur);
    if (late >= 0) {
        int i = (late + n - 1) % n, k = (late + 1) % n;
        cr_fatal("%s: with rank %d's stream held up by the grader, a copy of recv[%d] the kit queued on streams[%d] "
                 "right after the call had not finished after %.0f ms; it needs only rank %d's copy into recv[%d] and "
                 "rank %d's copy, which follow the work on streams[%d], streams[%d] and streams[%d], none of them "
                 "held. lab.h: all n copies at once, each after the work queued before the call on its own stream and "
                 "its receiver's only (not after another rank's copy on another stream: queue every copy before any "
                 "stream waits for the copy into it)", what, slow, late, late, waited, i, late, late, i, late, k);
    }
}

/* ring_case - one lab_ring_exchange of bytes among n ranks on devs (in group g), on streams of mode, with the stream
 * of rank slow held up HOLD_NS before the kit's writes: on every rank's stream, the copy of its real data into send[i]
 * and a late write of stale data into recv[i]; after the call, a readback of recv[j] on streams[j]. Then every
 * check: bytes, readbacks, the n copies, the current device */
static void ring_case(lab_group *g, const int *devs, int n, int mode, int slow, size_t bytes, int cur,
                      const char *label)
{
    static seen w;
    void *send[R], *recv[R];
    cudaStream_t st[R];
    size_t os[R], orv[R];
    char what[600], d[64], t[200], sn[48];
    const char *modes[] = {"a stream of its own for each rank", "ranks sharing streams two by two",
                           "the legacy stream 0 for every rank",
                           "the legacy stream 0 for the even ranks, a non-blocking stream of its own for each odd one"};
    for (int i = 0; i < n; i++) {
        rank_slot *sl = slot(devs[i], i);
        os[i] = rndz(0, OFF_MAX), orv[i] = rndz(0, OFF_MAX);
        send[i] = sl->send + os[i], recv[i] = sl->recv + orv[i];
        st[i] = mode == S_LEGACY || (mode == S_MIXED && i % 2 == 0) ? 0
                : mode == S_SHARED                                     ? slot(devs[i], i % 2)->s
                                                                       : sl->s;
        xl_fill_random(ring_want[i], bytes, xl_fresh_seed());
        xl_fill_random(ring_stale[i], bytes, xl_fresh_seed());
        upload_on(devs[i], sl->right, ring_want[i], bytes);
        upload_on(devs[i], sl->stale, ring_stale[i], bytes);
        fill_on(devs[i], sl->send, XL_POISON_BYTE, RING_CAP);
        fill_on(devs[i], sl->recv, XL_POISON_BYTE, RING_CAP);
        fill_on(devs[i], sl->probe, XL_POISON_BYTE, RING_CAP);
    }
    /* own streams and 4 ranks or more: some receivers' copies involve no held stream, and must finish while it is */
    int gated = mode == S_OWN && n >= 4;
    snprintf(what, sizeof what, "%s: lab_ring_exchange of %zu bytes among %d ranks on GPUs %s, %s, rank %d's stream "
             "held up %s%.0f ms before the call, GPU %d current", label, bytes, n, devs_text(devs, n, d, sizeof d),
             modes[mode], slow, gated ? "(until the other ranks' copies had finished, then) " : "", HOLD_NS / 1e6,
             cur);
    kit_use_device(devs[slow]);
    volatile unsigned *gate = gated ? gate_word() : NULL;
    if (gated) {
        *gate = 0;
        xl_delay_released(st[slow], GATE_NS, gate);
    }
    xl_delay(st[slow], HOLD_NS);
    for (int i = 0; i < n; i++) { /* what the work queued before the call does: writes send[i], writes recv[i] late */
        rank_slot *sl = slot(devs[i], i);
        kit_use_device(devs[i]);
        XL_CHECK(cudaMemcpyAsync(send[i], sl->right, bytes, cudaMemcpyDeviceToDevice, st[i]));
        XL_CHECK(cudaMemcpyAsync(recv[i], sl->stale, bytes, cudaMemcpyDeviceToDevice, st[i]));
    }
    kit_use_device(cur);
    void *send0[R], *recv0[R];
    cudaStream_t st0[R];
    memcpy(send0, send, sizeof send), memcpy(recv0, recv, sizeof recv), memcpy(st0, st, sizeof st);
    /* the caller's arrays hold n entries, no more: one read past them crashes */
    void **gsend = kit_guarded(send, (size_t)n * sizeof *send), **grecv = kit_guarded(recv, (size_t)n * sizeof *recv);
    cudaStream_t *gst = kit_guarded(st, (size_t)n * sizeof *st);
    args a = {.g = g, .send = gsend, .recv = grecv, .bytes = bytes, .streams = gst};
    watch(call_ring, &a, &w, W_GUARD, what, "lab_ring_exchange");
    expect_device_kept(cur, what, "lab_ring_exchange");
    for (int i = 0; i < n; i++)
        cr_assert(gsend[i] == send0[i] && grecv[i] == recv0[i] && gst[i] == st0[i],
                  "%s changed send[%d], recv[%d] or streams[%d] (the caller's arrays): lab.h passes them as const, "
                  "to be read only", what, i, i, i);
    kit_guarded_free(gsend, (size_t)n * sizeof *send);
    kit_guarded_free(grecv, (size_t)n * sizeof *recv);
    kit_guarded_free(gst, (size_t)n * sizeof *st);
    for (int j = 0; j < n; j++) { /* work queued after the call on streams[j] must see recv[j] complete */
        kit_use_device(devs[j]);
        XL_CHECK(cudaMemcpyAsync(slot(devs[j], j)->probe, recv[j], bytes, cudaMemcpyDeviceToDevice, st[j]));
    }
    kit_use_device(cur);
    if (gated && w.rc != 0)
        *gate = 1;
    cr_assert(w.rc == 0, "%s returned %d (see its message above; not written yet?)", what, w.rc);
    if (gated && cudaPeekAtLastError() != cudaSuccess)
        *gate = 1;
    expect_no_error_left(what, "lab_ring_exchange");
    if (gated)
        ring_expect_unheld(devs, n, st, slow, gate, cur, what);
    expect_no_peer_setup(&w, what, "lab_ring_exchange");
    cr_assert(count_launches(&w) == 0, "%s launched %d kernels: lab.h: one copy a rank, no kernel", what,
              count_launches(&w));
    cr_assert(w.ndev == n && w.batches.calls == 0,
              "%s made %d copies: lab.h: one a rank (%d), each as lab_peer_copy makes it", what,
              w.ndev + w.batches.calls, n);
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n, found = -1;
        for (int k = 0; k < w.ndev; k++)
            if (w.dev[k].src == send[i])
                found = k;
        cr_assert(found >= 0, "%s: no copy read send[%d] (%p): rank %d sends send[%d] to recv[%d]", what, i, send[i],
                  i, i, j);
        const kit_dev_copy *c = &w.dev[found];
        cr_assert(c->dst == recv[j] && c->bytes == bytes && c->dir == cudaMemcpyDeviceToDevice,
                  "%s: rank %d's copy was a %s into %p: lab.h: all of send[%d] into recv[%d] (%p), the next rank's", what,
                  i, dev_copy_text(c, t, sizeof t), c->dst, i, j, recv[j]);
        cr_assert(c->async && c->stream == st[i],
                  "%s: rank %d's copy was a %s: lab.h: rank i's copy is queued on streams[i] (%s)", what, i,
                  dev_copy_text(c, t, sizeof t), stream_text(st[i], sn, sizeof sn));
        cr_assert(c->src_dev == devs[i] && c->dst_dev == devs[j],
                  "%s: rank %d's copy was a %s: lab.h: from rank %d's GPU (%d) to rank %d's (%d)", what, i,
                  dev_copy_text(c, t, sizeof t), i, devs[i], j, devs[j]);
    }
    sync_all(what);
    for (int j = 0; j < n; j++) {
        int i = (j + n - 1) % n;
        char where[120], hint[400];
        XL_CHECK(cudaMemcpy(ring_got, recv[j], bytes + GUARD, cudaMemcpyDefault));
        snprintf(where, sizeof where, "recv[%d], once the GPUs had finished", j);
        size_t bad;
        if (xl_compare(ring_got, ring_want[i], bytes, &bad) == 0)
            hint[0] = '\0';
        else if (ring_got[bad] == ring_stale[j][bad] && ring_got[bad] != ring_want[i][bad])
            snprintf(hint, sizeof hint, "rank %d's copy into recv[%d] ran before the work queued on streams[%d] before "
                     "the call (which may still read recv[%d]; here the kit's late write into it): lab.h: the copy "
                     "starts only after that work too: record an event on streams[%d], make streams[%d] wait for it",
                     i, j, j, j, j, i);
        else
            snprintf(hint, sizeof hint, "rank %d's copy read send[%d] before the work queued on streams[%d] before the "
                     "call had written it: lab.h: the copy follows that work (queue it on streams[%d])", i, i, i, i);
        expect_block(ring_got, ring_want[i], bytes, 1, ring_stale[j], what, where, hint);
        XL_CHECK(cudaMemcpy(ring_got, slot(devs[j], j)->probe, bytes, cudaMemcpyDefault));
        snprintf(where, sizeof where, "in a copy of recv[%d] the kit queued on streams[%d] right after the call", j, j);
        snprintf(hint, sizeof hint, "lab.h: work queued on streams[%d] after the call sees recv[%d] complete: record an "
                 "event after rank %d's copy and make streams[%d] wait for it", j, j, i, j);
        expect_block(ring_got, ring_want[i], bytes, 0, ring_stale[j], what, where, hint);
    }
}

/* create_scribbled - lab_group_create(copy, n, peer), *copy first a copy of devs[0..n) that ends at an unreadable
 * page (kit_guarded: a read past devs[n - 1] crashes); copy must be unchanged by the call (lab.h: const); then
 * scribbled with devices out of range (R + 1000 + i) and kept so by the caller while the group lives: a group that
 * kept the caller's array instead of copying it reads those and fails (lab.h: the group is made here, once, from devs;
 * the caller's array is the caller's). Release *copy with kit_guarded_free(*copy, n * sizeof(int)) once the group is
 * destroyed. */
static lab_group *create_scribbled(const int *devs, int n, int *peer, int **copy_out)
{
    char d[64];
    int *copy = kit_guarded(devs, (size_t)n * sizeof *devs);
    *copy_out = copy;
    lab_group *g = lab_group_create(copy, n, peer);
    for (int i = 0; i < n; i++)
        cr_assert(copy[i] == devs[i], "lab_group_create(%s, %d, &peer) changed devs[%d] to %d: lab.h passes devs as "
                  "const, to be read only", devs_text(devs, n, d, sizeof d), n, i, copy[i]);
    for (int i = 0; i < n; i++)
        copy[i] = R + 1000 + i;
    return g;
}

/* ring_bytes - an awkward size for a ring case */
static size_t ring_bytes(int k)
{
    const size_t sizes[] = {1, 3, 4095, 4097, 65536 + 13, MIB + 7, RING_MAX, rndz(1, RING_MAX)};
    return sizes[k % 8];
}

XL_TEST(ring, exact, 10, XL_GPU,
        "lab_ring_exchange, 1 to 8 ranks on GPU 0, awkward sizes at odd offsets: every recv[i + 1] exact, one copy a "
        "rank on its stream; with one rank's stream held up, each copy follows the work queued on the sender's and "
        "the receiver's streams, and work queued after it sees it (own, shared and legacy streams), while the copies "
        "that need neither run at once; two groups alive at once, used in turn, one destroyed while the other works; "
        "the legacy stream for some ranks beside non-blocking streams for others; the caller's devs, send, recv and "
        "streams arrays read only, devs changed by the caller after the create",
        30)
{
    int devs[R] = {0}, round = 0, third = (int)kit_rand_int(0, 2), peer;
    char label[256], d[64];
    kit_use_device(0);
    for (int i = 0; i < R; i++)
        slot(0, i); /* every rank's stream made now, one after another: each its own hardware queue */
    gate_word();
    for (int n = 1; n <= R; n++) {
        int cur = 0, *scribbled;
        lab_group *g = create_scribbled(devs, n, &peer, &scribbled); /* the caller's array changed after the create */
        cr_assert(g != NULL, "lab_group_create(%s) returned NULL (see its message above; not written yet?)",
                  devs_text(devs, n, d, sizeof d));
        int slows[3] = {n - 1, 0, (int)kit_rand_int(0, n - 1)}, rounds = n == 1 ? 1 : n == 2 ? 2 : 3;
        for (int r = 0; r < rounds; r++, round++) {
            int mode = round % 3 == third ? S_LEGACY : n >= 3 && round % 3 == (third + 1) % 3 ? S_SHARED : S_OWN;
            snprintf(label, sizeof label, "case %d", round + 1);
            ring_case(g, devs, n, mode, slows[r], ring_bytes(round), cur, label);
        }
        if (n >= 2) { /* the legacy stream beside non-blocking ones, an odd rank's held: its sender on the legacy
                       * stream must still wait for it, and its receiver's legacy stream for its copy */
            int odd = 2 * (int)kit_rand_int(0, n / 2 - 1) + 1;
            snprintf(label, sizeof label, "case %d", ++round);
            ring_case(g, devs, n, S_MIXED, odd, ring_bytes(round), cur, label);
        }
        if (n >= 4) { /* a stream held that a chain of copies would wait for: rank n - 3 or before, and rank 1
                       * (the chain through rank 0's copy into the last rank's: readback of recv[n - 1]) */
            snprintf(label, sizeof label, "case %d", ++round);
            ring_case(g, devs, n, S_OWN, (int)kit_rand_int(0, n - 3), ring_bytes(round), cur, label);
            snprintf(label, sizeof label, "case %d", ++round);
            ring_case(g, devs, n, S_OWN, 1, ring_bytes(round), cur, label);
        }
        kit_use_device(0);
        destroy_group(g, "a group of ring.exact, after its rings");
        kit_guarded_free(scribbled, (size_t)n * sizeof *scribbled);
    }

    /* two groups alive at once, used in turn, the first destroyed while the second keeps working: each group's events
     * are its own */
    kit_held before = kit_held_now();
    int na = (int)kit_rand_int(1, R), nb = (int)kit_rand_int(1, R);
    char da[64], db[64], what[400];
    devs_text(devs, na, da, sizeof da), devs_text(devs, nb, db, sizeof db);
    int *sa = NULL, *sb = NULL;
    lab_group *ga = create_scribbled(devs, na, &peer, &sa), *gb = ga ? create_scribbled(devs, nb, &peer, &sb) : NULL;
    cr_assert(ga != NULL && gb != NULL, "lab_group_create(%s) then lab_group_create(%s), both alive: the %s returned "
              "NULL (see its message above)", da, db, ga ? "second" : "first");
    snprintf(label, sizeof label, "group %s, with a group %s made after it and alive", da, db);
    ring_case(ga, devs, na, S_OWN, (int)kit_rand_int(0, na - 1), ring_bytes(++round), 0, label);
    snprintf(label, sizeof label, "group %s, with the group %s made before it and alive", db, da);
    ring_case(gb, devs, nb, S_OWN, (int)kit_rand_int(0, nb - 1), ring_bytes(++round), 0, label);
    kit_use_device(0);
    destroy_group(ga, "the first of two live groups, after a ring through each");
    snprintf(label, sizeof label, "group %s, once the group %s made before it was destroyed", db, da);
    ring_case(gb, devs, nb, S_OWN, (int)kit_rand_int(0, nb - 1), ring_bytes(++round), 0, label);
    kit_use_device(0);
    destroy_group(gb, "the second of two groups, after its rings");
    kit_guarded_free(sa, (size_t)na * sizeof *sa);
    kit_guarded_free(sb, (size_t)nb * sizeof *sb);
    snprintf(what, sizeof what, "lab_group_create(%s), lab_group_create(%s), rings through both, lab_group_destroy of "
             "the first, a ring through the second, lab_group_destroy of the second (each group's events are its own)",
             da, db);
    kit_expect_released(before, what);
    slots_free();
}

/* ===== Reads ===== */

typedef struct {
    int out_dev, src_dev;
    uint32_t *out, *init_dev, *scratch; /* out_dev, READ_CAP words */
    uint32_t *src, *right;              /* src_dev, READ_CAP words */
    uint32_t *want, *init, *got;        /* host */
} read_bufs;

#define READ_GUARD_WORDS (GUARD / 4)
#define READ_CAP (READ_MAX_WORDS + OFF_MAX + READ_GUARD_WORDS + 1)
#define POISON_WORD 0xA5A5A5A5u

static void read_bufs_alloc(read_bufs *b, int out_dev, int src_dev, size_t max_words)
{
    size_t cap = (max_words + OFF_MAX + READ_GUARD_WORDS + 1) * 4;
    b->out_dev = out_dev, b->src_dev = src_dev;
    b->out = dev_alloc(out_dev, cap), b->init_dev = dev_alloc(out_dev, cap), b->scratch = dev_alloc(out_dev, cap);
    b->src = dev_alloc(src_dev, cap), b->right = dev_alloc(src_dev, cap);
    b->want = (uint32_t *)host_bytes(cap), b->init = (uint32_t *)host_bytes(cap), b->got = (uint32_t *)host_bytes(cap);
}

static void read_bufs_free(read_bufs *b)
{
    uint32_t *p[] = {b->out, b->init_dev, b->scratch, b->src, b->right};
    for (int k = 0; k < 5; k++)
        XL_CHECK(cudaFree(p[k]));
    free(b->want), free(b->init), free(b->got);
}

/* read_case - lab_read_direct (copied 0) or lab_read_copied (1) of words at odd word offsets, reps passes, on
 * stream (a stream of out_dev; 0 only where out_dev is cur), after BUSY_NS of work and the kit's copies of out's
 * initial values and src's real data on it; then every check */
static void read_case(read_bufs *b, int copied, size_t words, int reps, cudaStream_t stream, int cur, const char *label)
{
    static seen w;
    char what[400], sn[48], t[200];
    const char *fname = copied ? "lab_read_copied" : "lab_read_direct";
    size_t oo = rndz(0, OFF_MAX), os = rndz(0, OFF_MAX), oc = rndz(0, OFF_MAX), bytes = words * 4;
    uint32_t *out = b->out + oo, *scratch = b->scratch + oc;
    const uint32_t *src = b->src + os;
    snprintf(what, sizeof what, "%s: %s of %zu words, reps %d, out on GPU %d (word %zu of its buffer), src on GPU %d "
             "(word %zu)%s, on %s, GPU %d current", label, fname, words, reps, b->out_dev, oo, b->src_dev, os,
             copied ? ", scratch on out's GPU" : "", stream_text(stream, sn, sizeof sn), cur);
    int work = reps > 0 && words > 0;
    xl_fill_random(b->want, bytes, xl_fresh_seed());
    xl_fill_random(b->init, bytes, xl_fresh_seed());
    upload_on(b->src_dev, b->right, b->want, bytes);
    upload_on(b->out_dev, b->init_dev, b->init, bytes);
    fill_on(b->src_dev, b->src, XL_POISON_BYTE, (words + OFF_MAX + READ_GUARD_WORDS) * 4);
    fill_on(b->out_dev, b->out, XL_POISON_BYTE, (words + OFF_MAX + READ_GUARD_WORDS) * 4);
    fill_on(b->out_dev, b->scratch, XL_POISON_BYTE, (words + OFF_MAX + READ_GUARD_WORDS) * 4);
    kit_use_device(b->out_dev);
    kit_queue_busy_copy(stream, BUSY_NS, out, b->init_dev, bytes);
    XL_CHECK(cudaMemcpyAsync((void *)src, b->right, bytes, cudaMemcpyDefault, stream));
    lab_read_job j = {out, b->out_dev, src, b->src_dev, words};
    args a = {.job = &j, .reps = reps, .stream = stream, .scratch = scratch};
    kit_use_device(cur);
    if (b->out_dev != b->src_dev)
        cr_assert(kit_peer_enabled(b->out_dev, b->src_dev),
                  "%s: peer access from GPU %d to GPU %d is not enabled with a live group of both: did "
                  "lab_group_create enable both ways? (a kernel on GPU %d reading GPU %d's memory without it faults)",
                  what, b->out_dev, b->src_dev, b->out_dev, b->src_dev);
    lab_read_job j0 = j;
    watch(copied ? call_read_copied : call_read_direct, &a, &w, W_GUARD, what, fname);
    expect_device_kept(cur, what, fname);
    cr_assert(j0.out == j.out && j0.out_dev == j.out_dev && j0.src == j.src && j0.src_dev == j.src_dev &&
                  j0.words == j.words, "%s changed the job *j: lab.h passes it as const, to be read only", what);
    cr_assert(w.rc == 0, "%s returned %d (see its message above; not written yet?)", what, w.rc);
    expect_no_error_left(what, fname);
    expect_no_peer_setup(&w, what, fname);
    int launches = count_launches(&w);
    if (!work)
        cr_assert(launches == 0 && w.ndev == 0, "%s made %d launches and %d copies: lab.h: reps 0 or words 0: 0 and "
                  "nothing", what, launches, w.ndev);
    else {
        kit_expect_launches_on(w.mem, w.nmem < MAX_MEM ? w.nmem : MAX_MEM, stream, what);
        cr_assert(launches == reps, "%s made %d <<< >>> launches: lab.h: each pass is one launch, %d in all (not one "
                  "kernel that loops over the passes)", what, launches, reps);
        if (!copied)
            cr_assert(w.ndev == 0 && w.batches.calls == 0,
                      "%s made %d copies (the first a %s): lab.h: the kernel reads src where it lies, no copy of any "
                      "kind", what, w.ndev + w.batches.calls, w.ndev ? dev_copy_text(&w.dev[0], t, sizeof t) : "batch");
        else {
            cr_assert(w.ndev == 1 && w.batches.calls == 0,
                      "%s made %d copies: lab.h: one copy of src into scratch, then the %d passes read scratch", what,
                      w.ndev + w.batches.calls, reps);
            const kit_dev_copy *c = &w.dev[0];
            cr_assert(c->dst == scratch && c->src == src && c->bytes == bytes && c->async && c->stream == stream &&
                          c->dir == cudaMemcpyDeviceToDevice,
                      "%s made a %s into %p from %p: lab.h: all of src (%p) into scratch (%p), on the stream given",
                      what, dev_copy_text(c, t, sizeof t), c->dst, c->src, (void *)src, (void *)scratch);
            int first = -1; /* the first launch, and whether the copy came before it */
            for (int k = 0; k < w.nmem && k < MAX_MEM && first < 0; k++)
                if (w.mem[k].kind == XL_MEM_LAUNCH)
                    first = k;
            int before = 0;
            if (strcmp(c->call, "cudaMemcpyAsync") == 0)
                before = w.mem[first].copies_before >= 1;
            for (int k = 0; k < w.npeer && k < MAX_PEER; k++)
                if (w.peer[k].kind == XL_PEER_COPY)
                    before = w.peer[k].mem_before <= first;
            cr_assert(before, "%s launched a pass before its copy of src into scratch: lab.h: copy first, then the "
                      "passes read scratch", what);
        }
    }
    sync_all(what);
    XL_CHECK(cudaMemcpy(b->got, out, bytes + GUARD, cudaMemcpyDefault));
    for (size_t k = 0; k < words; k++) {
        uint32_t want = b->init[k] + (uint32_t)reps * b->want[k], got = b->got[k];
        if (got == want)
            continue;
        const char *why = got == b->init[k] ? ": no pass added to it (a grid that stops short? passes run before the "
                                              "kit's copy of out's initial values, on another stream?)"
                          : got == b->init[k] + (uint32_t)reps * POISON_WORD || got == POISON_WORD + (uint32_t)reps *
                          b->want[k] ? ": the passes ran before the kit's copies queued on the stream before the call "
                                       "(launched on another stream, or the legacy one?)"
                                     : ": is out[k] += src[k] done once a pass, each word by one thread?";
        cr_fatal("%s: out[%zu] is 0x%08x, expected 0x%08x (its initial 0x%08x + %d x src[%zu] 0x%08x)%s", what, k, got,
                 want, b->init[k], reps, k, b->want[k], why);
    }
    size_t bad;
    if (words)
        cr_assert(xl_check_poison(b->got + words, GUARD, &bad) == 0,
                  "%s: out[%zu], past the last word (words %zu), changed: a thread past words?", what,
                  words + bad / 4, words);
    if (copied && work) {
        XL_CHECK(cudaMemcpy(b->got, scratch, bytes + GUARD, cudaMemcpyDefault));
        cr_assert(xl_compare(b->got, b->want, bytes, &bad) == 0,
                  "%s: scratch word %zu is 0x%08x, not src's 0x%08x: lab.h: one copy of src's words into scratch", what,
                  bad / 4, b->got[bad / 4], b->want[bad / 4]);
        cr_assert(xl_check_poison(b->got + words, GUARD, &bad) == 0, "%s: scratch written past its words", what);
    }
}

XL_TEST(read, exact, 5, XL_GPU,
        "lab_read_direct and lab_read_copied on GPU 0: 1 word to 16 Mi + 8 Ki at odd offsets, reps 0 to 5 and 9 to "
        "40, one pass over 128 MiB and more, out random with a guard: out[k] += src[k] exactly; direct copies "
        "nothing, copied copies src once before the passes; "
        "launches on the stream given, after the work queued there (the legacy stream in a third)",
        30)
{
    read_bufs b;
    read_bufs_alloc(&b, 0, 0, READ_HUGE_WORDS);
    cudaStream_t s = dev_stream(0);
    const size_t sizes[] = {1, 31, 255, 256, 257, 4097, rndz(2, 200000), READ_MAX_WORDS};
    int third = (int)kit_rand_int(0, 2), k = 0, rep0 = (int)kit_rand_int(0, 5);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int copied = 0; copied < 2; copied++, k++) {
            char label[48];
            snprintf(label, sizeof label, "case %d", k + 1);
            read_case(&b, copied, sizes[i], (rep0 + k) % 6, k % 3 == third ? 0 : s, 0, label);
        }
    /* past 65535 blocks of 256 threads (16,776,960 words): a grid capped there leaves the words past it unread */
    for (int copied = 0; copied < 2; copied++, k++) {
        char label[48];
        snprintf(label, sizeof label, "case %d", k + 1);
        read_case(&b, copied, READ_BIG_WORDS - rndz(0, 4096), (int)kit_rand_int(1, 2), k % 3 == third ? 0 : s, 0,
                  label);
    }
    /* many passes (each one launch that reads src again), small and large: a rule that folds them past some count
     * adds reps x src in fewer launches */
    const size_t many[] = {rndz(1, 4097), rndz(4098, READ_MAX_WORDS)};
    for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
        for (int copied = 0; copied < 2; copied++, k++) {
            char label[48];
            snprintf(label, sizeof label, "case %d", k + 1);
            read_case(&b, copied, many[i], (int)kit_rand_int(9, 40), k % 3 == third ? 0 : s, 0, label);
        }
    /* one pass over 128 MiB and more: lab.h's copy first holds at every size and reps, one pass too */
    for (int copied = 0; copied < 2; copied++, k++) {
        char label[48];
        snprintf(label, sizeof label, "case %d", k + 1);
        read_case(&b, copied, READ_HUGE_WORDS - rndz(0, 4096), 1, k % 3 == third ? 0 : s, 0, label);
    }
    read_bufs_free(&b);
    XL_CHECK(cudaStreamDestroy(s));
}

/* ===== The road through the host ===== */

typedef struct {
    int src_dev, dst_dev;
    size_t cap;
    unsigned char *src_buf, *right;  /* src_dev */
    unsigned char *dst_buf, *probe;  /* dst_dev */
    unsigned char *want, *got, *old; /* host */
    cudaStream_t ss, ds;             /* streams of src_dev and dst_dev */
} stage_bufs;

static void stage_bufs_alloc(stage_bufs *b, int src_dev, int dst_dev, size_t max_bytes)
{
    b->src_dev = src_dev, b->dst_dev = dst_dev, b->cap = max_bytes + OFF_MAX + GUARD + 1;
    b->src_buf = dev_alloc(src_dev, b->cap), b->right = dev_alloc(src_dev, b->cap);
    b->dst_buf = dev_alloc(dst_dev, b->cap), b->probe = dev_alloc(dst_dev, b->cap);
    b->want = host_bytes(b->cap), b->got = host_bytes(b->cap), b->old = host_bytes(b->cap);
    b->ss = dev_stream(src_dev), b->ds = dev_stream(dst_dev);
}

static void stage_bufs_free(stage_bufs *b)
{
    unsigned char *p[] = {b->src_buf, b->right, b->dst_buf, b->probe};
    for (int k = 0; k < 4; k++)
        XL_CHECK(cudaFree(p[k]));
    free(b->want), free(b->got), free(b->old);
    XL_CHECK(cudaStreamDestroy(b->ss));
    XL_CHECK(cudaStreamDestroy(b->ds));
}

/* expect_stage_records - the copies of one lab_stage_copy (w): per chunk c one cudaMemcpyAsync device to host of
 * chunk c of src on src_stream into a page-locked buffer, then one host to device from that buffer into chunk c of
 * dst on dst_stream; chunks in two distinct buffers in turn (c % 2). *bufs gets the two buffers (NULL when fewer). */
static void expect_stage_records(const seen *w, const unsigned char *src, unsigned char *dst, size_t bytes,
                                 size_t chunk, cudaStream_t ss, cudaStream_t ds, const char *what, const void **bufs)
{
    char t[200], sn[48];
    size_t chunks = (bytes + chunk - 1) / chunk;
    bufs[0] = bufs[1] = NULL;
    cr_assert(count_launches(w) == 0, "%s launched %d kernels: lab.h: copies only", what, count_launches(w));
    cr_assert(count_peer(w, XL_PEER_COPY, 0) + count_peer(w, XL_PEER_COPY_SYNC, 0) == 0 && w->batches.calls == 0,
              "%s made a peer copy or a batch: lab.h: the road through the host is cudaMemcpyAsync out into a host "
              "buffer and in from it, chunk by chunk", what);
    cr_assert(2 * chunks == (size_t)w->ncopies,
              "%s made %d copies: lab.h: %zu chunks of %zu bytes (the last %zu), each one copy out and one copy in: %zu",
              what, w->ncopies, chunks, chunk, bytes - (chunks - 1) * chunk, 2 * chunks);
    for (size_t c = 0; c < chunks; c++) {
        size_t n = c == chunks - 1 ? bytes - c * chunk : chunk;
        int out = -1, in = -1;
        for (int k = 0; k < w->ncopies; k++) {
            const xl_copy_rec *r = &w->copies[k];
            if (r->src == src + c * chunk && xl_copy_dir(r) == cudaMemcpyDeviceToHost)
                out = k;
            if (r->dst == dst + c * chunk && xl_copy_dir(r) == cudaMemcpyHostToDevice)
                in = k;
        }
        cr_assert(out >= 0, "%s: no copy out (device to host) of chunk %zu (src + %zu bytes): lab.h: chunk c goes out "
                  "of src into a host buffer as one cudaMemcpyAsync", what, c, c * chunk);
        cr_assert(in >= 0, "%s: no copy in (host to device) of chunk %zu (dst + %zu bytes): lab.h: then from that "
                  "buffer into dst as one cudaMemcpyAsync", what, c, c * chunk);
        const xl_copy_rec *o = &w->copies[out], *i = &w->copies[in];
        cr_assert(o->bytes == n && i->bytes == n, "%s: chunk %zu went out in %zu bytes and in in %zu: lab.h: chunks of "
                  "%zu bytes, the last one what is left (%zu here)", what, c, o->bytes, i->bytes, chunk, n);
        cr_assert(o->async && o->stream == ss, "%s: chunk %zu's copy out went %s: lab.h: every copy out is queued on "
                  "src_stream (%s)", what, c, o->async ? stream_text(o->stream, t, sizeof t) : "with cudaMemcpy",
                  stream_text(ss, sn, sizeof sn));
        cr_assert(i->async && i->stream == ds, "%s: chunk %zu's copy in went %s: lab.h: every copy in is queued on "
                  "dst_stream (%s)", what, c, i->async ? stream_text(i->stream, t, sizeof t) : "with cudaMemcpy",
                  stream_text(ds, sn, sizeof sn));
        cr_assert(i->src == o->dst && out < in, "%s: chunk %zu went out into %p but came in from %p%s", what, c, o->dst,
                  i->src, out < in ? "" : ", and in before it went out");
        if (c < 2)
            bufs[c] = o->dst;
        else
            cr_assert(o->dst == bufs[c % 2], "%s: chunk %zu went through %p, not through buffer %zu (%p), the one "
                      "chunk %zu used: lab.h: two buffers in turn, chunk c in buffer c %% 2", what, c, o->dst, c % 2,
                      bufs[c % 2], c - 2);
    }
    if (chunks >= 2) {
        uintptr_t a = (uintptr_t)bufs[0], b = (uintptr_t)bufs[1];
        cr_assert(chunk <= (a > b ? a - b : b - a),
                  "%s: chunks 0 and 1 went through host buffers %p and %p, less than a chunk (%zu bytes) apart: lab.h: "
                  "two buffers of a chunk each, in turn, so that one fills while the other drains", what, bufs[0],
                  bufs[1], chunk);
    }
    for (int k = 0; k < 2 && k < (int)chunks; k++) {
        cr_assert(kit_is_pinned(bufs[k]), "%s: host buffer %d (%p) is pageable memory: lab.h: page-locked host memory "
                  "(cudaHostAlloc), or the copies cannot run asynchronously", what, k, bufs[k]);
        unsigned int flags = xl_pinned_flags(bufs[k]); /* as asked: the driver's own answer may leave it out */
        cr_assert(flags != ~0u && (flags & cudaHostAllocPortable),
                  "%s: host buffer %d (%p) is %s: lab.h: pinned for every device (cudaHostAlloc with "
                  "cudaHostAllocPortable), or a copy on another GPU's stream cannot use it as pinned memory", what, k,
                  bufs[k], flags == ~0u ? "not from cudaHostAlloc"
                                        : "pinned for the device that made it only (no cudaHostAllocPortable)");
    }
}

/* Which buffer each stage's chunk 0 went through (stage_case): chunk c uses buffer c % 2 in every call, so chunk 0
 * always the same one. new_stage forgets a fresh stage's address (a destroyed stage's may come back). */
#define STAGES_SEEN 64
static struct {
    const lab_stage *s;
    const void *buf0;
} stage_seen[STAGES_SEEN];

/* stage_forget - no buffer known for s (just made) */
static void stage_forget(const lab_stage *s)
{
    for (int k = 0; k < STAGES_SEEN; k++)
        if (stage_seen[k].s == s)
            stage_seen[k].s = NULL;
}

/* expect_stage_chunk0_buffer - chunk 0 of this call through s went through buf0: the buffer chunk 0 of s's earlier
 * calls used (what names the call) */
static void expect_stage_chunk0_buffer(const lab_stage *s, const void *buf0, const char *what)
{
    int free_slot = -1;
    for (int k = 0; k < STAGES_SEEN; k++) {
        if (stage_seen[k].s == s) {
            cr_assert(stage_seen[k].buf0 == buf0, "%s: chunk 0 went through host buffer %p, but chunk 0 of an earlier "
                      "copy through this stage went through %p: lab.h: chunk c goes into buffer c %% 2 in every call, "
                      "so chunk 0 always into buffer 0 (do not carry the turn over from one call to the next)", what,
                      buf0, stage_seen[k].buf0);
            return;
        }
        if (!stage_seen[k].s && free_slot < 0)
            free_slot = k;
    }
    if (free_slot >= 0)
        stage_seen[free_slot].s = s, stage_seen[free_slot].buf0 = buf0;
}

/* One staged copy's setup. */
enum { SM_TWO, SM_ONE, SM_LEGACY }; /* streams: src_stream and dst_stream distinct, one stream for both, legacy */

/* stage_case - lab_stage_copy through s of bytes (chunk chunk) at odd offsets: fresh data, dst poisoned; before the
 * call BUSY_NS then the copy of the real data into src on src_stream, and BUSY_NS then a late memset of dst on
 * dst_stream; a readback of dst on dst_stream after; every check */
static void stage_case(lab_stage *s, stage_bufs *b, size_t chunk, size_t bytes, int mode, const char *label)
{
    static seen w;
    const char *modes[] = {"two streams", "one stream for both", "the legacy stream for both"};
    char what[400];
    size_t os = rndz(0, OFF_MAX), od = rndz(0, OFF_MAX);
    unsigned char *src = b->src_buf + os, *dst = b->dst_buf + od;
    cudaStream_t ss = mode == SM_LEGACY ? 0 : b->ss, ds = mode == SM_LEGACY ? 0 : mode == SM_ONE ? b->ss : b->ds;
    snprintf(what, sizeof what, "%s: lab_stage_copy of %zu bytes in chunks of %zu from GPU %d (src at offset %zu) to "
             "GPU %d (dst at offset %zu), %s", label, bytes, chunk, b->src_dev, os, b->dst_dev, od, modes[mode]);
    xl_fill_random(b->want, bytes, xl_fresh_seed());
    upload_on(b->src_dev, b->right, b->want, bytes);
    fill_on(b->src_dev, b->src_buf, XL_POISON_BYTE, bytes + OFF_MAX + GUARD);
    fill_on(b->dst_dev, b->dst_buf, XL_POISON_BYTE, bytes + OFF_MAX + GUARD);
    kit_use_device(b->src_dev);
    kit_queue_busy_copy(ss, BUSY_NS, src, b->right, bytes);
    kit_use_device(b->dst_dev);
    kit_queue_busy_memset(ds, BUSY_NS, dst, 0x3C, bytes);
    int cur = (int)kit_rand_int(0, 1) ? b->src_dev : b->dst_dev;
    kit_use_device(cur);
    args a = {.stage = s, .dst = dst, .src = src, .bytes = bytes, .stream = ss, .stream2 = ds};
    watch(call_stage_copy, &a, &w, W_GUARD, what, "lab_stage_copy");
    expect_device_kept(cur, what, "lab_stage_copy");
    kit_use_device(b->dst_dev);
    XL_CHECK(cudaMemcpyAsync(b->probe, dst, bytes, cudaMemcpyDeviceToDevice, ds));
    cr_assert(w.rc == 0, "%s returned %d (see its message above; not written yet?)", what, w.rc);
    expect_no_error_left(what, "lab_stage_copy");
    expect_no_peer_setup(&w, what, "lab_stage_copy");
    const void *bufs[2];
    expect_stage_records(&w, src, dst, bytes, chunk, ss, ds, what, bufs);
    expect_stage_chunk0_buffer(s, bufs[0], what);
    sync_all(what);
    XL_CHECK(cudaMemcpy(b->got, dst, bytes + GUARD, cudaMemcpyDefault));
    expect_block(b->got, b->want, bytes, 1, NULL, what, "dst, once the GPUs had finished",
                 "0x3c is the kit's late memset on dst_stream (a copy in that did not follow the work queued there), "
                 "0xa5 the poison src held until the kit's copy on src_stream landed (a copy out that did not follow "
                 "it)");
    XL_CHECK(cudaMemcpy(b->got, b->probe, bytes, cudaMemcpyDefault));
    expect_block(b->got, b->want, bytes, 0, NULL, what, "in a copy of dst the kit queued on dst_stream right after the "
                 "call", "lab.h: work queued on dst_stream after the call sees dst complete");
    XL_CHECK(cudaMemcpy(b->got, src, bytes, cudaMemcpyDefault));
    expect_block(b->got, b->want, bytes, 0, NULL, what, "src, afterwards", "the copy only reads src");
}

/* new_stage - lab_stage_create, which must succeed */
static lab_stage *new_stage(int src_dev, int dst_dev, size_t chunk)
{
    static xl_sync_rec recs[64];
    char call[96];
    xl_synclog_start(recs, 64);
    lab_stage *s = lab_stage_create(src_dev, dst_dev, chunk);
    int n = xl_synclog_stop();
    cr_assert(s != NULL, "lab_stage_create(%d, %d, %zu) returned NULL (see its message above; not written yet?)",
              src_dev, dst_dev, chunk);
    stage_forget(s);
    snprintf(call, sizeof call, "lab_stage_create(%d, %d, %zu)", src_dev, dst_dev, chunk);
    kit_expect_no_host_wait(recs, n < 64 ? n : 64, call, NO_WAIT_RULE);
    return s;
}

XL_TEST(host, exact, 5, XL_GPU,
        "lab_stage_copy from GPU 0 to itself: bytes 1, chunk - 1, chunk, chunk + 1, 3 x chunk +- 1, 64 MiB + 1 in "
        "chunks of 1 MiB + 3 and of LAB_CHUNK_MAX, 2 to 3 chunks of 4 to 16 MiB, 97 bytes in chunks of 1, 300 to 900 "
        "chunks of 1 to 64 bytes, odd offsets, several copies through one stage (chunk 0 in the same buffer in each); "
        "every chunk out on src_stream and in on dst_stream after the work queued there; one stream for both, the "
        "legacy one in a third; the other stages made while the first is alive, used in turn with it, then destroyed: the first still works, and everything is released",
        30)
{
    stage_bufs b;
    stage_bufs_alloc(&b, 0, 0, STAGE_MAX);
    int third = (int)kit_rand_int(0, 2), k = 0;
    char label[160];
    size_t chunk = rndz(4097, 300000);
    kit_held before = kit_held_now();
    lab_stage *s = new_stage(0, 0, chunk);
    const size_t many[] = {1, chunk - 1, chunk, chunk + 1, 2 * chunk, 3 * chunk - 1, 3 * chunk + 1, rndz(1, 9 * chunk)};
    for (size_t i = 0; i < sizeof many / sizeof many[0]; i++, k++) {
        snprintf(label, sizeof label, "copy %zu through one stage", i + 1);
        stage_case(s, &b, chunk, many[i], k % 3 == third ? SM_LEGACY : k % 3 == (third + 1) % 3 ? SM_ONE : SM_TWO,
                   label);
    }
    size_t big = rndz(4 * MIB + 1, 16 * MIB); /* chunks past any piece size of the lab's own, up to LAB_CHUNK_MAX */
    size_t other[][2] = {{MIB + 3, STAGE_MAX},
                         {1, 97},
                         {0, 0}, /* drawn below: 300 to 900 chunks, past any queue bound of the lab's own */
                         {4097, rndz(5, 40) * 4097 + (kit_rand_int(0, 1) ? 1 : -1)},
                         {big, 2 * big + rndz(1, big - 1)},
                         {LAB_CHUNK_MAX, STAGE_MAX}};
    size_t tiny = rndz(1, 64);
    other[2][0] = tiny, other[2][1] = tiny * rndz(299, 899) + rndz(1, tiny);
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++, k++) { /* each stage's buffers and events are its own */
        lab_stage *s2 = new_stage(0, 0, other[i][0]);
        snprintf(label, sizeof label, "a stage of chunk %zu, made while the first (chunk %zu) is alive", other[i][0],
                 chunk);
        stage_case(s2, &b, other[i][0], other[i][1], k % 3 == third ? SM_LEGACY : SM_TWO, label);
        snprintf(label, sizeof label, "the first stage (chunk %zu) again, a stage of chunk %zu alive beside it", chunk,
                 other[i][0]);
        stage_case(s, &b, chunk, rndz(1, 4 * chunk), (k + 1) % 3 == third ? SM_LEGACY : SM_TWO, label);
        lab_stage_destroy(s2);
    }
    snprintf(label, sizeof label, "the first stage (chunk %zu) again, the stages made after it destroyed", chunk);
    stage_case(s, &b, chunk, rndz(2 * chunk, 5 * chunk), SM_TWO, label);
    lab_stage_destroy(s);
    kit_expect_released(before, "lab_stage_create, three more stages made, used and destroyed while it lived, "
                        "copies through all of them and lab_stage_destroy");
    stage_bufs_free(&b);
}

/* stage_attempt - kit_expect_create_failures_said's attempt: lab_stage_create(0, 0, *chunk), destroyed */
static int stage_attempt(void *ctx)
{
    lab_stage *s = lab_stage_create(0, 0, *(const size_t *)ctx);
    if (!s)
        return 1;
    lab_stage_destroy(s);
    return 0;
}

XL_TEST(host, buffers, 5, XL_GPU,
        "lab_stage_create holds page-locked memory for two chunks in at most two allocations (also at LAB_CHUNK_MAX); "
        "each of its creates made to fail in turn: NULL, nothing held, no error left; a copy allocates nothing and "
        "alternates two distinct buffers; destroy right after a copy releases everything, the copy complete",
        30)
{
    char what[200];
    size_t chunk = rndz(65536, 4 * MIB);
    for (int big = 0; big < 2; big++) {
        size_t c = big ? LAB_CHUNK_MAX : chunk;
        snprintf(what, sizeof what, "lab_stage_create(0, 0, %zu)", c);
        kit_held before = kit_held_now();
        lab_stage *s = new_stage(0, 0, c);
        kit_held after = kit_held_now();
        long allocs = after.pinned.allocations - before.pinned.allocations;
        size_t pinned = after.pinned.alloc_bytes - before.pinned.alloc_bytes;
        cr_assert(after.pinned.registrations == before.pinned.registrations && allocs >= 1 && allocs <= 2 &&
                      pinned >= 2 * c,
                  "%s made %ld pinned allocations of %zu bytes in all and %ld registrations: lab.h: page-locked host "
                  "memory for two chunks (%zu bytes), one allocation or two (cudaHostAlloc)", what, allocs, pinned,
                  after.pinned.registrations - before.pinned.registrations, 2 * c);
        cr_assert(after.res.dev_allocations == before.res.dev_allocations && after.res.streams == before.res.streams,
                  "%s made device buffers or streams: lab.h: host memory and events only (the caller's streams)", what);
        lab_stage_destroy(s);
        snprintf(what + strlen(what), sizeof what - strlen(what), " and lab_stage_destroy");
        kit_expect_released(before, what);
    }
    size_t small = rndz(4097, 65536); /* the failure walk repeats the full create dozens of times: small buffers */
    snprintf(what, sizeof what, "lab_stage_create(0, 0, %zu)", small);
    kit_expect_create_failures_said(stage_attempt, &small, what);

    /* a copy through it: records, then destroy right after it */
    stage_bufs b;
    size_t bytes = chunk * rndz(3, 6) + rndz(1, chunk - 1);
    stage_bufs_alloc(&b, 0, 0, bytes);
    kit_held before = kit_held_now();
    lab_stage *s = new_stage(0, 0, chunk);
    stage_case(s, &b, chunk, bytes, SM_TWO, "through a fresh stage");
    xl_fill_random(b.want, bytes, xl_fresh_seed());
    upload_on(0, b.src_buf, b.want, bytes);
    fill_on(0, b.dst_buf, XL_POISON_BYTE, bytes + GUARD);
    int rc = lab_stage_copy(s, b.dst_buf, b.src_buf, bytes, b.ss, b.ds);
    lab_stage_destroy(s);
    snprintf(what, sizeof what, "lab_stage_copy of %zu bytes in chunks of %zu, then lab_stage_destroy at once", bytes,
             chunk);
    cr_assert(rc == 0, "%s: the copy returned %d", what, rc);
    sync_all(what);
    XL_CHECK(cudaMemcpy(b.got, b.dst_buf, bytes + GUARD, cudaMemcpyDefault));
    expect_block(b.got, b.want, bytes, 1, NULL, what, "dst", "lab.h: destroy right after a copy is allowed: its "
                 "cudaFreeHost waits for the device, so the copy completes first");
    expect_no_error_left(what, "lab_stage_destroy");
    kit_expect_released(before, what);
    stage_bufs_free(&b);
}

/* held_copy - lab_stage_copy of bytes into dst from src after fresh data went into src (want) and dst was poisoned,
 * with the stream hold held up HOLD_NS just before the call; returns the call's rc */
static int held_copy(lab_stage *s, stage_bufs *b, unsigned char *dst, unsigned char *src, unsigned char *want,
                     size_t bytes, cudaStream_t hold)
{
    xl_fill_random(want, bytes, xl_fresh_seed());
    upload_on(b->src_dev, src, want, bytes);
    fill_on(b->dst_dev, dst, XL_POISON_BYTE, bytes + GUARD); /* fills wait for the device: before the hold */
    kit_use_device(b->src_dev);
    xl_delay(hold, HOLD_NS);
    return lab_stage_copy(s, dst, src, bytes, b->ss, b->ds);
}

XL_TEST(host, hazards, 10, XL_GPU,
        "lab_stage_copy's waits, each made certain by holding one stream up 10 ms: dst_stream held (a buffer refilled "
        "before its copy in read it), src_stream held with the last copy's data in the buffers (a copy in before its "
        "copy out), two copies back to back with the first's dst_stream held (the previous call's buffers), either "
        "call on two streams, one stream for both or the legacy stream, either of one chunk or more",
        30)
{
    stage_bufs b;
    size_t chunk = rndz(65536, 262144), bytes = chunk * rndz(4, 9) + rndz(1, chunk - 1);
    stage_bufs_alloc(&b, 0, 0, 2 * bytes + 2 * GUARD); /* two blocks with their guards, for the back-to-back copies */
    lab_stage *s = new_stage(0, 0, chunk);
    char what[300];
    unsigned char *dst2 = b.dst_buf + bytes + GUARD, *src2 = b.src_buf + bytes;
    unsigned char *want2 = host_bytes(bytes);

    /* 1: dst_stream held: the copies out run at once, the copies in late; a third copy out into buffer 0 must wait
     * for the first copy in */
    snprintf(what, sizeof what, "lab_stage_copy of %zu bytes in chunks of %zu with dst_stream held up 10 ms before "
             "the call", bytes, chunk);
    cr_assert(held_copy(s, &b, b.dst_buf, b.src_buf, b.want, bytes, b.ds) == 0, "%s returned an error", what);
    sync_all(what);
    XL_CHECK(cudaMemcpy(b.got, b.dst_buf, bytes + GUARD, cudaMemcpyDefault));
    expect_block(b.got, b.want, bytes, 1, NULL, what, "dst",
                 "a copy out refilled a host buffer before the copy in that reads it had run (held up on dst_stream): "
                 "before chunk c goes into buffer c % 2, make src_stream wait for the event recorded on dst_stream "
                 "after that buffer's last copy in");

    /* 2: src_stream held, the buffers holding the last copy's data: a copy in must wait for its copy out */
    snprintf(what, sizeof what, "lab_stage_copy of %zu bytes in chunks of %zu with src_stream held up 10 ms before "
             "the call (the host buffers still holding the previous copy's data)", bytes, chunk);
    cr_assert(held_copy(s, &b, b.dst_buf, b.src_buf, b.want, bytes, b.ss) == 0, "%s returned an error", what);
    sync_all(what);
    XL_CHECK(cudaMemcpy(b.got, b.dst_buf, bytes + GUARD, cudaMemcpyDefault));
    expect_block(b.got, b.want, bytes, 1, NULL, what, "dst",
                 "a copy in read a host buffer before the copy out that fills it had run (held up on src_stream), "
                 "carrying the previous copy's data: make dst_stream wait for the event recorded on src_stream after "
                 "the chunk's copy out");

    /* 3: two calls back to back through one stage, the first call's copy-in stream held: a buffer is refilled only
     * after the copy in that last read it, an earlier call's too, whatever streams either call was given (two, one
     * stream for both, the legacy stream): the second call's copies out run at once on a stream not held, and its
     * copies in (where they share the first's held stream) run after the first's */
    cudaStream_t x = dev_stream(0);
    const struct {
        cudaStream_t s1, d1, s2, d2;
        const char *how;
    } pairs[] = {
        {b.ss, b.ds, b.ss, b.ds, "both on src_stream and dst_stream"},
        {b.ds, b.ds, b.ss, b.ds, "the first on dst_stream for both, the second on src_stream and dst_stream"},
        {0, 0, b.ss, 0, "the first on the legacy stream for both, the second on src_stream and the legacy stream"},
        {b.ss, b.ds, x, x, "the first on src_stream and dst_stream, the second on a third stream for both"},
        {b.ss, b.ds, 0, 0, "the first on src_stream and dst_stream, the second on the legacy stream for both"},
    };
    const char *hint = "a host buffer was refilled while the other call still needed it: lab.h: a buffer is written "
                       "only after the copy in that last read it has finished, an earlier call's too, whatever the "
                       "streams (keep the events in the stage, record them in every call, on one stream too, and wait "
                       "for them in the next)";
    /* each pair of calls with chunks and more in both, then one chunk in the first, in the second, in both: a call of
     * one chunk reuses no buffer within itself, but still follows and guards the calls around it */
    for (int shape = 0; shape < 4; shape++)
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
            size_t b1 = shape & 1 ? rndz(1, chunk) : bytes, b2 = shape & 2 ? rndz(1, chunk) : bytes;
            snprintf(what, sizeof what, "two lab_stage_copy calls back to back (%zu bytes, then %zu, chunks of %zu), "
                     "%s, the first's dst_stream held up 10 ms before it", b1, b2, chunk, pairs[p].how);
            xl_fill_random(b.want, b1, xl_fresh_seed());
            xl_fill_random(want2, b2, xl_fresh_seed());
            upload_on(0, b.src_buf, b.want, b1);
            upload_on(0, src2, want2, b2);
            fill_on(0, b.dst_buf, XL_POISON_BYTE, 2 * bytes + 2 * GUARD);
            kit_use_device(0);
            xl_delay(pairs[p].d1, HOLD_NS);
            int rc1 = lab_stage_copy(s, b.dst_buf, b.src_buf, b1, pairs[p].s1, pairs[p].d1);
            int rc2 = lab_stage_copy(s, dst2, src2, b2, pairs[p].s2, pairs[p].d2);
            cr_assert(rc1 == 0 && rc2 == 0, "%s: they returned %d and %d", what, rc1, rc2);
            sync_all(what);
            XL_CHECK(cudaMemcpy(b.got, b.dst_buf, b1 + GUARD, cudaMemcpyDefault));
            expect_block(b.got, b.want, b1, 1, NULL, what, "the first call's dst", hint);
            XL_CHECK(cudaMemcpy(b.got, dst2, b2 + GUARD, cudaMemcpyDefault));
            expect_block(b.got, want2, b2, 1, NULL, what, "the second call's dst", hint);
        }
    XL_CHECK(cudaStreamDestroy(x));
    free(want2);
    lab_stage_destroy(s);
    stage_bufs_free(&b);
}

/* ===== Waits ===== */

enum { NW_COPY, NW_RING, NW_DIRECT, NW_COPIED, NW_STAGE, NW_CALLS };
static const char *const nw_names[NW_CALLS] = {"lab_peer_copy", "lab_ring_exchange (3 ranks)", "lab_read_direct (reps 2)",
                                               "lab_read_copied (reps 2)", "lab_stage_copy (4 chunks)"};

typedef struct {
    unsigned char *src, *dst[NW_CALLS];  /* device, NARROW_BYTES each; the ring's blocks are dst[NW_RING] thirds */
    uint32_t *out[2], *scratch;
    lab_group *g;
    lab_stage *stage;
    cudaStream_t s[4];
    void *send[3], *recv[3];
    int rc[NW_CALLS];
} narrow_ctx;

static void narrow_call(void *ctx, int k)
{
    narrow_ctx *c = ctx;
    lab_read_job j = {k == NW_DIRECT ? c->out[0] : c->out[1], 0, (const uint32_t *)c->src, 0, NARROW_BYTES / 4};
    switch (k) {
    case NW_COPY: c->rc[k] = lab_peer_copy(c->dst[NW_COPY], 0, c->src, 0, NARROW_BYTES, c->s[0]); break;
    case NW_RING: c->rc[k] = lab_ring_exchange(c->g, c->send, c->recv, NARROW_BYTES / 4, c->s + 1); break;
    case NW_DIRECT: c->rc[k] = lab_read_direct(&j, 2, c->s[0]); break;
    case NW_COPIED: c->rc[k] = lab_read_copied(&j, c->scratch, 2, c->s[0]); break;
    default: c->rc[k] = lab_stage_copy(c->stage, c->dst[NW_STAGE], c->src, NARROW_BYTES, c->s[0], c->s[1]); break;
    }
}

/* narrow_results - every call's result once the GPU is done: copies carry src, reads add it twice to init */
static void narrow_results(narrow_ctx *c, const unsigned char *want, const uint32_t *init, unsigned char *got,
                           const char *when)
{
    for (int k = 0; k < NW_CALLS; k++)
        cr_assert(c->rc[k] == 0, "%s %s returned %d (see its message above)", nw_names[k], when, c->rc[k]);
    sync_all(when);
    size_t bad, third = NARROW_BYTES / 4;
    const int copies[] = {NW_COPY, NW_STAGE};
    for (int i = 0; i < 2; i++) {
        XL_CHECK(cudaMemcpy(got, c->dst[copies[i]], NARROW_BYTES, cudaMemcpyDeviceToHost));
        cr_assert(xl_compare(got, want, NARROW_BYTES, &bad) == 0, "%s %s: byte %zu of dst is wrong", nw_names[copies[i]],
                  when, bad);
    }
    for (int r = 0; r < 3; r++) {
        XL_CHECK(cudaMemcpy(got, c->recv[(r + 1) % 3], third, cudaMemcpyDeviceToHost));
        cr_assert(xl_compare(got, want + r * third, third, &bad) == 0, "%s %s: byte %zu of recv[%d] is wrong",
                  nw_names[NW_RING], when, bad, (r + 1) % 3);
    }
    const uint32_t *w = (const uint32_t *)want;
    for (int i = 0; i < 2; i++) {
        XL_CHECK(cudaMemcpy(got, c->out[i], NARROW_BYTES, cudaMemcpyDeviceToHost));
        const uint32_t *o = (const uint32_t *)got;
        for (size_t k = 0; k < NARROW_BYTES / 4; k++)
            if (o[k] != init[k] + 2 * w[k])
                cr_fatal("%s %s: out[%zu] is 0x%08x, not 0x%08x", nw_names[NW_DIRECT + i], when, k, o[k],
                         init[k] + 2 * w[k]);
    }
}

/* narrow_prepare - fresh src, poisoned destinations, outs at init */
static void narrow_prepare(narrow_ctx *c, unsigned char *want, uint32_t *init)
{
    xl_fill_random(want, NARROW_BYTES, xl_fresh_seed());
    xl_fill_random(init, NARROW_BYTES, xl_fresh_seed());
    kit_use_device(0);
    xl_dev_upload(c->src, want, NARROW_BYTES);
    for (int k = 0; k < NW_CALLS; k++)
        xl_dev_fill(c->dst[k], XL_POISON_BYTE, NARROW_BYTES);
    xl_dev_upload(c->out[0], init, NARROW_BYTES);
    xl_dev_upload(c->out[1], init, NARROW_BYTES);
}

XL_TEST(wait, narrow, 5, XL_TIMED,
        "lab_peer_copy, lab_ring_exchange, both reads and lab_stage_copy wait for nothing: beside a 300 ms kernel on "
        "the legacy stream they take under 150 ms in all, and each returns in under " XL_STR(OWN_MS) " ms with its "
        "own streams held up 50 ms (lab_stage_copy also right after an earlier call's held copies in)",
        30)
{
    static narrow_ctx c;
    int devs[3] = {0, 0, 0}, peer;
    unsigned char *want = host_bytes(NARROW_BYTES), *got = host_bytes(NARROW_BYTES);
    uint32_t *init = (uint32_t *)host_bytes(NARROW_BYTES);
    kit_use_device(0);
    c.src = kit_dev_alloc(NARROW_BYTES);
    for (int k = 0; k < NW_CALLS; k++)
        c.dst[k] = kit_dev_alloc(NARROW_BYTES);
    c.out[0] = (uint32_t *)c.dst[NW_DIRECT], c.out[1] = (uint32_t *)c.dst[NW_COPIED];
    c.scratch = kit_dev_alloc(NARROW_BYTES);
    for (int i = 0; i < 4; i++)
        c.s[i] = kit_stream();
    for (int r = 0; r < 3; r++)
        c.send[r] = c.src + r * (NARROW_BYTES / 4), c.recv[r] = c.dst[NW_RING] + r * (NARROW_BYTES / 4);
    c.g = lab_group_create(devs, 3, &peer);
    cr_assert(c.g != NULL, "lab_group_create({0, 0, 0}) returned NULL (see its message above)");
    c.stage = new_stage(0, 0, NARROW_BYTES / 4);
    narrow_prepare(&c, want, init); /* warm-up: every kernel loaded, every path taken once */
    for (int k = 0; k < NW_CALLS; k++)
        narrow_call(&c, k);
    narrow_results(&c, want, init, got, "in the warm-up");

    narrow_prepare(&c, want, init);
    double ms[NW_CALLS];
    double total = kit_ms_beside_busy_each(narrow_call, &c, NW_CALLS, KIT_OTHER_NS, ms);
    narrow_results(&c, want, init, got, "beside the kit's 300 ms kernel");
    char each[400] = "";
    for (int k = 0; k < NW_CALLS; k++)
        snprintf(each + strlen(each), sizeof each - strlen(each), "%s%s %.1f", k ? ", " : "", nw_names[k], ms[k]);
    xl_timed_check(total, XL_AT_MOST(KIT_NARROW_MS), "the calls' time beside an unrelated kernel (ms)",
                   "the five calls took %.1f ms in all (%s ms) while an unrelated 300 ms kernel ran on the legacy "
                   "stream: one of them waited for the whole device (cudaDeviceSynchronize), for the legacy stream, or "
                   "queued work on it. lab.h: each call queues its work on the streams given and returns without "
                   "waiting", total, each);

    narrow_prepare(&c, want, init);
    double worst = 0;
    int worst_k = 0;
    for (int k = 0; k < NW_CALLS; k++) {
        int used = k == NW_RING ? 3 : k == NW_STAGE ? 2 : 1;
        kit_use_device(0);
        for (int i = 0; i < used; i++)
            xl_delay(c.s[(k == NW_RING ? 1 : 0) + i], OWN_HOLD_NS);
        if (k == NW_STAGE) { /* an earlier call through the stage, on other streams, its copies in held up too: the
                              * timed call guards the buffers against them with events, not by waiting on the host */
            xl_delay(c.s[3], OWN_HOLD_NS);
            int rc = lab_stage_copy(c.stage, c.dst[NW_STAGE], c.src, NARROW_BYTES, c.s[2], c.s[3]);
            cr_assert(rc == 0, "lab_stage_copy (4 chunks) on two other streams, the one before the timed call, "
                      "returned %d (see its message above)", rc);
        }
        double t0 = xl_now_ms();
        narrow_call(&c, k);
        ms[k] = xl_now_ms() - t0;
        if (ms[k] > worst)
            worst = ms[k], worst_k = k;
    }
    narrow_results(&c, want, init, got, "with its own streams held up 50 ms");
    each[0] = '\0';
    for (int k = 0; k < NW_CALLS; k++)
        snprintf(each + strlen(each), sizeof each - strlen(each), "%s%s %.1f", k ? ", " : "", nw_names[k], ms[k]);
    xl_timed_check(worst, XL_AT_MOST(OWN_MS), "the slowest call with its own streams held up (ms)",
                   "%s took %.1f ms to return while the kit held its own streams up 50 ms (all: %s ms; "
                   "lab_stage_copy right after an earlier call through the same stage whose copies in were held up "
                   "too): it waited on the host for that work (cudaStreamSynchronize, cudaEventSynchronize, a loop on "
                   "cudaEventQuery). lab.h: order the work with events on the GPU (cudaStreamWaitEvent); the caller "
                   "waits", nw_names[worst_k], worst, each);
    lab_stage_destroy(c.stage);
    destroy_group(c.g, "the group of wait.narrow, after its rings");
    XL_CHECK(cudaFree(c.src));
    for (int k = 0; k < NW_CALLS; k++)
        XL_CHECK(cudaFree(c.dst[k]));
    XL_CHECK(cudaFree(c.scratch));
    for (int i = 0; i < 4; i++)
        XL_CHECK(cudaStreamDestroy(c.s[i]));
    free(want), free(got), free(init);
}

/* ===== Speed: the road through the host ===== */

typedef struct {
    int src_dev, dst_dev;
    base_stage *kit;
    lab_stage *yours;
    unsigned char *src, *dst, *kit_dst, *scratch;
    cudaStream_t ss, ds;
    uint64_t want;
    int cross; /* the devices differ: each copy has a link of its own */
    double serial_ms, yours_ms; /* the last attempt's medians, for #2 */
} host_speed;

/* host_round - one timed run (0 the kit's ideal, 1 its serial, 2 yours): from the call to dst_stream's end, host clock;
 * then the destination's hash */
static double host_round(host_speed *x, int which)
{
    unsigned char *dst = which == 0 ? x->scratch : which == 1 ? x->kit_dst : x->dst;
    if (which)
        fill_on(x->dst_dev, dst, XL_POISON_BYTE, SPEED_HOST_BYTES);
    kit_use_device(x->src_dev);
    XL_CHECK(cudaDeviceSynchronize());
    double t0 = xl_now_ms();
    int rc = which == 0 ? base_stage_ideal(x->kit, dst, x->src, SPEED_HOST_BYTES, x->ss, x->ds)
             : which == 1 ? base_stage_serial(x->kit, dst, x->src, SPEED_HOST_BYTES, x->ss, x->ds)
                          : lab_stage_copy(x->yours, dst, x->src, SPEED_HOST_BYTES, x->ss, x->ds);
    XL_CHECK(cudaStreamSynchronize(x->ds));
    double ms = xl_now_ms() - t0;
    cr_assert(rc == 0, "in speed.host, %s returned %d (see its message above)",
              which == 2 ? "lab_stage_copy" : "the kit's staging", rc);
    if (which) {
        int ok = 1;
        uint64_t h = base_hash(dst, x->dst_dev, SPEED_HOST_BYTES, x->ds, &ok);
        cr_assert(ok, "grader error: base_hash failed");
        if (which == 2)
            cr_assert(h == x->want, "in speed.host, lab_stage_copy (128 MiB in chunks of 4 MiB, GPU %d to GPU %d) left "
                      "dst wrong (its hash differs from src's), right after the same call was timed: does it wait for "
                      "every buffer, and keep no state from one call to the next that it should not?",
                      x->src_dev, x->dst_dev);
        cr_assert(h == x->want, "grader error: the kit's serial staging left dst wrong");
    }
    return ms;
}

static void measure_host(void *ctx, double *eff, char *figures, size_t len)
{
    host_speed *x = ctx;
    double ideal[SPEED_ROUNDS], serial[SPEED_ROUNDS], yours[SPEED_ROUNDS], e[SPEED_ROUNDS];
    for (int w = 0; w < 3; w++) /* warm-up */
        host_round(x, w);
    for (int r = 0; r < SPEED_ROUNDS; r++) {
        ideal[r] = host_round(x, 0);
        serial[r] = host_round(x, 1);
        yours[r] = host_round(x, 2);
        e[r] = (serial[r] - yours[r]) / (serial[r] - ideal[r]);
    }
    double mi = xl_median(ideal, SPEED_ROUNDS), ms = xl_median(serial, SPEED_ROUNDS), my = xl_median(yours,
                                                                                                   SPEED_ROUNDS);
    *eff = xl_median(e, SPEED_ROUNDS);
    x->serial_ms = ms, x->yours_ms = my;
    xl_sound_spread(serial, SPEED_ROUNDS, XL_SOUND_SPREAD, "the kit's serial staging (ms)");
    xl_sound_within(ms / mi, XL_SOUND_SEQ_OVER_IDEAL, INFINITY, "the kit's serial time over its ideal time");
    xl_sound_within(*eff, -INFINITY, XL_EFF_MAX, "the efficiency");
    snprintf(figures, len, "128 MiB in chunks of 4 MiB, GPU %d to GPU %d, medians of %d rounds: the kit's serial %.2f "
             "ms (%.1f GB/s), yours %.2f ms (%.1f GB/s), the kit's ideal %.2f ms (%.1f GB/s); efficiency %.2f",
             x->src_dev, x->dst_dev, SPEED_ROUNDS, ms, SPEED_HOST_BYTES * 1e-6 / ms, my, SPEED_HOST_BYTES * 1e-6 / my,
             mi, SPEED_HOST_BYTES * 1e-6 / mi, *eff);
}

static void measure_host_x(void *ctx, double *ratio, char *figures, size_t len)
{
    host_speed *x = ctx;
    double serial[SPEED_ROUNDS], yours[SPEED_ROUNDS];
    for (int r = 0; r < SPEED_ROUNDS; r++) {
        serial[r] = host_round(x, 1);
        yours[r] = host_round(x, 2);
    }
    double ms = xl_median(serial, SPEED_ROUNDS), my = xl_median(yours, SPEED_ROUNDS);
    *ratio = ms / my;
    xl_sound_spread(serial, SPEED_ROUNDS, XL_SOUND_SPREAD, "the kit's serial staging (ms)");
    xl_sound_within(*ratio, 0, 2.0 * XL_FASTER_MAX, "yours over the kit's serial staging");
    snprintf(figures, len, "128 MiB in chunks of 4 MiB, GPU %d to GPU %d (%s), medians of %d rounds: the "
             "kit's serial %.2f ms, yours %.2f ms: %.2fx", x->src_dev, x->dst_dev,
             x->cross ? "a link each" : "both copies on its one link", SPEED_ROUNDS, ms, my, *ratio);
}

/* read_round - one timed lab_read_direct (yours 1) or base_read_direct (0) of 128 MiB, reps 4, on one GPU (dst_dev:
 * scratch read, dst added to), from the call to the stream's end, host clock */
static double read_round(host_speed *x, int yours)
{
    lab_read_job j = {(uint32_t *)x->dst, x->dst_dev, (const uint32_t *)x->scratch, x->dst_dev, SPEED_HOST_BYTES / 4};
    kit_use_device(x->dst_dev);
    XL_CHECK(cudaDeviceSynchronize());
    double t0 = xl_now_ms();
    int rc = yours ? lab_read_direct(&j, 4, x->ds) : base_read_direct(&j, 4, x->ds);
    XL_CHECK(cudaStreamSynchronize(x->ds));
    double ms = xl_now_ms() - t0;
    cr_assert(rc == 0, "in speed.host, %s of 128 MiB on GPU %d (reps 4) returned %d (see its message above)",
              yours ? "lab_read_direct" : "the kit's base_read_direct", x->dst_dev, rc);
    return ms;
}

/* measure_read_local - #3: lab_read_direct on one GPU against the kit's: a kernel whose consecutive threads take
 * words far apart (lab.h: consecutive threads take consecutive words) splits every warp's load */
static void measure_read_local(void *ctx, double *ratio, char *figures, size_t len)
{
    host_speed *x = ctx;
    double kit[SPEED_ROUNDS], yours[SPEED_ROUNDS];
    read_round(x, 0), read_round(x, 1); /* warm-up */
    for (int r = 0; r < SPEED_ROUNDS; r++) {
        if (r % 2) /* in alternating order */
            yours[r] = read_round(x, 1), kit[r] = read_round(x, 0);
        else
            kit[r] = read_round(x, 0), yours[r] = read_round(x, 1);
    }
    double mk = xl_median(kit, SPEED_ROUNDS), my = xl_median(yours, SPEED_ROUNDS);
    *ratio = mk / my;
    xl_sound_spread(kit, SPEED_ROUNDS, XL_SOUND_SPREAD, "the kit's base_read_direct (ms)");
    snprintf(figures, len, "lab_read_direct of 128 MiB, reps 4, on GPU %d, medians of %d rounds: yours %.3f ms, the "
             "kit's %.3f ms: %.0f%%", x->dst_dev, SPEED_ROUNDS, my, mk, 100 * *ratio);
}

XL_TEST(speed, host, 5, XL_TIMED,
        "lab_stage_copy, 128 MiB in chunks of 4 MiB (GPU 0 to 1 where there are two, else 0 to 0): overlap efficiency "
        ">= " XL_STR(STAGE_EFF_NEED) " against the kit's serial staging and its ideal, interleaved, and >= "
        XL_STR(STAGE_X_NEED) "x the kit's serial; lab_read_direct of 128 MiB on one GPU >= " XL_STR(READ_KIT_NEED)
        "% of the kit's rate",
        60)
{
    static host_speed x;
    x.src_dev = 0, x.dst_dev = gpus() >= 2 ? 1 : 0, x.cross = x.dst_dev != x.src_dev;
    x.src = dev_alloc(x.src_dev, SPEED_HOST_BYTES);
    x.ss = dev_stream(x.src_dev);
    x.dst = dev_alloc(x.dst_dev, SPEED_HOST_BYTES), x.kit_dst = dev_alloc(x.dst_dev, SPEED_HOST_BYTES);
    x.scratch = dev_alloc(x.dst_dev, SPEED_HOST_BYTES);
    x.ds = dev_stream(x.dst_dev);
    kit_use_device(x.src_dev);
    cr_assert(base_fill_mix(x.src, x.src_dev, SPEED_HOST_BYTES, xl_fresh_seed(), x.ss) == 0,
              "grader error: base_fill_mix failed");
    int ok = 1;
    x.want = base_hash(x.src, x.src_dev, SPEED_HOST_BYTES, x.ss, &ok);
    cr_assert(ok, "grader error: base_hash failed");
    x.kit = base_stage_create(x.src_dev, x.dst_dev, SPEED_HOST_CHUNK);
    cr_assert(x.kit != NULL, "grader error: base_stage_create failed");
    x.yours = new_stage(x.src_dev, x.dst_dev, SPEED_HOST_CHUNK);
    char what[120];
    snprintf(what, sizeof what, "overlap efficiency of the staged copy, GPU %d to GPU %d", x.src_dev, x.dst_dev);
    xl_ratio_check(measure_host, &x, XL_AT_LEAST(STAGE_EFF_NEED), what);
    xl_ratio_check(measure_host_x, &x, XL_AT_LEAST_X(STAGE_X_NEED),
                   x.cross ? "the staged copy between two GPUs against the kit's serial staging"
                           : "the staged copy on one GPU against the kit's serial staging");
    xl_ratio_check(measure_read_local, &x, XL_AT_LEAST_PCT(READ_KIT_NEED),
                   "lab_read_direct on one GPU against the kit's (lab.h: consecutive threads take consecutive words, "
                   "so that a warp's load is whole lines: thread t of block b on word b x blockDim + t)");
    lab_stage_destroy(x.yours);
    base_stage_destroy(x.kit);
    unsigned char *p[] = {x.src, x.dst, x.kit_dst, x.scratch};
    for (int k = 0; k < 4; k++)
        XL_CHECK(cudaFree(p[k]));
    XL_CHECK(cudaStreamDestroy(x.ss));
    XL_CHECK(cudaStreamDestroy(x.ds));
}

/* ===== Two GPUs: groups ===== */

XL_TEST(group, nopath, 5, XL_GPU2,
        "without a peer path one way (0 to 1 denied, then 1 to 0): lab_group_create gives *peer 0 with exactly one "
        "line, enables neither direction, and its ring of {0, 1, 0} is still exact (through the host); destroy "
        "disables nothing",
        30)
{
    static made_group m;
    int devs[3] = {0, 1, 0};
    char what[200];
    for (int way = 0; way < 2; way++) {
        kit_peer_reset();
        xl_peer_deny(way ? 1 : 0, way ? 0 : 1);
        int cur = (int)kit_rand_int(0, 1);
        snprintf(what, sizeof what, "lab_group_create({0, 1, 0}, 3, &peer) where GPU %d cannot reach GPU %d (GPU %d "
                 "current)", way ? 1 : 0, way ? 0 : 1, cur);
        make_group(&m, devs, 3, cur, what);
        cr_assert(m.peer == 0, "%s set *peer to %d: lab.h: 0 when a pair lacks access either way", what, m.peer);
        cr_assert(m.w.lines == 1, "%s wrote %d lines to stderr%s%s: lab.h: exactly one line for the whole call, naming "
                  "the first pair without a path", what, m.w.lines, m.w.lines ? ": " : "", m.w.text);
        cr_assert(0 == (kit_peer_enabled(0, 1) || kit_peer_enabled(1, 0)),
                  "%s left peer access enabled (0 to 1: %d, 1 to 0: %d): lab.h: when either direction cannot, enable "
                  "neither (that pair's copies go through the host)", what, kit_peer_enabled(0, 1),
                  kit_peer_enabled(1, 0));
        char label[300];
        snprintf(label, sizeof label, "the group of %s", what);
        ring_case(m.g, devs, 3, S_OWN, (int)kit_rand_int(0, 2), ring_bytes((int)kit_rand_int(0, 7)), cur, label);
        static seen w2;
        kit_use_device(cur);
        xl_peerlog_start(w2.peer, MAX_PEER);
        destroy_group(m.g, what);
        w2.npeer = xl_peerlog_stop();
        expect_no_error_left(what, "lab_group_destroy");
        cr_assert(count_peer(&w2, XL_PEER_DISABLE, 1) == 0, "lab_group_destroy of %s disabled peer access it never "
                  "enabled: lab.h: it disables exactly what create enabled", what);
        xl_peer_deny(-1, -1);
    }
    slots_free();
}

/* expect_asked_first - every enable in w (a -> b) came after a question of a about b answered 1 */
static void expect_asked_first(const seen *w, const char *what)
{
    for (int k = 0; k < w->npeer && k < MAX_PEER; k++) {
        const xl_peer_rec *e = &w->peer[k];
        if (e->kind != XL_PEER_ENABLE)
            continue;
        int asked = 0;
        for (int q = 0; q < k; q++)
            asked |= w->peer[q].kind == XL_PEER_CAN && w->peer[q].device == e->device && w->peer[q].peer == e->peer &&
                     w->peer[q].answer == 1;
        cr_assert(asked, "%s enabled GPU %d to GPU %d before asking cudaDeviceCanAccessPeer(&can, %d, %d): lab.h: ask "
                  "both ways first; enable only when both can", what, e->device, e->peer, e->device, e->peer);
    }
}

/* peer_group_case - a group of devs with GPU cur current, in a peer state made by the kit (pre bit 1: 0 -> 1 already
 * enabled, bit 2: 1 -> 0): *peer 1, no line, no error left, the device kept, both directions enabled, asked first;
 * then destroy: exactly what was enabled before stays enabled */
static void peer_group_case(const int *devs, int n, int pre)
{
    static made_group m;
    char what[300], d[64];
    int cur = devs[n - 1];
    kit_peer_reset();
    if (pre & 1) {
        kit_use_device(0);
        XL_CHECK(xl_peer_enable_unlogged(1));
    }
    if (pre & 2) {
        kit_use_device(1);
        XL_CHECK(xl_peer_enable_unlogged(0));
    }
    snprintf(what, sizeof what, "lab_group_create(%s, %d, &peer) with GPU %d current and %s", devs_text(devs, n, d,
             sizeof d), n, cur, pre == 0 ? "no peer access enabled before" : pre == 1 ? "0 to 1 already enabled by "
             "someone else" : pre == 2 ? "1 to 0 already enabled by someone else" : "both ways already enabled by "
             "someone else");
    kit_held before = kit_held_now();
    make_group(&m, devs, n, cur, what); /* the group, the device kept, no error left (already enabled: cleared) */
    cr_assert(m.peer == 1 && m.w.lines == 0, "%s set *peer to %d%s%s: lab.h: 1 and nothing printed where both GPUs "
              "reach each other", what, m.peer, m.w.lines ? " and wrote: " : "", m.w.text);
    cr_assert(kit_peer_enabled(0, 1) && kit_peer_enabled(1, 0), "%s left peer access 0 to 1: %d, 1 to 0: %d: lab.h: "
              "enable both ways", what, kit_peer_enabled(0, 1), kit_peer_enabled(1, 0));
    expect_asked_first(&m.w, what);
    snprintf(what + strlen(what), sizeof what - strlen(what), ", then lab_group_destroy");
    kit_use_device(cur);
    destroy_group(m.g, what);
    expect_device_kept(cur, what, "lab_group_destroy");
    expect_no_error_left(what, "lab_group_destroy");
    cr_assert(kit_peer_enabled(0, 1) == ((pre & 1) != 0) && kit_peer_enabled(1, 0) == ((pre & 2) != 0),
              "%s: afterwards 0 to 1 is %s and 1 to 0 %s: lab.h: destroy disables exactly the directions its create "
              "enabled; those already enabled before stay enabled", what,
              kit_peer_enabled(0, 1) ? "enabled" : "disabled", kit_peer_enabled(1, 0) ? "enabled" : "disabled");
    kit_expect_released(before, what);
}

XL_TEST(group, peer, 10, XL_GPU2,
        "lab_group_create of GPUs 0 and 1: each direction asked first, both enabled, *peer 1; one or both already "
        "enabled by someone else counts as enabled, its error cleared, and destroy leaves it enabled; nested groups; "
        "{0, 1, 0, 1}; the current device kept; each enable and event create made to fail in turn: NULL, nothing "
        "left enabled or held",
        60)
{
    const int two[2] = {0, 1}, rev[2] = {1, 0}, four[4] = {0, 1, 0, 1};
    peer_group_case(two, 2, 0);
    peer_group_case(rev, 2, 2);
    peer_group_case(two, 2, 1);
    peer_group_case(four, 4, 3);
    peer_group_case(four, 4, 0);

    /* nested: the inner group finds both directions enabled and owns nothing */
    static made_group outer, inner;
    const int three[3] = {1, 0, 1};
    kit_peer_reset();
    make_group(&outer, two, 2, 0, "lab_group_create({0, 1}) (the outer group)");
    make_group(&inner, three, 3, 1, "lab_group_create({1, 0, 1}) inside a live group of {0, 1}");
    cr_assert(inner.peer == 1, "lab_group_create({1, 0, 1}) inside a live group of {0, 1} set *peer to %d", inner.peer);
    destroy_group(inner.g, "the inner group {1, 0, 1}");
    cr_assert(kit_peer_enabled(0, 1) && kit_peer_enabled(1, 0), "destroying a group made inside a live group of the "
              "same GPUs disabled peer access (0 to 1: %d, 1 to 0: %d): the inner group found it enabled and does not "
              "own it (lab.h)", kit_peer_enabled(0, 1), kit_peer_enabled(1, 0));
    destroy_group(outer.g, "the outer group {0, 1}");
    cr_assert(0 == (kit_peer_enabled(0, 1) || kit_peer_enabled(1, 0)), "destroying the outer group left peer access "
              "enabled (0 to 1: %d, 1 to 0: %d): it enabled both and must disable both", kit_peer_enabled(0, 1),
              kit_peer_enabled(1, 0));
    expect_no_error_left("nested groups", "lab_group_destroy");

    kit_peer_reset();
    group_try t = {two, 2, 1};
    kit_expect_create_failures(group_attempt, &t, "lab_group_create({0, 1}, 2, &peer)");
    kit_peer_reset();
}

/* ===== Two GPUs: copies, rings, stages and reads between them ===== */

XL_TEST(peer, exact, 5, XL_GPU2,
        "between GPUs 0 and 1: lab_peer_copy both ways on a stream of the source or of the destination, with and "
        "without a group; rings of {0, 1}, {0, 1, 0} and {0, 1, 1, 0}; lab_stage_copy both ways: exact, each copy "
        "with the right devices on its stream, the current device kept",
        60)
{
    char label[80];
    int peer;
    kit_peer_reset();
    for (int with_group = 0; with_group < 2; with_group++) {
        const int two[2] = {0, 1};
        lab_group *g = NULL;
        if (with_group) {
            kit_use_device(0);
            g = lab_group_create(two, 2, &peer);
            cr_assert(g != NULL, "lab_group_create({0, 1}) returned NULL");
        }
        for (int way = 0; way < 2; way++) {
            copy_bufs b;
            int sd = way, dd = 1 - way;
            copy_bufs_alloc(&b, dd, sd, RING_MAX);
            for (int on_src = 0; on_src < 2; on_src++) {
                int sdev = on_src ? sd : dd;
                cudaStream_t s = dev_stream(sdev);
                snprintf(label, sizeof label, "%s, the stream of the %s", with_group ? "in a group of {0, 1}" :
                         "with no group (no peer access)", on_src ? "source" : "destination");
                one_copy(&b, ring_bytes((int)kit_rand_int(0, 7)), s, sdev, (int)kit_rand_int(0, 1), label);
                XL_CHECK(cudaStreamDestroy(s));
            }
            copy_bufs_free(&b);
        }
        if (g) {
            kit_use_device(0);
            destroy_group(g, "a group of peer.exact");
        }
    }
    const int r2[2] = {0, 1}, r3[3] = {0, 1, 0}, r4[4] = {0, 1, 1, 0};
    const int *rings[3] = {r2, r3, r4};
    for (int k = 0; k < 3; k++) {
        int n = k + 2, cur = (int)kit_rand_int(0, 1);
        kit_use_device(cur);
        lab_group *g = lab_group_create(rings[k], n, &peer);
        cr_assert(g != NULL, "lab_group_create of %d ranks on GPUs 0 and 1 returned NULL", n);
        for (int slow = 0; slow < n; slow++) {
            snprintf(label, sizeof label, "ring of %d, case %d", n, slow + 1);
            ring_case(g, rings[k], n, S_OWN, slow, ring_bytes((int)kit_rand_int(0, 7)), cur, label);
        }
        kit_use_device(cur);
        destroy_group(g, "a group after its rings");
    }
    slots_free();
    for (int way = 0; way < 2; way++) {
        stage_bufs b;
        size_t chunk = rndz(4097, 200000), bytes = chunk * rndz(2, 6) + rndz(1, chunk - 1);
        stage_bufs_alloc(&b, way, 1 - way, bytes);
        lab_stage *s = new_stage(way, 1 - way, chunk);
        snprintf(label, sizeof label, "GPU %d to GPU %d", way, 1 - way);
        stage_case(s, &b, chunk, bytes, SM_TWO, label);
        lab_stage_destroy(s);
        stage_bufs_free(&b);
    }
    kit_peer_reset();
}

XL_TEST(read, peer, 5, XL_GPU2,
        "in a group of {0, 1}: lab_read_direct and lab_read_copied with out on GPU 1 reading src on GPU 0, and the "
        "reverse, the other GPU current: exact, launched on out's GPU on the stream given, the current device kept",
        60)
{
    int peer;
    const int two[2] = {0, 1};
    kit_peer_reset();
    kit_use_device(0);
    lab_group *g = lab_group_create(two, 2, &peer);
    cr_assert(g != NULL && peer == 1, "lab_group_create({0, 1}) returned %s with *peer %d", g ? "a group" : "NULL",
              peer);
    for (int way = 0; way < 2; way++) {
        read_bufs b;
        int od = 1 - way, sd = way;
        read_bufs_alloc(&b, od, sd, MIB);
        cudaStream_t s = dev_stream(od);
        for (int copied = 0; copied < 2; copied++) {
            char label[64];
            snprintf(label, sizeof label, "out on GPU %d, src on GPU %d", od, sd);
            read_case(&b, copied, rndz(1, MIB), (int)kit_rand_int(1, 3), s, sd, label);
        }
        XL_CHECK(cudaStreamDestroy(s));
        read_bufs_free(&b);
    }
    kit_use_device(0);
    destroy_group(g, "the group of read.peer, after its reads");
    kit_peer_reset();
}

/* ===== Two GPUs: speed ===== */

typedef struct {
    unsigned char *a0, *a1, *b0, *b1; /* SPEED_PEER_BYTES each: a on GPU 0 (source of 0 -> 1), b on GPU 1 */
    unsigned char *c0, *c1;           /* the kit's destinations: c1 on GPU 1, c0 on GPU 0 */
    cudaStream_t s0, s1;
    uint64_t h0, h1;                  /* hashes of a0 and b1 */
    base_stage *serial;               /* 0 -> 1, 4 MiB chunks */
} peer_speed;

/* peer_round - one timed copy (host clock, from the call to its stream's end): way 0 from a0 into dst on GPU 1,
 * way 1 from b1 into dst on GPU 0; yours or the kit's; the result hashed */
static double peer_round(peer_speed *x, int way, int yours, unsigned char *dst)
{
    int sd = way, dd = 1 - way;
    const unsigned char *src = way ? x->b1 : x->a0;
    cudaStream_t s = way ? x->s1 : x->s0; /* the source's stream */
    fill_on(dd, dst, XL_POISON_BYTE, SPEED_PEER_BYTES);
    kit_use_device(sd);
    double t0 = xl_now_ms();
    int rc = yours ? lab_peer_copy(dst, dd, src, sd, SPEED_PEER_BYTES, s)
                   : base_peer_copy(dst, dd, src, sd, SPEED_PEER_BYTES, s);
    XL_CHECK(cudaStreamSynchronize(s));
    double ms = xl_now_ms() - t0;
    cr_assert(rc == 0, "%s of 256 MiB from GPU %d to GPU %d returned %d", yours ? "lab_peer_copy" : "base_peer_copy",
              sd, dd, rc);
    int ok = 1;
    uint64_t h = base_hash(dst, dd, SPEED_PEER_BYTES, 0, &ok);
    cr_assert(ok && h == (way ? x->h1 : x->h0), "%s of 256 MiB from GPU %d to GPU %d left dst wrong (its hash differs "
              "from src's)", yours ? "lab_peer_copy" : "grader error: base_peer_copy", sd, dd);
    return ms;
}

/* kit_rate - phase 1: the kit's own enabling, its peer copies both ways (rounds each), disabled again: its median
 * rate in GB/s (one direction), the rounds' spread checked; NAN when there is no peer path */
static double kit_rate(peer_speed *x, int rounds)
{
    int owned = 0;
    kit_peer_reset();
    int on = base_peer_enable(0, 1, &owned);
    cr_assert(on >= 0, "grader error: base_peer_enable(0, 1) failed");
    if (on == 0) {
        xl_measure_unsound("GPUs 0 and 1 have no peer path here: the peer rate cannot be judged");
        return NAN;
    }
    double t[2 * SPEED_ROUNDS];
    peer_round(x, 0, 0, x->c1); /* warm-up */
    for (int r = 0; r < 2 * rounds; r++)
        t[r] = peer_round(x, r % 2, 0, r % 2 ? x->c0 : x->c1);
    base_peer_disable(0, 1, owned);
    xl_sound_spread(t, 2 * rounds, XL_SOUND_SPREAD, "the kit's peer copy (ms)");
    return SPEED_PEER_BYTES * 1e-6 / xl_median(t, 2 * rounds);
}

static void peer_speed_setup(peer_speed *x)
{
    memset(x, 0, sizeof *x);
    x->a0 = dev_alloc(0, SPEED_PEER_BYTES), x->c0 = dev_alloc(0, SPEED_PEER_BYTES), x->b0 = dev_alloc(0, SPEED_PEER_BYTES);
    x->s0 = kit_stream();
    x->b1 = dev_alloc(1, SPEED_PEER_BYTES), x->c1 = dev_alloc(1, SPEED_PEER_BYTES), x->a1 = dev_alloc(1, SPEED_PEER_BYTES);
    x->s1 = kit_stream();
    int ok = 1;
    cr_assert(base_fill_mix(x->a0, 0, SPEED_PEER_BYTES, xl_fresh_seed(), x->s0) == 0 &&
                  base_fill_mix(x->b1, 1, SPEED_PEER_BYTES, xl_fresh_seed(), x->s1) == 0,
              "grader error: base_fill_mix failed");
    x->h0 = base_hash(x->a0, 0, SPEED_PEER_BYTES, x->s0, &ok);
    x->h1 = base_hash(x->b1, 1, SPEED_PEER_BYTES, x->s1, &ok);
    cr_assert(ok, "grader error: base_hash failed");
}

static void peer_speed_teardown(peer_speed *x)
{
    unsigned char *p[] = {x->a0, x->a1, x->b0, x->b1, x->c0, x->c1};
    for (int k = 0; k < 6; k++)
        XL_CHECK(cudaFree(p[k]));
    XL_CHECK(cudaStreamDestroy(x->s0));
    XL_CHECK(cudaStreamDestroy(x->s1));
    if (x->serial)
        base_stage_destroy(x->serial);
    kit_peer_reset();
}

/* measure_peer - phase 1 the kit's rate under its own enabling; phase 2 the student's group, lab_peer_copy both ways
 * in turn: yours / the kit's */
static void measure_peer(void *ctx, double *ratio, char *figures, size_t len)
{
    peer_speed *x = ctx;
    double kit = kit_rate(x, SPEED_ROUNDS), t[2 * SPEED_ROUNDS];
    const int two[2] = {0, 1};
    int peer = -7;
    kit_use_device(0);
    lab_group *g = lab_group_create(two, 2, &peer);
    cr_assert(g != NULL, "lab_group_create({0, 1}) returned NULL (see its message above)");
    peer_round(x, 0, 1, x->a1); /* warm-up */
    for (int r = 0; r < 2 * SPEED_ROUNDS; r++)
        t[r] = peer_round(x, r % 2, 1, r % 2 ? x->b0 : x->a1);
    kit_use_device(0);
    lab_group_destroy(g);
    double yours = SPEED_PEER_BYTES * 1e-6 / xl_median(t, 2 * SPEED_ROUNDS);
    *ratio = yours / kit;
    xl_sound_within(*ratio, 0, XL_FASTER_MAX, "your peer copy over the kit's");
    snprintf(figures, len, "256 MiB, both ways in turn, medians of %d: the kit's cudaMemcpyPeerAsync under its own "
             "enabling %.1f GB/s, yours in your group %.1f GB/s (*peer %d): %.0f%%", 2 * SPEED_ROUNDS, kit, yours, peer,
             100 * *ratio);
}

/* measure_peer_staged - #2: your peer copy in your group against the kit's serial staging, 0 -> 1 */
static void measure_peer_staged(void *ctx, double *ratio, char *figures, size_t len)
{
    peer_speed *x = ctx;
    const int two[2] = {0, 1};
    int peer = -7;
    double ts[SPEED_ROUNDS], ty[SPEED_ROUNDS];
    kit_peer_reset();
    if (!x->serial) {
        x->serial = base_stage_create(0, 1, SPEED_HOST_CHUNK);
        cr_assert(x->serial != NULL, "grader error: base_stage_create(0, 1) failed");
    }
    kit_use_device(0);
    lab_group *g = lab_group_create(two, 2, &peer);
    cr_assert(g != NULL, "lab_group_create({0, 1}) returned NULL (see its message above)");
    for (int r = 0; r < SPEED_ROUNDS; r++) {
        fill_on(1, x->c1, XL_POISON_BYTE, SPEED_PEER_BYTES);
        kit_use_device(0);
        double t0 = xl_now_ms();
        cr_assert(base_stage_serial(x->serial, x->c1, x->a0, SPEED_PEER_BYTES, x->s0, x->s1) == 0,
                  "grader error: base_stage_serial failed");
        XL_CHECK(cudaStreamSynchronize(x->s1));
        ts[r] = xl_now_ms() - t0;
        int ok = 1;
        cr_assert(base_hash(x->c1, 1, SPEED_PEER_BYTES, x->s1, &ok) == x->h0 && ok,
                  "grader error: the kit's serial staging left dst wrong");
        ty[r] = peer_round(x, 0, 1, x->a1);
    }
    kit_use_device(0);
    lab_group_destroy(g);
    double ms = xl_median(ts, SPEED_ROUNDS), my = xl_median(ty, SPEED_ROUNDS);
    *ratio = ms / my;
    xl_sound_spread(ts, SPEED_ROUNDS, XL_SOUND_SPREAD, "the kit's serial staging (ms)");
    snprintf(figures, len, "256 MiB, GPU 0 to GPU 1, medians of %d: the kit's serial staging through the host %.1f "
             "GB/s, your peer copy in your group %.1f GB/s (*peer %d): %.1fx", SPEED_ROUNDS,
             SPEED_PEER_BYTES * 1e-6 / ms, SPEED_PEER_BYTES * 1e-6 / my, peer, *ratio);
}

XL_TEST(speed, peer, 10, XL_TIMED2,
        "lab_peer_copy of 256 MiB between GPUs 0 and 1 in your group: >= " XL_STR(PEER_KIT_NEED) "% of the kit's "
        "cudaMemcpyPeerAsync under the kit's own enabling, and >= " XL_STR(PEER_STAGED_NEED) "x the kit's serial "
        "staging through the host",
        90)
{
    static peer_speed x;
    peer_speed_setup(&x);
    xl_ratio_check(measure_peer, &x, XL_AT_LEAST_PCT(PEER_KIT_NEED), "your peer copy against the kit's");
    xl_ratio_check(measure_peer_staged, &x, XL_AT_LEAST_X(PEER_STAGED_NEED),
                   "your peer copy against the kit's serial staging");
    peer_speed_teardown(&x);
}

/* measure_both - the kit's one-direction rate under its own enabling; then the ring of {0, 1} in the student's
 * group, both directions at once: aggregate / one direction */
static void measure_both(void *ctx, double *ratio, char *figures, size_t len)
{
    peer_speed *x = ctx;
    double kit = kit_rate(x, SPEED_ROUNDS), t[SPEED_ROUNDS];
    const int two[2] = {0, 1};
    int peer = -7;
    kit_use_device(0);
    lab_group *g = lab_group_create(two, 2, &peer);
    cr_assert(g != NULL, "lab_group_create({0, 1}) returned NULL (see its message above)");
    void *send[2] = {x->a0, x->b1}, *recv[2] = {x->b0, x->a1}; /* 0 -> 1 into a1, 1 -> 0 into b0 */
    cudaStream_t st[2] = {x->s0, x->s1};
    for (int r = -1; r < SPEED_ROUNDS; r++) { /* round -1: the warm-up */
        fill_on(0, x->b0, XL_POISON_BYTE, SPEED_PEER_BYTES);
        fill_on(1, x->a1, XL_POISON_BYTE, SPEED_PEER_BYTES);
        kit_use_device(0);
        double t0 = xl_now_ms();
        int rc = lab_ring_exchange(g, send, recv, SPEED_PEER_BYTES, st);
        XL_CHECK(cudaStreamSynchronize(x->s0));
        XL_CHECK(cudaStreamSynchronize(x->s1));
        double ms = xl_now_ms() - t0;
        cr_assert(rc == 0, "lab_ring_exchange of {0, 1}, 256 MiB, returned %d", rc);
        int ok = 1;
        cr_assert(base_hash(x->a1, 1, SPEED_PEER_BYTES, 0, &ok) == x->h0 && base_hash(x->b0, 0, SPEED_PEER_BYTES, 0,
                  &ok) == x->h1 && ok, "lab_ring_exchange of {0, 1}, 256 MiB each way, left a recv block wrong (its "
                  "hash differs from the sender's)");
        if (r >= 0)
            t[r] = ms;
    }
    kit_use_device(0);
    lab_group_destroy(g);
    double both = 2 * SPEED_PEER_BYTES * 1e-6 / xl_median(t, SPEED_ROUNDS);
    *ratio = both / kit;
    xl_sound_within(*ratio, 0, BOTH_MAX_X, "both directions over one");
    snprintf(figures, len, "256 MiB each way, medians of %d: your ring of {0, 1} in your group carried %.1f GB/s in "
             "all (*peer %d); the kit's one direction %.1f GB/s: %.2fx", SPEED_ROUNDS, both, peer, kit, *ratio);
}

XL_TEST(speed, both, 5, XL_TIMED2,
        "lab_ring_exchange of {0, 1}, 256 MiB each way in your group: both directions at once carry >= "
        XL_STR(BOTH_NEED) "x the kit's one-direction peer rate",
        90)
{
    static peer_speed x;
    peer_speed_setup(&x);
    xl_ratio_check(measure_both, &x, XL_AT_LEAST_X(BOTH_NEED), "both directions at once against one");
    peer_speed_teardown(&x);
}
