/* 04-double-buffering.c - the grader of lab 04 (double-buffering). Course staff only.
 *
 * Results are checked exactly against the CPU. Hazards are made certain: the kernel is slowed (it works
 * 2 ms before it reads its batch) and the host is fast, so a buffer reused too early is overwritten every
 * time, not sometimes; the kit's kernel also records its batch as it found it when it began, which tells
 * the two hazards apart. In each hazard run one copy in of the first round waits 10 ms on its stream before it
 * reads (xl_copylog_hold): a host buffer guarded by anything that fires before that copy has read it is refilled
 * while the copy waits, and a device buffer whose next copy in is on another stream than its kernel is overwritten
 * while that kernel, started late, still works. Batches are made to finish out of order (one batch's stream held
 * up 25 ms after its kernel), so a pipe that waits only for its last batch returns before a result has arrived,
 * and one that shares a device result between slots copies back another batch's, every time. Every depth of
 * the contract (1 to 8) is run, pipes of random sizes get fewer items than they hold, batch counts fall at
 * and beside multiples of the depth; what a pipe holds is counted at the CUDA calls, so a destroy that
 * forgets a stream, or a failed create that forgets what it had made, is found. Speed is an overlap
 * efficiency against the kit's sequential baseline and the ideal, all measured in the same run, at three
 * batch sizes.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/copylog.h"
#include "common/faults.h"
#include "common/stats.h"
#include "common/timeline.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "grader/results.h"
#include "labs/04-double-buffering/lab.h"
#include "labs/04-double-buffering/workload.h"

XL_LAB("04", "double-buffering");

#define SLOW_KERNEL_NS 2000000ull /* the hazard tests' kernel: 2 ms of work before it reads its batch */
#define HAZARD_PRODUCE_MS 0.3
#define HOLD_COPY_MS 10.0         /* one first-round copy in waits this long on its stream (hazards, results.exact) */
#define SLOW_MS 25.0              /* one batch's stream held up this long after its kernel: its copy back comes
                                     after every later batch's */
#define MAX_DEPTH 8               /* lab.h: depth 1 to 8 */
#define LONG_HOLD_MS 1200.0       /* a wait that gives up after a while (100 ms, 1 s) gives up before this */
#define REFILL_HOLD_MS 60.0       /* pipe.early_refill: batch 0's copy in held this long, and its stream held up
                                     this long after its kernel */
#define EFF_NEED 0.7              /* (T_seq - T) / (T_seq - T_ideal): 1 is the ideal, 0 no better than sequential */
#define PIPE_BATCHES 16
#define EFF_ROUNDS 5              /* rounds of (stages, sequential, pipe) per efficiency measurement */
/* Why rounds: with one stage measurement and 3 runs per measurement, a moment's slowdown during the stages or the
 * runs moved the whole figure (first measurements 0.54 to 3.89 on an H100, a margin under 1 spread); the median of
 * EFF_ROUNDS rounds holds. One buffer can come close to the bar at one size (hence pipe.buffers, which counts
 * them). The reference's figures and margins on the H100 and H200: refdata/stability/ (docs/instructors.md). */
/* Stage times in the speed tests, from the run's own figures (wl_balance): t = max(produce alone, copy in) / 0.8;
 * produce then takes 0.8 t and the kernel t. Depth 2 has a little slack; one buffer serializes the copy in with
 * both its neighbours. */
#define STAGE_SLACK 0.8

/* ===== Helpers ===== */

#define SYNC_RECS 256 /* the waits and orderings of one create or run that are checked (the first) */

/* new_pipe - lab_pipe_create(max_items, depth), which must succeed without waiting for, or ordering itself after,
 * the whole device or the legacy default stream (lab.h: other work shares the device; the create is recorded, not
 * timed, so a wait on an idle legacy stream is found too) */
static lab_pipe *new_pipe(size_t max_items, int depth)
{
    static xl_sync_rec syncs[SYNC_RECS];
    xl_synclog_start(syncs, SYNC_RECS);
    lab_pipe *p = lab_pipe_create(max_items, depth);
    int n = xl_synclog_stop();
    cr_assert(p != NULL, "lab_pipe_create(%zu items, depth %d) returned NULL (see its message above)", max_items,
              depth);
    char what[96];
    snprintf(what, sizeof what, "lab_pipe_create(%zu items, depth %d)", max_items, depth);
    kit_expect_no_device_sync(syncs, n < SYNC_RECS ? n : SYNC_RECS, what);
    return p;
}

/* pinned_results - n results in pinned memory, poisoned */
static lab_result *pinned_results(int n)
{
    return kit_pinned_alloc((size_t)(n > 0 ? n : 1) * sizeof(lab_result));
}

/* What run_poisoned watches in a run, through the job's callbacks (each called on to the job's own): what the
 * process held before the run, the first thing the run made (held at a callback, more than before), the host
 * buffers produce was given, the device buffers compute was given, the order of the calls, and where each fell
 * among the copies asked for (xl_copylog_count). */
#define RUN_MAX_HOST 64
#define RUN_MAX_COPIES 1024
#define RUN_MAX_BATCHES 512 /* batches whose buffers and place among the copies are noted (the first) */
typedef struct {
    const lab_job *job;
    xl_pinned pinned0;
    xl_resources res0;
    int grew_at;           /* the batch at whose callback more was held than before the run (-1: none) */
    const char *grew_what; /* what there was more of */
    const uint32_t *host[RUN_MAX_HOST]; /* distinct host buffers produce was given (first RUN_MAX_HOST) */
    int n_host;
    const uint32_t *dev[RUN_MAX_HOST];  /* distinct device buffers compute was given (first RUN_MAX_HOST) */
    int n_dev;
    int produced, computed;       /* calls so far */
    int produce_bad, compute_bad; /* the batch that was next when a call came for another (-1: none) */
    int produce_got, compute_got; /* the batch that call was for */
    int items_bad;                /* the first batch a callback was given other items than the job's (-1: none) */
    size_t items_got;
    const uint32_t *host_of[RUN_MAX_BATCHES], *dev_of[RUN_MAX_BATCHES];
    const lab_result *dres_of[RUN_MAX_BATCHES]; /* the dev_result compute(i) was given */
    int produce_at[RUN_MAX_BATCHES];  /* copies asked for when produce(i) was called (-1: not called) */
    int produced_at[RUN_MAX_BATCHES]; /* copies asked for when produce(i) returned (-1: not called) */
    int compute_at[RUN_MAX_BATCHES];  /* copies asked for when compute(i) was called (-1: not called) */
} run_watch;

/* note_held - at batch i's callback: notes the first thing the run holds that it did not hold before it */
static void note_held(run_watch *r, int i)
{
    if (r->grew_at >= 0)
        return;
    xl_pinned pin = xl_pinned_now();
    xl_resources res = xl_resources_now();
    const char *what = pin.allocations > r->pinned0.allocations         ? "a pinned buffer (cudaMallocHost, cudaHostAlloc)"
                       : pin.registrations > r->pinned0.registrations   ? "a host registration (cudaHostRegister)"
                       : res.dev_allocations > r->res0.dev_allocations  ? "a device buffer (cudaMalloc)"
                       : res.streams > r->res0.streams                  ? "a stream"
                       : res.events > r->res0.events                    ? "an event"
                                                                        : NULL;
    if (what)
        r->grew_at = i, r->grew_what = what;
}

/* note_buffer - adds b to the n distinct buffers of list (up to RUN_MAX_HOST) */
static void note_buffer(const uint32_t **list, int *n, const uint32_t *b)
{
    for (int k = 0; k < *n; k++)
        if (list[k] == b)
            return;
    if (*n < RUN_MAX_HOST)
        list[(*n)++] = b;
}

/* note_call - a callback for batch i with items: notes whether it was the next batch and the job's items */
static void note_call(run_watch *r, int i, size_t items, int *calls, int *bad, int *got)
{
    if (i != *calls && *bad < 0)
        *bad = *calls, *got = i;
    (*calls)++;
    if (items != r->job->items && r->items_bad < 0)
        r->items_bad = i, r->items_got = items;
}

/* watch_produce - lab_job.produce of run_poisoned: notes what is held, the buffer, the call and how many copies had
 * been asked for, then the job's produce, then how many copies had been asked for when it returned */
static void watch_produce(uint32_t *host, size_t items, int i, void *ctx)
{
    run_watch *r = ctx;
    note_held(r, i);
    note_buffer(r->host, &r->n_host, host);
    note_call(r, i, items, &r->produced, &r->produce_bad, &r->produce_got);
    if (i >= 0 && i < RUN_MAX_BATCHES)
        r->produce_at[i] = xl_copylog_count();
    r->job->produce(host, items, i, r->job->ctx);
    if (i >= 0 && i < RUN_MAX_BATCHES)
        r->host_of[i] = host, r->produced_at[i] = xl_copylog_count();
}

/* watch_compute - lab_job.compute of run_poisoned: notes what is held, the buffer, the call and how many copies
 * had been asked for, then the job's compute */
static void watch_compute(const uint32_t *dev, size_t items, lab_result *dev_result, int i, cudaStream_t stream,
                          void *ctx)
{
    run_watch *r = ctx;
    note_held(r, i);
    note_buffer(r->dev, &r->n_dev, dev);
    note_call(r, i, items, &r->computed, &r->compute_bad, &r->compute_got);
    if (i >= 0 && i < RUN_MAX_BATCHES)
        r->dev_of[i] = dev, r->dres_of[i] = dev_result, r->compute_at[i] = xl_copylog_count();
    r->job->compute(dev, items, dev_result, i, stream, r->job->ctx);
}

/* pool_used - the stream-ordered allocator's (cudaMallocAsync's) pool of the current device: bytes in use now,
 * and with reset its high watermark set to zero; 0 and no pool (*pool NULL) where the device has none */
static uint64_t pool_used(cudaMemPool_t *pool, int reset)
{
    int dev, has = 0;
    uint64_t used = 0, zero = 0;
    *pool = NULL;
    XL_CHECK(cudaGetDevice(&dev));
    XL_CHECK(cudaDeviceGetAttribute(&has, cudaDevAttrMemoryPoolsSupported, dev));
    if (!has)
        return 0;
    XL_CHECK(cudaDeviceGetMemPool(pool, dev));
    XL_CHECK(cudaMemPoolGetAttribute(*pool, cudaMemPoolAttrUsedMemCurrent, &used));
    if (reset)
        XL_CHECK(cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrUsedMemHigh, &zero));
    return used;
}

/* job_changed - the first field of the job lab_pipe_run was handed that differs from the copy taken before the
 * call (lab.h: a const lab_job *), NULL when none */
static const char *job_changed(const lab_job *now, const lab_job *was)
{
    return now->batches != was->batches     ? "batches"
           : now->items != was->items       ? "items"
           : now->produce != was->produce   ? "produce"
           : now->compute != was->compute   ? "compute"
           : now->results != was->results   ? "results"
           : now->ctx != was->ctx           ? "ctx"
                                            : NULL;
}

/* One guarded lab_pipe_run (kit_guarded_call's call). */
typedef struct {
    lab_pipe *p;
    const lab_job *j;
    int rc;
} guarded_run;

/* call_run - kit_guarded_call's call: lab_pipe_run */
static void call_run(void *ctx)
{
    guarded_run *g = ctx;
    g->rc = lab_pipe_run(g->p, g->j);
}

/* ranges_meet - the bytes [a, a + len) and [b, b + len) share at least one byte */
static int ranges_meet(const void *a, const void *b, size_t len)
{
    const char *x = a, *y = b;
    return x < y + len && y < x + len;
}

/* expect_rotation - bufs[i] is batch i's buffer (NULL: not noted), n of them, len bytes each, n_distinct different
 * ones in the run: any depth batches in a row got buffers that do not overlap, and no more than depth different
 * buffers in all (lab.h: depth of each kind, in rotation); which names the kind, who the callback, what the run */
static void expect_rotation(const uint32_t *const *bufs, int n, int n_distinct, int depth, size_t len,
                            const char *which, const char *who, const char *what)
{
    cr_assert(n_distinct <= depth,
              "%s: %s was given %d different %s buffers; a pipe of depth %d has %d of them (lab.h), used in rotation",
              what, who, n_distinct, which, depth, depth);
    for (int i = 0; i < n; i++)
        for (int k = i + 1; k < n && k < i + depth; k++)
            if (bufs[i] && bufs[k])
                cr_assert(ranges_meet(bufs[i], bufs[k], len) == 0,
                          "%s: %s was given the same %s buffer (or overlapping ones) for batches %d and %d, %d apart "
                          "(%p and %p, %zu bytes each): a pipe of depth %d uses its %d %s buffers in rotation (lab.h), "
                          "so any %d batches in a row go through different ones",
                          what, who, which, i, k, k - i, (const void *)bufs[i], (const void *)bufs[k], len, depth,
                          depth, which, depth);
}

/* run_poisoned - poisons job's results, runs lab_pipe_run on a pipe of depth depth, which must return 0, leave the
 * job it was handed as it was, make nothing (lab.h: everything is allocated in lab_pipe_create: no buffer, stream or
 * event, stream-ordered allocations included, is made during a run, even one freed before it returns; every create
 * in the run fails, so that one made and destroyed between two callbacks is found too), call produce and compute
 * once per batch, in order, with the job's items, on pinned host buffers and device buffers in rotation (any depth
 * batches in a row on different ones), and copy each batch to the GPU once, items long, between its produce and its
 * compute */
static void run_poisoned(lab_pipe *p, int depth, const lab_job *j)
{
    static xl_copy_rec recs[RUN_MAX_COPIES];
    static run_watch r; /* static: large; one run at a time */
    if (j->batches > 0)
        xl_poison(j->results, (size_t)j->batches * sizeof(lab_result));
    kit_held before = kit_held_now();
    memset(&r, 0, sizeof r);
    r.job = j, r.pinned0 = xl_pinned_now(), r.res0 = xl_resources_now();
    r.grew_at = r.produce_bad = r.compute_bad = r.items_bad = -1;
    for (int i = 0; i < RUN_MAX_BATCHES; i++)
        r.produce_at[i] = r.produced_at[i] = r.compute_at[i] = -1;
    lab_job watched = *j;
    watched.produce = watch_produce;
    watched.compute = watch_compute;
    watched.ctx = &r;
    const lab_job handed = watched;
    cudaMemPool_t pool;
    uint64_t used0 = pool_used(&pool, 1), high = 0;
    guarded_run g = {p, &watched, 0};
    int created = 0, stopped = 0;
    char failure[512];
    static xl_sync_rec syncs[SYNC_RECS];
    xl_synclog_start(syncs, SYNC_RECS);
    xl_copylog_start(recs, RUN_MAX_COPIES);
    kit_guarded_call(call_run, &g, &created, &stopped, failure, sizeof failure);
    int n = xl_copylog_stop(), nsyncs = xl_synclog_stop();
    char what[160];
    snprintf(what, sizeof what, "lab_pipe_run of %d batches of %zu items, depth %d", j->batches, j->items, depth);
    cr_assert(created == 0,
              "%s tried to create a buffer, a stream or an event during the run (the kit made that create fail%s%s). "
              "lab.h: allocate everything in lab_pipe_create, once, not per run or per batch, even what a run would "
              "destroy again before it returns",
              what, stopped ? "; then: " : "", stopped ? failure : "");
    cr_assert(stopped == 0, "%s", failure);
    kit_expect_no_device_sync(syncs, nsyncs < SYNC_RECS ? nsyncs : SYNC_RECS, what); /* lab.h: this pipe's work only */
    if (pool)
        XL_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
    xl_expect_ok(g.rc, "lab_pipe_run");
    const char *changed = job_changed(&watched, &handed);
    cr_assert(changed == NULL, "%s changed the job's %s: lab_pipe_run is handed a const lab_job *, which it must "
              "leave as it was", what, changed);
    char held_what[256];
    snprintf(held_what, sizeof held_what, "%s (everything is allocated in lab_pipe_create)", what);
    kit_expect_released(before, held_what);
    cr_assert(r.grew_at < 0,
              "%s held %s more than before it when batch %d's callback was called: it made it during the run. lab.h: "
              "allocate everything in lab_pipe_create, once, not per run or per batch",
              what, r.grew_what, r.grew_at);
    cr_assert(high <= used0,
              "%s took %llu bytes from the stream-ordered allocator (cudaMallocAsync) while it ran. lab.h: allocate "
              "everything in lab_pipe_create, once, not per run or per batch",
              what, (unsigned long long)(high - used0));
    /* the callbacks: once per batch, in order, with the job's items (lab.h) */
    cr_assert(r.produce_bad < 0, "%s called produce for batch %d where batch %d was next. lab.h: call it once per "
              "batch, in order (batch 0, 1, 2, ...)", what, r.produce_got, r.produce_bad);
    cr_assert(r.produced == j->batches, "%s called produce %d times. lab.h: call it once per batch", what,
              r.produced);
    cr_assert(r.compute_bad < 0, "%s called compute for batch %d where batch %d was next. lab.h: call it once per "
              "batch, in order (batch 0, 1, 2, ...)", what, r.compute_got, r.compute_bad);
    cr_assert(r.computed == j->batches, "%s called compute %d times. lab.h: call it once per batch", what,
              r.computed);
    cr_assert(r.items_bad < 0, "%s gave a callback %zu items for batch %d, where the job's batches have %zu (lab.h: "
              "batch i is items long; the pipe's max_items is only its capacity)", what, r.items_got, r.items_bad,
              j->items);
    /* the buffers: pinned host buffers and device buffers, depth of each, in rotation */
    size_t batch_bytes = j->items * sizeof(uint32_t), moved = 0, need = (size_t)j->batches * batch_bytes;
    int noted = j->batches < RUN_MAX_BATCHES ? j->batches : RUN_MAX_BATCHES;
    expect_rotation(r.host_of, noted, r.n_host, depth, batch_bytes, "host", "produce", what);
    expect_rotation(r.dev_of, noted, r.n_dev, depth, batch_bytes, "device", "compute", what);
    for (int k = 0; k < r.n_host; k++)
        cr_assert(kit_is_pinned(r.host[k]),
                  "%s: produce was given pageable memory (%p): a copy from it cannot overlap with the host's work "
                  "(the driver stages it through a pinned buffer of its own); allocate the host buffers with "
                  "cudaMallocHost", what, (const void *)r.host[k]);
    for (int k = 0; k < r.n_dev; k++) {
        struct cudaPointerAttributes a;
        int known = cudaPointerGetAttributes(&a, r.dev[k]) == cudaSuccess;
        cudaGetLastError(); /* memory the runtime does not know: this check's own error */
        cr_assert(known && a.type == cudaMemoryTypeDevice,
                  "%s: compute was given %s (%p) as a batch's device buffer. lab.h: depth device buffers; allocate "
                  "them with cudaMalloc in lab_pipe_create, and copy each batch into one",
                  what,
                  !known                                ? "memory the CUDA runtime does not know"
                  : a.type == cudaMemoryTypeManaged     ? "managed memory (cudaMallocManaged)"
                  : a.type == cudaMemoryTypeHost        ? "pinned host memory"
                                                        : "pageable host memory",
                  (const void *)r.dev[k]);
    }
    /* compute's dev_result: memory the GPU can write, known to the CUDA runtime */
    const lab_result *last_checked = NULL;
    for (int i = 0; i < noted; i++) {
        const lab_result *d = r.dres_of[i];
        if (r.compute_at[i] < 0 || (d && d == last_checked))
            continue;
        struct cudaPointerAttributes a;
        int known = d && cudaPointerGetAttributes(&a, d) == cudaSuccess && a.type != cudaMemoryTypeUnregistered;
        cudaGetLastError(); /* memory the runtime does not know: this check's own error */
        cr_assert(known, "%s: compute(%d) was given %p as dev_result, %s: give it a lab_result the GPU can write "
                  "(cudaMalloc'd in lab_pipe_create, one per slot)", what, i, (const void *)d,
                  d ? "memory the CUDA runtime does not know" : "NULL");
        last_checked = d;
    }
    /* the copies in: each reads within the batch produce wrote (items long), and all of them the batches once */
    for (int c = 0; c < n && c < RUN_MAX_COPIES; c++) {
        if (xl_copy_dir(&recs[c]) != cudaMemcpyHostToDevice)
            continue;
        const char *src = recs[c].src;
        for (int k = 0; k < r.n_host; k++) {
            const char *h = (const char *)r.host[k];
            if (src < h || src >= h + batch_bytes)
                continue;
            cr_assert(recs[c].bytes <= batch_bytes - (size_t)(src - h),
                      "%s: a copy to the GPU read %zu bytes from %zu bytes into a host buffer produce wrote, past the "
                      "batch's end (%zu items, %zu bytes). Copy the job's items, not the pipe's max_items: the bus "
                      "then carries only what the batch holds",
                      what, recs[c].bytes, (size_t)(src - h), j->items, batch_bytes);
            moved += recs[c].bytes;
            break;
        }
    }
    cr_assert(moved <= need,
              "%s copied %zu bytes from the host buffers produce wrote to the GPU, where the batches hold %zu: copy "
              "each batch to the GPU once", what, moved, need);
    /* each batch's copy in, asked for after its produce returned and before its compute was called (lab.h: compute
     * reads batch i already on the GPU), and before produce was called again on its host buffer (the copies from
     * the buffer then carry batch i); judged where every byte moved went through the copies recorded */
    if (moved != need || n > RUN_MAX_COPIES)
        return;
    for (int i = 0; i < noted; i++) {
        if (r.produced_at[i] < 0 || r.compute_at[i] < 0)
            continue;
        const char *h = (const char *)r.host_of[i];
        int end = r.compute_at[i];
        for (int k = i + 1; k < noted; k++)
            if (r.host_of[k] == r.host_of[i] && r.produce_at[k] >= 0) {
                end = r.produce_at[k] < end ? r.produce_at[k] : end;
                break;
            }
        size_t in = 0;
        for (int c = r.produced_at[i]; c < end; c++)
            if (xl_copy_dir(&recs[c]) == cudaMemcpyHostToDevice && (const char *)recs[c].src >= h &&
                (const char *)recs[c].src < h + batch_bytes)
                in += recs[c].bytes;
        cr_assert(in == batch_bytes,
                  "%s: between produce(%d) returning and compute(%d) being called (and before produce wrote "
                  "that host buffer again), %zu of batch %d's %zu bytes were copied from its host buffer to the GPU. "
                  "lab.h: compute reads batch i already on the GPU: queue its copy in, once, after produce has "
                  "written it and before calling compute (on compute's stream, or with an event compute's stream "
                  "waits for)",
                  what, i, i, in, i, batch_bytes);
    }
}

/* expect_results - right after lab_pipe_run returned: every result of j is right. want_all holds the right results
 * (NULL: computed here), slow is the batch whose stream the kit held up (-1: none), held the batch whose copy in
 * the kit held (-1: none), what says which run */
static void expect_results(const wl_ctx *w, const lab_job *j, const lab_result *want_all, int slow, int held,
                           const char *what)
{
    for (int i = 0; i < j->batches; i++) {
        lab_result want = want_all ? want_all[i] : wl_expected(w, i), got = j->results[i];
        int poisoned = xl_check_poison(&got, sizeof got, NULL) == 0;
        const char *hint = "";
        if (poisoned && i == slow)
            hint = ": it never arrived. The kit held this batch's stream up after its kernel, so it finished "
                   "after later batches, and lab_pipe_run returned before it. Batches on different streams "
                   "finish in any order: before returning, wait for every slot's stream (or an event after each "
                   "slot's last copy back), not only the last batch's, however long it takes (a wait that gives up "
                   "after a while returns too early)";
        else if (i == slow)
            hint = ": the kit held this batch's stream up after its kernel, and by the time its result was "
                   "copied back, later batches had run. Does each slot have a device result of its own?";
        else if (poisoned)
            hint = ": it never arrived (results[i] still holds the poison; did lab_pipe_run return before the last "
                   "copies back had finished?)";
        else if (i == held)
            hint = ": the kit held this batch's copy in 10 ms on its stream before it read the host buffer. Was the "
                   "buffer refilled with a later batch meanwhile? Before produce writes into a host buffer, wait for "
                   "an event recorded right after that buffer's copy in (after it, on the copy's stream)";
        else if (slow >= 0 && i > slow)
            hint = ": an earlier batch's stream was held up after its kernel, so the copies queued behind it on "
                   "that stream ran late. Was this batch's host buffer refilled before its copy in had read it? Wait "
                   "for an event recorded on the stream that made that copy, right after it";
        cr_assert(got.sum == want.sum && got.sumsq == want.sumsq,
                  "%s: batch %d of %d has a wrong result (sum %llx, expected %llx)%s", what, i, j->batches, got.sum,
                  want.sum, hint);
    }
}

KIT_CREATE_ATTEMPT(pipe_attempt, lab_pipe_create, lab_pipe_destroy)

/* expect_create_fails - lab_pipe_create(max_items, depth) returns NULL and holds nothing afterwards; why says what
 * makes it fail */
static void expect_create_fails(size_t max_items, int depth, const char *why)
{
    char what[256], said[512];
    kit_held before = kit_held_now();
    int saved = kit_capture_begin();
    lab_pipe *p = lab_pipe_create(max_items, depth);
    int lines = kit_capture_end(saved, said, sizeof said);
    cudaGetLastError(); /* an out-of-memory error met by the create is expected */
    if (p)
        lab_pipe_destroy(p);
    cr_assert(p == NULL, "lab_pipe_create(%zu items, depth %d) %s returned a pipe: it must return NULL%s", max_items,
              depth, why,
              depth >= 1 && depth <= MAX_DEPTH && max_items > 0
                  ? " when it cannot allocate everything (allocate every buffer in lab_pipe_create, none later, and "
                    "check that max_items * 4 bytes does not overflow)"
                  : " (lab.h: max_items >= 1, depth 1 to 8)");
    snprintf(what, sizeof what, "lab_pipe_create(%zu items, depth %d) %s", max_items, depth, why);
    kit_expect_one_line(saved, lines, said, what, "NULL");
    snprintf(what, sizeof what, "lab_pipe_create(%zu items, depth %d) %s, which returned NULL", max_items, depth, why);
    kit_expect_released(before, what);
}

/* expect_failures_said - lab_pipe_create(z) with each of its made creates (allocations, streams, events) failing in
 * turn as out of memory: each failure returns NULL with a message of one line (lab.h), whichever create it was */
static void expect_failures_said(const kit_create_args *z, long made)
{
    for (long f = 0; f < made; f++) {
        char said[512];
        xl_fail_create_after(f);
        int saved = kit_capture_begin();
        lab_pipe *p = lab_pipe_create(z->size, z->count);
        int lines = kit_capture_end(saved, said, sizeof said);
        int fired = xl_fault_fired();
        xl_fail_create_after(-1);
        cudaGetLastError(); /* the out-of-memory error of the failure made here, checked apart */
        if (p)
            lab_pipe_destroy(p);
        cr_assert(fired == 0 || p == NULL,
                  "lab_pipe_create(%zu items, depth %d) returned a pipe although its create number %ld (an "
                  "allocation, a stream or an event) failed as out of memory", z->size, z->count, f + 1);
        if (fired) {
            char call[256];
            snprintf(call, sizeof call, "lab_pipe_create(%zu items, depth %d), whose create number %ld of %ld (an "
                     "allocation, a stream or an event) failed as out of memory,", z->size, z->count, f + 1, made);
            kit_expect_one_line(saved, lines, said, call, "NULL");
        }
    }
}

/* One lab_pipe_run, repeated by kit_expect_no_heap_leak. */
typedef struct {
    lab_pipe *p;
    lab_job j;
} run_call;

/* run_once - kit_expect_no_heap_leak's attempt: lab_pipe_run of c's job; 0 when it returned 0 */
static int run_once(void *ctx)
{
    run_call *c = ctx;
    return lab_pipe_run(c->p, &c->j) == 0 ? 0 : -1;
}

/* The callbacks of a run that must be refused: they count their calls and touch nothing (a run wrongly accepted
 * with a huge count of items must not make the GPU read past a buffer). */
typedef struct {
    int produced, computed;
} refused_calls;

/* refused_produce, refused_compute - lab_job's callbacks for refused runs: count the call */
static void refused_produce(uint32_t *host, size_t items, int i, void *ctx)
{
    (void)host, (void)items, (void)i;
    ((refused_calls *)ctx)->produced++;
}

static void refused_compute(const uint32_t *dev, size_t items, lab_result *dev_result, int i, cudaStream_t stream,
                            void *ctx)
{
    (void)dev, (void)items, (void)dev_result, (void)i, (void)stream;
    ((refused_calls *)ctx)->computed++;
}

/* A job with ctx NULL (valid, lab.h): its callbacks reach the workload through null_ctx_w and note the ctx given. */
static wl_ctx *null_ctx_w;
static int null_ctx_calls, null_ctx_bad;
static void *null_ctx_seen;

/* null_ctx_note - a callback of the ctx-NULL job was given ctx */
static void null_ctx_note(void *ctx)
{
    null_ctx_calls++;
    if (ctx != NULL && !null_ctx_bad)
        null_ctx_bad = 1, null_ctx_seen = ctx;
}

/* null_ctx_produce, null_ctx_compute - lab_job's callbacks of the ctx-NULL job: wl_produce, wl_compute */
static void null_ctx_produce(uint32_t *host, size_t items, int i, void *ctx)
{
    null_ctx_note(ctx);
    wl_produce(host, items, i, null_ctx_w);
}

static void null_ctx_compute(const uint32_t *dev, size_t items, lab_result *dev_result, int i, cudaStream_t stream,
                             void *ctx)
{
    null_ctx_note(ctx);
    wl_compute(dev, items, dev_result, i, stream, null_ctx_w);
}

/* The bad arguments of lab_pipe_run, each alone (the rest valid) on a pipe of 999 items. */
#define BAD_RUNS 11
static const char *const bad_run[BAD_RUNS] = {
    "p NULL", "job NULL", "produce NULL", "compute NULL", "results NULL", "items 0", "items 1000 (the pipe holds 999)",
    "items 2^62 + k (the pipe holds 999; items * 4 bytes wraps past 2^64 to 4k, k 1 to 999)",
    "items SIZE_MAX (the pipe holds 999)", "batches -1", "batches INT_MIN"};

/* bad_run_job - the job of bad argument r (bad_run), with batches (0 to 4) where the rule is not about them, onto
 * res (4 results) and the counting callbacks of c; wrap_k is the k of the wrapping count */
static lab_job bad_run_job(int r, int batches, lab_result *res, refused_calls *c, size_t wrap_k)
{
    lab_job j = {batches, 999, refused_produce, refused_compute, res, c};
    j.items = r == 5 ? 0 : r == 6 ? 1000 : r == 7 ? ((size_t)1 << 62) + wrap_k : r == 8 ? SIZE_MAX : 999;
    if (r == 2) j.produce = NULL;
    if (r == 3) j.compute = NULL;
    if (r == 4) j.results = NULL;
    if (r == 9) j.batches = -1;
    if (r == 10) j.batches = INT_MIN;
    return j;
}

/* The bad arguments of lab_pipe_create (the refusals, not the sizes past memory). */
#define BAD_CREATES 6
static const size_t bad_create_items[BAD_CREATES] = {0, 1024, 1024, 1024, 1024, 1024};
static const int bad_create_depth[BAD_CREATES] = {2, 0, MAX_DEPTH + 1, -1, INT_MAX, INT_MIN};
static const char *const bad_create[BAD_CREATES] = {"with 0 items", "with depth 0", "with depth 9", "with depth -1",
                                                    "with depth INT_MAX", "with depth INT_MIN"};

/* What refusals_once refuses: a pipe of 999 items for the runs, their results (4). */
typedef struct {
    lab_pipe *p;
    lab_result *res;
    size_t wrap_k;
} refusals;

/* refusals_once - kit_expect_no_heap_leak's attempt: every bad create and every bad run once, stderr kept out; 0
 * when all were refused before any work (each was checked alone before, with its message) */
static int refusals_once(void *ctx)
{
    refusals *f = ctx;
    int quiet = kit_quiet_begin(), bad = 0;
    for (int r = 0; r < BAD_CREATES; r++) {
        lab_pipe *q = lab_pipe_create(bad_create_items[r], bad_create_depth[r]);
        if (q)
            lab_pipe_destroy(q), bad = 1;
    }
    for (int r = 0; r < BAD_RUNS; r++) {
        refused_calls c = {0, 0};
        lab_job j = bad_run_job(r, 2, f->res, &c, f->wrap_k);
        if (lab_pipe_run(r == 0 ? NULL : f->p, r == 1 ? NULL : &j) != -1 || c.produced || c.computed)
            bad = 1;
    }
    kit_quiet_end(quiet);
    return bad;
}

/* ===== Part A: the pipe ===== */

XL_TEST(pipe, arguments, 5, XL_GPU,
        "lab_pipe_create and lab_pipe_run refuse bad arguments with NULL and -1, holding nothing, leaving the job as "
        "it was; a create that runs out of memory at any of its allocations, streams or events returns NULL, with a "
        "message of one line, holding nothing, with no error left; destroy(NULL) is harmless; neither refusals nor "
        "runs repeated on one pipe grow the host heap", 20)
{
    for (int r = 0; r < BAD_CREATES; r++)
        expect_create_fails(bad_create_items[r], bad_create_depth[r], bad_create[r]);
    /* sizes no machine holds: 2^61 items (8 EiB), and a count whose bytes wrap past 2^64 to a few KiB */
    expect_create_fails((size_t)1 << 61, 2, "with 2^61 items (8 EiB: out of memory)");
    size_t wrap = kit_wrapping_count(sizeof(uint32_t));
    char why[128];
    snprintf(why, sizeof why, "(whose bytes wrap past 2^64 in a size_t to %zu: out of memory)", wrap * sizeof(uint32_t));
    expect_create_fails(wrap, 2, why);
    lab_pipe_destroy(NULL);
    kit_create_args z = {(size_t)kit_rand_int(1, 1 << 16), (int)kit_rand_int(2, MAX_DEPTH)};
    char what[200];
    snprintf(what, sizeof what, "lab_pipe_create(%zu items, depth %d)", z.size, z.count);
    long made = kit_expect_create_failures(pipe_attempt, &z, what); /* out of memory at each allocation in turn */
    cr_assert(made >= 2L * z.count, "%s made %ld allocations, streams and events: it needs at least a pinned and a "
              "device buffer per slot", what, made);
    expect_failures_said(&z, made); /* and says so in one line, whichever create failed */
    kit_held before = kit_held_now(); /* create and destroy, no run */
    lab_pipe_destroy(new_pipe(z.size, z.count));
    snprintf(what, sizeof what, "lab_pipe_create(%zu items, depth %d) and lab_pipe_destroy", z.size, z.count);
    kit_expect_released(before, what);

    wl_ctx w;
    wl_create(&w, 1000, 0, 0, 0);
    lab_result *res = pinned_results(4);
    int depth = (int)kit_rand_int(1, MAX_DEPTH);
    lab_pipe *p = new_pipe(999, depth);
    size_t wrap_k = (size_t)kit_rand_int(1, 999); /* 2^62 + k items: 4k bytes once wrapped, within the pipe's */
    /* each bad argument alone, the rest valid, with 0 batches and with 1 to 4: -1 before any work, nothing held, the
     * job as it was */
    before = kit_held_now();
    for (int r = 0; r < BAD_RUNS; r++)
        for (int none = 0; none < 2 - (r >= 9); none++) {
            refused_calls c = {0, 0};
            lab_job j = bad_run_job(r, none ? 0 : (int)kit_rand_int(1, 4), res, &c, wrap_k);
            const lab_job was = j;
            xl_poison(res, 4 * sizeof(lab_result));
            int rc = lab_pipe_run(r == 0 ? NULL : p, r == 1 ? NULL : &j);
            cr_assert(rc == -1 && c.produced == 0 && c.computed == 0,
                      "lab_pipe_run with %s (the rest valid, %d batches, a pipe of 999 items, depth %d) returned %d "
                      "after %d produce and %d compute calls: it must return -1 before any work (lab.h), whatever "
                      "the count of batches",
                      bad_run[r], j.batches, depth, rc, c.produced, c.computed);
            const char *changed = job_changed(&j, &was);
            cr_assert(changed == NULL, "lab_pipe_run with %s changed the job's %s: it is handed a const lab_job *, "
                      "which it must leave as it was", bad_run[r], changed);
            cr_assert(xl_check_poison(res, 4 * sizeof(lab_result), NULL) == 0,
                      "lab_pipe_run with %s (the rest valid, %d batches) returned -1 but wrote into the caller's "
                      "results array first: a refused run writes nothing (lab.h), so check every argument before "
                      "touching job->results", bad_run[r], j.batches);
        }
    snprintf(what, sizeof what, "lab_pipe_run with each bad argument in turn (a pipe of 999 items, depth %d), all "
             "refused", depth);
    kit_expect_released(before, what);
    /* refusals, repeated, must not grow the heap either: a struct allocated before the arguments are checked */
    refusals f = {p, res, wrap_k};
    kit_expect_no_heap_leak(refusals_once, &f,
                            "lab_pipe_create with each bad argument (0 items; depth 0, 9, -1, INT_MAX, INT_MIN) and "
                            "lab_pipe_run with each bad argument, all refused,",
                            "a refusal keeps heap memory (malloc, calloc, new): lab.h says NULL or -1 leaves nothing "
                            "allocated; check the arguments before allocating anything, or free what you allocated "
                            "before returning");
    lab_job j = wl_job(&w, 0, res);
    j.items = 999;
    j.batches = 0;
    xl_poison(res, 4 * sizeof(lab_result));
    xl_expect_ok(lab_pipe_run(p, &j), "lab_pipe_run with 0 batches");
    cr_assert(w.produced == 0 && w.computed == 0, "lab_pipe_run with 0 batches called produce %d and compute %d times",
              w.produced, w.computed);
    cr_assert(xl_check_poison(res, 4 * sizeof(lab_result), NULL) == 0, "lab_pipe_run with 0 batches wrote into "
              "the results array: a job of 0 batches has no results to write");
    /* ctx is the caller's own pointer, passed through: NULL is a valid ctx (lab.h), not a bad argument */
    wl_ctx wn = w; /* w's data, in batches of 1 to 999 items: the pipe holds 999, w's batches are 1000 */
    wn.items = (size_t)kit_rand_int(1, 999);
    null_ctx_w = &wn;
    j = wl_job(&wn, (int)kit_rand_int(1, 4), res); /* res holds 4 */
    j.produce = null_ctx_produce;
    j.compute = null_ctx_compute;
    j.ctx = NULL;
    null_ctx_calls = null_ctx_bad = 0;
    xl_poison(res, 4 * sizeof(lab_result));
    int saved = kit_capture_begin();
    int rc = lab_pipe_run(p, &j);
    char said[512];
    kit_capture_end(saved, said, sizeof said);
    snprintf(what, sizeof what, "lab_pipe_run of %d batches of %zu items with ctx NULL (a pipe of 999 items, depth %d)",
             j.batches, j.items, depth);
    cr_assert(rc == 0, "%s returned %d (it said: %.200s). lab.h: ctx is only passed to the callbacks; a job whose "
              "callbacks need no context has ctx NULL, which is valid: do not refuse it", what, rc, said);
    cr_assert(null_ctx_bad == 0, "%s: a callback was given ctx %p, not the job's NULL: pass job->ctx as it is",
              what, null_ctx_seen);
    cr_assert(null_ctx_calls == 2 * j.batches, "%s made %d callback calls: produce and compute once per batch (%d)",
              what, null_ctx_calls, 2 * j.batches);
    expect_results(&wn, &j, NULL, -1, -1, what);
    null_ctx_w = NULL;
    /* a pipe runs any number of jobs (lab.h): a run must give back whatever heap memory it takes */
    run_call again = {p, wl_job(&w, (int)kit_rand_int(1, 4), res)}; /* res holds 4 */
    again.j.items = (size_t)kit_rand_int(1, 999);
    snprintf(what, sizeof what, "lab_pipe_run of %d batches of %zu items on a pipe of 999 items, depth %d",
             again.j.batches, again.j.items, depth);
    kit_expect_no_heap_leak(run_once, &again, what,
                            "lab_pipe_run keeps heap memory it allocated (malloc, calloc, new) after it returns; a "
                            "pipe runs any number of jobs, so free it before returning, or allocate it once in "
                            "lab_pipe_create and free it in lab_pipe_destroy");
    lab_pipe_destroy(p);
    XL_CHECK(cudaFreeHost(res));
    wl_destroy(&w);
}

XL_TEST(pipe, buffers, 10, XL_GPU,
        "with depth d = 1 to 8, produce and compute run once per batch, in order, produce into d pinned host buffers "
        "in rotation; a second pipe alive beside it, run in between, keeps working after the first is destroyed; "
        "lab_pipe_destroy right after the run releases everything", 20)
{
    for (int depth = 1; depth <= MAX_DEPTH; depth++) {
        char what[320];
        wl_ctx w, w2;
        size_t items = (size_t)kit_rand_int(1, 1 << 16), items2 = (size_t)kit_rand_int(1, 1 << 16);
        int batches = 2 * depth + (int)kit_rand_int(-1, 1); /* at or beside a multiple of the depth, >= depth */
        int depth2 = (int)kit_rand_int(1, MAX_DEPTH), batches2 = 2 * depth2 + 1;
        kit_held before = kit_held_now();
        wl_create(&w, items, 0, 0, 0);
        wl_create(&w2, items2, 0, 0, 0);
        lab_result *res = pinned_results(batches), *res2 = pinned_results(batches2);
        lab_pipe *p = new_pipe(w.items, depth);
        lab_pipe *q = new_pipe(w2.items, depth2); /* pipes are independent (lab.h): two alive at once */
        lab_job j = wl_job(&w, batches, res), j2 = wl_job(&w2, batches2, res2);
        char other[160];
        snprintf(other, sizeof other, "a second pipe (%zu items, depth %d) alive beside a pipe of %zu items, depth %d",
                 items2, depth2, items, depth);
        run_poisoned(p, depth, &j);
        run_poisoned(q, depth2, &j2);
        expect_results(&w2, &j2, NULL, -1, -1, other);
        cr_assert(w.produced == batches && w.out_of_order == 0,
                  "depth %d, %d batches of %zu items: produce was called %d times (%d of them out of order); call it "
                  "once per batch, for batch 0, 1, 2, ...",
                  depth, batches, items, w.produced, w.out_of_order);
        cr_assert(w.computed == batches && w.compute_out_of_order == 0,
                  "depth %d, %d batches of %zu items: compute was called %d times (%d of them out of order); call it "
                  "once per batch, for batch 0, 1, 2, ...",
                  depth, batches, items, w.computed, w.compute_out_of_order);
        cr_assert(w.n_seen_host == depth,
                  "depth %d, %d batches: produce wrote into %d different host buffers; a pipe of depth %d needs %d, "
                  "used in rotation (one buffer cannot be refilled while its copy is still reading it)",
                  depth, batches, w.n_seen_host, depth, depth);
        for (int k = 0; k < w.n_seen_host; k++)
            cr_assert(kit_is_pinned(w.seen_host[k]),
                      "depth %d: host buffer %d is pageable memory: a copy from it cannot overlap with the host's "
                      "work (the driver stages it through a pinned buffer of its own); allocate it with "
                      "cudaMallocHost",
                      depth, k);
        expect_results(&w, &j, NULL, -1, -1, "beside a second pipe");
        lab_pipe_destroy(p);
        snprintf(what, sizeof what, "%s, after the first was destroyed (each pipe's buffers, streams and events are "
                 "its own: keep them in struct lab_pipe, not in variables shared by all pipes)", other);
        lab_result *res3 = pinned_results(batches2); /* the next job's results: an array of its own */
        j2 = wl_job(&w2, batches2, res3);
        xl_poison(res2, (size_t)batches2 * sizeof(lab_result));
        run_poisoned(q, depth2, &j2);
        cr_assert(xl_check_poison(res2, (size_t)batches2 * sizeof(lab_result), NULL) == 0,
                  "%s: the run wrote into the results array of the pipe's run before, not into this job's: write "
                  "batch i's result to job->results[i] of the job being run", what);
        expect_results(&w2, &j2, NULL, -1, -1, what);
        lab_pipe_destroy(q);
        XL_CHECK(cudaFreeHost(res));
        XL_CHECK(cudaFreeHost(res2));
        XL_CHECK(cudaFreeHost(res3));
        wl_destroy(&w);
        wl_destroy(&w2);
        snprintf(what, sizeof what,
                 "lab_pipe_create(%zu items, depth %d) and a second lab_pipe_create(%zu items, depth %d) alive at "
                 "once, runs of each, and each lab_pipe_destroy right after its last run (each pipe must release "
                 "what it made: keep its streams, events and buffers in struct lab_pipe, not in variables shared by "
                 "all pipes)",
                 items, depth, items2, depth2);
        kit_expect_released(before, what);
    }
}

/* One run of results.exact: how many batches, and whether the pipe's whole size or fewer items. */
typedef struct {
    int batches; /* a multiple of the depth, plus this; with times -1, 1 to d - 1 (1 at depth 1); with times -2,
                    LONG_RUN_MIN to LONG_RUN_MAX; with times -3 (at one depth only), HUGE_RUN + d plus 0 to d - 1 */
    int times;   /* times the depth (-1: a short run, -2: a long run, -3: a huge run) */
    int items;   /* 0: the pipe's max_items, 1: random below it, 2: one item, 3: 1 to 4096, 4: 1 to 16 */
    int slow;    /* at depth 2 and more, a batch held up 25 ms: 0 none, 1 one of the last d but the last (it finishes
                    last), 2 one of batches 1 to d - 1 (its slot is used twice after it, its stream is not batch 0's),
                    3 batch 0 (it finishes last), 4 any */
    int held;    /* 1: one copy in of the first round waits 10 ms on its stream before it reads its buffer; 2: the
                    copy in of batch HUGE_RUN - 1 does */
} exact_run;

#define LONG_RUN_MIN 200 /* a long run's batches: far past any table of a few rounds */
#define LONG_RUN_MAX 300
#define HUGE_RUN 65536      /* a huge run's batches, + d or more: past any 16-bit count, table or gathered copy back */
#define EXACT_MAX_BATCHES (HUGE_RUN + 2 * MAX_DEPTH)

/* huge_produce - lab_job.produce of the huge run: wl_produce's data (batch i is the workload's pool from
 * (i * 2654435761) % items, each word ^ a key of i: labs/04-double-buffering/workload.cu), written inline: its
 * worker threads' two barriers a batch would make 65 536 batches take seconds. Checked against wl_produce first. */
static void huge_produce(uint32_t *host, size_t items, int i, void *ctx)
{
    wl_ctx *w = ctx;
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    uint32_t key = (uint32_t)(z ^ (z >> 29));
    const uint32_t *src = w->pool + ((size_t)i * 2654435761u) % w->items;
    for (size_t k = 0; k < items && k < w->items; k++)
        host[k] = src[k] ^ key;
}

/* expect_huge_produce - huge_produce writes what wl_produce writes (the grader's own check), for a few batches */
static void expect_huge_produce(wl_ctx *w, int batches)
{
    uint32_t a[16], b[16];
    int at[3] = {0, HUGE_RUN - 1, batches - 1};
    cr_assert(w->items <= 16, "the huge run's batches have at most 16 items");
    for (int k = 0; k < 3; k++) {
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        wl_produce(a, w->items, at[k], w);
        huge_produce(b, w->items, at[k], w);
        cr_assert(memcmp(a, b, sizeof a) == 0, "the grader's huge_produce differs from wl_produce at batch %d: "
                  "the grader is out of date (course staff)", at[k]);
    }
}

XL_TEST(results, exact, 15, XL_GPU,
        "every result is exact when lab_pipe_run returns, nothing written outside them: depths 1 to 8, pipes of "
        "random sizes given as many items or fewer, batch counts from 1 to 300, at and beside multiples of the depth "
        "(at one depth of 2 to 8 also 65 536 + depth or more, batch 65 535's copy in held 10 ms), "
        "runs of fewer batches than the depth after runs that did not end on a multiple of it, one batch finishing "
        "last (the first one too; at one depth held up 1.2 s), one early batch held up while its slot is reused, one "
        "early copy in held 10 ms; runs alternate between two results arrays; produce and compute are given the "
        "job's items", 30)
{
    /* the short runs follow a run of d - 1 batches, and one of 2d + 1: a pipe that carries its rotation on from run
     * to run starts them at a slot other than 0 */
    static const exact_run runs[] = {{-1, 1, 1, 0, 0}, {0, -1, 1, 3, 0}, {0, 1, 0, 0, 0}, {1, 1, 2, 0, 0},
                                     {-1, 2, 0, 0, 0}, {0, 2, 1, 0, 0},  {1, 2, 0, 1, 0}, {0, -1, 0, 4, 0},
                                     {1, 3, 1, 2, 1},  {0, -2, 3, 0, 0}, {0, -3, 4, 0, 2}};
    const int nruns = (int)(sizeof runs / sizeof runs[0]);
    int edge = (int)kit_rand_int(1, MAX_DEPTH); /* this depth's pipe holds 1 item: the contract's least */
    /* results[0 .. batches) lie at res + 1: res[0] and the two after the last are guards, poisoned */
    lab_result *res = pinned_results(EXACT_MAX_BATCHES + 3);
    static lab_result want[EXACT_MAX_BATCHES]; /* static: large */
    /* the runs on a pipe alternate between two results arrays: a pipe runs any number of jobs, each with its own */
    lab_result *other = pinned_results(EXACT_MAX_BATCHES + 3);
    int long_depth = (int)kit_rand_int(2, MAX_DEPTH); /* at this depth run 2's batch 0 is held up LONG_HOLD_MS */
    int huge_depth = (int)kit_rand_int(2, MAX_DEPTH); /* the huge run's: one run of a few tiny batches a slot */
    for (int depth = 1; depth <= MAX_DEPTH; depth++) {
        size_t max_items = depth == edge ? 1 : (size_t)kit_rand_int(2, (1 << 20) + 3);
        lab_pipe *p = new_pipe(max_items, depth);
        for (int r = 0; r < nruns; r++) {
            char what[256];
            wl_ctx w;
            if (runs[r].times == -3 && depth != huge_depth)
                continue;
            int batches = runs[r].times == -1   ? (depth > 1 ? (int)kit_rand_int(1, depth - 1) : 1)
                          : runs[r].times == -2 ? (int)kit_rand_int(LONG_RUN_MIN, LONG_RUN_MAX)
                          : runs[r].times == -3 ? HUGE_RUN + depth + (int)kit_rand_int(0, depth - 1)
                                                : runs[r].times * depth + runs[r].batches;
            int slow = -1, held = -1;
            size_t items = runs[r].items == 0   ? max_items
                           : runs[r].items == 1 ? (size_t)kit_rand_int(1, (long)max_items - 1)
                           : runs[r].items == 2 ? 1
                           : runs[r].items == 3 ? (size_t)kit_rand_int(1, max_items < 4096 ? (long)max_items : 4096)
                                                : (size_t)kit_rand_int(1, max_items < 16 ? (long)max_items : 16);
            wl_create(&w, items, 0, 0, 0); /* fresh data for every run */
            lab_result *swap = res;
            res = other, other = swap; /* this run's results array, and the one of the run before */
            double slow_ms = depth == long_depth && r == 1 ? LONG_HOLD_MS : SLOW_MS; /* a final wait that gives up */
            if (depth >= 2 && runs[r].slow) {
                int k = (int)kit_rand_int(1, depth - 1);
                slow = runs[r].slow == 1   ? batches - 1 - k
                       : runs[r].slow == 2 ? k
                       : runs[r].slow == 3 ? 0
                                           : (int)kit_rand_int(0, batches - 1);
                wl_slow_batch(&w, slow, slow_ms);
            }
            if (runs[r].times == -3)
                expect_huge_produce(&w, batches);
            lab_job j = wl_job(&w, batches, res + 1);
            if (runs[r].times == -3)
                j.produce = huge_produce;
            wl_expected_all(&w, batches, want); /* before the run: the results are read the moment it returns */
            if (runs[r].held) /* one copy in of the first round (or batch HUGE_RUN - 1's) waits on its stream before
                               * it reads its buffer: a wait on it skipped there (a 16-bit count wrapped) refills it */
                held = runs[r].held == 2 ? HUGE_RUN - 1 : (int)kit_rand_int(0, depth - 1);
            char note[112] = "";
            if (slow >= 0)
                snprintf(note, sizeof note, " (batch %d held up %.0f ms)", slow, slow_ms);
            if (held >= 0)
                snprintf(note + strlen(note), sizeof note - strlen(note), " (batch %d's copy in held 10 ms)", held);
            snprintf(what, sizeof what, "depth %d, a pipe of %zu items, run %d of %d on it: %d batches of %zu items%s",
                     depth, max_items, r + 1, nruns - (depth != huge_depth), batches, items, note);
            xl_poison(res, (EXACT_MAX_BATCHES + 3) * sizeof(lab_result));
            xl_poison(other, (EXACT_MAX_BATCHES + 3) * sizeof(lab_result));
            xl_copylog_hold(held, (uint64_t)(HOLD_COPY_MS * 1e6)); /* counted from this run's first copy in */
            run_poisoned(p, depth, &j);
            xl_copylog_hold(-1, 0);
            cr_assert(xl_check_poison(other, (EXACT_MAX_BATCHES + 3) * sizeof(lab_result), NULL) == 0,
                      "%s: lab_pipe_run wrote into the results array of this pipe's run before (%p), not into this "
                      "job's results (%p). Each job has its own results: write batch i's result to job->results[i] "
                      "of the job being run, never to an address kept from an earlier run",
                      what, (void *)(other + 1), (void *)(res + 1));
            expect_results(&w, &j, want, slow, held, what);
            cr_assert(xl_check_poison(res, sizeof(lab_result), NULL) == 0,
                      "%s: lab_pipe_run wrote before results[0] (job->results - 1): it must write results[0] to "
                      "results[%d] only", what, batches - 1);
            cr_assert(xl_check_poison(res + 1 + batches, 2 * sizeof(lab_result), NULL) == 0,
                      "%s: lab_pipe_run wrote past results[%d], the job's last result", what, batches - 1);
            wl_destroy(&w);
        }
        lab_pipe_destroy(p);
    }
    XL_CHECK(cudaFreeHost(res));
    XL_CHECK(cudaFreeHost(other));
}

/* ===== Part B: hazards, made certain ===== */

/* What a hazard run saw: per batch, the batch as its kernel found it when it began, and its result. */
typedef struct {
    lab_result want[16], start[16], got[16];
    int batches;
    int held; /* the batch whose copy in waited HOLD_COPY_MS on its stream */
} hazard_run;

/* run_hazard - depth d, 16 batches of 2^18 + 7 items, a kernel that works 2 ms before it reads, a host that
 * produces a batch in 0.3 ms: a buffer reused too early is overwritten while the kernel before it still spins. One
 * batch of the first round (random) has its copy in held HOLD_COPY_MS on its stream before it reads: the host
 * refills its buffer in that time unless it waits for the copy itself, and its kernel starts late, after the
 * other streams have emptied, so a copy in of its slot put on another stream lands under it */
static void run_hazard_held(int depth, hazard_run *h, double hold_ms)
{
    wl_ctx w;
    h->batches = 16;
    wl_create(&w, (1u << 18) + 7, HAZARD_PRODUCE_MS, SLOW_KERNEL_NS, h->batches);
    lab_result *res = pinned_results(h->batches);
    lab_pipe *p = new_pipe(w.items, depth);
    lab_job j = wl_job(&w, h->batches, res);
    h->held = (int)kit_rand_int(0, depth - 1);
    xl_copylog_hold(h->held, (uint64_t)(hold_ms * 1e6)); /* counted from this run's first copy in */
    run_poisoned(p, depth, &j);
    xl_copylog_hold(-1, 0);
    XL_CHECK(cudaDeviceSynchronize()); /* whatever lab_pipe_run left running, before the grader reads */
    wl_start_results(&w, h->start, h->batches);
    for (int i = 0; i < h->batches; i++) {
        h->want[i] = wl_expected(&w, i);
        h->got[i] = res[i];
    }
    lab_pipe_destroy(p);
    XL_CHECK(cudaFreeHost(res));
    wl_destroy(&w);
}

/* run_hazard - run_hazard_held with the copy in held HOLD_COPY_MS */
static void run_hazard(int depth, hazard_run *h)
{
    run_hazard_held(depth, h, HOLD_COPY_MS);
}

/* same - two results are equal */
static int same(lab_result a, lab_result b)
{
    return a.sum == b.sum && a.sumsq == b.sumsq;
}

/* each_hazard_run - 3 runs at depths 2, 3 and one of 4 to 8 (drawn for each run), each checked by check */
static void each_hazard_run(void (*check)(const hazard_run *h, int depth, int run))
{
    for (int rep = 1; rep <= 3; rep++)
        for (int k = 0; k < 3; k++) {
            int depth = k < 2 ? 2 + k : (int)kit_rand_int(4, MAX_DEPTH);
            hazard_run h;
            run_hazard(depth, &h);
            check(&h, depth, rep);
        }
}

/* arrived_intact - each batch was in its device buffer when its kernel began */
static void arrived_intact(const hazard_run *h, int depth, int run)
{
    for (int i = 0; i < h->batches; i++)
        cr_assert(same(h->start[i], h->want[i]),
                  "depth %d, run %d (batch %d's copy in held 10 ms on its stream): batch %d was not on the GPU when "
                  "its kernel began (the device buffer held other data). Most likely its pinned host buffer was "
                  "refilled with a later batch before the copy in had read it: before produce writes into a host "
                  "buffer, wait on an event recorded right after that buffer's last copy in (after it, on the copy's "
                  "stream)",
                  depth, run, h->held, i);
}

/* unchanged_under_kernel - each batch's device buffer held still while its kernel ran */
static void unchanged_under_kernel(const hazard_run *h, int depth, int run)
{
    for (int i = 0; i < h->batches; i++)
        cr_assert(same(h->got[i], h->start[i]),
                  "depth %d, run %d (batch %d's copy in held 10 ms on its stream): batch %d changed under its kernel: "
                  "the device buffer held one batch when the kernel began and other data by the time it read it. A "
                  "later copy in wrote into that device buffer while the kernel was still running: the copy must "
                  "wait for the kernel (the same stream, or an event recorded after the kernel)",
                  depth, run, h->held, i);
}

XL_TEST(hazard, host_reuse, 10, XL_GPU,
        "no host buffer is refilled before its copy has read it, however long the copy waits (kernel slowed to 2 ms, "
        "one early copy in held 10 ms, depths 2, 3 and one of 4 to 8, 3 runs; then one copy in held 1.2 s at a depth "
        "of 1 to 8)", 30)
{
    each_hazard_run(arrived_intact);
    /* a wait that gives up (polls with a deadline, then refills anyway) passes a 10 ms hold: hold one far longer */
    int depth = (int)kit_rand_int(1, MAX_DEPTH);
    hazard_run h;
    double t0 = xl_now_ms();
    run_hazard_held(depth, &h, LONG_HOLD_MS);
    double ms = xl_now_ms() - t0;
    for (int i = 0; i < h.batches; i++)
        cr_assert(same(h.start[i], h.want[i]),
                  "depth %d, batch %d's copy in held %.0f ms on its stream (the run took %.0f ms): batch %d was not "
                  "on the GPU when its kernel began (its host buffer held other data). The host refilled a buffer "
                  "its copy in had not read yet: the wait before produce must last until the copy has read the "
                  "buffer, however long that takes (cudaEventSynchronize), never give up after a while",
                  depth, h.held, LONG_HOLD_MS, ms, i);
}

XL_TEST(hazard, device_reuse, 10, XL_GPU,
        "no device buffer is overwritten while its kernel still reads it (kernel slowed to 2 ms, one early copy in "
        "held 10 ms, depths 2, 3 and one of 4 to 8)", 30)
{
    each_hazard_run(unchanged_under_kernel);
}

/* One lab_pipe_run for kit_ms_beside_busy. */
typedef struct {
    lab_pipe *p;
    lab_job j;
} pipe_call;

/* call_pipe - lab_pipe_run into poisoned results */
static void call_pipe(void *ctx)
{
    pipe_call *c = ctx;
    run_poisoned(c->p, 2, &c->j);
}

/* call_pipes - kit_ms_beside_busy_each's call: lab_pipe_run of c[k] into poisoned results */
static void call_pipes(void *ctx, int k)
{
    call_pipe(&((pipe_call *)ctx)[k]);
}

XL_TEST(pipe, narrow_wait, 5, XL_TIMED,
        "lab_pipe_run waits for its own work only, not for a 300 ms kernel on another stream: a pipe's second run "
        "and a new pipe's first run", 15)
{
    wl_ctx w;
    wl_create(&w, 1u << 18, 0, 1000000, 0);
    /* c[0]: a pipe warmed up by one run, timed first (the check of old); c[1]: a pipe never run before, timed right
     * after, the kernel still running (a wait made once, at a pipe's first run, counts too) */
    pipe_call c[2] = {{new_pipe(w.items, 2), wl_job(&w, 4, pinned_results(4))},
                      {new_pipe(w.items, 2), wl_job(&w, 4, pinned_results(4))}};
    call_pipe(&c[0]); /* warm-up */
    double ms[2];
    kit_ms_beside_busy_each(call_pipes, c, 2, KIT_OTHER_NS, ms);
    static const char *const which[2] = {"a pipe's second run", "a new pipe's first run"};
    for (int k = 0; k < 2; k++) {
        char what[96];
        snprintf(what, sizeof what, "beside the 300 ms kernel (%s)", which[k]);
        expect_results(&w, &c[k].j, NULL, -1, -1, what);
        xl_timed_check(ms[k], XL_AT_MOST(KIT_NARROW_MS), "lab_pipe_run's time beside an unrelated kernel (ms)",
                  "lab_pipe_run (%s) took %.0f ms for 4 batches of about 1 ms each while an unrelated 300 ms kernel "
                  "ran on another stream: it waited for the whole device (cudaDeviceSynchronize, or the legacy "
                  "default stream). Wait on this pipe's streams or events only, at every run, the first included",
                  which[k], ms[k]);
        xl_note("lab_pipe_run (%s) took %.1f ms beside the 300 ms kernel", which[k], ms[k]);
    }
    for (int k = 0; k < 2; k++) {
        lab_pipe_destroy(c[k].p);
        XL_CHECK(cudaFreeHost(c[k].j.results));
    }
    wl_destroy(&w);
}

/* One run of pipe.early_refill: the workload; an event recorded on compute(0)'s stream when compute(0) is called
 * (it completes once batch 0's copy in, held REFILL_HOLD_MS, is done), queried then and when produce(1) is called;
 * an event recorded on batch 0's stream right after its compute (its kernel and the kit's hold-up), queried when
 * produce is called for batch depth, the first to reuse slot 0; and one after each later batch's compute, to see
 * which finished first. */
typedef struct {
    wl_ctx *w;
    int depth;
    cudaEvent_t in0;       /* recorded on compute(0)'s stream before its kernel */
    cudaEvent_t computed0; /* after batch 0's compute and hold-up (timing) */
    cudaEvent_t done[MAX_DEPTH]; /* done[i], 1 <= i < depth: after batch i's compute (timing) */
    int found;    /* what produce(depth) found: 1 batch 0 still computing, 0 done, -1 not called */
    int in_at_compute; /* whether batch 0's copy in was still held when compute(0) was called (-1: not called) */
    int in_at_produce; /* the same when produce(1) was called, depth >= 2 (-1: not called) */
} refill_run;

/* pending - 1 when e has not completed yet, 0 when it has */
static int pending(cudaEvent_t e)
{
    cudaError_t err = cudaEventQuery(e);
    if (err != cudaErrorNotReady)
        XL_CHECK(err);
    return err == cudaErrorNotReady;
}

/* refill_produce - lab_job.produce: notes whether batch 0's copy in is still held (produce(1)) and whether its
 * compute is still under way (produce(depth)), then wl_produce */
static void refill_produce(uint32_t *host, size_t items, int i, void *ctx)
{
    refill_run *r = ctx;
    if (i == 1 && r->depth >= 2) /* before compute(0) (allowed) is before batch 0's copy in has finished too */
        r->in_at_produce = r->in_at_compute >= 0 ? pending(r->in0) : 1;
    if (i == r->depth)
        r->found = pending(r->computed0);
    wl_produce(host, items, i, r->w);
}

/* refill_compute - for batch 0 an event ahead of its kernel, whose state is noted, then wl_compute, and the events
 * after it on the same stream (batch 0 and batches 1 to depth - 1) */
static void refill_compute(const uint32_t *dev, size_t items, lab_result *dev_result, int i, cudaStream_t stream,
                           void *ctx)
{
    refill_run *r = ctx;
    if (i == 0) {
        XL_CHECK(cudaEventRecord(r->in0, stream));
        r->in_at_compute = pending(r->in0);
    }
    wl_compute(dev, items, dev_result, i, stream, r->w);
    if (i == 0)
        XL_CHECK(cudaEventRecord(r->computed0, stream));
    else if (i < r->depth)
        XL_CHECK(cudaEventRecord(r->done[i], stream));
}

XL_TEST(pipe, early_refill, 5, XL_GPU,
        "the stages overlap at every batch size: compute(0) is called, and at depth 2 or more produce(1) too, while "
        "batch 0's copy in is still held 60 ms; a host buffer is refilled as soon as its copy in has read it, while "
        "its batch still computes; batch 0 held up 60 ms holds up none of the depth - 1 batches after it (depths 1, "
        "2, 3 and one of 4 to 8; batches of 1 to 4096 items, under 1 MiB, and up to 4 MiB)", 15)
{
    int depths[4] = {1, 2, 3, (int)kit_rand_int(4, MAX_DEPTH)}; /* depth 1 too: its one buffer refills as early */
    static const long size_lo[3] = {1, 4097, 1 << 18}, size_hi[3] = {4096, (1 << 18) - 1, (1 << 20) + 3};
    int size0 = (int)kit_rand_int(0, 2); /* each size class at some depth, whichever comes where */
    for (int k = 0; k < 4; k++) {
        wl_ctx w;
        refill_run r = {.w = &w, .depth = depths[k], .found = -1, .in_at_compute = -1, .in_at_produce = -1};
        int batches = r.depth + 1, c = (size0 + k) % 3;
        wl_create(&w, (size_t)kit_rand_int(size_lo[c], size_hi[c]), 0, 0, 0);
        wl_slow_batch(&w, 0, REFILL_HOLD_MS);
        XL_CHECK(cudaEventCreateWithFlags(&r.in0, cudaEventDisableTiming));
        XL_CHECK(cudaEventCreate(&r.computed0));
        for (int i = 1; i < r.depth; i++)
            XL_CHECK(cudaEventCreate(&r.done[i]));
        lab_result *res = pinned_results(batches);
        lab_pipe *p = new_pipe(w.items, r.depth);
        lab_job j = wl_job(&w, batches, res);
        j.produce = refill_produce;
        j.compute = refill_compute;
        j.ctx = &r;
        char what[160];
        snprintf(what, sizeof what, "depth %d, %d batches of %zu items (batch 0's copy in held %.0f ms, its stream "
                 "held up %.0f ms after its kernel)", r.depth, batches, w.items, REFILL_HOLD_MS, REFILL_HOLD_MS);
        xl_copylog_hold(0, (uint64_t)(REFILL_HOLD_MS * 1e6)); /* this run's first copy in: batch 0's */
        run_poisoned(p, r.depth, &j);
        xl_copylog_hold(-1, 0);
        expect_results(&w, &j, NULL, 0, 0, what);
        cr_assert(r.in_at_compute == 1,
                  "%s: compute(0) was called only after batch 0's copy in had finished (%s). The host waited for "
                  "the copy: queue it and call compute at once (the stream orders the kernel after the copy), so "
                  "that the host goes on while the batch crosses the bus, whatever its size",
                  what, r.in_at_compute < 0 ? "it was never called" : "the kit held that copy 60 ms");
        if (r.depth >= 2)
            cr_assert(r.in_at_produce == 1,
                      "%s: produce(1) was called only after batch 0's copy in had finished (the kit held it 60 ms). "
                      "lab.h: while batch i crosses the bus the host produces the next one into another buffer; "
                      "do not wait for a copy before producing a batch whose buffer it does not read",
                      what);
        cr_assert(r.found >= 0, "%s: produce was never called for batch %d", what, r.depth);
        cr_assert(r.found == 1,
                  "%s: produce for batch %d (the next to use batch 0's host buffer) was called only after batch "
                  "0's kernel, and the 60 ms the kit held its stream up, had finished. The host waited for more than "
                  "the copy in: record the slot's \"host buffer free\" event right after the copy in, before the "
                  "kernel, so that the host refills the buffer while the GPU still computes (at every depth, 1 "
                  "included)",
                  what, r.depth);
        XL_CHECK(cudaEventSynchronize(r.computed0));
        for (int i = 1; i < r.depth; i++) {
            float ms = 0;
            XL_CHECK(cudaEventSynchronize(r.done[i]));
            XL_CHECK(cudaEventElapsedTime(&ms, r.done[i], r.computed0));
            cr_assert(ms > 0,
                      "%s: batch %d's compute finished %.1f ms after batch 0's (kernel and hold-up) had: it waited "
                      "behind batch 0. lab.h: a batch held up on the GPU holds up none of the depth - 1 batches "
                      "after it; give each of the depth slots a stream of its own (or order them by events), not "
                      "fewer streams than slots",
                      what, i, -ms);
        }
        lab_pipe_destroy(p);
        XL_CHECK(cudaFreeHost(res));
        XL_CHECK(cudaEventDestroy(r.in0));
        XL_CHECK(cudaEventDestroy(r.computed0));
        for (int i = 1; i < r.depth; i++)
            XL_CHECK(cudaEventDestroy(r.done[i]));
        wl_destroy(&w);
    }
}

/* ===== Part C: speed ===== */

/* What an efficiency measurement runs: the baseline and the student's pipe on the same workload. */
typedef struct {
    wl_ctx w;
    base_pipe *base;
    lab_pipe *pipe;
    lab_result *res;
    lab_result want[PIPE_BATCHES]; /* the right results, computed once: the workload's data stay the same */
    wl_stage_ms st;
    int depth;
} speed_ctx;

/* measure_eff - xl_measure_fn: 5 rounds, each of the stages alone (T_ideal), the sequential baseline (T_seq) and
 * the pipe (T), back to back, so that each round's efficiency is from one moment of the machine's; the median of
 * the 5 rounds' efficiencies. Results checked on every run. */
static void measure_eff(void *ctx, double *eff, char *figures, size_t len)
{
    speed_ctx *c = ctx;
    double seq[EFF_ROUNDS], pipe[EFF_ROUNDS], ideal[EFF_ROUNDS], e[EFF_ROUNDS];
    lab_job j = wl_job(&c->w, PIPE_BATCHES, c->res);
    for (int r = 0; r < EFF_ROUNDS; r++) {
        wl_stages(&c->w, 3, &c->st);
        ideal[r] = wl_ideal_ms(&c->st, PIPE_BATCHES);
        double t0 = xl_now_ms();
        cr_assert(base_pipe_run(c->base, &j) == 0, "the kit's baseline failed");
        seq[r] = xl_now_ms() - t0;
        xl_poison(c->res, PIPE_BATCHES * sizeof(lab_result));
        t0 = xl_now_ms();
        xl_expect_ok(lab_pipe_run(c->pipe, &j), "lab_pipe_run");
        pipe[r] = xl_now_ms() - t0;
        expect_results(&c->w, &j, c->want, -1, -1, "in the speed test");
        e[r] = (seq[r] - pipe[r]) / (seq[r] - ideal[r]);
    }
    double lo = e[0], hi = e[0];
    for (int r = 1; r < EFF_ROUNDS; r++) {
        lo = fmin(lo, e[r]);
        hi = fmax(hi, e[r]);
    }
    *eff = xl_median(e, EFF_ROUNDS);
    xl_sound_spread(seq, EFF_ROUNDS, XL_SOUND_SPREAD, "the kit's sequential baseline (ms)");
    xl_sound_within(xl_median(seq, EFF_ROUNDS) / xl_median(ideal, EFF_ROUNDS), XL_SOUND_SEQ_OVER_IDEAL, INFINITY,
                    "the kit's sequential time over its ideal time");
    xl_sound_within(*eff, -INFINITY, XL_EFF_MAX, "the efficiency");
    snprintf(
        figures, len,
        "depth %d, %d batches of %zu MiB, medians of %d rounds: sequential %.1f ms, yours %.1f ms, ideal %.1f ms; "
        "efficiency %.2f, the median of the rounds' own (from %.2f to %.2f); the last round's stages per batch: "
        "produce %.2f, copy in %.2f (%.2f right after produce), kernel %.2f, copy out %.3f ms",
        c->depth, PIPE_BATCHES, c->w.items * 4 >> 20, EFF_ROUNDS, xl_median(seq, EFF_ROUNDS),
        xl_median(pipe, EFF_ROUNDS), xl_median(ideal, EFF_ROUNDS), *eff, lo, hi, c->st.produce_ms, c->st.h2d_ms,
        c->st.h2d_fresh_ms, c->st.kernel_ms, c->st.d2h_ms);
}

/* trace_for_report - when the grading keeps results (make grade), one traced run of the kit's baseline and one of
 * the pipe on c's workload, written as data/timeline.csv for the report page; results checked; nothing otherwise */
static void trace_for_report(speed_ctx *c)
{
    char path[1200];
    if (xl_results_data_path("timeline", path, sizeof path) != 0)
        return;
    xl_timeline *t = xl_timeline_create(8 * PIPE_BATCHES * 2);
    cr_assert(t != NULL, "out of memory");
    lab_job j = wl_job(&c->w, PIPE_BATCHES, c->res);
    c->w.tl = t;
    c->w.run = "the kit's baseline";
    xl_timeline_trace_copies(t, c->w.run);
    cr_assert(base_pipe_run(c->base, &j) == 0, "the kit's baseline failed");
    c->w.run = "your pipe (depth 2)";
    xl_timeline_trace_copies(t, c->w.run);
    xl_poison(c->res, PIPE_BATCHES * sizeof(lab_result));
    int rc = lab_pipe_run(c->pipe, &j);
    xl_timeline_trace_copies(NULL, NULL);
    c->w.tl = NULL;
    xl_expect_ok(rc, "lab_pipe_run");
    expect_results(&c->w, &j, c->want, -1, -1, "in the traced run");
    xl_timeline_write(t, path, NULL, "grader", 1);
    xl_timeline_destroy(t);
}

/* check_efficiency - depth d pipe on batches of mib MiB, stages balanced from this machine's figures */
static void check_efficiency(size_t mib, int depth)
{
    speed_ctx c = {.depth = depth};
    wl_create(&c.w, mib << 18, 0, 0, 0);
    wl_expected_all(&c.w, PIPE_BATCHES, c.want);
    wl_balance(&c.w, STAGE_SLACK, NULL); /* no stages measured after: each round measures its own */
    c.base = base_pipe_create(c.w.items);
    cr_assert(c.base != NULL, "the kit's baseline could not be created");
    c.pipe = new_pipe(c.w.items, depth);
    c.res = pinned_results(PIPE_BATCHES);
    char what[96];
    snprintf(what, sizeof what, "overlap efficiency at depth %d, %zu MiB batches", depth, mib);
    xl_ratio_check(measure_eff, &c, XL_AT_LEAST(EFF_NEED), what);
    if (depth == 2 && mib == 16)
        trace_for_report(&c);
    lab_pipe_destroy(c.pipe);
    base_pipe_destroy(c.base);
    XL_CHECK(cudaFreeHost(c.res));
    wl_destroy(&c.w);
}

XL_TEST(speed, double_4mib, 10, XL_TIMED, "depth 2, 4 MiB batches: overlap efficiency >= " XL_STR(EFF_NEED) " against sequential", 30)
{
    check_efficiency(4, 2);
}

XL_TEST(speed, double_16mib, 10, XL_TIMED, "depth 2, 16 MiB batches: overlap efficiency >= " XL_STR(EFF_NEED) " against sequential", 30)
{
    check_efficiency(16, 2);
}

XL_TEST(speed, double_64mib, 10, XL_TIMED, "depth 2, 64 MiB batches: overlap efficiency >= " XL_STR(EFF_NEED) " against sequential", 30)
{
    check_efficiency(64, 2);
}

XL_TEST(speed, triple_16mib, 5, XL_TIMED, "depth 3, 16 MiB batches: overlap efficiency >= " XL_STR(EFF_NEED) " against sequential", 30)
{
    check_efficiency(16, 3);
}
