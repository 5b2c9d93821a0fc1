/* 08-zero-copy.c - the grader of lab 08 (zero-copy and managed memory). Course staff only.
 *
 * Every job is drawn fresh in every grading: arrays of random words, read by patterns chosen to break index
 * arithmetic (the array's last element alone, runs cut short, runs of a page give or take one element that do not
 * start on pages, one element per 128-byte line, nothing aligned, runs that end exactly at the array's end, more
 * than 3 Mi elements, indices past 2^32), from every kind of memory the contract names (device, mapped pinned through
 * its device pointer, managed with each advice, malloc'd where the GPU can read it). out starts as random words
 * with poisoned guard words after it, and must end as init + reps x element, wrapping, so every pass shows in the
 * bytes. The kit queues milliseconds of work on the call's stream and then copies of out's initial values and of the
 * array's contents (the array poisoned until then), so work put on any other stream, the legacy one included, leaves
 * wrong words; a third of the calls run on the legacy stream. A copy queued right after the call must see out
 * complete. Every copy (common/copylog.h), every prefetch, advice and launch (common/memlog.h) a call makes is
 * recorded and checked: their count, size, direction, location, order and stream. Every create inside a call fails
 * (common/faults.h) and a call must hold nothing afterwards. Every bad argument is refused alone. Speed is a ratio
 * against the kit's ways (labs/08-zero-copy/baseline.cu) measured interleaved in the same run, every timed result
 * checked by a hash on the GPU and compared whole once, and lab_choose is graded against the kit's measurement of
 * this GPU.
 */
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/copylog.h"
#include "common/delay.h"
#include "common/devmem.h"
#include "common/memacct.h"
#include "common/faults.h"
#include "common/memlog.h"
#include "common/stats.h"
#include "common/synclog.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "grader/results.h"
#include "labs/08-zero-copy/baseline.h"
#include "labs/08-zero-copy/lab.h"

XL_LAB("08", "zero-copy");

#define MIB ((size_t)1 << 20)
#define POISON_WORD 0xA5A5A5A5u   /* a word of XL_POISON_BYTE: what poisoned memory reads as */
#define GUARD 64                  /* poisoned words after out's count, and after the copied way's dev */
#define OFFSET_MAX 63             /* src lies at a random element offset into its buffer, up to this */
#define BUF_ELEMS (4 * MIB + 64)  /* the largest array of a correctness case (4 Mi + 17 elements), rounded up */
#define BUF_ALLOC (BUF_ELEMS + OFFSET_MAX + GUARD)
#define PAGEABLE_MAX_N (MIB + 65536) /* malloc'd arrays read by the GPU (the fourth way): cases up to this size */
#define HUGE_N (((size_t)1 << 32) + ((size_t)1 << 16)) /* 16 GiB of device memory: indices past 2^32 */
#define WIDE_COUNT (((size_t)1 << 32) + ((size_t)1 << 20)) /* elements read: a count past 2^32 (16 GiB of out) */
#define HUGE_MARGIN 64            /* the huge case fills only the elements it reads and this many either side */
#define BUSY_NS 2000000ull        /* GPU work queued on the call's stream before the kit's copies of out and src */
#define MAX_COPIES 64             /* copies kept per call (more are counted) */
#define MAX_MEM 256               /* prefetches, advice and launches kept per call */
#define MAX_SYNCS 16              /* waits kept per call (lab.h: none) */

/* Host locations as memlog records them (enum cudaMemLocationType; CUDA 12.0 and 12.1 name only Device). */
#define LOC_DEVICE 1
#define LOC_HOST 2
#define LOC_HOST_NUMA 3
#define LOC_HOST_NUMA_CURRENT 4

/* ===== The bars =====
 * SPEED_BYTES: the array the speed checks read (the issue's 1 GiB costs more than the lab's whole budget; 64 MiB
 * keeps the ratios, §6.1 of the design: fixed costs stay under 3% and the array is beyond the H100's 50 MB L2).
 * SPARSE_NEED and REUSE_NEED are the issue's claims, fixed: 1% read once, your zero-copy at least 3x as fast as the
 * kit's copy-everything; all of it read 10 times, your copy-everything at least 3x as fast as the kit's zero-copy.
 * H100, make stability N=12 (2026-11-24): 47.8x (sd 1.6) and 6.58x (sd 0.05). MAPPED_KIT_NEED and COPIED_KIT_NEED
 * pin your ways to the kit's same way: the reference 100% of the kit in both (sd 0.07 and 0.004); a kernel of one
 * block reads at 2.5% of the kit's over the link, a copy per pass is 15% as fast. MANAGED_NEED: your prefetched
 * managed way, until the host can read the array again, against the kit's copy-everything: the reference 15.1% (sd
 * 2.5%, from 12.4% to 20.2%) on the H100: a prefetch back to the host runs at a quarter of the link's rate; no
 * prefetch at all (faults there and back) 4-6%. The bar is median - 3 sd. */
#define SPEED_BYTES (64 * MIB)
#define SPEED_N (SPEED_BYTES / 4)
#define SPARSE_FRACTION 0.01
#define DENSE_REUSE 10
#define SPARSE_ROUNDS 7  /* #1 and #2: about 1.3 ms a round pair */
#define DENSE_ROUNDS 6   /* #3 and #4: about 18 ms a round pair */
#define MANAGED_ROUNDS 6
#define SPARSE_NEED 3
#define REUSE_NEED 3
#define MAPPED_KIT_NEED 70
#define COPIED_KIT_NEED 80
#define MANAGED_NEED 7
/* PASSES_NEED: speed.link#5, what PASSES_REPS - 1 extra passes of your zero-copy and copy-everything add to a reading
 * of the whole array once, against what they add to the kit's (the reference: the same kernel as the kit's, so about
 * 100%; a way that reads once and adds reps x each element: about 0%). The kit's passes read at the link's rate and
 * at device memory's; no kernel reads 2.5x faster than those. */
#define PASSES_REPS 8
#define PASSES_ROUNDS 5
#define PASSES_NEED 40
/* The kit's zero-copy may not move more than this many times the kit's copy rate: faster, its reads were served
 * from the GPU's L2 (a second pass finding the first one's lines), not the link. That only makes the kit's zero-copy
 * faster, so your copy-everything harder to pass against: a pass stands, and only a miss is not graded (on the H100
 * the reference met it in about 1 run of 30, at 1.9x to 2.2x, and every attempt of the run was then NOT GRADED). */
#define LINK_CAP_X 1.25
/* wait.none: an unrelated 60 ms kernel on the legacy stream; the calls only queue work on 1 MiB arrays
 * (well under 1 ms each, estimated), so 30 ms in all separates a narrow wait from a wide one by far. */
#define NARROW_NS 60000000ull
#define NARROW_MS 30
#define NARROW_ELEMS (256 * 1024)
/* speed.choose: the kit's rates, RATES_REPS readings each; its model must agree with two direct readings within
 * MODEL_TOL, else it is measured again, RATES_TRIES times at most. */
#define RATES_REPS 5
#define MODEL_TOL 1.3
#define RATES_TRIES 3
/* read.managed: after a prefetch back, the driver's cudaMemRangeAttributeLastPrefetchLocation over the span must
 * name the host: CUDA 13 reports cudaCpuDeviceId there after a prefetch to {cudaMemLocationTypeHost, 0} (H100 and
 * H200, 2026-11-24). 0 turns the check off for a driver that does not. */
#define CHECK_LAST_PREFETCH 1

/* ===== Random draws ===== */

/* rndz - kit_rand for sizes */
static size_t rndz(size_t lo, size_t hi)
{
    return (size_t)kit_rand(lo, hi);
}

/* ===== Patterns ===== */

/* last_rel - how far the pattern's last element lies from its first (count >= 1, run >= 1; may wrap) */
static size_t last_rel(const lab_pattern *p)
{
    return (p->count - 1) / p->run * p->stride + (p->count - 1) % p->run;
}

/* elem_index - the index into src of element k of a pass */
static size_t elem_index(const lab_pattern *p, size_t k)
{
    return p->first + k / p->run * p->stride + k % p->run;
}

/* fit - first drawn so that the pattern of run, stride and count lies inside n elements (it must fit) */
static lab_pattern fit(size_t n, size_t run, size_t stride, size_t count)
{
    lab_pattern p = {0, run, stride, count};
    size_t rel = last_rel(&p);
    cr_assert(rel < n, "grader error: a pattern of %zu elements in runs of %zu every %zu does not fit %zu", count, run,
              stride, n);
    p.first = rndz(0, n - 1 - rel);
    return p;
}

/* The correctness cases (design §6.5), each drawn fresh. */
enum {
    C_EMPTY, C_LAST, C_DENSE, C_LINES, C_SINGLES, C_CUT, C_ONEMORE, C_PAGES, C_BIGRUN, C_ODDFIRST, C_TOEND, C_MANY,
    C_CASES,
    C_HUGE = C_CASES
};
static const char *const case_names[] = {
    "no elements (count 0, src and out NULL)",
    "the array's last element alone",
    "the whole array, n odd",
    "the sweep's pattern (base_pattern: 1% in whole 128-byte lines)",
    "one element per 128-byte line (run 1, stride 33)",
    "runs of 33 with the last run cut short",
    "one run, then one element (count = run + 1)",
    "runs of a page give or take one element (1024 +- 1), not on pages",
    "a run longer than count (one run, cut short)",
    "nothing aligned (first 13, run 31, stride 97)",
    "runs up to the array's last element exactly",
    "more than 3 Mi elements in long runs (many blocks)",
    "indices past 2^32 (a 16 GiB array)",
};

/* shape - case c drawn fresh: the array's n and the pattern */
static void shape(int c, size_t *n, lab_pattern *p)
{
    size_t run, stride, count;
    switch (c) {
    case C_EMPTY:
        *n = rndz(1, 100000);
        run = rndz(1, 64);
        *p = (lab_pattern){rndz(0, *n - 1), run, run + rndz(0, 64), 0};
        break;
    case C_LAST:
        *n = 4097 + rndz(0, 4096);
        *p = (lab_pattern){*n - 1, 1, rndz(1, 100), 1};
        break;
    case C_DENSE:
        *n = rndz(290000, 310000) | 1;
        *p = (lab_pattern){0, *n, *n, *n};
        break;
    case C_LINES:
        *n = MIB + 7;
        *p = base_pattern(*n, 0.01, LAB_LINE_ELEMS);
        break;
    case C_SINGLES:
        *n = rndz(900000, 1100000);
        count = (*n - 1) / 33 + 1;
        *p = fit(*n, 1, 33, rndz(count / 2, count));
        break;
    case C_CUT:
        *n = rndz(900000, 1100000);
        *p = fit(*n, 33, 1000, 10 * 33 + 5);
        break;
    case C_ONEMORE:
        *n = rndz(900000, 1100000);
        run = rndz(2, 600);
        stride = run + rndz(1, 200);
        *p = fit(*n, run, stride, run + 1);
        break;
    case C_PAGES:
        *n = rndz(3900000, 4100000);
        run = 1023 + rndz(0, 2);
        stride = rndz(2900, 3100);
        count = rndz(500, 1200) * 1024 + rndz(0, 2) - 1;
        *p = fit(*n, run, stride, count);
        break;
    case C_BIGRUN:
        *n = rndz(90000, 110000);
        *p = fit(*n, 5000, 5000, 1234);
        break;
    case C_ODDFIRST: {
        *n = rndz(900000, 1100000);
        size_t runs = (*n - 13 - 31) / 97 + 1;
        *p = (lab_pattern){13, 31, 97, rndz(runs * 31 / 2, runs * 31)};
        break;
    }
    case C_TOEND:
        run = rndz(2, 700);
        stride = run + rndz(0, 300);
        count = rndz(3, 40) * run - rndz(0, run - 1);
        *p = (lab_pattern){rndz(0, 5000), run, stride, count};
        *n = p->first + last_rel(p) + 1;
        break;
    case C_MANY: {
        *n = 4 * MIB + 17;
        run = rndz(200, 3000);
        stride = run + rndz(1, 3);
        size_t most = ((*n - run) / stride + 1) * run;
        *p = fit(*n, run, stride, rndz(3 * MIB + 1, most));
        break;
    }
    default: /* C_HUGE */
        *n = HUGE_N;
        *p = (lab_pattern){((size_t)1 << 32) - 40, 32, 64, 200};
        break;
    }
}

/* ===== Memory kinds and the kit's buffers ===== */

enum { K_DEVICE, K_MAPPED, K_MANAGED, K_PAGEABLE, K_PINNED, K_YOURS, K_RAW, K_HUGE };

static const char *const advice_names[] = {"LAB_ADVICE_NONE", "LAB_ADVICE_READ_MOSTLY", "LAB_ADVICE_HOST"};

/* What a correctness test works in; each test allocates the parts it needs (bufs_alloc). */
typedef struct {
    cudaStream_t s;                 /* a non-blocking stream of the kit's */
    int device;                     /* the current device */
    int pageable_ok;                /* cudaDevAttrPageableMemoryAccess: the GPU reads malloc'd memory */
    int concurrent;                 /* cudaDevAttrConcurrentManagedAccess: prefetches are allowed */
    uint32_t *src, *right, *init_dev; /* device, BUF_ALLOC words: an array, its contents, out's initial values */
    uint32_t *out, *probe;          /* device, BUF_ALLOC words */
    uint32_t *copy_dev;             /* device, BUF_ALLOC words: lab_read_copied's dev */
    uint32_t *map_host, *map_dev;   /* the kit's mapped pinned memory (base_mapped_alloc), BUF_ALLOC words */
    uint32_t *yours_host, *yours_dev; /* your lab_mapped_alloc's, BUF_ALLOC words */
    uint32_t *managed[3];           /* base_managed_alloc with each advice, BUF_ALLOC words */
    uint32_t *raw;                  /* cudaMallocManaged, BUF_ALLOC words */
    uint32_t *pinned;               /* cudaMallocHost, BUF_ALLOC words */
    uint32_t *pageable;             /* malloc, BUF_ALLOC words */
    uint32_t *huge;                 /* device, HUGE_N words (the huge case only; NULL where it could not be had) */
    uint32_t *want, *init, *exp, *got; /* host: the array's contents, out's initial values, out as it must end, a
                                        * download; BUF_ALLOC words each */
} bufs;

enum { NEED_MAPPED = 1, NEED_MANAGED = 2, NEED_PAGEABLE = 4, NEED_PINNED = 8, NEED_COPY_DEV = 16, NEED_YOURS = 32,
       NEED_RAW = 64 };

#define BUF_BYTES ((size_t)BUF_ALLOC * 4)

/* host_words - malloc'd words, or the test fails */
static uint32_t *host_words(size_t words)
{
    uint32_t *p = malloc(words * 4);
    cr_assert(p != NULL, "the grader could not allocate %zu bytes of host memory", words * 4);
    return p;
}

/* bufs_alloc - the device buffers every test uses, and those in need (NEED_* bits) */
static void bufs_alloc(bufs *b, int need)
{
    memset(b, 0, sizeof *b);
    XL_CHECK(cudaGetDevice(&b->device));
    XL_CHECK(cudaDeviceGetAttribute(&b->pageable_ok, cudaDevAttrPageableMemoryAccess, b->device));
    XL_CHECK(cudaDeviceGetAttribute(&b->concurrent, cudaDevAttrConcurrentManagedAccess, b->device));
    b->s = kit_stream();
    b->src = kit_dev_alloc(BUF_BYTES);
    b->right = kit_dev_alloc(BUF_BYTES);
    b->init_dev = kit_dev_alloc(BUF_BYTES);
    b->out = kit_dev_alloc(BUF_BYTES);
    b->probe = kit_dev_alloc(BUF_BYTES);
    if (need & NEED_COPY_DEV)
        b->copy_dev = kit_dev_alloc(BUF_BYTES);
    if (need & NEED_MAPPED) {
        b->map_host = base_mapped_alloc(BUF_BYTES, (void **)&b->map_dev);
        cr_assert(b->map_host != NULL, "the kit's base_mapped_alloc(%zu) failed", BUF_BYTES);
    }
    if (need & NEED_YOURS) {
        void *d = NULL;
        b->yours_host = lab_mapped_alloc(BUF_BYTES, &d);
        b->yours_dev = d;
        cr_assert(b->yours_host != NULL && d != NULL,
                  "lab_mapped_alloc(%zu bytes, &dev) returned NULL (see its message above; not written yet?): this "
                  "test reads your own mapped buffer through lab_read_mapped", BUF_BYTES);
    }
    if (need & NEED_MANAGED)
        for (int a = 0; a < 3; a++) {
            b->managed[a] = base_managed_alloc(BUF_BYTES, (lab_advice)a);
            cr_assert(b->managed[a] != NULL, "the kit's base_managed_alloc(%zu, %s) failed", BUF_BYTES,
                      advice_names[a]);
        }
    if (need & NEED_RAW)
        XL_CHECK(cudaMallocManaged((void **)&b->raw, BUF_BYTES, cudaMemAttachGlobal));
    if (need & NEED_PINNED)
        b->pinned = kit_pinned_alloc(BUF_BYTES);
    if (need & NEED_PAGEABLE)
        b->pageable = kit_host_alloc(BUF_BYTES);
    b->want = host_words(BUF_ALLOC), b->init = host_words(BUF_ALLOC);
    b->exp = host_words(BUF_ALLOC), b->got = host_words(BUF_ALLOC);
}

static void bufs_free(bufs *b)
{
    uint32_t *dev[] = {b->src, b->right, b->init_dev, b->out, b->probe, b->copy_dev, b->raw, b->huge,
                       b->managed[0], b->managed[1], b->managed[2]};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            XL_CHECK(cudaFree(dev[i]));
    if (b->map_host)
        XL_CHECK(cudaFreeHost(b->map_host));
    if (b->yours_host)
        XL_CHECK(cudaFreeHost(b->yours_host));
    if (b->pinned)
        XL_CHECK(cudaFreeHost(b->pinned));
    free(b->pageable);
    free(b->want), free(b->init), free(b->exp), free(b->got);
    XL_CHECK(cudaStreamDestroy(b->s));
}

/* ===== A job, and the call of the student's that runs it ===== */

enum { F_GATHER, F_COPIED, F_MAPPED, F_MANAGED };
static const char *const fn_names[] = {"lab_gather", "lab_read_copied", "lab_read_mapped", "lab_read_managed"};

/* One job of a test: what is called, on what, and how it is described in every message. */
typedef struct {
    int fn;              /* F_* */
    lab_job j;
    int kind;            /* K_*: the memory src lies in */
    int advice;          /* K_MANAGED: the advice its buffer was allocated with */
    int reps, prefetch;  /* the ways' arguments (lab_gather: one pass) */
    uint32_t *dev;       /* lab_read_copied's dev */
    cudaStream_t s;
    size_t off;          /* src's element offset into its buffer */
    uint32_t *host;      /* where the host reads and writes src's element 0 (NULL: device memory) */
    uint32_t *target;    /* where the kit's queued copy writes src's element 0 (NULL: the host writes it) */
    size_t lo, len;      /* want[0 .. len) holds src[lo .. lo + len) */
    char what[640];
} jc;

/* describe - c->what: the case, the call and every argument, for every message */
static void describe(jc *c, const char *case_name)
{
    char kind[160], args[64] = "";
    switch (c->kind) {
    case K_DEVICE: snprintf(kind, sizeof kind, "device memory (cudaMalloc)"); break;
    case K_HUGE: snprintf(kind, sizeof kind, "a 16 GiB array of device memory"); break;
    case K_MAPPED:
        snprintf(kind, sizeof kind, "the kit's mapped pinned memory (%s)",
                 c->fn == F_GATHER ? "its device pointer" : "its host pointer");
        break;
    case K_YOURS: snprintf(kind, sizeof kind, "your lab_mapped_alloc's memory (its host pointer)"); break;
    case K_MANAGED: snprintf(kind, sizeof kind, "managed memory with %s", advice_names[c->advice]); break;
    case K_RAW: snprintf(kind, sizeof kind, "managed memory straight from cudaMallocManaged (no advice)"); break;
    case K_PINNED: snprintf(kind, sizeof kind, "pinned memory (cudaMallocHost)"); break;
    default: snprintf(kind, sizeof kind, "malloc'd (pageable) memory"); break;
    }
    if (c->fn == F_MANAGED)
        snprintf(args, sizeof args, ", reps %d, prefetch %d", c->reps, c->prefetch);
    else if (c->fn != F_GATHER)
        snprintf(args, sizeof args, ", reps %d", c->reps);
    snprintf(c->what, sizeof c->what,
             "%s: %s with n = %zu, first %zu, run %zu, stride %zu, count %zu%s; src in %s, at element %zu of it; on %s",
             case_name, fn_names[c->fn], c->j.n, c->j.pat.first, c->j.pat.run, c->j.pat.stride, c->j.pat.count, args,
             kind, c->off, c->s == 0 ? "the legacy stream 0" : "a non-blocking stream of the kit's");
}

/* What one call did. */
typedef struct {
    int rc;
    int ncopies;                 /* cudaMemcpy and cudaMemcpyAsync calls (the first MAX_COPIES in recs) */
    xl_copy_rec recs[MAX_COPIES];
    xl_batch_log batches;        /* cudaMemcpyBatchAsync calls */
    int nmem;                    /* prefetches, advice and launches (the first MAX_MEM in mem) */
    xl_mem_rec mem[MAX_MEM];
} call_seen;

/* The call under watch. */
typedef struct {
    int fn, reps, prefetch;
    const lab_job *job;
    uint32_t *dev;
    cudaStream_t s;
    int rc;
} watched;

/* run_watched - the call (kit_guarded_call's call) */
static void run_watched(void *ctx)
{
    watched *w = ctx;
    w->rc = -1;
    switch (w->fn) {
    case F_GATHER: w->rc = lab_gather(w->job, w->s); break;
    case F_COPIED: w->rc = lab_read_copied(w->job, w->dev, w->reps, w->s); break;
    case F_MAPPED: w->rc = lab_read_mapped(w->job, w->reps, w->s); break;
    default: w->rc = lab_read_managed(w->job, w->reps, w->prefetch, w->s); break;
    }
}

/* watch - one call of fn on j (dev, reps, prefetch as the function takes them) on s, with every CUDA create failing
 * as out of memory (lab.h: a call creates nothing), its copies, prefetches, advice and launches recorded into *c, and
 * nothing held afterwards; what names the job */
static void watch(int fn, const lab_job *j, uint32_t *dev, int reps, int prefetch, cudaStream_t s, call_seen *c,
                  const char *what)
{
    kit_held before = kit_held_now();
    watched w = {fn, reps, prefetch, j, dev, s, -1};
    static char failure[2048];
    static xl_sync_rec syncs[MAX_SYNCS];
    int fired, stopped, nsync;
    xl_copylog_start(c->recs, MAX_COPIES);
    xl_memlog_start(c->mem, MAX_MEM);
    xl_synclog_start(syncs, MAX_SYNCS);
    kit_guarded_call(run_watched, &w, &fired, &stopped, failure, sizeof failure);
    nsync = xl_synclog_stop();
    c->nmem = xl_memlog_stop();
    c->ncopies = xl_copylog_stop();
    c->batches = xl_copylog_batches();
    c->rc = w.rc;
    if (fired) {
        cr_fatal("%s: %s tried to create something while it ran (a device or pinned buffer, managed memory, a "
                 "stream, an event, or advice; the kit made it fail as out of memory%s). lab.h: a call creates "
                 "nothing: the caller gives what it needs (dev for the copy), and advice is lab_managed_alloc's",
                 what, fn_names[fn], stopped ? ", and your code stopped on that error" : "");
    }
    if (stopped)
        cr_fatal("%s: %s", what, failure);
    cr_assert(c->nmem <= MAX_MEM, "%s: %s made %d prefetches, advice calls and launches: far more than a job needs",
              what, fn_names[fn], c->nmem);
    char call[1024];
    snprintf(call, sizeof call, "%s: %s", what, fn_names[fn]);
    kit_expect_no_host_wait(syncs, nsync < MAX_SYNCS ? nsync : MAX_SYNCS, call,
                            "lab.h: it queues its work on the stream and returns without waiting, for the device or "
                            "any stream, its own included; the caller waits (work queued on the stream afterwards "
                            "already sees out complete)");
    kit_expect_released(before, what);
}

/* count_mem - how many of the call's records are of kind k */
static int count_mem(const call_seen *c, xl_mem_kind k)
{
    int n = 0;
    for (int i = 0; i < c->nmem && i < MAX_MEM; i++)
        n += c->mem[i].kind == k;
    return n;
}

/* sync_after - waits for the device; an error there fails the test, named as the job's */
static void sync_after(const char *what)
{
    cudaError_t e = cudaDeviceSynchronize();
    cr_assert(e == cudaSuccess,
              "%s: the GPU reported %s (%s) when the work was done: did a kernel read or write outside src or out (an "
              "index past the array, 32-bit index arithmetic, a pointer this GPU cannot read)?",
              what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* expect_no_error_left - the call left no CUDA error for the next cudaGetLastError to find */
static void expect_no_error_left(const char *what, const char *fn)
{
    cudaError_t left = cudaGetLastError();
    cr_assert(left == cudaSuccess,
              "%s: %s left %s (%s) for the next cudaGetLastError to find: check every call, and clear the error of "
              "one you handle", what, fn, cudaGetErrorName(left), cudaGetErrorString(left));
}

/* ===== Preparing a job, and what out must hold ===== */

/* compute_exp - b->exp[k] = init[k] + reps x element k, wrapping, for every k < count */
static void compute_exp(bufs *b, const jc *c, int reps)
{
    const lab_pattern *p = &c->j.pat;
    size_t base = p->first, pos = 0;
    for (size_t k = 0; k < p->count; k++) {
        b->exp[k] = b->init[k] + (uint32_t)reps * b->want[base + pos - c->lo];
        if (++pos == p->run)
            pos = 0, base += p->stride;
    }
}

/* prepare - fresh contents for src's elements [lo, lo + len) in b->want, src poisoned there, fresh initial values
 * for out (its guard poisoned); then, on c->s, BUSY_NS of work, the copy of out's initial values and (where the kit
 * writes src from the GPU) the copy of the array's contents: until they land, out and src hold what no correct call
 * on that stream can see. b->exp as out must end. */
static void prepare(bufs *b, jc *c)
{
    size_t count = c->j.pat.count;
    if (count == 0) {
        xl_delay(c->s, BUSY_NS);
        return;
    }
    xl_fill_random(b->want, c->len * 4, xl_fresh_seed());
    if (c->host)
        xl_poison(c->host + c->lo, c->len * 4);
    else
        xl_dev_fill(c->target + c->lo, XL_POISON_BYTE, c->len * 4);
    if (c->target)
        xl_dev_upload(b->right, b->want, c->len * 4);
    else
        memcpy(c->host + c->lo, b->want, c->len * 4); /* the host writes it (pageable memory) */
    xl_fill_random(b->init, count * 4, xl_fresh_seed());
    xl_dev_upload(b->init_dev, b->init, count * 4);
    xl_dev_fill(b->out, XL_POISON_BYTE, (count + GUARD) * 4);
    kit_queue_busy_copy(c->s, BUSY_NS, b->out, b->init_dev, count * 4);
    if (c->target)
        XL_CHECK(cudaMemcpyAsync(c->target + c->lo, b->right, c->len * 4, cudaMemcpyDefault, c->s));
    compute_exp(b, c, c->fn == F_GATHER ? 1 : c->reps);
}

/* place_at - c's src in its kind's buffer at element off (the huge case: b->huge, its elements lo to lo + len
 * filled); j.out = b->out; nothing for count 0 (src and out NULL) */
static void place_at(bufs *b, jc *c, size_t off)
{
    size_t count = c->j.pat.count;
    uint32_t *host = NULL, *dev = NULL;
    c->off = c->kind == K_HUGE ? 0 : off;
    c->lo = 0, c->len = c->j.n;
    switch (c->kind) {
    case K_DEVICE: dev = b->src; break;
    case K_HUGE:
        dev = b->huge;
        c->lo = c->j.pat.first - HUGE_MARGIN;
        c->len = last_rel(&c->j.pat) + 1 + 2 * HUGE_MARGIN;
        break;
    case K_MAPPED: host = b->map_host, dev = b->map_dev; break;
    case K_YOURS: host = b->yours_host, dev = b->yours_dev; break;
    case K_MANAGED: host = dev = b->managed[c->advice]; break;
    case K_RAW: host = dev = b->raw; break;
    case K_PINNED: host = dev = b->pinned; break;
    default: host = b->pageable; break;
    }
    c->host = host ? host + c->off : NULL;
    c->target = c->kind == K_PAGEABLE ? NULL : c->host ? c->host : dev + c->off;
    if (count == 0) {
        c->j.src = NULL, c->j.out = NULL;
        return;
    }
    /* lab_gather reads mapped memory through its device pointer; the ways take the host pointer */
    if (c->kind == K_MAPPED && c->fn == F_GATHER)
        c->j.src = b->map_dev + c->off;
    else
        c->j.src = c->host ? c->host : dev + c->off;
    c->j.out = b->out;
}

/* place - place_at a random element offset */
static void place(bufs *b, jc *c)
{
    place_at(b, c, rndz(0, OFFSET_MAX));
}

/* explain - why out[k] may hold got instead of init + reps x e, into buf */
static const char *explain(uint32_t got, uint32_t init, uint32_t e, int reps, char *buf, size_t len)
{
    if (got == init + (uint32_t)reps * POISON_WORD && e != POISON_WORD)
        return ": the passes added the poison the array held before the kit's copy of its contents, queued on the "
               "stream before the call, landed: they ran before the work already queued on the stream (were they "
               "launched on another stream, or the legacy one?)";
    if (got == init)
        return ": it kept its initial value, so no pass added to it: either no pass reached k (a grid or loop that "
               "stops short, a last run cut short), or the passes ran before the kit's copy of out's initial values, "
               "queued on the stream before the call, landed (another stream, or the legacy one?)";
    for (int m = 1; m <= 2 * reps + 2; m++)
        if (m != reps && e != 0 && got == init + (uint32_t)m * e) {
            snprintf(buf, len, ": element k was added %d time%s, not %d (reps): %s", m, m == 1 ? "" : "s", reps,
                     m < reps ? "does every pass run (reps passes, each adding element k once)?"
                              : "is an element added by two threads, or a pass run twice?");
            return buf;
        }
    if (got == (uint32_t)reps * e || got == e)
        return ": it holds the element without out's initial value: a pass adds into out (out[k] += element k), "
               "it does not overwrite it";
    return ": a wrong element was added (is the index first + (k / run) * stride + k % run, in 64-bit arithmetic?)";
}

/* expect_words - got (out as downloaded, or the probe) equals b->exp over count; with guard, the GUARD words after it
 * still hold the poison; when says which reading it was */
static void expect_words(const bufs *b, const jc *c, const uint32_t *got, int guard, const char *when)
{
    const lab_pattern *p = &c->j.pat;
    int reps = c->fn == F_GATHER ? 1 : c->reps;
    char why[240];
    for (size_t k = 0; k < p->count; k++)
        if (got[k] != b->exp[k]) {
            size_t idx = elem_index(p, k);
            uint32_t e = b->want[idx - c->lo];
            cr_fatal("%s: %s, out[%zu] (element %zu of src) is 0x%08x; expected 0x%08x, its initial 0x%08x + %d x "
                     "the element 0x%08x%s",
                     c->what, when, k, idx, got[k], b->exp[k], b->init[k], reps, e,
                     explain(got[k], b->init[k], e, reps, why, sizeof why));
        }
    for (size_t k = p->count; guard && k < p->count + GUARD; k++)
        cr_assert(got[k] == POISON_WORD,
                  "%s: %s, out[%zu], %zu word%s past the last one out holds (count %zu), changed to 0x%08x: a pass "
                  "writes out[0 .. count) only (a thread past count? a last run cut short read in full?)",
                  c->what, when, k, k - p->count + 1, k == p->count ? "" : "s", p->count, got[k]);
}

/* expect_out - out exact once the GPU had finished, its guard untouched, and so it was for the probe (a copy the kit
 * queued on the call's stream right after the call) */
static void expect_out(bufs *b, const jc *c)
{
    size_t count = c->j.pat.count;
    if (count == 0)
        return;
    XL_CHECK(cudaMemcpy(b->got, b->out, (count + GUARD) * 4, cudaMemcpyDeviceToHost));
    expect_words(b, c, b->got, 1, "once the GPU had finished");
    XL_CHECK(cudaMemcpy(b->got, b->probe, count * 4, cudaMemcpyDeviceToHost));
    expect_words(b, c, b->got, 0,
                 "in a copy the kit queued on the same stream right after the call (lab.h: work queued on the stream "
                 "afterwards sees out complete, so every pass must be queued there)");
}

/* expect_src_unchanged - the host reads src's elements [lo, lo + len) and finds the array as it was (the ways only
 * read it) */
static void expect_src_unchanged(const bufs *b, const jc *c)
{
    size_t bad;
    if (c->j.pat.count == 0 || !c->host)
        return;
    cr_assert(xl_compare(c->host + c->lo, b->want, c->len * 4, &bad) == 0,
              "%s: once the GPU had finished, the host read src's element %zu as 0x%08x where the array holds "
              "0x%08x: the ways only read src", c->what, c->lo + bad / 4, c->host[c->lo + bad / 4],
              b->want[bad / 4]);
}

/* probe - queues on the call's stream a copy of out into b->probe: it must see every pass */
static void probe(bufs *b, const jc *c)
{
    if (c->j.pat.count)
        XL_CHECK(cudaMemcpyAsync(b->probe, b->out, c->j.pat.count * 4, cudaMemcpyDeviceToDevice, c->s));
}

/* ===== What a call asked for ===== */

/* copy_text - one recorded copy in words, into buf */
static const char *copy_text(const xl_copy_rec *r, char *buf, size_t len)
{
    enum cudaMemcpyKind d = xl_copy_dir(r);
    snprintf(buf, len, "%s of %zu bytes %s", r->async ? "cudaMemcpyAsync" : "cudaMemcpy", r->bytes,
             d == cudaMemcpyHostToDevice   ? "host to device"
             : d == cudaMemcpyDeviceToHost ? "device to host"
             : d == cudaMemcpyDeviceToDevice ? "device to device"
                                             : "host to host");
    return buf;
}

/* expect_no_copies - the call copied nothing, with cudaMemcpy, cudaMemcpyAsync or cudaMemcpyBatchAsync */
static void expect_no_copies(const call_seen *cs, const jc *c)
{
    static const char *const why[] = {
        "lab_gather's kernel reads src where it lies and copies nothing",
        "",
        "zero-copy: the passes read src through its device pointer, with no copy of any kind",
        "the driver moves managed pages (a prefetch, or the passes' faults): no copy"};
    char t[120];
    cr_assert(cs->batches.calls == 0, "%s: %s made %d cudaMemcpyBatchAsync calls: %s", c->what, fn_names[c->fn],
              cs->batches.calls, why[c->fn]);
    cr_assert(cs->ncopies == 0, "%s: %s asked for %d copies (the first a %s): %s", c->what, fn_names[c->fn],
              cs->ncopies, copy_text(&cs->recs[0], t, sizeof t), why[c->fn]);
}

/* expect_no_advice - the call gave no advice and made no batch prefetch (and no prefetch at all unless allowed) */
static void expect_no_advice(const call_seen *cs, const jc *c, int prefetch_allowed)
{
    cr_assert(count_mem(cs, XL_MEM_ADVISE) == 0,
              "%s: %s gave advice (cudaMemAdvise, %d calls): lab.h: the advice is lab_managed_alloc's, given once when "
              "the memory is allocated, never by a read", c->what, fn_names[c->fn], count_mem(cs, XL_MEM_ADVISE));
    cr_assert(count_mem(cs, XL_MEM_PREFETCH_BATCH) == 0,
              "%s: %s called cudaMemPrefetchBatchAsync: lab.h's prefetch is one cudaMemPrefetchAsync of the span the "
              "passes read", c->what, fn_names[c->fn]);
    if (!prefetch_allowed)
        cr_assert(count_mem(cs, XL_MEM_PREFETCH) == 0, "%s: %s made %d prefetches (cudaMemPrefetchAsync): %s",
                  c->what, fn_names[c->fn], count_mem(cs, XL_MEM_PREFETCH),
                  c->fn == F_MANAGED ? "with prefetch 0 there is none: the passes' page faults bring the pages"
                                     : "it has nothing to prefetch (that is lab_read_managed's, with prefetch 1)");
}

/* expect_launches - with work to do, at least one launch and every launch on c->s; without, none */
static void expect_launches(const call_seen *cs, const jc *c, int work)
{
    int n = cs->nmem < MAX_MEM ? cs->nmem : MAX_MEM;
    if (work) {
        cr_assert(count_mem(cs, XL_MEM_LAUNCH) > 0,
                  "%s: %s returned 0 but no <<< >>> launch was recorded: launch each pass with <<< >>> on the stream "
                  "given (a launch by cudaLaunchKernel is not seen; with the per-thread default stream compiled in, "
                  "neither is the stream)", c->what, fn_names[c->fn]);
        kit_expect_launches_on(cs->mem, n, c->s, c->what);
    } else
        cr_assert(count_mem(cs, XL_MEM_LAUNCH) == 0,
                  "%s: there is nothing to do (%s), yet %s launched %d kernels: lab.h: 0, and nothing done", c->what,
                  c->j.pat.count == 0 ? "count 0" : "reps 0", fn_names[c->fn], count_mem(cs, XL_MEM_LAUNCH));
}

/* expect_rc0 - the call returned 0 and left no error */
static void expect_rc0(const call_seen *cs, const jc *c)
{
    cr_assert(cs->rc == 0, "%s: %s returned %d, an error (see its message above; not written yet?)", c->what,
              fn_names[c->fn], cs->rc);
    expect_no_error_left(c->what, fn_names[c->fn]);
}

/* ===== Refusals ===== */

/* expect_refused - fn refuses j (dev, reps, prefetch) on s with -1 before any work: no copy, prefetch, advice or
 * launch, no CUDA error left, nothing held; why names the bad argument, every other one valid */
static void expect_refused(int fn, const lab_job *j, uint32_t *dev, int reps, int prefetch, cudaStream_t s,
                           const char *why)
{
    static call_seen cs;
    char what[600];
    snprintf(what, sizeof what, "%s with %s", fn_names[fn], why);
    char said[512];
    int q = kit_capture_begin(); /* the refusal's line: counted, not shown */
    watch(fn, j, dev, reps, prefetch, s, &cs, what);
    int lines = kit_capture_end(q, said, sizeof said);
    cudaError_t left = cudaGetLastError();
    cr_assert(cs.rc == -1, "%s (every other argument valid) returned %d: lab.h says -1, with a one-line message, "
              "before any work", what, cs.rc);
    kit_expect_one_line(q, lines, said, what, "-1");
    cr_assert(cs.ncopies == 0 && cs.batches.calls == 0 && cs.nmem == 0,
              "%s returned -1, but only after %d copies and %d prefetches, advice calls or launches: check every "
              "argument before any work (lab.h)", what, cs.ncopies + cs.batches.calls, cs.nmem);
    cr_assert(left == cudaSuccess, "%s returned -1 but left %s for the next cudaGetLastError to find: where you "
              "handle a failed call, clear its error", what, cudaGetErrorName(left));
}

/* expect_nothing_done - fn runs j (dev, reps, prefetch) on s, a job lab.h allows that has nothing to do (count 0 or
 * reps 0, every argument valid): 0, no copy, prefetch, advice or launch, no CUDA error left, nothing held; why names
 * what makes it so */
static void expect_nothing_done(int fn, const lab_job *j, uint32_t *dev, int reps, int prefetch, cudaStream_t s,
                                const char *why)
{
    static call_seen cs;
    char what[600];
    snprintf(what, sizeof what, "%s with %s", fn_names[fn], why);
    watch(fn, j, dev, reps, prefetch, s, &cs, what);
    cr_assert(cs.rc == 0, "%s returned %d: lab.h: pat.count 0 returns 0 and does nothing, and src's kind is checked "
              "only where pat.count > 0 (every other argument is valid)", what, cs.rc);
    cr_assert(cs.ncopies == 0 && cs.batches.calls == 0 && cs.nmem == 0, "%s made %d copies and %d prefetches, advice "
              "calls or launches: lab.h: nothing to do, nothing done", what, cs.ncopies + cs.batches.calls, cs.nmem);
    expect_no_error_left(what, fn_names[fn]);
}

/* valid_job - a small valid job on src (100000 elements readable there) into b->out: run >= 2, count >= 2 */
static lab_job valid_job(bufs *b, const uint32_t *src)
{
    size_t run = rndz(2, 64), n = rndz(40000, 100000);
    lab_job j = {src, n, fit(n, run, run + rndz(0, 64), rndz(2, 500)), b->out};
    return j;
}

/* One call repeated under kit_expect_no_heap_leak: fn on v (dev, reps, prefetch as the function takes them) on s. */
typedef struct {
    int fn;
    const lab_job *v;
    uint32_t *dev;
    int reps, prefetch;
    cudaStream_t s;
} again_args;

/* call_fn - fn on j with a's other arguments */
static int call_fn(const again_args *a, const lab_job *j)
{
    switch (a->fn) {
    case F_GATHER: return lab_gather(j, a->s);
    case F_COPIED: return lab_read_copied(j, a->dev, a->reps, a->s);
    case F_MAPPED: return lab_read_mapped(j, a->reps, a->s);
    default: return lab_read_managed(j, a->reps, a->prefetch, a->s);
    }
}

/* refusals_again - kit_expect_no_heap_leak's attempt: fn refusing j NULL, run 0, stride < run, src NULL, out NULL
 * and a last element at n, each alone on a copy of a->v, their lines kept out of the output; 0 when every call
 * returned -1 */
static int refusals_again(void *ctx)
{
    const again_args *a = ctx;
    lab_job j[6];
    for (int i = 0; i < 6; i++)
        j[i] = *a->v;
    j[1].pat.run = 0, j[2].pat.stride = j[2].pat.run - 1, j[3].src = NULL, j[4].out = NULL;
    j[5].pat.first = j[5].n - last_rel(&j[5].pat);
    int quiet = kit_quiet_begin(), bad = call_fn(a, NULL) != -1;
    for (int i = 1; i < 6; i++)
        bad += call_fn(a, &j[i]) != -1;
    kit_quiet_end(quiet);
    return bad ? -1 : 0;
}

/* success_again - kit_expect_no_heap_leak's attempt: fn running a->v (valid), then its stream waited for; 0 when it
 * returned 0 */
static int success_again(void *ctx)
{
    const again_args *a = ctx;
    int rc = call_fn(a, a->v);
    XL_CHECK(cudaStreamSynchronize(a->s));
    return rc;
}

/* expect_calls_no_leak - fn on the valid job v (dev, reps, prefetch) on s, repeated: it leaves the host heap no
 * larger (lab.h: a call holds nothing when it returns); v's out changes */
static void expect_calls_no_leak(int fn, const lab_job *v, uint32_t *dev, int reps, int prefetch, cudaStream_t s)
{
    again_args a = {fn, v, dev, reps, prefetch, s};
    char what[300];
    snprintf(what, sizeof what, "%s of a valid job (n = %zu, first %zu, run %zu, stride %zu, count %zu, reps %d%s) "
             "on %s", fn_names[fn], v->n, v->pat.first, v->pat.run, v->pat.stride, v->pat.count,
             fn == F_GATHER ? 1 : reps,
             fn == F_MANAGED ? (prefetch ? ", prefetch 1" : ", prefetch 0") : "",
             s == 0 ? "the legacy stream 0" : "a non-blocking stream of the kit's");
    kit_expect_no_heap_leak(success_again, &a, what, "lab.h: a call holds nothing when it returns: free what it "
                            "mallocs (a table, a message) before returning");
}

/* refuse_job_rules - the job's rules (lab.h), each alone on a copy of v (valid), for fn with dev, reps, prefetch
 * valid: j NULL, run 0, stride < run (both with count 0 too), src NULL, out NULL, the last element at n, and last
 * elements past SIZE_MAX in every way the sum can wrap */
static void refuse_job_rules(int fn, const lab_job *v, uint32_t *dev, int reps, int prefetch, cudaStream_t s)
{
    char why[400];
    lab_job j;
    const size_t half = (size_t)1 << 63;
#define JOB_TEXT(x) "n = %zu, first %zu, run %zu, stride %zu, count %zu", (x).n, (x).pat.first, (x).pat.run, \
                    (x).pat.stride, (x).pat.count
    expect_refused(fn, NULL, dev, reps, prefetch, s, "j NULL");
    j = *v, j.pat.run = 0;
    snprintf(why, sizeof why, "pat.run 0 (" JOB_TEXT(j));
    strcat(why, ")");
    expect_refused(fn, &j, dev, reps, prefetch, s, why);
    j.pat.count = 0;
    expect_refused(fn, &j, dev, reps, prefetch, s, "pat.run 0 and count 0 (lab.h: the job's rules come first)");
    j = *v, j.pat.stride = j.pat.run - 1;
    snprintf(why, sizeof why, "pat.stride = run - 1 (" JOB_TEXT(j));
    strcat(why, ")");
    expect_refused(fn, &j, dev, reps, prefetch, s, why);
    j.pat.count = 0;
    expect_refused(fn, &j, dev, reps, prefetch, s,
                   "pat.stride = run - 1 and count 0 (lab.h: the job's rules come first)");
    j = *v, j.src = NULL;
    expect_refused(fn, &j, dev, reps, prefetch, s, "src NULL (count > 0)");
    j = *v, j.out = NULL;
    expect_refused(fn, &j, dev, reps, prefetch, s, "out NULL (count > 0)");
    j = *v, j.pat.first = j.n - last_rel(&j.pat);
    snprintf(why, sizeof why, "its last element at n, one past the array's end (" JOB_TEXT(j));
    strcat(why, ")");
    expect_refused(fn, &j, dev, reps, prefetch, s, why);
    j = *v, j.pat = (lab_pattern){rndz(0, 9), 1, half, 3};
    snprintf(why, sizeof why, "a last element first + 2 x 2^63 past SIZE_MAX, which wraps to first (" JOB_TEXT(j));
    strcat(why, ")");
    expect_refused(fn, &j, dev, reps, prefetch, s, why);
    j = *v, j.pat = (lab_pattern){SIZE_MAX, 1, 1, 1};
    expect_refused(fn, &j, dev, reps, prefetch, s, "first = SIZE_MAX (count 1)");
    j = *v, j.pat = (lab_pattern){SIZE_MAX, 1, rndz(1, 9), 2};
    snprintf(why, sizeof why, "first = SIZE_MAX and a second element past it, which wraps to %zu (" JOB_TEXT(j),
             j.pat.stride - 1);
    strcat(why, ")");
    expect_refused(fn, &j, dev, reps, prefetch, s, why);
    j = *v, j.pat = (lab_pattern){rndz(2, 9), 1, 1, SIZE_MAX};
    snprintf(why, sizeof why, "count SIZE_MAX (run = stride = 1), so first + count - 1 wraps to %zu (" JOB_TEXT(j),
             j.pat.first - 2);
    strcat(why, ")");
    expect_refused(fn, &j, dev, reps, prefetch, s, why);
    j = *v, j.pat = (lab_pattern){SIZE_MAX - rndz(0, 40), 100, 100, 50};
    snprintf(why, sizeof why, "first near SIZE_MAX and a run that carries it past, wrapping to %zu (" JOB_TEXT(j),
             j.pat.first + 49);
    strcat(why, ")");
    expect_refused(fn, &j, dev, reps, prefetch, s, why);
    j = *v, j.n = 0, j.pat.first = 0;
    expect_refused(fn, &j, dev, reps, prefetch, s, "n = 0 and count > 0 (no element can be read)");
#undef JOB_TEXT
    /* the refusals repeated: a refused call holds nothing either (a message built on the heap is freed) */
    again_args a = {fn, v, dev, reps, prefetch, s};
    snprintf(why, sizeof why, "%s refusing j NULL, run 0, stride < run, src NULL, out NULL and a last element at n, "
             "each alone", fn_names[fn]);
    kit_expect_no_heap_leak(refusals_again, &a, why, "lab.h: a refused call does nothing and holds nothing: free "
                            "what it mallocs (a message built with asprintf, say) before it returns -1");
}

/* expect_untouched - after refusals, the count + GUARD words of dev (device memory) still hold the poison */
static void expect_untouched(bufs *b, const uint32_t *dev, size_t words, const char *what)
{
    sync_after(what);
    XL_CHECK(cudaMemcpy(b->got, dev, words * 4, cudaMemcpyDeviceToHost));
    size_t bad;
    cr_assert(xl_check_poison(b->got, words * 4, &bad) == 0,
              "%s: word %zu of the kit's buffer changed to 0x%08x: a refused call does no work (lab.h)", what,
              bad / 4, b->got[bad / 4]);
}

/* ===== Part A: the rule (lab_choose) ===== */

static const char *const way_names[] = {"LAB_COPIED", "LAB_MAPPED", "LAB_MANAGED"};

/* way_text - a lab_way's name, or its number when it is none */
static const char *way_text(int w, char *buf, size_t len)
{
    if (w >= 0 && w <= 2)
        return way_names[w];
    snprintf(buf, len, w == LAB_NONE ? "LAB_NONE" : "%d (not a lab_way)", w);
    return buf;
}

/* expect_none - lab_choose(f, r) is LAB_NONE; why says which argument is bad */
static void expect_none(double f, int r, const char *why)
{
    char t[40];
    int w = lab_choose(f, r);
    cr_assert(w == LAB_NONE, "lab_choose(%.17g, %d) = %s; lab.h: LAB_NONE for %s", f, r, way_text(w, t, sizeof t), why);
}

/* A valid point and lab_choose's answer there. */
typedef struct {
    double f;
    int r;
    int w;
} choice;

#define CHOICES 400
#define WIDE_CHOICES 80 /* of them drawn with reuse up to INT_MAX */

XL_TEST(choose, rules, 5, XL_CPU,
        "lab_choose: LAB_NONE for NaN, 0, -0.0, negatives, above 1, infinity and reuse < 1; a way for every valid "
        "input; LAB_MAPPED when fraction x reuse <= 1/64, never when >= 4, and only where it is at every smaller "
        "fraction and reuse",
        5)
{
    static const double fractions[] = LAB_FRACTIONS;
    static const int reuses[] = LAB_REUSES;
    static const char bad_f[] = "a fraction that is NaN, <= 0 (-0.0 too) or > 1 (infinity too)";
    static const char bad_r[] = "reuse < 1";
    const double bad_fs[] = {NAN, -NAN, 0.0, -0.0, -1e-300, -1.0, -INFINITY, nextafter(1.0, 2.0), 1.5, 2.0,
                             INFINITY, DBL_MAX};
    const int bad_rs[] = {0, -1, -2, INT_MIN, (int)kit_rand_int(INT_MIN, -3)};
    char t[40];
    for (size_t i = 0; i < sizeof bad_fs / sizeof bad_fs[0]; i++) {
        expect_none(bad_fs[i], 1, bad_f);
        expect_none(bad_fs[i], (int)kit_rand_int(2, 1000), bad_f);
        expect_none(bad_fs[i], INT_MAX, bad_f);
    }
    for (size_t i = 0; i < sizeof bad_rs / sizeof bad_rs[0]; i++) {
        expect_none(0.5, bad_rs[i], bad_r);
        expect_none(1e-3, bad_rs[i], bad_r);
        expect_none(1.0, bad_rs[i], bad_r);
        expect_none(exp(-kit_rand_int(0, 13000) / 1000.0), bad_rs[i], bad_r);
        expect_none(bad_fs[kit_rand_int(0, (long)(sizeof bad_fs / sizeof bad_fs[0]) - 1)], bad_rs[i], "both arguments bad");
    }

    /* the valid points: the sweep's grid, the edges, exact products at the bounds, and random ones (fraction
     * log-uniform in [1e-6, 1], reuse log-uniform in [1, 1000]; then fraction log-uniform in [1e-9, 1], reuse up to
     * INT_MAX) */
    static choice pts[CHOICES];
    int n = 0;
    for (int fi = 0; fi < LAB_N_FRACTIONS; fi++)
        for (int ri = 0; ri < LAB_N_REUSES; ri++)
            pts[n++] = (choice){fractions[fi], reuses[ri], 0};
    const choice edges[] = {
        {1.0, 1, 0}, {1.0, INT_MAX, 0}, {DBL_MIN, 1, 0}, {4.9e-324, 1, 0}, {DBL_MIN, INT_MAX, 0},
        {1.0 / 64, 1, 0}, {1.0 / 128, 2, 0}, {1.0 / 65536, 1024, 0}, {1.0 / 4096, 64, 0}, /* exactly 1/64 */
        {1.0, 4, 0}, {0.5, 8, 0}, {0.25, 16, 0}, {1.0 / 256, 1024, 0}, /* exactly 4 */
        {nextafter(1.0 / 64, 0), 1, 0}, {nextafter(4.0 / 5, 1), 5, 0}, {1e-6, 1000, 0}, {0.01, 400, 0},
        {0.05, 100, 0}, {0.1, 50, 0}, {0.2, 20, 0}, {0.5, 10, 0}, {0.001, 10, 0}, {0.002, 5, 0}, {0.005, 2, 0},
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        pts[n++] = edges[i];
    /* far from the sweep: tiny fractions with reuse up to INT_MAX, fraction x reuse log-uniform in [1/256, 4096]
     * (below the sweep's smallest fraction, too, the rules on fraction x reuse hold) */
    const choice far[] = {{0.0005, 100000, 0}, {1e-6, 4000000, 0}, {1e-9, INT_MAX, 0}, {0.0009, 4445, 0},
                          {1e-4, 40000, 0}, {1e-7, 1 << 30, 0}};
    for (size_t i = 0; i < sizeof far / sizeof far[0]; i++)
        pts[n++] = far[i];
    while (n < CHOICES - WIDE_CHOICES)
        pts[n++] = (choice){exp(-kit_rand_int(0, 13816) / 1000.0), (int)lround(exp(kit_rand_int(0, 6908) / 1000.0)), 0};
    while (n < CHOICES) {
        double f = exp(-kit_rand_int(0, 20723) / 1000.0); /* 1e-9 to 1 */
        double r = ceil(exp(kit_rand_int(-5545, 8318) / 1000.0) / f); /* fraction x reuse about 1/256 to 4096 */
        pts[n++] = (choice){f, r < 1 ? 1 : r > INT_MAX ? INT_MAX : (int)r, 0};
    }
    for (int i = 0; i < n; i++) {
        choice *c = &pts[i];
        double fr = c->f * (double)c->r;
        c->w = lab_choose(c->f, c->r);
        cr_assert(c->w >= LAB_COPIED && c->w <= LAB_MANAGED,
                  "lab_choose(%.17g, %d) = %s: a valid fraction and reuse must give a way (LAB_COPIED, LAB_MAPPED or "
                  "LAB_MANAGED)", c->f, c->r, way_text(c->w, t, sizeof t));
        cr_assert(fr > 1.0 / 64 || c->w == LAB_MAPPED,
                  "lab_choose(%.17g, %d) = %s: fraction x reuse is %.6g, at most 1/64: less than a 64th of the array "
                  "crosses the link in all, which zero-copy reads without copying the rest (lab.h: LAB_MAPPED there, "
                  "on any GPU)", c->f, c->r, way_names[c->w], fr);
        cr_assert(fr < 4 || c->w != LAB_MAPPED,
                  "lab_choose(%.17g, %d) = LAB_MAPPED: fraction x reuse is %.6g, 4 or more: zero-copy would carry the "
                  "array across the link %.3g times, where a copy carries it once (lab.h: never LAB_MAPPED there)",
                  c->f, c->r, fr, fr);
    }
    for (int i = 0; i < n; i++) /* monotone: mapped at (f, r) only if mapped at every smaller f and r */
        for (int k = 0; pts[i].w == LAB_MAPPED && k < n; k++)
            cr_assert(0 == (pts[k].f <= pts[i].f && pts[k].r <= pts[i].r && pts[k].w != LAB_MAPPED),
                      "lab_choose(%.17g, %d) = LAB_MAPPED but lab_choose(%.17g, %d) = %s: reading less (a smaller "
                      "fraction) fewer times (a smaller reuse) can only favour zero-copy more (lab.h: LAB_MAPPED at "
                      "(f, r) only if also at every f' <= f, r' <= r)",
                      pts[i].f, pts[i].r, pts[k].f, pts[k].r, way_names[pts[k].w]);
}

/* ===== Part B: lab_gather ===== */

/* gather_case - lab_gather of c, prepared, on its stream, watched; then every check */
static void gather_case(bufs *b, jc *c)
{
    static call_seen cs;
    prepare(b, c);
    watch(F_GATHER, &c->j, NULL, 1, 0, c->s, &cs, c->what);
    probe(b, c);
    sync_after(c->what);
    expect_rc0(&cs, c);
    expect_no_copies(&cs, c);
    expect_no_advice(&cs, c, 0);
    expect_launches(&cs, c, c->j.pat.count > 0);
    expect_out(b, c);
}

/* wide_count_case - lab_gather of more than 2^32 elements (a k or a count kept in 32 bits wraps): the array and out
 * 16 GiB each of device memory, filled and checked on the GPU (base_fill_mix, base_count_wrong); a note instead where
 * this GPU cannot give the kit 33 GiB */
static void wide_count_case(cudaStream_t s)
{
    size_t run = rndz(100, 5000), stride = run + rndz(0, 3), count = WIDE_COUNT + rndz(0, 4096) * 2 + 1;
    lab_pattern p = {rndz(0, 1000), run, stride, count};
    size_t n = p.first + last_rel(&p) + 1 + rndz(0, 64);
    uint32_t *src = NULL, *out = NULL;
    if (cudaMalloc((void **)&src, n * 4) != cudaSuccess || cudaMalloc((void **)&out, (count + GUARD) * 4) != cudaSuccess) {
        cudaGetLastError();
        if (src)
            XL_CHECK(cudaFree(src));
        xl_note("counts past 2^32 were not tried: this GPU could not give the kit 33 GiB");
        return;
    }
    uint32_t seed = (uint32_t)kit_rand(0, UINT32_MAX), byte = (uint32_t)kit_rand_int(0, 255), init = byte * 0x01010101u;
    cudaStream_t k = kit_stream();
    cr_assert(base_fill_mix(src, n, seed, k) == 0, "grader error: base_fill_mix failed");
    XL_CHECK(cudaMemsetAsync(out, (int)byte, count * 4, k));
    XL_CHECK(cudaMemsetAsync(out + count, XL_POISON_BYTE, GUARD * 4, k));
    XL_CHECK(cudaStreamSynchronize(k));
    lab_job j = {src, n, p, out};
    int rc = lab_gather(&j, s);
    cr_assert(rc == 0, "lab_gather returned %d for %zu elements (past 2^32) in runs of %zu every %zu from element "
              "%zu of %zu, on %s: a valid job (see its message above)", rc, count, run, stride, p.first, n,
              s ? "a stream of the kit's" : "the legacy stream 0");
    XL_CHECK(cudaStreamSynchronize(s));
    size_t first_bad;
    int ok;
    uint64_t wrong = base_count_wrong(out, &p, seed, init, 1, &first_bad, k, &ok);
    cr_assert(ok, "grader error: base_count_wrong failed");
    cr_assert(wrong == 0, "lab_gather of %zu elements (past 2^32; runs of %zu every %zu, from element %zu): %" PRIu64
              " of the out words are wrong, the first at k = %zu%s", count, run, stride, p.first, wrong, first_bad,
              first_bad >= ((size_t)1 << 31) ? ": past 2^31, where an int or unsigned k, count or index wraps. Keep "
              "them in size_t (or 64 bits) when the count may pass 2^32" : "");
    uint32_t guard[GUARD];
    XL_CHECK(cudaMemcpy(guard, out + count, sizeof guard, cudaMemcpyDeviceToHost));
    for (int g = 0; g < GUARD; g++)
        cr_assert(guard[g] == POISON_WORD, "lab_gather of %zu elements (past 2^32) wrote out[%zu], past out's %zu "
                  "words", count, count + g, count);
    XL_CHECK(cudaFree(src));
    XL_CHECK(cudaFree(out));
    XL_CHECK(cudaStreamDestroy(k));
}

/* far_case - lab_gather of p over src (device memory of n elements, filled by base_fill_mix with seed) into out
 * (device memory of p.count + GUARD words) on s, every word checked on the GPU (base_count_wrong) and out's guard
 * after it; what says what the pattern tries, for every message */
static void far_case(const uint32_t *src, size_t n, uint32_t seed, lab_pattern p, uint32_t *out, cudaStream_t s,
                     cudaStream_t k, const char *what)
{
    char job[400];
    snprintf(job, sizeof job, "%s: lab_gather with n = %zu, first %zu, run %zu, stride %zu, count %zu (its last "
             "element %zu), on %s", what, n, p.first, p.run, p.stride, p.count, p.first + last_rel(&p),
             s ? "a non-blocking stream of the kit's" : "the legacy stream 0");
    uint32_t byte = (uint32_t)kit_rand_int(0, 255), init = byte * 0x01010101u;
    XL_CHECK(cudaMemsetAsync(out, (int)byte, p.count * 4, k));
    XL_CHECK(cudaMemsetAsync(out + p.count, XL_POISON_BYTE, GUARD * 4, k));
    XL_CHECK(cudaStreamSynchronize(k));
    lab_job j = {src, n, p, out};
    int rc = lab_gather(&j, s);
    cr_assert(rc == 0, "%s returned %d: a valid job (see its message above)", job, rc);
    sync_after(job);
    size_t first_bad;
    int ok;
    uint64_t wrong = base_count_wrong(out, &p, seed, init, 1, &first_bad, k, &ok);
    cr_assert(ok, "grader error: base_count_wrong failed");
    cr_assert(wrong == 0, "%s: %" PRIu64 " of the %zu out words are wrong, the first at k = %zu (element %zu of src): "
              "keep first, the index and its offset first + (k / run) * stride + k %% run in 64 bits (size_t), and "
              "a run or count in 32 bits only when it fits (a run longer than count reads as count)", job, wrong,
              p.count, first_bad, elem_index(&p, first_bad));
    uint32_t guard[GUARD];
    XL_CHECK(cudaMemcpy(guard, out + p.count, sizeof guard, cudaMemcpyDeviceToHost));
    for (int g = 0; g < GUARD; g++)
        cr_assert(guard[g] == POISON_WORD, "%s wrote out[%zu], past out's %zu words", job, p.count + g, p.count);
}

/* far_cases - over the 16 GiB array huge (HUGE_N elements), filled here: a pattern whose first element is past
 * 2^32, one whose span passes 2^32 with a small count, one whose stride is 2^32 or more (two runs), one run of 2^32
 * elements or more (a small count), and a count between 2^31 and 2^32 (its out 8 GiB, allocated here; a note where
 * it cannot be had) */
static void far_cases(bufs *b, cudaStream_t s)
{
    const size_t two32 = (size_t)1 << 32, two31 = (size_t)1 << 31;
    uint32_t seed = (uint32_t)kit_rand(0, UINT32_MAX);
    cudaStream_t k = kit_stream();
    cr_assert(base_fill_mix(b->huge, HUGE_N, seed, k) == 0, "grader error: base_fill_mix failed");
    size_t run = rndz(1, 40), count = rndz(100, 400), stride = run + rndz(0, 90); /* it fits in 2^16 elements */
    lab_pattern p = {0, run, stride, count};
    p.first = two32 + rndz(0, HUGE_N - two32 - 1 - last_rel(&p));
    far_case(b->huge, HUGE_N, seed, p, b->out, s, k, "a first element past 2^32 (a small pattern far into a 16 GiB "
             "array)");
    run = rndz(1, 64), stride = two31 + rndz(0, 4096);
    p = (lab_pattern){rndz(0, 4096), run, stride, 2 * run + rndz(1, run)};
    far_case(b->huge, HUGE_N, seed, p, b->out, s, k, "its last element 2^32 or more past its first, with a small "
             "count (runs 2^31 apart)");
    /* a stride of 2^32 or more that is used (a second run): a stride kept in 32 bits beside a 32-bit count wraps */
    run = rndz(1, 32), stride = two32 + rndz(0, (size_t)1 << 15);
    p = (lab_pattern){rndz(0, (size_t)1 << 14), run, stride, run + rndz(1, run)};
    far_case(b->huge, HUGE_N, seed, p, b->out, s, k, "a stride of 2^32 or more (two runs), with a small count: "
             "keep stride in 64 bits even where count fits in 32");
    count = rndz(100, 3000), run = two32 + rndz(0, count - 2); /* its low 32 bits: 0 to count - 2 */
    p = (lab_pattern){rndz(0, HUGE_N - count), run, run + rndz(0, 100), count};
    far_case(b->huge, HUGE_N, seed, p, b->out, s, k, "one run of 2^32 elements or more, cut short by a small count");
    count = two31 + rndz(1, (size_t)1 << 24), run = rndz(100, 5000);
    p = (lab_pattern){0, run, run + rndz(0, 1), count};
    p.first = rndz(0, HUGE_N - 1 - last_rel(&p));
    uint32_t *out = NULL;
    if (cudaMalloc((void **)&out, (count + GUARD) * 4) != cudaSuccess) {
        cudaGetLastError();
        xl_note("counts between 2^31 and 2^32 were not tried: this GPU could not give the kit 24 GiB");
    } else {
        far_case(b->huge, HUGE_N, seed, p, out, s, k, "a count between 2^31 and 2^32 (an int count or k is "
                 "negative there)");
        XL_CHECK(cudaFree(out));
    }
    XL_CHECK(cudaStreamDestroy(k));
}

XL_TEST(gather, exact, 20, XL_GPU,
        "lab_gather: out[k] += element k exactly, nothing else changed, from device, mapped, managed and (where the "
        "GPU can) malloc'd memory; runs of 1 to 5000 and past 2^32, counts cut mid-run, the array's last element, "
        "indices, spans, strides and counts past 2^32, counts past 2^31; on the stream given, legacy too; no copy, "
        "nothing created; each bad job refused before any work",
        40)
{
    static const int kinds[] = {K_DEVICE, K_MAPPED, K_MANAGED, K_PAGEABLE};
    bufs b;
    bufs_alloc(&b, NEED_MAPPED | NEED_MANAGED | NEED_PAGEABLE);
    int third = (int)kit_rand_int(0, 2), turn = (int)kit_rand_int(0, 2), calls = 0;
    if (!b.pageable_ok)
        xl_note("this GPU cannot read pageable memory (cudaDevAttrPageableMemoryAccess 0): the fourth way, "
                "lab_gather from malloc'd memory, is not tried");
    for (int cs = 0; cs < C_CASES; cs++)
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            jc c;
            memset(&c, 0, sizeof c);
            shape(cs, &c.j.n, &c.j.pat);
            if (cs == C_EMPTY && i >= 2) /* src and out NULL: the kind does not matter, the stream does */
                break;
            if (kinds[i] == K_PAGEABLE && (!b.pageable_ok || c.j.n > PAGEABLE_MAX_N))
                continue;
            c.fn = F_GATHER, c.kind = kinds[i], c.advice = (cs + turn) % 3;
            c.s = (calls++ + third) % 3 == 0 ? 0 : b.s;
            place(&b, &c);
            describe(&c, case_names[cs]);
            gather_case(&b, &c);
        }

    /* indices past 2^32, in device memory: a 16 GiB array of which only the elements read are filled */
    if (cudaMalloc((void **)&b.huge, HUGE_N * 4) != cudaSuccess) {
        cudaGetLastError();
        b.huge = NULL;
        xl_note("indices past 2^32 were not tried: this GPU could not give the kit a 16 GiB array");
    } else {
        jc c;
        memset(&c, 0, sizeof c);
        shape(C_HUGE, &c.j.n, &c.j.pat);
        c.fn = F_GATHER, c.kind = K_HUGE, c.s = kit_rand_int(0, 2) ? b.s : 0;
        place(&b, &c);
        describe(&c, case_names[C_HUGE]);
        gather_case(&b, &c);
        far_cases(&b, kit_rand_int(0, 2) ? b.s : 0);
        XL_CHECK(cudaFree(b.huge));
        b.huge = NULL;
    }

    wide_count_case(kit_rand_int(0, 2) ? b.s : 0);

    /* each rule of the job alone */
    lab_job v = valid_job(&b, b.src);
    xl_dev_fill(b.out, XL_POISON_BYTE, (v.pat.count + GUARD) * 4);
    cudaStream_t vs = kit_rand_int(0, 1) ? b.s : 0;
    refuse_job_rules(F_GATHER, &v, NULL, 1, 0, vs);
    expect_untouched(&b, b.out, v.pat.count + GUARD, "after the refused lab_gather calls, out");
    expect_calls_no_leak(F_GATHER, &v, NULL, 1, 0, vs);
    bufs_free(&b);
}

/* ===== Part C: the allocators ===== */

/* An interval of addresses [a, b). */
typedef struct {
    uintptr_t a, b;
} span;

static int span_order(const void *x, const void *y)
{
    uintptr_t p = ((const span *)x)->a, q = ((const span *)y)->a;
    return p < q ? -1 : p > q;
}

/* covered - the n intervals (sorted here) together cover [lo, hi) */
static int covered(span *iv, int n, uintptr_t lo, uintptr_t hi)
{
    qsort(iv, (size_t)n, sizeof *iv, span_order);
    uintptr_t at = lo;
    for (int i = 0; i < n && iv[i].a <= at; i++)
        if (iv[i].b > at)
            at = iv[i].b;
    return at >= hi;
}

/* Scratch for both_ways: two device buffers and a host one, each large enough for the largest allocation tried. */
typedef struct {
    uint32_t *da, *db;
    unsigned char *tmp;
    cudaStream_t s;
} scratch;

#define SCRATCH_BYTES (64 * MIB + 64)

/* both_ways - memory the host and the GPU both use (mapped pinned memory: host and its device pointer dev; managed
 * memory: the same pointer twice), bytes long: the host writes fresh bytes and a kernel of the kit's reads them
 * through dev, a kernel writes fresh words through dev and the host reads them, and copies through dev carry every
 * byte both ways, the first and the last included; what names the allocation */
static void both_ways(void *host, void *dev, size_t bytes, scratch *x, const char *what)
{
    size_t words = bytes / 4, bad;
    lab_job j = {NULL, words, {0, words, words, words}, NULL};
    xl_fill_random(host, bytes, xl_fresh_seed());
    if (words) {
        xl_dev_fill(x->db, 0, words * 4);
        j.src = dev, j.out = x->db;
        cr_assert(base_gather(&j, x->s) == 0, "grader error: the kit's base_gather could not read %s", what);
        XL_CHECK(cudaStreamSynchronize(x->s));
        XL_CHECK(cudaMemcpy(x->tmp, x->db, words * 4, cudaMemcpyDeviceToHost));
        cr_assert(xl_compare(x->tmp, host, words * 4, &bad) == 0,
                  "%s: the host wrote it and a kernel of the kit's read it through the device pointer: word %zu read "
                  "0x%08x where the host wrote 0x%08x (is the device pointer that of this very buffer?)", what,
                  bad / 4, ((uint32_t *)x->tmp)[bad / 4], ((uint32_t *)host)[bad / 4]);
    }
    XL_CHECK(cudaMemcpy(x->da, dev, bytes, cudaMemcpyDefault));
    XL_CHECK(cudaMemcpy(x->tmp, x->da, bytes, cudaMemcpyDeviceToHost));
    cr_assert(xl_compare(x->tmp, host, bytes, &bad) == 0,
              "%s: the host wrote it and a copy through the device pointer read byte %zu of %zu as 0x%02x, not 0x%02x",
              what, bad, bytes, x->tmp[bad], ((unsigned char *)host)[bad]);
    if (words) {
        xl_fill_random(x->tmp, words * 4, xl_fresh_seed());
        xl_dev_upload(x->da, x->tmp, words * 4);
        memset(host, 0, bytes);
        j.src = x->da, j.out = dev;
        cr_assert(base_gather(&j, x->s) == 0, "grader error: the kit's base_gather could not write %s", what);
        XL_CHECK(cudaStreamSynchronize(x->s));
        cr_assert(xl_compare(host, x->tmp, words * 4, &bad) == 0,
                  "%s: a kernel of the kit's wrote it through the device pointer and the host read word %zu as 0x%08x, "
                  "not 0x%08x", what, bad / 4, ((uint32_t *)host)[bad / 4], ((uint32_t *)x->tmp)[bad / 4]);
    }
    xl_fill_random(x->tmp, bytes, xl_fresh_seed());
    xl_dev_upload(x->da, x->tmp, bytes);
    XL_CHECK(cudaMemcpy(dev, x->da, bytes, cudaMemcpyDefault));
    cr_assert(xl_compare(host, x->tmp, bytes, &bad) == 0,
              "%s: a copy through the device pointer wrote byte %zu of %zu and the host read 0x%02x, not 0x%02x",
              what, bad, bytes, ((unsigned char *)host)[bad], x->tmp[bad]);
}

/* expect_mapped_alloc - lab_mapped_alloc(bytes, &dev): one pinned allocation (not a registration), mapped, not
 * write-combined, *dev its device pointer, usable both ways; cudaFreeHost gives everything back */
static void expect_mapped_alloc(size_t bytes, scratch *x)
{
    char what[160];
    snprintf(what, sizeof what, "lab_mapped_alloc(%zu bytes, &dev)", bytes);
    kit_held before = kit_held_now();
    void *d = &d;
    void *h = lab_mapped_alloc(bytes, &d);
    xl_pinned now = xl_pinned_now();
    cr_assert(h != NULL, "%s returned NULL (see its message above; not written yet?)", what);
    cr_assert(now.allocations == before.pinned.allocations + 1 && now.registrations == before.pinned.registrations,
              "%s made %ld pinned allocations and %ld registrations: lab.h asks for one cudaHostAlloc (with "
              "cudaHostAllocMapped), not malloc and cudaHostRegister", what,
              now.allocations - before.pinned.allocations, now.registrations - before.pinned.registrations);
    cr_assert(kit_is_pinned(h), "%s returned memory the runtime does not know as page-locked", what);
    unsigned flags = 0;
    XL_CHECK(cudaHostGetFlags(&flags, h));
    cr_assert(0 == (flags & cudaHostAllocWriteCombined),
              "%s returned write-combined memory (cudaHostAllocWriteCombined): the host writes and reads this array "
              "too (the grader and the explorer read it back), and the host reads write-combined memory ten times "
              "slower or more; lab.h: cudaHostAlloc(..., cudaHostAllocMapped) alone", what);
    void *kd = NULL;
    cr_assert(kit_is_mapped(h, &kd),
              "%s returned page-locked memory that is not mapped into the GPU's address space (cudaHostGetFlags: "
              "0x%x, without cudaHostAllocMapped, or cudaHostGetDevicePointer refuses it): allocate it with "
              "cudaHostAlloc(&p, bytes, cudaHostAllocMapped)", what, flags);
    cr_assert(d == kd, "%s set *dev to %p, but cudaHostGetDevicePointer of the buffer it returned (%p) gives %p: "
              "*dev is the buffer's device pointer", what, d, h, kd);
    both_ways(h, d, bytes, x, what);
    XL_CHECK(cudaFreeHost(h));
    kit_expect_released(before, what);
}

/* expect_mapped_refused - lab_mapped_alloc(bytes, with_dev ? &dev : NULL) returns NULL, *dev NULL, no error left and
 * nothing held; why says why it must */
static void expect_mapped_refused(size_t bytes, int with_dev, const char *why)
{
    kit_held before = kit_held_now();
    void *d = &d;
    char said[512];
    int q = kit_capture_begin(); /* the refusal's line: counted, not shown */
    void *h = lab_mapped_alloc(bytes, with_dev ? &d : NULL);
    int lines = kit_capture_end(q, said, sizeof said);
    cudaError_t left = cudaGetLastError();
    if (h)
        cudaFreeHost(h);
    char what[240];
    snprintf(what, sizeof what, "lab_mapped_alloc(%zu bytes, %s) (%s)", bytes, with_dev ? "&dev" : "NULL", why);
    cr_assert(h == NULL, "%s returned memory; lab.h: NULL", what);
    kit_expect_one_line(q, lines, said, what, "NULL");
    cr_assert(with_dev == 0 || d == NULL, "%s returned NULL but left *dev as %p: lab.h: *dev NULL", what, d);
    cr_assert(left == cudaSuccess, "%s returned NULL but left %s for the next cudaGetLastError to find: clear the "
              "error of a call that failed", what, cudaGetErrorName(left));
    kit_expect_released(before, what);
}

/* mapped_attempt - kit_expect_create_failures' attempt: lab_mapped_alloc(*ctx bytes, &dev), freed; 1 on NULL (*dev
 * must then be NULL) */
static int mapped_attempt(void *ctx)
{
    size_t bytes = *(const size_t *)ctx;
    void *d = &d;
    void *h = lab_mapped_alloc(bytes, &d);
    if (!h) {
        cr_assert(d == NULL, "lab_mapped_alloc(%zu bytes, &dev) returned NULL when an allocation failed, but left "
                  "*dev as %p: lab.h: *dev NULL", bytes, d);
        return 1;
    }
    XL_CHECK(cudaFreeHost(h));
    return 0;
}

/* Where memlog's location types name the host. */
static int host_location(int type)
{
    return type == LOC_HOST || type == LOC_HOST_NUMA || type == LOC_HOST_NUMA_CURRENT;
}

/* expect_advice_given - the nm records of lab_managed_alloc(bytes, advice) at p hold exactly the advice asked for,
 * over all of [p, p + bytes), for device, and nothing else (no prefetch, memset or launch) */
static void expect_advice_given(const xl_mem_rec *recs, int nm, const void *p, size_t bytes, int advice, int device,
                                const char *what)
{
    static span rm[MAX_MEM], pl[MAX_MEM], ab[MAX_MEM];
    int nrm = 0, npl = 0, nab = 0;
    cr_assert(nm <= MAX_MEM, "%s made %d advice calls, prefetches and launches", what, nm);
    for (int i = 0; i < nm; i++) {
        const xl_mem_rec *r = &recs[i];
        span s = {(uintptr_t)r->ptr, (uintptr_t)r->ptr + r->bytes};
        cr_assert(r->kind != XL_MEM_PREFETCH && r->kind != XL_MEM_PREFETCH_BATCH,
                  "%s prefetched the memory: lab.h gives advice only, and no prefetch (that is lab_read_managed's)",
                  what);
        cr_assert(r->kind == XL_MEM_ADVISE,
                  "%s %s: lab.h: nothing is written into the new memory (GPU writes place every page on the GPU "
                  "before the caller's first touch): advice only", what,
                  r->kind == XL_MEM_SET ? "called cudaMemset on it" : "launched a kernel");
        cr_assert(r->result == cudaSuccess, "%s: its cudaMemAdvise number %d failed (%s)", what, i + 1,
                  cudaGetErrorName(r->result));
        switch (r->advice) {
        case cudaMemAdviseSetReadMostly:
            cr_assert(advice == LAB_ADVICE_READ_MOSTLY, "%s gave cudaMemAdviseSetReadMostly: lab.h: %s", what,
                      advice == LAB_ADVICE_NONE ? "LAB_ADVICE_NONE gives no advice"
                                                : "LAB_ADVICE_HOST is a preferred location (the host) and accessed-by "
                                                  "(this GPU), not read-mostly");
            rm[nrm++] = s;
            break;
        case cudaMemAdviseSetPreferredLocation:
            cr_assert(advice == LAB_ADVICE_HOST, "%s gave cudaMemAdviseSetPreferredLocation: lab.h: %s", what,
                      advice == LAB_ADVICE_NONE ? "LAB_ADVICE_NONE gives no advice"
                                                : "LAB_ADVICE_READ_MOSTLY is cudaMemAdviseSetReadMostly only");
            cr_assert(host_location(r->loc_type),
                      "%s gave cudaMemAdviseSetPreferredLocation %s %d: LAB_ADVICE_HOST prefers the host (CUDA 13: "
                      "{cudaMemLocationTypeHost, 0}; CUDA 12: cudaCpuDeviceId), so that the pages stay there",
                      what, r->loc_type == LOC_DEVICE ? "the device" : "a location of type", r->loc_id);
            pl[npl++] = s;
            break;
        case cudaMemAdviseSetAccessedBy:
            cr_assert(advice == LAB_ADVICE_HOST, "%s gave cudaMemAdviseSetAccessedBy: lab.h: %s", what,
                      advice == LAB_ADVICE_NONE ? "LAB_ADVICE_NONE gives no advice"
                                                : "LAB_ADVICE_READ_MOSTLY is cudaMemAdviseSetReadMostly only");
            cr_assert(r->loc_type == LOC_DEVICE && r->loc_id == device,
                      "%s gave cudaMemAdviseSetAccessedBy for location type %d, id %d, not this GPU (type %d, device "
                      "%d, the current one): the GPU that reads the pages across the link", what, r->loc_type,
                      r->loc_id, LOC_DEVICE, device);
            ab[nab++] = s;
            break;
        default:
            cr_fatal("%s gave advice %d (an Unset advice, or one lab_advice does not name): lab.h: %s only", what,
                     r->advice, advice_names[advice]);
        }
    }
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
    if (advice == LAB_ADVICE_READ_MOSTLY)
        cr_assert(covered(rm, nrm, lo, hi), "%s: its cudaMemAdviseSetReadMostly (%d calls) does not cover all %zu "
                  "bytes: lab.h: the advice over all of it", what, nrm, bytes);
    if (advice == LAB_ADVICE_HOST) {
        cr_assert(covered(pl, npl, lo, hi), "%s: its cudaMemAdviseSetPreferredLocation of the host (%d calls) does "
                  "not cover all %zu bytes: lab.h: the advice over all of it", what, npl, bytes);
        cr_assert(covered(ab, nab, lo, hi), "%s: its cudaMemAdviseSetAccessedBy this GPU (%d calls) does not cover "
                  "all %zu bytes: lab.h: the advice over all of it", what, nab, bytes);
    }
}

/* expect_range_state - the driver's view of [p, p + bytes): read-mostly, preferred location and accessed-by as the
 * advice sets them, and nothing else */
static void expect_range_state(const void *p, size_t bytes, int advice, int device, const char *what)
{
    int rm = -9, pl = -9, ndev = 0;
    XL_CHECK(cudaMemRangeGetAttribute(&rm, sizeof rm, cudaMemRangeAttributeReadMostly, p, bytes));
    cr_assert(rm == (advice == LAB_ADVICE_READ_MOSTLY),
              "%s: the driver says the range is %sread-mostly (cudaMemRangeAttributeReadMostly %d): lab.h: %s", what,
              rm ? "" : "not ", rm, advice == LAB_ADVICE_READ_MOSTLY ? "cudaMemAdviseSetReadMostly over all of it"
                                                                     : "only LAB_ADVICE_READ_MOSTLY sets it");
    XL_CHECK(cudaMemRangeGetAttribute(&pl, sizeof pl, cudaMemRangeAttributePreferredLocation, p, bytes));
    int want = advice == LAB_ADVICE_HOST ? cudaCpuDeviceId : cudaInvalidDeviceId;
    cr_assert(pl == want,
              "%s: the driver gives the range's preferred location as %d (cudaCpuDeviceId is %d, none is %d): lab.h: "
              "%s", what, pl, cudaCpuDeviceId, cudaInvalidDeviceId,
              advice == LAB_ADVICE_HOST ? "the host, over all of it" : "only LAB_ADVICE_HOST sets one");
    XL_CHECK(cudaGetDeviceCount(&ndev));
    int *by = calloc((size_t)ndev + 1, sizeof *by);
    cr_assert(by != NULL, "out of memory");
    XL_CHECK(cudaMemRangeGetAttribute(by, (size_t)ndev * sizeof *by, cudaMemRangeAttributeAccessedBy, p, bytes));
    int found = 0;
    for (int i = 0; i < ndev; i++)
        found |= by[i] == device;
    free(by);
    cr_assert(found == (advice == LAB_ADVICE_HOST),
              "%s: the driver says the range is %saccessed by this GPU (cudaMemRangeAttributeAccessedBy): lab.h: %s",
              what, found ? "" : "not ", advice == LAB_ADVICE_HOST ? "cudaMemAdviseSetAccessedBy this GPU"
                                                                   : "only LAB_ADVICE_HOST sets it");
}

/* host_present - how many of the host pages wholly inside [p, p + bytes) (a page at either end may be shared with
 * another allocation) are in this process's page tables (mincore: a page the host has touched; managed memory no
 * processor has touched yet has none); -1 where mincore cannot tell, 0 where no page lies wholly inside */
static long host_present(const void *p, size_t bytes)
{
    size_t resident, pages;
    return xl_pages_resident(p, bytes, 1, &resident, &pages) == 0 ? (long)resident : -1;
}

/* expect_untouched_pages - lab_managed_alloc(bytes, advice) returned p with no host page of it touched: where the
 * host's page tables hold some of its pages, the kit's own allocation of the same size and advice (base_managed_alloc,
 * which touches nothing) is asked the same, and only where that one has none does p's count fail (a driver that maps
 * pages on its own is not the student's doing) */
static void expect_untouched_pages(const void *p, size_t bytes, int advice, const char *what)
{
    long got = host_present(p, bytes);
    if (got <= 0)
        return;
    void *kit = base_managed_alloc(bytes, (lab_advice)advice);
    cr_assert(kit != NULL, "grader error: base_managed_alloc(%zu, %s) failed", bytes, advice_names[advice]);
    long base = host_present(kit, bytes);
    XL_CHECK(cudaFree(kit));
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    cr_assert(base != 0, "%s: %ld of the %zu host pages wholly inside it were already in the host's page tables when "
              "it returned, "
              "where the kit's own allocation of the same size and advice has none: the host wrote or read the new "
              "memory (a memset, a loop that zeroes it). lab.h: nothing is written into it, and the caller's first "
              "touch decides where each page goes", what, got,
              ((uintptr_t)p + bytes) / page - ((uintptr_t)p + page - 1) / page);
}

/* expect_managed_alloc - lab_managed_alloc(bytes, advice): one managed allocation with exactly that advice, usable
 * by the host and the GPU both ways; cudaFree gives everything back */
static void expect_managed_alloc(size_t bytes, int advice, int device, scratch *x)
{
    static xl_mem_rec recs[MAX_MEM];
    char what[160];
    snprintf(what, sizeof what, "lab_managed_alloc(%zu bytes, %s)", bytes, advice_names[advice]);
    kit_held before = kit_held_now();
    static xl_copy_rec copies[MAX_COPIES];
    xl_copylog_start(copies, MAX_COPIES);
    xl_memlog_start(recs, MAX_MEM);
    void *p = lab_managed_alloc(bytes, (lab_advice)advice);
    int nm = xl_memlog_stop();
    int ncopies = xl_copylog_stop();
    xl_resources now = xl_resources_now();
    cr_assert(p != NULL, "%s returned NULL (see its message above; not written yet?)", what);
    cr_assert(ncopies == 0, "%s made %d copies: lab.h: nothing is written into the new memory, advice only", what,
              ncopies);
    cr_assert(now.dev_allocations == before.res.dev_allocations + 1,
              "%s made %ld allocations: lab.h: one cudaMallocManaged", what,
              now.dev_allocations - before.res.dev_allocations);
    cr_assert(kit_is_managed(p), "%s returned memory the runtime does not know as managed: lab.h: cudaMallocManaged "
              "(cudaMemAttachGlobal)", what);
    unsigned int flags = 0;
    xl_alloc_kind kind = xl_buffer_kind(p, &flags);
    cr_assert(kind == XL_ALLOC_MANAGED, "%s returned %p, which is not the start of a buffer cudaMallocManaged made: "
              "lab.h: return what cudaMallocManaged gave", what, p);
    cr_assert(flags == cudaMemAttachGlobal, "%s called cudaMallocManaged with flags 0x%x%s, not cudaMemAttachGlobal "
              "(0x%x): lab.h names cudaMemAttachGlobal, so that kernels on any stream may use the memory also on a GPU "
              "without concurrent managed access", what, flags, flags == cudaMemAttachHost ? " (cudaMemAttachHost)" : "",
              (unsigned)cudaMemAttachGlobal);
    expect_untouched_pages(p, bytes, advice, what);
    expect_advice_given(recs, nm, p, bytes, advice, device, what);
    expect_range_state(p, bytes, advice, device, what);
    both_ways(p, p, bytes, x, what);
    XL_CHECK(cudaFree(p));
    kit_expect_released(before, what);
}

/* managed_alloc_device1 - on a host with two GPUs or more: lab_managed_alloc with device 1 current gives each
 * advice for device 1 (lab.h: for the current device), as recorded and as the driver reports it; device0 current
 * again afterwards */
static void managed_alloc_device1(int device0)
{
    static xl_mem_rec recs[MAX_MEM];
    int ndev = 0;
    XL_CHECK(cudaGetDeviceCount(&ndev));
    if (ndev < 2)
        return;
    int other = device0 == 1 ? 0 : 1;
    kit_use_device(other);
    for (int a = 0; a < 3; a++) {
        size_t bytes = 4097 + rndz(0, 8192);
        char what[200];
        snprintf(what, sizeof what, "lab_managed_alloc(%zu bytes, %s) with device %d current", bytes,
                 advice_names[a], other);
        xl_memlog_start(recs, MAX_MEM);
        void *p = lab_managed_alloc(bytes, (lab_advice)a);
        int nm = xl_memlog_stop();
        cr_assert(p != NULL, "%s returned NULL (see its message above)", what);
        expect_advice_given(recs, nm, p, bytes, a, other, what);
        expect_range_state(p, bytes, a, other, what);
        XL_CHECK(cudaFree(p));
    }
    kit_use_device(device0);
}

/* expect_managed_refused - lab_managed_alloc(bytes, advice) returns NULL, no error left and nothing held */
static void expect_managed_refused(size_t bytes, int advice, const char *why)
{
    kit_held before = kit_held_now();
    char said[512];
    int q = kit_capture_begin(); /* the refusal's line: counted, not shown */
    void *p = lab_managed_alloc(bytes, (lab_advice)advice);
    int lines = kit_capture_end(q, said, sizeof said);
    cudaError_t left = cudaGetLastError();
    if (p)
        cudaFree(p);
    char what[240];
    snprintf(what, sizeof what, "lab_managed_alloc(%zu bytes, advice %d) (%s)", bytes, advice, why);
    cr_assert(p == NULL, "%s returned memory; lab.h: NULL", what);
    kit_expect_one_line(q, lines, said, what, "NULL");
    cr_assert(left == cudaSuccess, "%s returned NULL but left %s for the next cudaGetLastError to find: clear the "
              "error of a call that failed, and free what was allocated", what, cudaGetErrorName(left));
    kit_expect_released(before, what);
}

/* The arguments of a managed attempt. */
typedef struct {
    size_t bytes;
    int advice;
} managed_args;

/* managed_attempt - kit_expect_create_failures' attempt: lab_managed_alloc, freed; 1 on NULL */
static int managed_attempt(void *ctx)
{
    const managed_args *a = ctx;
    void *p = lab_managed_alloc(a->bytes, (lab_advice)a->advice);
    if (!p)
        return 1;
    XL_CHECK(cudaFree(p));
    return 0;
}

XL_TEST(alloc, kinds, 10, XL_GPU,
        "lab_mapped_alloc: pinned, mapped (its device pointer, both ways), not write-combined, 1 B to 64 MiB + 3; "
        "lab_managed_alloc: managed memory with exactly the advice asked for, over all of it; both NULL for 0 bytes, "
        "bad arguments, sizes past memory or a failed call, holding nothing",
        30)
{
    scratch x;
    int device;
    XL_CHECK(cudaGetDevice(&device));
    x.da = kit_dev_alloc(SCRATCH_BYTES), x.db = kit_dev_alloc(SCRATCH_BYTES), x.s = kit_stream();
    x.tmp = malloc(SCRATCH_BYTES);
    cr_assert(x.tmp != NULL, "the grader could not allocate host memory");
    char why[160];

    const size_t mapped_sizes[] = {1, 4097, 64 * MIB + 3, rndz(2, (size_t)1 << 22)};
    for (size_t i = 0; i < sizeof mapped_sizes / sizeof mapped_sizes[0]; i++)
        expect_mapped_alloc(mapped_sizes[i], &x);
    expect_mapped_refused(0, 1, "0 bytes: lab.h: bytes >= 1");
    size_t ok = rndz(1, MIB);
    snprintf(why, sizeof why, "dev NULL: there is nowhere to put the device pointer");
    expect_mapped_refused(ok, 0, why);
    expect_mapped_refused(SIZE_MAX, 1, "SIZE_MAX bytes: more than can be allocated");
    expect_mapped_refused(SIZE_MAX / 2, 1, "SIZE_MAX / 2 bytes: more than can be allocated");
    expect_mapped_refused((size_t)1 << 50, 1, "1 PiB: more than can be allocated");
    size_t fail_bytes = rndz(1, MIB);
    snprintf(why, sizeof why, "lab_mapped_alloc(%zu bytes, &dev)", fail_bytes);
    kit_expect_create_failures_said(mapped_attempt, &fail_bytes, why);

    for (int a = 0; a < 3; a++) {
        const size_t sizes[] = {1, 4097 + rndz(0, 8192), 8 * MIB + 3};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            expect_managed_alloc(sizes[i], a, device, &x);
        managed_args m = {rndz(1, MIB), a};
        snprintf(why, sizeof why, "lab_managed_alloc(%zu bytes, %s)", m.bytes, advice_names[a]);
        kit_expect_create_failures_said(managed_attempt, &m, why);
    }
    int va = (int)kit_rand_int(0, 2);
    expect_managed_refused(0, va, "0 bytes: lab.h: bytes >= 1");
    expect_managed_refused(rndz(1, MIB), -1, "advice -1, not in lab_advice");
    expect_managed_refused(rndz(1, MIB), 3, "advice 3, not in lab_advice");
    expect_managed_refused(rndz(1, MIB), INT_MAX, "advice INT_MAX, not in lab_advice");
    expect_managed_refused(rndz(1, MIB), (int)kit_rand_int(INT_MIN, -2), "a negative advice, not in lab_advice");
    expect_managed_refused(0, 3, "0 bytes and advice 3");
    expect_managed_refused(SIZE_MAX, va, "SIZE_MAX bytes: more than can be allocated");
    expect_managed_refused((size_t)1 << 50, va, "1 PiB: more than can be allocated"); /* NULL on the H100 and H200 */

    XL_CHECK(cudaFree(x.da));
    XL_CHECK(cudaFree(x.db));
    XL_CHECK(cudaStreamDestroy(x.s));
    free(x.tmp);
}

/* ===== Part D: the ways ===== */

/* expect_one_copy - lab_read_copied's copies: with work, exactly one cudaMemcpyAsync of the whole array (n x 4 bytes)
 * from src into dev, host to device, on the stream; without, none */
static void expect_one_copy(const call_seen *cs, const jc *c, int work)
{
    char t[120];
    cr_assert(cs->batches.calls == 0, "%s: lab_read_copied made %d cudaMemcpyBatchAsync calls: lab.h: one "
              "cudaMemcpyAsync of all n elements", c->what, cs->batches.calls);
    if (!work) {
        cr_assert(cs->ncopies == 0, "%s: there is nothing to do (%s), yet lab_read_copied asked for %d copies: "
                  "lab.h: 0, and nothing done", c->what, c->j.pat.count ? "reps 0" : "count 0", cs->ncopies);
        return;
    }
    cr_assert(cs->ncopies > 0, "%s: lab_read_copied asked for no copy: lab.h: one cudaMemcpyAsync of all n elements "
              "into dev, then the passes read dev", c->what);
    cr_assert(cs->ncopies == 1,
              "%s: lab_read_copied asked for %d copies (the first a %s): lab.h: exactly one cudaMemcpyAsync of all n "
              "elements, whatever reps (a copy per pass carries the array across the link reps times)", c->what,
              cs->ncopies, copy_text(&cs->recs[0], t, sizeof t));
    const xl_copy_rec *r = &cs->recs[0];
    kit_expect_copies_on(cs->recs, 1, c->s, c->what);
    cr_assert(xl_copy_dir(r) == cudaMemcpyHostToDevice, "%s: lab_read_copied's copy was a %s: it carries the array "
              "from the host (src) to the GPU (dev)", c->what, copy_text(r, t, sizeof t));
    size_t whole = c->j.n * 4;
    cr_assert(r->bytes == whole,
              "%s: lab_read_copied's copy carried %zu bytes; the whole array is n x 4 = %zu bytes%s", c->what,
              r->bytes, whole,
              r->bytes == c->j.pat.count * 4 ? " (it carried count x 4: lab.h's copied way copies everything, not "
                                               "only the elements read; that is what it is measured as)"
                                             : "");
    cr_assert(r->src == (const void *)c->j.src, "%s: lab_read_copied's copy read from %p, %+lld bytes from src (%p): "
              "copy the array from src itself%s", c->what, r->src,
              (long long)((const char *)r->src - (const char *)c->j.src), (const void *)c->j.src,
              r->src == (const void *)(c->j.src + c->j.pat.first) ? " (not from the first element read)" : "");
    cr_assert(r->dst == (void *)c->dev,
              "%s: lab_read_copied's copy wrote to %p, not to dev (%p): the caller gives dev, and dev holds the array "
              "afterwards", c->what, r->dst, (void *)c->dev);
}

/* expect_dev_array - lab_read_copied's dev: with work, the whole array and then its poisoned guard; without, all of
 * it still poison */
static void expect_dev_array(bufs *b, const jc *c, int work)
{
    size_t n = c->j.n, bad;
    XL_CHECK(cudaMemcpy(b->got, c->dev, (n + GUARD) * 4, cudaMemcpyDeviceToHost));
    if (!work) {
        cr_assert(xl_check_poison(b->got, (n + GUARD) * 4, &bad) == 0,
                  "%s: there is nothing to do (%s), yet dev's element %zu changed: lab.h: 0, and nothing done",
                  c->what, c->j.pat.count ? "reps 0" : "count 0", bad / 4);
        return;
    }
    cr_assert(xl_compare(b->got, b->want, n * 4, &bad) == 0,
              "%s: once the GPU had finished, dev's element %zu is 0x%08x, not the array's 0x%08x%s: lab.h: dev then "
              "holds the whole array", c->what, bad / 4, b->got[bad / 4], b->want[bad / 4],
              b->got[bad / 4] == POISON_WORD ? " (still the kit's poison: never copied)" : "");
    cr_assert(xl_check_poison(b->got + n, GUARD * 4, &bad) == 0,
              "%s: dev's element %zu, %zu past the array's end, changed: copy n elements, no more", c->what,
              n + bad / 4, bad / 4 + 1);
}

/* copied_case - lab_read_copied of c (dev b->copy_dev, all poison), prepared, watched; then every check */
static void copied_case(bufs *b, jc *c)
{
    static call_seen cs;
    int work = c->reps > 0 && c->j.pat.count > 0;
    c->dev = b->copy_dev;
    xl_dev_fill(b->copy_dev, XL_POISON_BYTE, (c->j.n + GUARD) * 4);
    prepare(b, c);
    watch(F_COPIED, &c->j, c->dev, c->reps, 0, c->s, &cs, c->what);
    probe(b, c);
    sync_after(c->what);
    expect_rc0(&cs, c);
    expect_no_advice(&cs, c, 0);
    expect_one_copy(&cs, c, work);
    expect_launches(&cs, c, work);
    expect_out(b, c);
    expect_dev_array(b, c, work);
}

/* mapped_case - lab_read_mapped of c, prepared, watched; then every check */
static void mapped_case(bufs *b, jc *c)
{
    static call_seen cs;
    prepare(b, c);
    watch(F_MAPPED, &c->j, NULL, c->reps, 0, c->s, &cs, c->what);
    probe(b, c);
    sync_after(c->what);
    expect_rc0(&cs, c);
    expect_no_copies(&cs, c);
    expect_no_advice(&cs, c, 0);
    expect_launches(&cs, c, c->reps > 0 && c->j.pat.count > 0);
    expect_out(b, c);
    expect_src_unchanged(b, c);
}

XL_TEST(read, copied_mapped, 10, XL_GPU,
        "lab_read_copied: one cudaMemcpyAsync of the whole array on the stream, then reps passes; lab_read_mapped: no "
        "copy, reads through the mapping at any element; exact for reps 0 to 9, pinned and pageable sources, on the "
        "stream given, legacy too; bad arguments and unmapped memory refused",
        30)
{
    bufs b;
    bufs_alloc(&b, NEED_MAPPED | NEED_YOURS | NEED_PINNED | NEED_PAGEABLE | NEED_COPY_DEV | NEED_RAW);
    const int reps_set[] = {0, 1, 2, 7, (int)kit_rand_int(3, 9)};
    int turn = (int)kit_rand_int(0, 4), flip = (int)kit_rand_int(0, 1), third = (int)kit_rand_int(0, 2), calls = 0;
    for (int cs = 0; cs < C_CASES; cs++)
        for (int fn = F_COPIED; fn <= F_MAPPED; fn++) {
            jc c;
            memset(&c, 0, sizeof c);
            shape(cs, &c.j.n, &c.j.pat);
            c.fn = fn;
            int odd = (cs + flip) & 1;
            c.kind = fn == F_COPIED ? (odd ? K_PINNED : K_PAGEABLE) : (odd ? K_YOURS : K_MAPPED);
            c.reps = reps_set[(cs + turn + 2 * (fn == F_MAPPED)) % 5];
            c.s = (calls++ + third) % 3 == 0 ? 0 : b.s;
            place(&b, &c);
            describe(&c, case_names[cs]);
            if (fn == F_COPIED)
                copied_case(&b, &c);
            else
                mapped_case(&b, &c);
        }

    /* lab_read_copied's refusals, on a pinned array */
    char why[200];
    cudaStream_t s = kit_rand_int(0, 1) ? b.s : 0;
    lab_job v = valid_job(&b, b.pinned), j;
    int reps = (int)kit_rand_int(1, 9), neg = (int)kit_rand_int(INT_MIN, -2);
    xl_dev_fill(b.out, XL_POISON_BYTE, (v.pat.count + GUARD) * 4);
    xl_dev_fill(b.copy_dev, XL_POISON_BYTE, (v.n + GUARD) * 4);
    refuse_job_rules(F_COPIED, &v, b.copy_dev, reps, 0, s);
    expect_refused(F_COPIED, &v, b.copy_dev, -1, 0, s, "reps -1");
    snprintf(why, sizeof why, "reps %d", neg);
    expect_refused(F_COPIED, &v, b.copy_dev, neg, 0, s, why);
    expect_refused(F_COPIED, &v, NULL, reps, 0, s, "dev NULL (count > 0, reps > 0)");
    /* refused before reps 0's or count 0's early return: lab.h's refusals have no exception for them */
    expect_refused(F_COPIED, &v, NULL, 0, 0, s, "dev NULL and reps 0 (lab.h refuses dev NULL whatever reps)");
    j = v, j.pat.count = 0;
    expect_refused(F_COPIED, &j, NULL, reps, 0, s, "dev NULL and count 0 (lab.h refuses dev NULL whatever the "
                   "count: only src and out may be NULL then)");
    expect_refused(F_COPIED, &j, b.copy_dev, -1, 0, s, "reps -1 and count 0 (lab.h refuses reps < 0 whatever the "
                   "count)");
    for (int first = 0; first < 2; first++) { /* the first n that wraps, then one drawn above it */
        j = v, j.n = SIZE_MAX / 4 + 1 + (first ? 0 : rndz(1, 1000));
        snprintf(why, sizeof why, "n = %zu, whose n x 4 bytes pass SIZE_MAX (wrapping to %zu), the pattern small "
                 "and valid", j.n, j.n * 4);
        expect_refused(F_COPIED, &j, b.copy_dev, reps, 0, s, why);
    }
    j = v, j.n = SIZE_MAX / 4 + 1 + rndz(0, 1000);
    snprintf(why, sizeof why, "n = %zu, whose n x 4 bytes pass SIZE_MAX, and reps 0 (lab.h refuses it whatever reps)",
             j.n);
    expect_refused(F_COPIED, &j, b.copy_dev, 0, 0, s, why);
    for (int zero = 0; zero < 2; zero++) { /* count 0 (src and out NULL or not), with reps > 0, then reps 0 too */
        j = v, j.pat.count = 0, j.n = SIZE_MAX / 4 + 1 + rndz(0, 1000);
        int null = (int)kit_rand_int(0, 1);
        if (null)
            j.src = NULL, j.out = NULL;
        snprintf(why, sizeof why, "n = %zu (n x 4 bytes past SIZE_MAX), count 0%s and reps %d (lab.h refuses it "
                 "whatever the count and reps)", j.n, null ? " (src, out NULL)" : "", zero ? 0 : reps);
        expect_refused(F_COPIED, &j, b.copy_dev, zero ? 0 : reps, 0, s, why);
    }
    expect_untouched(&b, b.out, v.pat.count + GUARD, "after the refused lab_read_copied calls, out");
    expect_untouched(&b, b.copy_dev, v.n + GUARD, "after the refused lab_read_copied calls, dev");
    expect_calls_no_leak(F_COPIED, &v, b.copy_dev, reps, 0, s);

    /* lab_read_mapped's refusals, on the kit's mapped array; then memory that is not mapped pinned memory */
    v = valid_job(&b, b.map_host);
    xl_dev_fill(b.out, XL_POISON_BYTE, (v.pat.count + GUARD) * 4);
    refuse_job_rules(F_MAPPED, &v, NULL, reps, 0, s);
    expect_refused(F_MAPPED, &v, NULL, -1, 0, s, "reps -1");
    snprintf(why, sizeof why, "reps %d", neg);
    expect_refused(F_MAPPED, &v, NULL, neg, 0, s, why);
    for (int one = 0; one < 2; one++) { /* a job of the drawn count, then of one element */
        j = v, j.src = b.pageable + rndz(0, OFFSET_MAX), j.pat.count = one ? 1 : v.pat.count;
        expect_refused(F_MAPPED, &j, NULL, reps, 0, s,
                       b.pageable_ok ? "src in malloc'd memory (this GPU could read it, but lab.h asks for mapped "
                                       "pinned memory, read through its device pointer)"
                                     : "src in malloc'd memory (not mapped pinned memory)");
        j = v, j.src = b.src + rndz(0, OFFSET_MAX), j.pat.count = one ? 1 : v.pat.count;
        expect_refused(F_MAPPED, &j, NULL, reps, 0, s, "src in device memory (cudaMalloc: not mapped pinned memory)");
        j = v, j.src = b.raw + rndz(0, OFFSET_MAX), j.pat.count = one ? 1 : v.pat.count;
        expect_refused(F_MAPPED, &j, NULL, reps, 0, s, "src in managed memory (cudaMallocManaged: not mapped pinned "
                       "memory; read through its own pointer its pages would fault onto the GPU, no zero-copy)");
    }
    /* refused before reps 0's early return: lab.h's refusals have no exception for it */
    j = v, j.src = b.pageable + rndz(0, OFFSET_MAX);
    expect_refused(F_MAPPED, &j, NULL, 0, 0, s, "src in malloc'd memory and reps 0 (lab.h refuses memory that is not "
                   "mapped pinned memory whatever reps)");
    j = v, j.src = b.src + rndz(0, OFFSET_MAX);
    expect_refused(F_MAPPED, &j, NULL, 0, 0, s, "src in device memory and reps 0 (lab.h refuses memory that is not "
                   "mapped pinned memory whatever reps)");
    j = v, j.src = b.raw + rndz(0, OFFSET_MAX);
    expect_refused(F_MAPPED, &j, NULL, 0, 0, s, "src in managed memory and reps 0 (lab.h refuses memory that is not "
                   "mapped pinned memory whatever reps)");
    j = v, j.pat.count = 0;
    expect_refused(F_MAPPED, &j, NULL, -1, 0, s, "reps -1 and count 0 (lab.h refuses reps < 0 whatever the count)");
    expect_untouched(&b, b.out, v.pat.count + GUARD, "after the refused lab_read_mapped calls, out");
    expect_calls_no_leak(F_MAPPED, &v, NULL, reps, 0, s);
    /* count 0 with src a real pointer to memory of another kind: lab.h checks src's kind only where count > 0 */
    const struct {
        const uint32_t *p;
        const char *kind;
    } others[] = {{b.pageable, "malloc'd memory"}, {b.src, "device memory"}, {b.raw, "managed memory"}};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        int r0 = (int)kit_rand_int(0, 9);
        j = v, j.src = others[i].p + rndz(0, OFFSET_MAX), j.pat.count = 0;
        snprintf(why, sizeof why, "count 0 and src in %s, reps %d (out valid)", others[i].kind, r0);
        expect_nothing_done(F_MAPPED, &j, NULL, r0, 0, s, why);
        expect_nothing_done(F_COPIED, &j, b.copy_dev, r0, 0, s, why);
    }
    /* a mapped buffer freed since a call read it: the same pointer is no longer mapped pinned memory (lab.h: its kind
     * is checked at every call; an answer kept from an earlier call reads freed memory) */
    size_t fw = 100000 + OFFSET_MAX;
    uint32_t *gone = NULL;
    XL_CHECK(cudaHostAlloc((void **)&gone, fw * 4, cudaHostAllocMapped));
    xl_fill_random(gone, fw * 4, xl_fresh_seed());
    j = valid_job(&b, gone + rndz(0, OFFSET_MAX));
    int r1 = (int)kit_rand_int(1, 9);
    snprintf(why, sizeof why, "a mapped buffer (cudaHostAlloc, cudaHostAllocMapped), reps %d, before it is freed", r1);
    int rc = lab_read_mapped(&j, r1, s);
    cr_assert(rc == 0, "lab_read_mapped with %s returned %d (see its message above)", why, rc);
    sync_after(why);
    XL_CHECK(cudaFreeHost(gone));
    xl_dev_fill(b.out, XL_POISON_BYTE, (j.pat.count + GUARD) * 4);
    expect_refused(F_MAPPED, &j, NULL, 0, 0, s, "the same src, in that mapped buffer freed since (cudaFreeHost), and "
                   "reps 0: it is no longer mapped pinned memory; check src at every call, not once per pointer");
    expect_refused(F_MAPPED, &j, NULL, r1, 0, s, "the same src, in that mapped buffer freed since (cudaFreeHost): it "
                   "is no longer mapped pinned memory; check src at every call, not once per pointer");
    expect_untouched(&b, b.out, j.pat.count + GUARD, "after lab_read_mapped refused the freed buffer, out");
    bufs_free(&b);
}

/* managed_window - a pattern that reads a window of n elements (n drawn here): its span starts and ends inside a
 * host page (elements of src's buffer counted from off) and is at most a quarter of the array, so that a prefetch of
 * the whole array, or of the bytes read only, is told apart from one of the span; edge: its last element is the first
 * word of a page (that page holds one element of the span) */
static void managed_window(size_t *n, lab_pattern *p, size_t off, int edge)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE) / 4, run, stride;
    *n = rndz(2 * MIB, 4 * MIB);
    switch (kit_rand_int(0, 3)) {
    case 0: run = 1, stride = 33; break;
    case 1: run = LAB_LINE_ELEMS, stride = LAB_LINE_ELEMS * rndz(2, 8); break;
    case 2: run = 1023 + rndz(0, 2), stride = rndz(2900, 3100); break;
    default: run = 31, stride = 97; break;
    }
    size_t runs = rndz(*n / 8, *n / 5) / stride;
    p->run = run, p->stride = stride;
    p->count = runs * run - rndz(0, run - 1);
    size_t rel = last_rel(p);
    while (edge && rel % page == 0 && p->count > 1) /* edge: the last element must start a page, the first must not */
        p->count--, rel = last_rel(p);
    p->first = rndz(page, *n - 1 - rel - 2 * page);
    if (edge) /* the last element read is the first word of a page: a span rounded from where it starts misses it */
        p->first += (page - (off + p->first + rel) % page) % page;
    while (!edge && ((off + p->first) % page == 0 || (off + p->first + rel + 1) % page == 0))
        p->first++;
}

/* expect_prefetches - lab_read_managed with prefetch 1 and work to do: prefetches to the GPU (device) that cover the
 * span read, all before the first launch, and to the host that cover it, all after the last launch; each on the
 * stream, flags 0, within the span rounded out to host pages; none other. Then the driver's record of the span's
 * last prefetch names the host. */
static void expect_prefetches(const call_seen *cs, const jc *c, int device)
{
    static span to[MAX_MEM], back[MAX_MEM];
    int nto = 0, nback = 0, first_launch = -1, last_launch = -1;
    const char *what = c->what;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), last = c->j.pat.first + last_rel(&c->j.pat);
    uintptr_t lo = (uintptr_t)(c->j.src + c->j.pat.first), hi = (uintptr_t)(c->j.src + last + 1);
    uintptr_t rlo = lo / page * page, rhi = (hi + page - 1) / page * page;
    for (int i = 0; i < cs->nmem; i++)
        if (cs->mem[i].kind == XL_MEM_LAUNCH) {
            if (first_launch < 0)
                first_launch = i;
            last_launch = i;
        }
    for (int i = 0; i < cs->nmem; i++) {
        const xl_mem_rec *r = &cs->mem[i];
        if (r->kind != XL_MEM_PREFETCH)
            continue;
        uintptr_t a = (uintptr_t)r->ptr, z = a + r->bytes;
        long long from = (long long)(a - (uintptr_t)c->j.src), upto = (long long)(z - (uintptr_t)c->j.src);
        cr_assert(r->result == cudaSuccess, "%s: a cudaMemPrefetchAsync of bytes [%lld, %lld) of src failed (%s)",
                  what, from, upto, cudaGetErrorName(r->result));
        cr_assert(r->stream == c->s,
                  "%s: a cudaMemPrefetchAsync of bytes [%lld, %lld) of src went on %s, not on the stream given: pass "
                  "the stream (left out, it defaults to the legacy stream 0)",
                  what, from, upto, r->stream == 0 ? "the legacy stream 0" : "another stream");
        cr_assert(r->flags == 0, "%s: a cudaMemPrefetchAsync was given flags %llu: lab.h: 0", what, r->flags);
        cr_assert(a >= rlo && z <= rhi,
                  "%s: a prefetch of bytes [%lld, %lld) of src reaches outside the span the passes read (elements "
                  "%zu to %zu: bytes [%zu, %zu), rounded out to pages [%lld, %lld)): lab.h prefetches the span, not "
                  "the whole array", what, from, upto, c->j.pat.first, last, c->j.pat.first * 4, (last + 1) * 4,
                  (long long)(rlo - (uintptr_t)c->j.src), (long long)(rhi - (uintptr_t)c->j.src));
        if (r->loc_type == LOC_DEVICE) {
            cr_assert(r->loc_id == device, "%s: a prefetch went to device %d, not to the current device (%d): ask "
                      "cudaGetDevice which one it is", what, r->loc_id, device);
            cr_assert(first_launch < 0 || i < first_launch,
                      "%s: a prefetch of bytes [%lld, %lld) to the GPU was queued after the first pass: lab.h: before "
                      "the first pass, so that no pass faults", what, from, upto);
            to[nto++] = (span){a, z};
        } else {
            cr_assert(host_location(r->loc_type), "%s: a prefetch went to a location of type %d (id %d): lab.h: "
                      "to the current device, then back to the host", what, r->loc_type, r->loc_id);
            cr_assert(i > last_launch,
                      "%s: a prefetch of bytes [%lld, %lld) to the host was queued before the last pass: lab.h: the "
                      "span goes back after the last pass", what, from, upto);
            back[nback++] = (span){a, z};
        }
    }
    const char *hint = " (a prefetch of count x 4 bytes from the first element covers too little when the runs are "
                       "apart: the span runs from the first element read to the last one, both included)";
    cr_assert(nto > 0, "%s: no prefetch to the GPU was recorded: lab.h: with prefetch 1, cudaMemPrefetchAsync of the "
              "span to the current device before the first pass (with the per-thread default stream compiled in, "
              "the kit sees none)", what);
    cr_assert(covered(to, nto, lo, hi), "%s: the prefetches to the GPU (%d) do not cover the span the passes read, "
              "bytes [%zu, %zu) of src%s", what, nto, c->j.pat.first * 4, (last + 1) * 4, hint);
    cr_assert(nback > 0, "%s: no prefetch back to the host was recorded: lab.h: after the last pass, the same span "
              "to the host, on the stream, so that the host then reads it without a fault", what);
    cr_assert(covered(back, nback, lo, hi), "%s: the prefetches back to the host (%d) do not cover the span the passes "
              "read, bytes [%zu, %zu) of src%s", what, nback, c->j.pat.first * 4, (last + 1) * 4, hint);
#if CHECK_LAST_PREFETCH
    int loc = -9;
    if (cudaMemRangeGetAttribute(&loc, sizeof loc, cudaMemRangeAttributeLastPrefetchLocation, (const void *)lo,
                                 hi - lo) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    int host = loc == cudaCpuDeviceId;
#if CUDART_VERSION >= 12020
    int type = -9;
    if (!host && cudaMemRangeGetAttribute(&type, sizeof type, cudaMemRangeAttributeLastPrefetchLocationType,
                                          (const void *)lo, hi - lo) == cudaSuccess)
        host = host_location(type);
    cudaGetLastError();
#endif
    cr_assert(host, "%s: once the GPU had finished, the driver gives the span's last prefetch location as %d "
              "(cudaMemRangeAttributeLastPrefetchLocation; the host is %d): was every page of the span prefetched "
              "back to the host after the passes?", what, loc, cudaCpuDeviceId);
#endif
}

/* managed_case - lab_read_managed of c, prepared, watched; then every check (device: the current one) */
static void managed_case(bufs *b, jc *c, int device)
{
    static call_seen cs;
    int work = c->reps > 0 && c->j.pat.count > 0;
    prepare(b, c);
    watch(F_MANAGED, &c->j, NULL, c->reps, c->prefetch, c->s, &cs, c->what);
    probe(b, c);
    sync_after(c->what);
    expect_rc0(&cs, c);
    expect_no_copies(&cs, c);
    expect_no_advice(&cs, c, c->prefetch && work);
    expect_launches(&cs, c, work);
    if (c->prefetch && work)
        expect_prefetches(&cs, c, device);
    expect_out(b, c);
    expect_src_unchanged(b, c);
}

/* managed_jc - a fresh window job on b's managed memory of the given kind (K_MANAGED with advice, or K_RAW) */
static void managed_jc(bufs *b, jc *c, int kind, int advice, int reps, int prefetch, cudaStream_t s, int edge)
{
    memset(c, 0, sizeof *c);
    c->fn = F_MANAGED, c->kind = kind, c->advice = advice, c->reps = reps, c->prefetch = prefetch, c->s = s;
    size_t off = rndz(0, OFFSET_MAX);
    managed_window(&c->j.n, &c->j.pat, off, edge);
    place_at(b, c, off);
    describe(c, edge ? "a window of the array, its span starting inside a page, its last element the first word of a "
                       "page" : "a window of the array, its span starting and ending inside a page");
}

/* Small jobs for lab_read_managed: a span of one element to about 64 KiB, whatever its size lab.h's prefetch 1
 * prefetches it there and back. */
enum { S_ONE, S_RUN, S_RUNS, S_NEAR64K, S_SMALL };
static const char *const small_names[] = {
    "one element alone (a span of 4 bytes)",
    "one run inside a few pages (a span under 2 KiB)",
    "short runs over a few pages (a span under 64 KiB)",
    "one run of about 16 Ki elements (a span near 64 KiB)",
};

/* small_managed_jc - a fresh small job of shape sh on b's managed memory with advice (K_MANAGED) */
static void small_managed_jc(bufs *b, jc *c, int sh, int advice, int reps, int prefetch, cudaStream_t s)
{
    memset(c, 0, sizeof *c);
    c->fn = F_MANAGED, c->kind = K_MANAGED, c->advice = advice, c->reps = reps, c->prefetch = prefetch, c->s = s;
    size_t n = rndz(70000, 100000), run;
    switch (sh) {
    case S_ONE: c->j.pat = fit(n, 1, rndz(1, 100), 1); break;
    case S_RUN: run = rndz(2, 500), c->j.pat = fit(n, run, run + rndz(0, 64), rndz(1, run)); break;
    case S_RUNS: run = rndz(1, 40), c->j.pat = fit(n, run, run + rndz(0, 200), rndz(2, 300)); break;
    default: run = rndz(15900, 16800), c->j.pat = fit(n, run, run, run); break;
    }
    c->j.n = n;
    place(b, c);
    describe(c, small_names[sh]);
}

/* managed_device1 - on a host with two GPUs or more, one case on device 1, its array allocated while device0 was
 * current: the prefetch must name device 1, the current device, not the one the memory was allocated on */
static void managed_device1(int device0)
{
    int ndev = 0, conc = 0;
    XL_CHECK(cudaGetDeviceCount(&ndev));
    if (ndev < 2)
        return;
    int other = device0 == 1 ? 0 : 1, advice = (int)kit_rand_int(0, 2);
    XL_CHECK(cudaDeviceGetAttribute(&conc, cudaDevAttrConcurrentManagedAccess, other));
    if (!conc)
        return;
    /* first a call with device0 current, in this process: the device must be asked at every call, not once */
    int conc0 = 0;
    XL_CHECK(cudaDeviceGetAttribute(&conc0, cudaDevAttrConcurrentManagedAccess, device0));
    bufs b0;
    bufs_alloc(&b0, NEED_MANAGED);
    jc c0;
    managed_jc(&b0, &c0, K_MANAGED, advice, (int)kit_rand_int(1, 3), conc0 ? 1 : 0, b0.s,
               (int)kit_rand_int(0, 1));
    size_t used0 = strlen(c0.what);
    snprintf(c0.what + used0, sizeof c0.what - used0, ", device %d current (the call before one with device %d "
             "current)", device0, other);
    managed_case(&b0, &c0, device0);
    bufs_free(&b0);
    uint32_t *owned = base_managed_alloc(BUF_BYTES, (lab_advice)advice); /* allocated with device0 current */
    cr_assert(owned != NULL, "the kit's base_managed_alloc(%zu, %s) failed", BUF_BYTES, advice_names[advice]);
    kit_use_device(other);
    bufs b;
    bufs_alloc(&b, NEED_MANAGED);
    XL_CHECK(cudaFree(b.managed[advice]));
    b.managed[advice] = owned;
    jc c;
    managed_jc(&b, &c, K_MANAGED, advice, (int)kit_rand_int(1, 3), 1, b.s, (int)kit_rand_int(0, 1));
    size_t used = strlen(c.what);
    snprintf(c.what + used, sizeof c.what - used, ", allocated while device %d was current, called with device %d "
             "current", device0, other);
    managed_case(&b, &c, other);
    bufs_free(&b);
    kit_use_device(device0);
}

XL_TEST(read, managed, 10, XL_GPU,
        "lab_read_managed: exact for every advice, reps 0 to 5, prefetch 0 and 1; with prefetch, the span read "
        "(page-rounded, not the whole array) to this GPU before the first pass and back to the host after the last, "
        "on the stream given; without, no prefetch; no copy, no advice; bad arguments refused",
        30)
{
    bufs b;
    bufs_alloc(&b, NEED_MANAGED | NEED_RAW | NEED_PINNED | NEED_PAGEABLE);
    const int reps_set[] = {0, 1, 2, 5};
    int turn = (int)kit_rand_int(0, 3), third = (int)kit_rand_int(0, 2), flip = (int)kit_rand_int(0, 1);
    if (!b.concurrent)
        xl_note("this GPU has no concurrent managed access (cudaDevAttrConcurrentManagedAccess 0: Windows, WSL): "
                "prefetch 1 must be refused there, and the prefetch cases are not tried");
    for (int i = 0; i < 8; i++) {
        jc c;
        int kind = i % 4 == 3 ? K_RAW : K_MANAGED, prefetch = b.concurrent ? ((i + i / 4 + flip) & 1) : 0;
        managed_jc(&b, &c, kind, i % 4 == 3 ? 0 : i % 4, reps_set[(i + turn) % 4], prefetch,
                   (i + third) % 3 == 0 ? 0 : b.s, (i / 2) % 2 == 0);
        managed_case(&b, &c, b.device);
    }
    for (int sh = 0; sh < S_SMALL; sh++) { /* small spans: prefetch 1 prefetches them too */
        jc c;
        small_managed_jc(&b, &c, sh, (int)kit_rand_int(0, 2), (int)kit_rand_int(1, 3), b.concurrent ? 1 : 0,
                         (sh + third) % 3 == 0 ? 0 : b.s);
        managed_case(&b, &c, b.device);
    }
    if (b.concurrent) { /* count 0 with prefetch 1: nothing done, no prefetch */
        jc c;
        managed_jc(&b, &c, K_MANAGED, (int)kit_rand_int(0, 2), (int)kit_rand_int(1, 5), 1, b.s, 0);
        c.j.pat.count = 0, c.j.src = NULL, c.j.out = NULL;
        describe(&c, "no elements (count 0, src and out NULL)");
        managed_case(&b, &c, b.device);
    }

    char why[200];
    cudaStream_t s = kit_rand_int(0, 1) ? b.s : 0;
    lab_job v = valid_job(&b, b.managed[kit_rand_int(0, 2)]), j;
    int reps = (int)kit_rand_int(1, 5), neg = (int)kit_rand_int(INT_MIN, -2), pf = b.concurrent ? (int)kit_rand_int(0, 1) : 0;
    xl_dev_fill(b.out, XL_POISON_BYTE, (v.pat.count + GUARD) * 4);
    refuse_job_rules(F_MANAGED, &v, NULL, reps, pf, s);
    expect_refused(F_MANAGED, &v, NULL, -1, pf, s, "reps -1");
    snprintf(why, sizeof why, "reps %d", neg);
    expect_refused(F_MANAGED, &v, NULL, neg, pf, s, why);
    expect_refused(F_MANAGED, &v, NULL, reps, -1, s, "prefetch -1 (lab.h: 0 or 1)");
    expect_refused(F_MANAGED, &v, NULL, reps, 2, s, "prefetch 2 (lab.h: 0 or 1)");
    expect_refused(F_MANAGED, &v, NULL, reps, INT_MIN, s, "prefetch INT_MIN (lab.h: 0 or 1)");
    for (int one = 0; one < 2; one++) { /* a job of the drawn count, then of one element */
        j = v, j.src = b.src + rndz(0, OFFSET_MAX), j.pat.count = one ? 1 : v.pat.count;
        expect_refused(F_MANAGED, &j, NULL, reps, pf, s, "src in device memory (cudaMalloc: not managed memory)");
        j = v, j.src = b.pinned + rndz(0, OFFSET_MAX), j.pat.count = one ? 1 : v.pat.count;
        expect_refused(F_MANAGED, &j, NULL, reps, pf, s, "src in pinned memory (cudaMallocHost: not managed memory)");
        j = v, j.src = b.pageable + rndz(0, OFFSET_MAX), j.pat.count = one ? 1 : v.pat.count;
        expect_refused(F_MANAGED, &j, NULL, reps, pf, s, "src in malloc'd memory (not managed memory)");
    }
    /* refused before reps 0's or count 0's early return: lab.h's refusals have no exception for them */
    expect_refused(F_MANAGED, &v, NULL, 0, 2, s, "prefetch 2 and reps 0 (lab.h refuses a prefetch not 0 or 1 "
                   "whatever reps)");
    expect_refused(F_MANAGED, &v, NULL, 0, -1, s, "prefetch -1 and reps 0 (lab.h refuses a prefetch not 0 or 1 "
                   "whatever reps)");
    j = v, j.pat.count = 0;
    expect_refused(F_MANAGED, &j, NULL, reps, 2, s, "prefetch 2 and count 0 (lab.h refuses a prefetch not 0 or 1 "
                   "whatever the count)");
    expect_refused(F_MANAGED, &j, NULL, -1, pf, s, "reps -1 and count 0 (lab.h refuses reps < 0 whatever the count)");
    j = v, j.src = b.src + rndz(0, OFFSET_MAX);
    expect_refused(F_MANAGED, &j, NULL, 0, pf, s, "src in device memory and reps 0 (lab.h refuses memory that is not "
                   "managed whatever reps)");
    j = v, j.src = b.pageable + rndz(0, OFFSET_MAX);
    expect_refused(F_MANAGED, &j, NULL, 0, pf, s, "src in malloc'd memory and reps 0 (lab.h refuses memory that is "
                   "not managed whatever reps)");
    /* count 0 with src a real pointer to memory of another kind: lab.h checks src's kind only where count > 0 */
    const struct {
        const uint32_t *p;
        const char *kind;
    } others[] = {{b.pageable, "malloc'd memory"}, {b.src, "device memory"}, {b.pinned, "pinned memory"}};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        int r0 = (int)kit_rand_int(0, 5);
        j = v, j.src = others[i].p + rndz(0, OFFSET_MAX), j.pat.count = 0;
        snprintf(why, sizeof why, "count 0 and src in %s, reps %d, prefetch %d (out valid)", others[i].kind, r0, pf);
        expect_nothing_done(F_MANAGED, &j, NULL, r0, pf, s, why);
    }
    if (!b.concurrent) {
        expect_refused(F_MANAGED, &v, NULL, 0, 1, s, "prefetch 1 and reps 0 on a GPU without concurrent managed "
                       "access (lab.h refuses it whatever reps)");
        expect_refused(F_MANAGED, &v, NULL, reps, 1, s, "prefetch 1 on a GPU without concurrent managed access "
                                                        "(cudaDevAttrConcurrentManagedAccess 0)");
        j = v, j.pat.count = 0;
        expect_refused(F_MANAGED, &j, NULL, reps, 1, s, "prefetch 1 and count 0 on a GPU without concurrent managed "
                       "access (lab.h refuses it whatever the count)");
    }
    expect_untouched(&b, b.out, v.pat.count + GUARD, "after the refused lab_read_managed calls, out");
    expect_calls_no_leak(F_MANAGED, &v, NULL, reps, pf, s);
    bufs_free(&b);
}

XL_TEST(managed, current_device, 5, XL_GPU2,
        "with device 1 current: lab_managed_alloc's advice names device 1, and lab_read_managed prefetches an array "
        "allocated while device 0 was current to device 1, the current device, also after a call with device 0 "
        "current",
        30)
{
    int device0;
    XL_CHECK(cudaGetDevice(&device0));
    managed_alloc_device1(device0);
    managed_device1(device0);
}

/* ===== Part E: waits ===== */

/* The narrow-wait test's calls, in the order made: on a non-blocking stream of the kit's, each function once, then
 * lab_read_mapped on a blocking stream, whose passes wait for the kit's kernel on the legacy stream (the call only
 * queues them, so it returns at once all the same). */
enum { NW_GATHER, NW_COPIED, NW_MAPPED, NW_MANAGED_PF, NW_MANAGED, NW_BLOCKING, NW_CALLS };
static const char *const nw_names[NW_CALLS] = {
    "lab_gather (device memory)", "lab_read_copied (pinned, reps 2)", "lab_read_mapped (reps 2)",
    "lab_read_managed (prefetch 1, reps 2)", "lab_read_managed (prefetch 0, reps 2)",
    "lab_read_mapped on a blocking stream (reps 2)"};

typedef struct {
    lab_job job[NW_CALLS];    /* each call's, into its own out */
    uint32_t *copy_dev;       /* lab_read_copied's dev */
    cudaStream_t s, blocking;
    int which[NW_CALLS];      /* the calls made, by number (prefetch 1 needs concurrent managed access) */
    int rc[NW_CALLS];
} narrow_ctx;

/* narrow_call - call k of those in c->which (kit_ms_beside_busy_each) */
static void narrow_call(void *ctx, int k)
{
    narrow_ctx *c = ctx;
    int w = c->which[k];
    const lab_job *j = &c->job[w];
    switch (w) {
    case NW_GATHER: c->rc[w] = lab_gather(j, c->s); break;
    case NW_COPIED: c->rc[w] = lab_read_copied(j, c->copy_dev, 2, c->s); break;
    case NW_MAPPED: c->rc[w] = lab_read_mapped(j, 2, c->s); break;
    case NW_MANAGED_PF: c->rc[w] = lab_read_managed(j, 2, 1, c->s); break;
    case NW_MANAGED: c->rc[w] = lab_read_managed(j, 2, 0, c->s); break;
    default: c->rc[w] = lab_read_mapped(j, 2, c->blocking); break;
    }
}

XL_TEST(wait, none, 5, XL_TIMED,
        "lab_gather and the three ways wait for nothing: beside a 60 ms kernel on the legacy stream they take under "
        XL_STR(NARROW_MS) " ms in all, and a call on a blocking stream returns at once",
        20)
{
    const size_t n = NARROW_ELEMS, bytes = n * 4;
    static narrow_ctx c;
    int conc = 0, device, calls = 0;
    XL_CHECK(cudaGetDevice(&device));
    XL_CHECK(cudaDeviceGetAttribute(&conc, cudaDevAttrConcurrentManagedAccess, device));
    uint32_t *want = host_words(n), *init = host_words(n), *got = host_words(n), *map_dev;
    uint32_t *dev = kit_dev_alloc(bytes), *map = base_mapped_alloc(bytes, (void **)&map_dev);
    uint32_t *managed = base_managed_alloc(bytes, LAB_ADVICE_NONE), *out[NW_CALLS];
    cr_assert(map != NULL && managed != NULL, "the kit could not allocate its mapped or managed array");
    c.copy_dev = kit_dev_alloc(bytes);
    c.s = kit_stream();
    XL_CHECK(cudaStreamCreate(&c.blocking));
    xl_fill_random(want, bytes, xl_fresh_seed());
    xl_dev_upload(dev, want, bytes);
    memcpy(map, want, bytes);
    memcpy(managed, want, bytes);
    const uint32_t *srcs[NW_CALLS] = {dev, map, map, managed, managed, map};
    for (int w = 0; w < NW_CALLS; w++) {
        out[w] = kit_dev_alloc(bytes);
        c.job[w] = (lab_job){srcs[w], n, {0, n, n, n}, out[w]};
        if (w != NW_MANAGED_PF || conc)
            c.which[calls++] = w;
    }
    for (int k = 0; k < calls; k++) /* warm-up: every kernel loaded, every path taken once */
        narrow_call(&c, k);
    XL_CHECK(cudaDeviceSynchronize());
    for (int k = 0; k < calls; k++)
        cr_assert(c.rc[c.which[k]] == 0, "%s returned %d (see its message above)", nw_names[c.which[k]],
                  c.rc[c.which[k]]);
    xl_fill_random(init, bytes, xl_fresh_seed());
    for (int w = 0; w < NW_CALLS; w++)
        xl_dev_upload(out[w], init, bytes);
    xl_dev_fill(c.copy_dev, XL_POISON_BYTE, bytes);

    double ms[NW_CALLS] = {0};
    double total = kit_ms_beside_busy_each(narrow_call, &c, calls, NARROW_NS, ms);
    char each[600] = "";
    for (int k = 0; k < calls; k++) {
        int w = c.which[k];
        cr_assert(c.rc[w] == 0, "%s returned %d beside the kit's kernel (see its message above)", nw_names[w],
                  c.rc[w]);
        snprintf(each + strlen(each), sizeof each - strlen(each), "%s%s %.1f", k ? ", " : "", nw_names[w], ms[k]);
    }
    for (int k = 0; k < calls; k++) { /* every result: out = init + reps x the array */
        int w = c.which[k];
        uint32_t reps = w == NW_GATHER ? 1 : 2;
        XL_CHECK(cudaMemcpy(got, out[w], bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++)
            if (got[i] != init[i] + reps * want[i])
                cr_fatal("beside the kit's 60 ms kernel, %s left out[%zu] = 0x%08x, not 0x%08x (the whole array of "
                         "%zu elements read %u times)", nw_names[w], i, got[i], init[i] + reps * want[i], n, reps);
    }
    XL_CHECK(cudaMemcpy(got, c.copy_dev, bytes, cudaMemcpyDeviceToHost));
    cr_assert(memcmp(got, want, bytes) == 0,
              "beside the kit's 60 ms kernel, lab_read_copied left dev without the array");
    xl_timed_check(total, XL_AT_MOST(NARROW_MS), "the calls' time beside an unrelated kernel (ms)",
                   "%d calls on arrays of 1 MiB took %.1f ms in all (%s ms) while an unrelated 60 ms kernel ran on "
                   "the legacy stream: one of them waited for the whole device (cudaDeviceSynchronize), for the legacy "
                   "stream, or for its own work (cudaStreamSynchronize). lab.h: each call queues its work on the "
                   "stream and returns without waiting; the caller waits",
                   calls, total, each);
    xl_note("beside the 60 ms kernel: %s ms", each);
    for (int w = 0; w < NW_CALLS; w++)
        XL_CHECK(cudaFree(out[w]));
    XL_CHECK(cudaFree(dev));
    XL_CHECK(cudaFree(c.copy_dev));
    XL_CHECK(cudaFree(managed));
    XL_CHECK(cudaFreeHost(map));
    XL_CHECK(cudaStreamDestroy(c.s));
    XL_CHECK(cudaStreamDestroy(c.blocking));
    free(want), free(init), free(got);
}

/* ===== Part F: speed ===== */

/* The variants a speed measurement times, each with an out of its own. */
enum { V_YOURS_MAPPED, V_YOURS_COPIED, V_YOURS_MANAGED, V_KIT_MAPPED, V_KIT_COPIED, V_KIT_MANAGED, V_COUNT };
static const struct {
    const char *name, *way, *impl;
    int yours, managed, copied;
} vinfo[V_COUNT] = {
    {"your lab_read_mapped", "mapped", "yours", 1, 0, 0},
    {"your lab_read_copied", "copied", "yours", 1, 0, 1},
    {"your lab_read_managed (prefetch 1)", "managed", "yours", 1, 1, 0},
    {"the kit's base_read_mapped", "mapped", "kit", 0, 0, 0},
    {"the kit's base_read_copied", "copied", "kit", 0, 0, 1},
    {"the kit's base_read_managed (prefetch 1)", "managed", "kit", 0, 1, 0},
};

/* data/ways.csv (design §4.4): every way a speed check timed, yours and the kit's, one row per way and attempt */
#define WAYS_HEADER "check,way,impl,fraction,reuse,array_bytes,ms"

typedef struct {
    cudaStream_t s;
    size_t n;
    uint32_t *map_host;           /* the array: pinned and mapped (base_mapped_alloc), the copy ways' source too */
    uint32_t *managed[2];         /* speed.managed: the array in managed memory without advice, yours and the kit's */
    uint32_t *dev[2];             /* the copy ways' dev: yours, the kit's */
    uint32_t *out[V_COUNT];       /* each variant's out (NULL where the test times no such variant) */
    uint32_t *host_out;           /* a download of out */
    lab_pattern sparse, dense;
    double link_ms;               /* #1: the kit's copy-everything at 1% (the copy, and a pass of 1%) */
    int cached;                   /* #3's figures kept for #4's first attempt */
    int sparse_cached;            /* #1's figures kept for #1b's first attempt */
    double sparse_med[V_COUNT];
    double cached_med[V_COUNT];
    double cached_kit[DENSE_ROUNDS]; /* #3's rounds of the kit's copy-everything */
} speed_ctx;

static volatile uint64_t touch_sink; /* keeps the host's reads */

/* speed_setup - the array (SPEED_BYTES), the outs of the variants in vs, the copy ways' dev, and (managed) the two
 * managed arrays */
static void speed_setup(speed_ctx *x, const int *vs, int nv, int managed)
{
    memset(x, 0, sizeof *x);
    x->n = SPEED_N;
    x->s = kit_stream();
    void *map_dev;
    x->map_host = base_mapped_alloc(SPEED_BYTES, &map_dev);
    cr_assert(x->map_host != NULL, "the kit's base_mapped_alloc(%zu) failed", (size_t)SPEED_BYTES);
    for (int i = 0; i < nv; i++)
        XL_CHECK(cudaMalloc((void **)&x->out[vs[i]], SPEED_BYTES));
    for (int k = 0; k < 2; k++)
        XL_CHECK(cudaMalloc((void **)&x->dev[k], SPEED_BYTES));
    if (managed)
        for (int k = 0; k < 2; k++) {
            x->managed[k] = base_managed_alloc(SPEED_BYTES, LAB_ADVICE_NONE);
            cr_assert(x->managed[k] != NULL, "the kit's base_managed_alloc(%zu) failed", (size_t)SPEED_BYTES);
        }
    x->host_out = host_words(x->n);
    x->sparse = base_pattern(x->n, SPARSE_FRACTION, LAB_LINE_ELEMS);
    x->dense = (lab_pattern){0, x->n, x->n, x->n};
}

static void speed_teardown(speed_ctx *x)
{
    for (int v = 0; v < V_COUNT; v++)
        if (x->out[v])
            XL_CHECK(cudaFree(x->out[v]));
    for (int k = 0; k < 2; k++) {
        XL_CHECK(cudaFree(x->dev[k]));
        if (x->managed[k])
            XL_CHECK(cudaFree(x->managed[k]));
    }
    XL_CHECK(cudaFreeHost(x->map_host));
    XL_CHECK(cudaStreamDestroy(x->s));
    free(x->host_out);
}

/* speed_src - the array variant v reads */
static const uint32_t *speed_src(const speed_ctx *x, int v)
{
    return vinfo[v].managed ? x->managed[vinfo[v].yours ? 0 : 1] : x->map_host;
}

/* speed_round - one timed round of variant v: its out poisoned (and its dev), then from the call to the end of its
 * work on the stream (managed ways: until the host has read the span too), host clock; then, untimed, the return
 * code and out's hash against want */
static double speed_round(speed_ctx *x, int v, const lab_pattern *p, int reps, uint64_t want, const char *check)
{
    lab_job j = {speed_src(x, v), x->n, *p, x->out[v]};
    uint32_t *dev = x->dev[vinfo[v].yours ? 0 : 1];
    xl_dev_fill(x->out[v], XL_POISON_BYTE, p->count * 4);
    if (vinfo[v].copied)
        xl_dev_fill(dev, XL_POISON_BYTE, x->n * 4);
    double t0 = xl_now_ms();
    int rc;
    switch (v) {
    case V_YOURS_MAPPED: rc = lab_read_mapped(&j, reps, x->s); break;
    case V_YOURS_COPIED: rc = lab_read_copied(&j, dev, reps, x->s); break;
    case V_YOURS_MANAGED: rc = lab_read_managed(&j, reps, 1, x->s); break;
    case V_KIT_MAPPED: rc = base_read_mapped(&j, reps, x->s); break;
    case V_KIT_COPIED: rc = base_read_copied(&j, dev, reps, x->s); break;
    default: rc = base_read_managed(&j, reps, 1, x->s); break;
    }
    XL_CHECK(cudaStreamSynchronize(x->s));
    if (vinfo[v].managed)
        touch_sink += base_host_touch(j.src + p->first, (last_rel(p) + 1) * 4);
    double ms = xl_now_ms() - t0;
    cr_assert(rc == 0, "in %s, %s returned %d (see its message above)", check, vinfo[v].name, rc);
    int ok = 0;
    uint64_t got = base_out_hash(x->out[v], p->count, x->s, &ok);
    cr_assert(ok, "grader error: the kit's base_out_hash failed in %s", check);
    if (got != want) {
        cr_assert(vinfo[v].yours == 0,
                  "in %s (64 MiB, count %zu, reps %d), %s left out wrong: its hash differs from the one the array "
                  "gives (init the poison word, + reps x each element). It ran on a stream of the kit's, the array "
                  "freshly written, right after the same call was timed: does it read every element every pass, "
                  "wait for nothing it should not skip, and keep no state from one call to the next?",
                  check, p->count, reps, vinfo[v].name);
        cr_fatal("grader error: in %s, %s left out wrong (hash)", check, vinfo[v].name);
    }
    return ms;
}

/* expect_whole - variant v's out (yours), downloaded after its last round and compared element by element */
static void expect_whole(speed_ctx *x, int v, const lab_pattern *p, int reps, const char *check)
{
    const uint32_t *src = speed_src(x, v);
    XL_CHECK(cudaMemcpy(x->host_out, x->out[v], p->count * 4, cudaMemcpyDeviceToHost));
    size_t base = p->first, pos = 0;
    for (size_t k = 0; k < p->count; k++) { /* a test only where it fails: a passing assertion costs time */
        uint32_t want = POISON_WORD + (uint32_t)reps * src[base + pos];
        if (x->host_out[k] != want)
            cr_fatal("in %s, after its last round, %s left out[%zu] = 0x%08x, not 0x%08x (the poison word + %d x "
                     "element %zu)", check, vinfo[v].name, k, x->host_out[k], want, reps, base + pos);
        if (++pos == p->run)
            pos = 0, base += p->stride;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* sound_rounds - xl_measure_unsound unless the kit's rounds of one variant, the slowest left out, spread within
 * XL_SOUND_SPREAD (a round of a millisecond timed on the host meets the odd interruption, which moves no median) */
static void sound_rounds(const double *t, int rounds, const char *what)
{
    double sorted[16];
    memcpy(sorted, t, (size_t)rounds * sizeof *t);
    qsort(sorted, (size_t)rounds, sizeof *sorted, cmp_double);
    xl_sound_timing(sorted[0], sorted[rounds - 2], XL_SOUND_SPREAD, what);
}

/* fresh_array - fresh random words in the array (and the managed copies); the hash out must have after reps passes
 * of p, from the poison word */
static uint64_t fresh_array(speed_ctx *x, const lab_pattern *p, int reps)
{
    xl_fill_random(x->map_host, x->n * 4, xl_fresh_seed());
    for (int k = 0; k < 2; k++)
        if (x->managed[k])
            memcpy(x->managed[k], x->map_host, x->n * 4);
    lab_job j = {x->map_host, x->n, *p, NULL};
    return base_expect_hash(x->map_host, &j, POISON_WORD, reps);
}

/* measure_set - the nv variants vs, rounds each, interleaved in alternating order after a warm-up of each, on fresh
 * data: their medians into med; each kit variant's rounds sound; yours compared whole after the last round; a row of
 * data/ways.csv for each; kit_t (when not NULL) the rounds of the kit's variant kit_v */
static void measure_set(speed_ctx *x, const int *vs, int nv, const lab_pattern *p, int reps, int rounds,
                        const char *check, double *med, int kit_v, double *kit_t)
{
    double t[V_COUNT][16];
    uint64_t want = fresh_array(x, p, reps);
    for (int i = 0; i < nv; i++)
        speed_round(x, vs[i], p, reps, want, check);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < nv; k++) {
            int i = r % 2 ? nv - 1 - k : k;
            t[i][r] = speed_round(x, vs[i], p, reps, want, check);
        }
    for (int i = 0; i < nv; i++) {
        int v = vs[i];
        med[v] = xl_median(t[i], rounds);
        if (vinfo[v].yours)
            expect_whole(x, v, p, reps, check);
        else {
            char what[120];
            snprintf(what, sizeof what, "%s's rounds (ms)", vinfo[v].name);
            sound_rounds(t[i], rounds, what);
        }
        if (v == kit_v && kit_t)
            memcpy(kit_t, t[i], (size_t)rounds * sizeof *kit_t);
        xl_results_row("ways", WAYS_HEADER, "%s,%s,%s,%.6g,%d,%zu,%.6f", check, vinfo[v].way, vinfo[v].impl,
                       (double)p->count / (double)x->n, reps, x->n * 4, med[v]);
    }
}

/* measure_sparse - #1: 1% read once, your zero-copy against the kit's copy-everything; judged only where the kit's
 * own zero-copy meets the same bar */
static void measure_sparse(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    const int vs[] = {V_YOURS_MAPPED, V_KIT_COPIED, V_KIT_MAPPED};
    double med[V_COUNT];
    measure_set(x, vs, 3, &x->sparse, 1, SPARSE_ROUNDS, "speed.link", med, -1, NULL);
    memcpy(x->sparse_med, med, sizeof med);
    x->sparse_cached = 1;
    x->link_ms = med[V_KIT_COPIED];
    *ratio = med[V_KIT_COPIED] / med[V_YOURS_MAPPED];
    double kit_x = med[V_KIT_COPIED] / med[V_KIT_MAPPED];
    if (*ratio < SPARSE_NEED && kit_x < SPARSE_NEED)
        xl_measure_unsound("the kit's own zero-copy was only %.2fx as fast as its copy-everything here, under the bar "
                           "of %gx: the bar cannot be judged on this machine", kit_x, (double)SPARSE_NEED);
    snprintf(figures, len, "64 MiB, %zu elements (1%%) in whole lines read once, medians of %d: yours (zero-copy) "
             "%.3f ms, the kit's copy-everything %.3f ms (%.1fx yours), the kit's zero-copy %.3f ms (%.1fx)",
             x->sparse.count, SPARSE_ROUNDS, med[V_YOURS_MAPPED], med[V_KIT_COPIED], *ratio, med[V_KIT_MAPPED],
             kit_x);
}

/* measure_sparse_kit - #1b: 1% in whole lines read once, your zero-copy against the kit's: #1's figures on the first
 * attempt (the same measurement), then measured again. A kernel whose consecutive threads take elements of different
 * runs (lab.h: consecutive threads take consecutive k) requests every line many times over the link; the dense
 * checks, one run of the whole array, cannot show it */
static void measure_sparse_kit(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    double med[V_COUNT];
    const int vs[] = {V_YOURS_MAPPED, V_KIT_MAPPED};
    if (x->sparse_cached) {
        x->sparse_cached = 0;
        memcpy(med, x->sparse_med, sizeof med);
    } else
        measure_set(x, vs, 2, &x->sparse, 1, SPARSE_ROUNDS, "speed.link#1b", med, -1, NULL);
    *ratio = med[V_KIT_MAPPED] / med[V_YOURS_MAPPED];
    snprintf(figures, len, "64 MiB, %zu elements (1%%) in whole lines read once through the mapping, medians of %d: "
             "yours %.3f ms, the kit's %.3f ms: %.0f%%", x->sparse.count, SPARSE_ROUNDS, med[V_YOURS_MAPPED],
             med[V_KIT_MAPPED], 100 * *ratio);
}

/* measure_mapped_kit - #2: all of it read once through your zero-copy against the kit's */
static void measure_mapped_kit(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    const int vs[] = {V_YOURS_MAPPED, V_KIT_MAPPED};
    double med[V_COUNT];
    measure_set(x, vs, 2, &x->dense, 1, SPARSE_ROUNDS, "speed.link#2", med, -1, NULL);
    *ratio = med[V_KIT_MAPPED] / med[V_YOURS_MAPPED];
    snprintf(figures, len, "64 MiB read once through the mapping, medians of %d: yours %.3f ms (%.1f GB/s), the "
             "kit's %.3f ms (%.1f GB/s): %.0f%%", SPARSE_ROUNDS, med[V_YOURS_MAPPED],
             xl_gbps((double)SPEED_BYTES, med[V_YOURS_MAPPED]), med[V_KIT_MAPPED],
             xl_gbps((double)SPEED_BYTES, med[V_KIT_MAPPED]), 100 * *ratio);
}

/* measure_reuse - #3: all of it read 10 times, your copy-everything against the kit's zero-copy; judged only where
 * the kit's own copy-everything meets the same bar, and where the kit's zero-copy was not faster than the link */
static void measure_reuse(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    const int vs[] = {V_YOURS_COPIED, V_KIT_MAPPED, V_KIT_COPIED};
    double *med = x->cached_med;
    measure_set(x, vs, 3, &x->dense, DENSE_REUSE, DENSE_ROUNDS, "speed.link#3", med, V_KIT_COPIED, x->cached_kit);
    x->cached = 1;
    *ratio = med[V_KIT_MAPPED] / med[V_YOURS_COPIED];
    double kit_x = med[V_KIT_MAPPED] / med[V_KIT_COPIED];
    double zc_over_link = x->link_ms > 0 ? DENSE_REUSE * x->link_ms / med[V_KIT_MAPPED] : 0;
    if (*ratio < REUSE_NEED && kit_x < REUSE_NEED)
        xl_measure_unsound("the kit's own copy-everything was only %.2fx as fast as its zero-copy here, under the bar "
                           "of %gx: the bar cannot be judged on this machine", kit_x, (double)REUSE_NEED);
    if (zc_over_link > LINK_CAP_X && *ratio < REUSE_NEED)
        xl_measure_unsound("the kit's zero-copy read the array %d times at %.2fx the rate its copy crosses the link "
                           "(more than %gx): the reads were served faster than the link allows (from the GPU's L2?)",
                           DENSE_REUSE, zc_over_link, LINK_CAP_X);
    snprintf(figures, len, "64 MiB read %d times, medians of %d: yours (copy-everything) %.3f ms, the kit's "
             "zero-copy %.3f ms (%.1fx yours), the kit's copy-everything %.3f ms (%.1fx); the kit's zero-copy at "
             "%.2fx its copy's link rate", DENSE_REUSE, DENSE_ROUNDS, med[V_YOURS_COPIED], med[V_KIT_MAPPED], *ratio,
             med[V_KIT_COPIED], kit_x, zc_over_link);
}

/* measure_copied_kit - #4: all of it read 10 times, your copy-everything against the kit's: #3's figures on the first
 * attempt (the same measurement), then measured again */
static void measure_copied_kit(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    double med[V_COUNT], kit_t[DENSE_ROUNDS];
    const int vs[] = {V_YOURS_COPIED, V_KIT_COPIED};
    if (x->cached) {
        x->cached = 0;
        memcpy(med, x->cached_med, sizeof med);
        sound_rounds(x->cached_kit, DENSE_ROUNDS, "the kit's base_read_copied's rounds (ms)");
        for (int i = 0; i < 2; i++)
            xl_results_row("ways", WAYS_HEADER, "%s,%s,%s,%.6g,%d,%zu,%.6f", "speed.link#4", vinfo[vs[i]].way,
                           vinfo[vs[i]].impl, 1.0, DENSE_REUSE, x->n * 4, med[vs[i]]);
    } else
        measure_set(x, vs, 2, &x->dense, DENSE_REUSE, DENSE_ROUNDS, "speed.link#4", med, V_KIT_COPIED, kit_t);
    *ratio = med[V_KIT_COPIED] / med[V_YOURS_COPIED];
    snprintf(figures, len, "64 MiB read %d times by copy-everything, medians of %d: yours %.3f ms, the kit's %.3f ms: "
             "%.0f%%", DENSE_REUSE, DENSE_ROUNDS, med[V_YOURS_COPIED], med[V_KIT_COPIED], 100 * *ratio);
}

/* measure_passes - #5: reps passes cost reps passes: all of it read once and PASSES_REPS times through your
 * zero-copy and your copy-everything, and through the kit's; what the extra passes added to yours against what they
 * added to the kit's, the smaller of the two ways (a way that reads the array once and adds reps x each element adds
 * nothing) */
static void measure_passes(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    const int vs[] = {V_YOURS_MAPPED, V_KIT_MAPPED, V_YOURS_COPIED, V_KIT_COPIED};
    double one[V_COUNT], many[V_COUNT];
    measure_set(x, vs, 4, &x->dense, 1, PASSES_ROUNDS, "speed.link#5", one, -1, NULL);
    measure_set(x, vs, 4, &x->dense, PASSES_REPS, PASSES_ROUNDS, "speed.link#5", many, -1, NULL);
    double kit_map = many[V_KIT_MAPPED] - one[V_KIT_MAPPED], kit_copy = many[V_KIT_COPIED] - one[V_KIT_COPIED];
    double your_map = many[V_YOURS_MAPPED] - one[V_YOURS_MAPPED];
    double your_copy = many[V_YOURS_COPIED] - one[V_YOURS_COPIED];
    if (kit_map <= 0 || kit_copy <= 0)
        xl_measure_unsound("the kit's own ways did not take longer at %d passes than at 1 (zero-copy %+.3f ms, "
                           "copy-everything %+.3f ms)", PASSES_REPS, kit_map, kit_copy);
    double rm = kit_map > 0 ? your_map / kit_map : 0, rc = kit_copy > 0 ? your_copy / kit_copy : 0;
    *ratio = fmin(rm, rc);
    snprintf(figures, len, "64 MiB read 1 and %d times, medians of %d: your lab_read_mapped %.3f and %.3f ms (the "
             "kit's %.3f and %.3f ms): its %d extra passes took %.0f%% of the kit's; your lab_read_copied %.3f and "
             "%.3f ms (the kit's %.3f and %.3f ms): %.0f%%", PASSES_REPS, PASSES_ROUNDS, one[V_YOURS_MAPPED],
             many[V_YOURS_MAPPED], one[V_KIT_MAPPED], many[V_KIT_MAPPED], PASSES_REPS - 1, 100 * rm,
             one[V_YOURS_COPIED], many[V_YOURS_COPIED], one[V_KIT_COPIED], many[V_KIT_COPIED], 100 * rc);
}

/* fourth_way - where the GPU reads pageable memory, the kit's base_gather from a malloc'd copy of the array, cold
 * (freshly written by the host), at 1% and whole, once each: shown in data/ways.csv and a note, not graded */
static void fourth_way(speed_ctx *x)
{
    int device, pageable = 0;
    XL_CHECK(cudaGetDevice(&device));
    XL_CHECK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device));
    if (!pageable) {
        xl_results_row("ways", WAYS_HEADER, "fourth,pageable,none,,,%zu,", x->n * 4);
        xl_note("this GPU cannot read pageable memory (cudaDevAttrPageableMemoryAccess 0): the fourth way was not "
                "measured");
        return;
    }
    uint32_t *p = host_words(x->n), *out = x->out[V_KIT_MAPPED];
    const lab_pattern *pats[2] = {&x->sparse, &x->dense};
    double ms[2];
    for (int i = 0; i < 2; i++) {
        uint64_t want = fresh_array(x, pats[i], 1);
        memcpy(p, x->map_host, x->n * 4);
        lab_job j = {p, x->n, *pats[i], out};
        xl_dev_fill(out, XL_POISON_BYTE, pats[i]->count * 4);
        double t0 = xl_now_ms();
        int rc = base_gather(&j, x->s);
        XL_CHECK(cudaStreamSynchronize(x->s));
        ms[i] = xl_now_ms() - t0;
        int ok = 0;
        cr_assert(rc == 0 && base_out_hash(out, pats[i]->count, x->s, &ok) == want && ok,
                  "grader error: the kit's base_gather from malloc'd memory failed or left out wrong");
        xl_results_row("ways", WAYS_HEADER, "fourth,pageable,kit,%.6g,1,%zu,%.6f",
                       (double)pats[i]->count / (double)x->n, x->n * 4, ms[i]);
    }
    free(p);
    xl_note("the fourth way (this GPU reads malloc'd memory, cudaDevAttrPageableMemoryAccess 1): the kit's base_gather "
            "from a freshly written malloc'd array of 64 MiB, once: 1%% in %.3f ms, all of it in %.3f ms (%.1f GB/s)",
            ms[0], ms[1], xl_gbps((double)SPEED_BYTES, ms[1]));
}

XL_TEST(speed, link, 20, XL_TIMED,
        "64 MiB through lab_read_mapped and lab_read_copied: 1% read once, zero-copy at least " XL_STR(SPARSE_NEED)
        "x as fast as the kit's copy-everything and " XL_STR(MAPPED_KIT_NEED) "% of the kit's zero-copy; all of it "
        "read 10 times, copy-everything at least " XL_STR(REUSE_NEED)
        "x as fast as the kit's zero-copy; each at least " XL_STR(MAPPED_KIT_NEED) "% / " XL_STR(COPIED_KIT_NEED)
        "% of the kit's same way; " XL_STR(PASSES_REPS) " passes against 1: the extra passes at least "
        XL_STR(PASSES_NEED) "% of the kit's extra time",
        60)
{
    speed_ctx x;
    const int vs[] = {V_YOURS_MAPPED, V_YOURS_COPIED, V_KIT_MAPPED, V_KIT_COPIED};
    speed_setup(&x, vs, 4, 0);
    int device, l2 = 0;
    XL_CHECK(cudaGetDevice(&device));
    XL_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    xl_note("the GPU's L2 holds %.1f MiB; the speed checks read a %zu MiB array", l2 / (double)MIB,
            (size_t)SPEED_BYTES / MIB);
    fourth_way(&x);
    xl_ratio_check(measure_sparse, &x, XL_AT_LEAST_X(SPARSE_NEED),
                   "1% of 64 MiB read once: your zero-copy against the kit's copy-everything (lab_read_mapped: does "
                   "it launch enough threads, consecutive ones on consecutive elements?)");
    xl_ratio_check(measure_sparse_kit, &x, XL_AT_LEAST_PCT(MAPPED_KIT_NEED),
                   "1% of 64 MiB in whole lines read once: your lab_read_mapped against the kit's (lab.h: consecutive "
                   "threads take consecutive k, so that a warp reads whole lines of a run; thread t on run t % runs "
                   "asks the link for every line once per element)");
    xl_ratio_check(measure_mapped_kit, &x, XL_AT_LEAST_PCT(MAPPED_KIT_NEED),
                   "64 MiB read once through the mapping: your lab_read_mapped against the kit's (a kernel with few "
                   "threads in flight waits on the link's latency; one that reads one element per line wastes it)");
    xl_ratio_check(measure_reuse, &x, XL_AT_LEAST_X(REUSE_NEED),
                   "64 MiB read 10 times: your copy-everything against the kit's zero-copy (lab_read_copied: one copy, "
                   "then every pass from device memory?)");
    xl_ratio_check(measure_copied_kit, &x, XL_AT_LEAST_PCT(COPIED_KIT_NEED),
                   "64 MiB read 10 times: your lab_read_copied against the kit's (a copy per pass, a wait per pass, "
                   "a copy from pageable memory?)");
    xl_ratio_check(measure_passes, &x, XL_AT_LEAST_PCT(PASSES_NEED),
                   "64 MiB read " XL_STR(PASSES_REPS) " times against once: what the extra passes of your "
                   "lab_read_mapped and lab_read_copied cost against the kit's (lab.h: every pass loads its elements "
                   "from the array again; out gaining reps x an element read once is one pass, not reps)");
    speed_teardown(&x);
}

/* measure_managed - speed.managed: all of it read once through prefetched managed memory, until the host can read it
 * again, against the kit's copy-everything; judged only where the kit's own managed way meets the same bar */
static void measure_managed(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *x = ctx;
    const int vs[] = {V_YOURS_MANAGED, V_KIT_COPIED, V_KIT_MANAGED};
    double med[V_COUNT];
    measure_set(x, vs, 3, &x->dense, 1, MANAGED_ROUNDS, "speed.managed", med, -1, NULL);
    *ratio = med[V_KIT_COPIED] / med[V_YOURS_MANAGED];
    double kit_x = med[V_KIT_COPIED] / med[V_KIT_MANAGED];
    if (*ratio < MANAGED_NEED / 100.0 && kit_x < MANAGED_NEED / 100.0)
        xl_measure_unsound("the kit's own prefetched managed way reached only %.0f%% of its copy-everything here, "
                           "under the bar of %d%%: the bar cannot be judged on this machine", 100 * kit_x,
                           MANAGED_NEED);
    snprintf(figures, len, "64 MiB read once, until the host can read it again, medians of %d: yours (managed, "
             "prefetch 1) %.3f ms, the kit's copy-everything %.3f ms: %.0f%%; the kit's managed way %.3f ms (%.0f%%)",
             MANAGED_ROUNDS, med[V_YOURS_MANAGED], med[V_KIT_COPIED], 100 * *ratio, med[V_KIT_MANAGED], 100 * kit_x);
}

XL_TEST(speed, managed, 10, XL_TIMED,
        "64 MiB read once through lab_read_managed with prefetch, until the host can read it again: at least "
        XL_STR(MANAGED_NEED) "% of the speed of the kit's copy-everything",
        60)
{
    int device, conc = 0;
    XL_CHECK(cudaGetDevice(&device));
    XL_CHECK(cudaDeviceGetAttribute(&conc, cudaDevAttrConcurrentManagedAccess, device));
    if (!conc)
        cr_skip_test("this GPU has no concurrent managed access (cudaDevAttrConcurrentManagedAccess 0: Windows, WSL): "
                     "managed memory cannot be prefetched there");
    speed_ctx x;
    const int vs[] = {V_YOURS_MANAGED, V_KIT_COPIED, V_KIT_MANAGED};
    speed_setup(&x, vs, 3, 1);
    xl_ratio_check(measure_managed, &x, XL_AT_LEAST_PCT(MANAGED_NEED),
                   "64 MiB read once: your prefetched managed way against the kit's copy-everything (the prefetch "
                   "there before the pass, and back after it, on the stream? without them every page faults, on the "
                   "GPU and again on the host)");
    speed_teardown(&x);
}

/* ===== Part G: the rule against this GPU ===== */

/* time_way - the kit's way (LAB_MAPPED or LAB_COPIED) of j, reps passes, on s: the median of 3 after a warm-up,
 * host clock; out checked by its hash */
static double time_way(int way, lab_job *j, uint32_t *dev, int reps, cudaStream_t s)
{
    double t[3];
    uint64_t want = base_expect_hash(j->src, j, POISON_WORD, reps);
    for (int r = -1; r < 3; r++) {
        xl_dev_fill(j->out, XL_POISON_BYTE, j->pat.count * 4);
        double t0 = xl_now_ms();
        int rc = way == LAB_MAPPED ? base_read_mapped(j, reps, s) : base_read_copied(j, dev, reps, s);
        XL_CHECK(cudaStreamSynchronize(s));
        if (r >= 0)
            t[r] = xl_now_ms() - t0;
        int ok = 0;
        cr_assert(rc == 0 && base_out_hash(j->out, j->pat.count, s, &ok) == want && ok,
                  "grader error: the kit's %s failed or left out wrong", way == LAB_MAPPED ? "base_read_mapped"
                                                                                           : "base_read_copied");
    }
    return xl_median(t, 3);
}

/* grid_text - the decision grid: a row per reuse, a cell per fraction with the ways accepted (C copied, Z zero-copy,
 * M managed), your answer, and * where it is not accepted */
static void grid_text(const base_rates *r, char *buf, size_t len)
{
    static const double fr[] = LAB_FRACTIONS;
    static const int ru[] = LAB_REUSES;
    static const char letter[] = "CZM";
    size_t at = (size_t)snprintf(buf, len, "reuse \\ fraction:");
    for (int fi = 0; fi < LAB_N_FRACTIONS && at < len; fi++)
        at += (size_t)snprintf(buf + at, len - at, " %-7g", fr[fi]);
    for (int ri = 0; ri < LAB_N_REUSES && at < len; ri++) {
        at += (size_t)snprintf(buf + at, len - at, "\n%16d:", ru[ri]);
        for (int fi = 0; fi < LAB_N_FRACTIONS && at < len; fi++) {
            char acc[4] = "---";
            for (int w = 0; w < 3; w++)
                if (base_accepted(r, fi, ru[ri], w))
                    acc[w] = letter[w];
            int you = lab_choose(fr[fi], ru[ri]);
            at += (size_t)snprintf(buf + at, len - at, " %s:%c%c", acc, you >= 0 && you <= 2 ? letter[you] : '?',
                                   base_accepted(r, fi, ru[ri], you) ? ' ' : '*');
        }
    }
}

/* way_ms_between - the kit's model of way at fraction f between the sweep's fractions fi and fi + 1, reuse times:
 * linear in f between the two (a pass's time is a fixed cost plus one per element read; the copy and the prefetch
 * do not depend on f) */
static double way_ms_between(const base_rates *r, double f, int fi, int reuse, int way)
{
    static const double fr[] = LAB_FRACTIONS;
    double t = (f - fr[fi]) / (fr[fi + 1] - fr[fi]);
    return (1 - t) * base_way_ms(r, fi, reuse, (lab_way)way) + t * base_way_ms(r, fi + 1, reuse, (lab_way)way);
}

/* accepted_between - base_accepted's rule (within BASE_DECIDE_MARGIN of the fastest) for f between fi and fi + 1 */
static int accepted_between(const base_rates *r, double f, int fi, int reuse, int way)
{
    if (way < LAB_COPIED || way > LAB_MANAGED)
        return 0;
    double best = way_ms_between(r, f, fi, reuse, LAB_COPIED);
    for (int w = LAB_MAPPED; w <= LAB_MANAGED; w++)
        best = fmin(best, way_ms_between(r, f, fi, reuse, w));
    return way_ms_between(r, f, fi, reuse, way) <= BASE_DECIDE_MARGIN * best;
}

XL_TEST(speed, choose, 5, XL_TIMED,
        "lab_choose never picks a way 1.5x slower than the fastest, as the kit measures this GPU, at the sweep's 10 "
        "fractions and between them (just below each and one drawn), every reuse count from 1 to 100, and at 101 and "
        "one drawn up to 1000 where fraction x 100 >= 4",
        60)
{
    static const double fr[] = LAB_FRACTIONS;
    static const int ru[] = LAB_REUSES;
    const size_t n = SPEED_N;
    cudaStream_t s = kit_stream();
    void *map_dev;
    uint32_t *mapped = base_mapped_alloc(SPEED_BYTES, &map_dev), *dev, *out;
    uint32_t *managed = base_managed_alloc(SPEED_BYTES, LAB_ADVICE_NONE);
    cr_assert(mapped != NULL && managed != NULL, "the kit could not allocate its mapped or managed array");
    XL_CHECK(cudaMalloc((void **)&dev, SPEED_BYTES));
    XL_CHECK(cudaMalloc((void **)&out, SPEED_BYTES));
    int f1 = 0;
    for (int fi = 0; fi < LAB_N_FRACTIONS; fi++)
        if (fabs(fr[fi] - SPARSE_FRACTION) < 1e-12)
            f1 = fi;
    base_rates r;
    char why[300] = "", figures[600] = "";
    int sound = 0;
    for (int attempt = 0; attempt < RATES_TRIES && !sound; attempt++) {
        cr_assert(base_measure_rates(&r, mapped, dev, managed, out, n, RATES_REPS, s, why, sizeof why) == 0,
                  "grader error: the kit's base_measure_rates failed: %s", why);
        lab_job j = {mapped, n, base_pattern(n, fr[f1], LAB_LINE_ELEMS), out};
        double map_ms = time_way(LAB_MAPPED, &j, dev, DENSE_REUSE, s);
        double copy_ms = time_way(LAB_COPIED, &j, dev, DENSE_REUSE, s);
        double map_model = base_way_ms(&r, f1, DENSE_REUSE, LAB_MAPPED);
        double copy_model = base_way_ms(&r, f1, DENSE_REUSE, LAB_COPIED);
        double off = fmax(fmax(map_ms / map_model, map_model / map_ms), fmax(copy_ms / copy_model,
                                                                               copy_model / copy_ms));
        snprintf(figures, sizeof figures, "copy of 64 MiB %.3f ms, prefetch there and back %.3f ms, a pass from "
                 "device memory at 1%% %.4f ms and whole %.4f ms, through the mapping %.4f ms and %.4f ms; spread "
                 "%.2f; 1%% read 10 times: zero-copy %.3f ms (model %.3f), copy-everything %.3f ms (model %.3f)",
                 r.copy_ms, r.prefetch_ms, r.dev_ms[f1], r.dev_ms[LAB_N_FRACTIONS - 1], r.map_ms[f1],
                 r.map_ms[LAB_N_FRACTIONS - 1], r.spread, map_ms, map_model, copy_ms, copy_model);
        if (r.spread > XL_SOUND_SPREAD)
            snprintf(why, sizeof why, "the kit's readings spread %.2fx (more than %gx) in %d tries", r.spread,
                     XL_SOUND_SPREAD, attempt + 1);
        else if (off > MODEL_TOL)
            snprintf(why, sizeof why, "the kit's model was off its direct readings by %.2fx (more than %gx) in %d "
                     "tries", off, MODEL_TOL, attempt + 1);
        else
            sound = 1;
    }
    if (!sound)
        xl_not_graded("the kit's measurement of the ways", why, figures);
    xl_note("the kit's measurement: %s", figures);
    /* every reuse count from 1 to the sweep's last at each fraction: the model is linear in reuse, so the points
     * between the sweep's reuse counts are as well measured as the sweep's own */
    int bad = 0, bad_f = 0, bad_r = 0, most = ru[LAB_N_REUSES - 1];
    for (int fi = 0; fi < LAB_N_FRACTIONS; fi++)
        for (int reuse = 1; reuse <= most; reuse++)
            if (!base_accepted(&r, fi, reuse, lab_choose(fr[fi], reuse)))
                bad++, bad_f = fi, bad_r = reuse;
    if (bad) {
        static char grid[4096];
        char t[40];
        grid_text(&r, grid, sizeof grid);
        cr_fatal("lab_choose is not among the ways within %gx of the fastest at %d of the %d points (the sweep's "
                 "fractions, every reuse from 1 to %d), as the kit measures this GPU (64 MiB, runs of 32 elements); "
                 "e.g. lab_choose(%g, %d) = %s, where "
                 "copied takes %.3f ms, mapped %.3f ms, managed %.3f ms. Grid (C copied, Z zero-copy, M managed "
                 "accepted; after the colon your answer, * where it is not accepted):\n%s\nThe kit's figures: %s",
                 BASE_DECIDE_MARGIN, bad, LAB_N_FRACTIONS * most, most, fr[bad_f], bad_r,
                 way_text(lab_choose(fr[bad_f], bad_r), t, sizeof t), base_way_ms(&r, bad_f, bad_r, LAB_COPIED),
                 base_way_ms(&r, bad_f, bad_r, LAB_MAPPED), base_way_ms(&r, bad_f, bad_r, LAB_MANAGED), grid,
                 figures);
    }
    /* past the sweep's last reuse, at the fractions where fraction x 100 >= 4 (lab.h: graded there too, the
     * measurement taken as linear in reuse): every way's passes cost the same per pass or more, so what tells the
     * ways apart is the one-off cost, a copy against a prefetch there and back; a rule that turns to another way past
     * 100 shows. (What the kit accepts at reuse 100 there stays accepted above: zero-copy's passes only add more.) */
    const int past[] = {most + 1, (int)kit_rand_int(most + 2, 10 * most)};
    for (int fi = 0; fi < LAB_N_FRACTIONS; fi++)
        for (int k = 0; k < 2; k++) {
            int reuse = past[k], w = lab_choose(fr[fi], reuse);
            if (fr[fi] * most < 4 || base_accepted(&r, fi, reuse, w))
                continue;
            char t[40];
            cr_fatal("lab_choose(%g, %d) = %s, past the sweep's last reuse (%d) with fraction x reuse %.3g >= 4: the "
                     "kit's measurement of this GPU (linear in reuse) gives copied %.3f ms, mapped %.3f ms, managed "
                     "%.3f ms there, so that way is more than %gx the fastest (lab.h: graded past reuse 100 too where "
                     "fraction x 100 >= 4; many passes do not make a prefetch there and back cheaper than one "
                     "copy). The kit's figures: %s", fr[fi], reuse, way_text(w, t, sizeof t), most,
                     fr[fi] * reuse, base_way_ms(&r, fi, reuse, LAB_COPIED), base_way_ms(&r, fi, reuse, LAB_MAPPED),
                     base_way_ms(&r, fi, reuse, LAB_MANAGED), BASE_DECIDE_MARGIN, figures);
        }
    /* between the sweep's fractions (lab.h: graded there too, the measurement taken as linear in the fraction):
     * just below the next one, and one drawn log-uniformly in between; a rule that reads the fraction as the sweep's
     * row at or below it is off by up to 2.5x there */
    for (int fi = 0; fi + 1 < LAB_N_FRACTIONS; fi++)
        for (int k = 0; k < 2; k++) {
            double f = k == 0 ? fr[fi + 1] * (1 - kit_rand_int(10, 50) / 1000.0)
                              : fr[fi] * pow(fr[fi + 1] / fr[fi], kit_rand_int(50, 950) / 1000.0);
            for (int reuse = 1; reuse <= most; reuse++) {
                int w = lab_choose(f, reuse);
                if (accepted_between(&r, f, fi, reuse, w))
                    continue;
                char t[40];
                cr_fatal("lab_choose(%.6g, %d) = %s, between the sweep's fractions %g and %g: the kit's measurement "
                         "of this GPU (linear in the fraction between them) gives copied %.3f ms, mapped %.3f ms, "
                         "managed %.3f ms there, so that way is more than %gx the fastest (lab.h: graded between the "
                         "sweep's fractions too; does your rule use the fraction itself, not the sweep's row it falls "
                         "in?). The kit's figures: %s", f, reuse, way_text(w, t, sizeof t), fr[fi], fr[fi + 1],
                         way_ms_between(&r, f, fi, reuse, LAB_COPIED), way_ms_between(&r, f, fi, reuse, LAB_MAPPED),
                         way_ms_between(&r, f, fi, reuse, LAB_MANAGED), BASE_DECIDE_MARGIN, figures);
            }
        }
    XL_CHECK(cudaFree(dev));
    XL_CHECK(cudaFree(out));
    XL_CHECK(cudaFree(managed));
    XL_CHECK(cudaFreeHost(mapped));
    XL_CHECK(cudaStreamDestroy(s));
}
