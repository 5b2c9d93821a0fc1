/* 05-stream-pipelining.c - the grader of lab 05 (multi-stream pipelining). Course staff only.
 *
 * Results are exact against the CPU, with fresh data and poisoned outputs, checked as soon as a run returns, and
 * in two runs one early chunk's kernel is held back 25 ms on its stream so that it finishes last. The issue order
 * is read from the copies the run asked for (common/copylog.h) and the grader's own launcher, which notes where
 * each kernel falls among them: depth-first and breadth-first each have one exact order, and chunk c goes on
 * stream c mod S (the same stream in every run), over 1 to 32 streams, chunk sizes from 1 word and lengths at
 * multiples of a chunk and +-1; no stream waits for another's event, a kernel's buffers in and out do not overlap,
 * and chunks on different streams share no device memory; two pipelines alive at once share nothing, and one keeps
 * working once the other is destroyed. Every refused create says why in one line on stderr.
 * Overlap is read from a trace of the student's own run: every cudaMemcpyAsync is recorded on its stream (the
 * grader is linked with --wrap=cudaMemcpyAsync, common/tracecopy.c) and every kernel by the kit's launcher.
 * Speed is an efficiency against the kit's sequential run and an ideal that respects the link's duplex limit,
 * all measured in the same run; the kit's buffers for measuring the link are allocated once per test.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/copylog.h"
#include "common/delay.h"
#include "common/devmem.h"
#include "common/gpu.h"
#include "common/rescount.h"
#include "common/stats.h"
#include "common/timeline.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "grader/results.h"
#include "labs/05-stream-pipelining/lab.h"
#include "labs/05-stream-pipelining/workload.h"

XL_LAB("05", "stream-pipelining");

#define ITEMS ((size_t)32 << 20)        /* the speed and trace runs: 128 MiB each way */
#define CHUNK ((size_t)2 << 20)         /* 8 MiB chunks: 16 of them */
#define STREAMS 4
#define CREATE_SLACK_BYTES ((size_t)1 << 20) /* device memory a pipeline may hold beyond its 2 chunks per stream */
#define HOSTFN_NS 300000000ull  /* an unrelated host function on another stream, beside which a run is timed */
#define CALIB_ITEMS (ITEMS / 4)         /* the trace tests set the kernel's work from a 32 MiB copy in: pinned, it runs
                                         * within 0.3% (H100) and 1.2% (H200) of the 128 MiB rate (refdata/02) */
#define KERNEL_SHARE 0.6                /* the kernels take 0.6 of the copy in: the link is the busiest stage */
#define EFF_NEED 0.8                    /* (T_seq - T) / (T_seq - T_ideal) */
#define BOTH_WAYS_NEED 30               /* %: time with copies in and out at once / the shorter of the two */
#define KERNEL_OVERLAP_NEED 50          /* %: time kernels ran beside a copy / the kernels' time */
/* Efficiency above 1 means the ideal was pessimistic in that grading (the duplex rate measured low). One stream,
 * the legacy stream and a wait per chunk lose the speed and trace tests on both GPUs. Tried and undone: measuring
 * the link between the timed runs (its own pinned buffers allocated and freed each round) spread the reference's
 * own times wider. The reference's figures and margins on the H100 and H200: refdata/stability/
 * (docs/instructors.md's table). */

/* ===== Helpers ===== */

/* new_pipeline - lab_pipeline_create, which must succeed, holding exactly `streams` streams */
static lab_pipeline *new_pipeline(size_t chunk_items, int streams)
{
    static xl_sync_rec syncs[64];
    xl_resources was = xl_resources_now();
    long held = was.streams;
    xl_pinned pin0 = xl_pinned_now();
    xl_synclog_start(syncs, 64);
    lab_pipeline *p = lab_pipeline_create(chunk_items, streams);
    int nsyncs = xl_synclog_stop();
    xl_pinned pin1 = xl_pinned_now();
    cr_assert(p != NULL, "lab_pipeline_create(%zu words, %d streams) returned NULL (see its message above): lab.h "
              "takes any chunk_items >= 1 and 1 to 32 streams, and refuses only when out of memory", chunk_items,
              streams);
    long made = xl_resources_now().streams - held;
    cr_assert(made == streams, "lab_pipeline_create(%zu words, %d streams) holds %ld streams once it returns: lab.h "
              "asks for a pipeline of `streams` streams, no more and no fewer", chunk_items, streams, made);
    char what[96];
    snprintf(what, sizeof what, "lab_pipeline_create(%zu words, %d streams)", chunk_items, streams);
    /* lab.h: it queues nothing on the legacy stream, and its streams wait for none of the caller's work there */
    kit_expect_no_device_sync(syncs, nsyncs < 64 ? nsyncs : 64, what);
    for (int i = 0; i < nsyncs && i < 64; i++)
        cr_assert(syncs[i].kind != XL_SYNC_WAIT_EVENT, "%s made one of its streams wait for an event "
                  "(cudaStreamWaitEvent): lab.h: its streams wait for none of the caller's earlier work (on the "
                  "legacy stream or elsewhere); each run's copies order themselves", what);
    /* lab.h: it pins no host memory (the caller's arrays come from lab_host_alloc) */
    cr_assert(pin1.allocations == pin0.allocations && pin1.registrations == pin0.registrations,
              "%s holds %ld pinned allocations (%zu bytes) and %ld registrations more once it returns: lab.h: a "
              "pipeline pins no host memory (pinned memory is scarce, and the caller's arrays are pinned already)",
              what, pin1.allocations - pin0.allocations, pin1.alloc_bytes - pin0.alloc_bytes,
              pin1.registrations - pin0.registrations);
    /* lab.h: one chunk in and one chunk out of device memory per stream */
    size_t grew = xl_resources_now().dev_bytes - was.dev_bytes, need = 2 * (size_t)streams * chunk_items * 4;
    cr_assert(grew <= need + CREATE_SLACK_BYTES, "%s holds %zu bytes of device memory more once it returns: lab.h "
              "allows one chunk in and one chunk out per stream, %zu bytes (each stream's own order keeps its chunks "
              "in sequence: no second buffer is needed)", what, grew, need);
    return p;
}

/* host_array - n words from lab_host_alloc (with 16 guard words after them), which must succeed; poisoned */
static uint32_t *host_array(size_t n)
{
    uint32_t *p = lab_host_alloc((n + 16) * sizeof(uint32_t));
    cr_assert(p != NULL, "lab_host_alloc(%zu bytes) returned NULL", (n + 16) * sizeof(uint32_t));
    xl_poison(p, (n + 16) * sizeof(uint32_t));
    return p;
}

/* host_input - n words from lab_host_alloc (and 16 guard words), filled with fresh random words */
static uint32_t *host_input(size_t n)
{
    uint32_t *p = lab_host_alloc((n + 16) * sizeof(uint32_t));
    cr_assert(p != NULL, "lab_host_alloc(%zu bytes) returned NULL", (n + 16) * sizeof(uint32_t));
    xl_fill_random(p, n * sizeof(uint32_t), xl_fresh_seed());
    xl_poison(p + n, 16 * sizeof(uint32_t));
    return p;
}

/* expect_out - out[i] == f(in[i]) for every word, and the guard after out untouched */
static void expect_out(const uint32_t *in, const uint32_t *out, size_t n, const char *what)
{
    size_t i = 0;
    while (i < n && out[i] == wl_transform(in[i]))
        i++;
    if (i < n) {
        int never = xl_check_poison(&out[i], sizeof out[i], NULL) == 0;
        cr_fatal("%s: word %zu of %zu is wrong (0x%08x, expected 0x%08x)%s", what, i, n, out[i], wl_expected(in[i]),
                never ? ": it never arrived (did lab_pipeline_run return before the copy out of its chunk? wait for "
                        "every stream that has work)"
                      : ": its kernel read other data (was its device buffer overwritten first?)");
    }
    cr_assert(xl_check_poison(out + n, 16 * sizeof(uint32_t), NULL) == 0, "%s: wrote past the end of out", what);
}

/* ===== The issue order: what lab_pipeline_run asked for, in order ===== */

#define MAX_STEPS 4096       /* copies, and launches, recorded in one run */
#define HOLD_NS 25000000ull  /* a held-back chunk's extra GPU work: it finishes last, long after the others */
#define LEGACY_BUSY_NS 20000000ull /* work pending on the legacy default stream while a pipeline is made: */
#define WINDOW_NS 40000000ull      /* and, in its first run, one chunk's kernel or copy out held back this long on its
                                    * stream, so that anything the create queued on the legacy stream lands between
                                    * that chunk's copy in and kernel, or kernel and copy out */

/* One kernel launch, as the grader's launcher saw it. */
typedef struct {
    int after;            /* copies asked for before it (xl_copylog_count) */
    const uint32_t *din;
    uint32_t *dout;
    size_t items;
    cudaStream_t stream;
} launch_rec;

/* The grader's lab_kernel: notes each launch among the copies, holds back the chosen launch with hold_ns of GPU
 * work queued before it on its stream (or its copy out, with the work queued after it), then launches the kit's
 * kernel. Runs in turn bring one of two launch functions and a ctx of their own (run_tokens): a run that launches
 * with an earlier run's k is caught. */
typedef struct {
    wl_kernel_ctx kc;
    lab_kernel kit;
    launch_rec recs[MAX_STEPS];
    int n;
    int hold;         /* the launch to hold back, by number; -1: none */
    uint64_t hold_ns; /* for that long */
    int hold_after;   /* 1: the work is queued after the kernel, holding back its copy out; 0: before it */
    int foreign;      /* launches given another ctx than k->ctx, not an earlier run's */
    int stale;        /* launches with the launch function or the ctx of an earlier run's k */
    int runs;         /* runs so far: run r's k is {r % 2 ? rec_launch_b : rec_launch, &run_tokens[r % 8]} */
    int want_b;
    const void *want_ctx;
} rec_kernel;

static rec_kernel rk; /* the one launcher; rec_launch finds it even when handed a wrong ctx */
static unsigned char run_tokens[8]; /* the ctx of each run's k: never that of the run before */

/* legacy_busy_fn - a host function that holds the legacy default stream LEGACY_BUSY_NS (wall time) */
static void CUDART_CB legacy_busy_fn(void *arg)
{
    struct timespec t = {0, (long)LEGACY_BUSY_NS};
    (void)arg;
    while (nanosleep(&t, &t) != 0) {
    }
}

/* legacy_busy - queues LEGACY_BUSY_NS of waiting on the legacy default stream: work queued there after it (by
 * anyone) runs once it ends. A host function, not a kernel: a kernel would hold a multiprocessor, and the kit's kernel
 * needs every one, so the pipeline's first kernel would wait for it too. */
static void legacy_busy(void)
{
    XL_CHECK(cudaLaunchHostFunc(cudaStreamLegacy, legacy_busy_fn, NULL));
}

/* rec_note - the launch of rec_launch (b 0) or rec_launch_b (b 1), noted, held back as asked, then made */
static void rec_note(int b, const uint32_t *dev_in, uint32_t *dev_out, size_t items, cudaStream_t stream, void *ctx)
{
    const unsigned char *c = ctx;
    if (b != rk.want_b || (ctx != rk.want_ctx && c >= run_tokens && c < run_tokens + sizeof run_tokens))
        rk.stale++;
    else if (ctx != rk.want_ctx)
        rk.foreign++;
    if (rk.n < MAX_STEPS)
        rk.recs[rk.n] = (launch_rec){xl_copylog_count(), dev_in, dev_out, items, stream};
    int held = rk.n == rk.hold;
    if (held && !rk.hold_after)
        xl_delay(stream, rk.hold_ns);
    rk.n++;
    rk.kit.launch(dev_in, dev_out, items, stream, rk.kit.ctx);
    if (held && rk.hold_after)
        xl_delay(stream, rk.hold_ns);
}

/* rec_launch, rec_launch_b - lab_kernel.launch of the grader's launcher, as two runs in a row bring it */
static void rec_launch(const uint32_t *dev_in, uint32_t *dev_out, size_t items, cudaStream_t stream, void *ctx)
{
    rec_note(0, dev_in, dev_out, items, stream, ctx);
}
static void rec_launch_b(const uint32_t *dev_in, uint32_t *dev_out, size_t items, cudaStream_t stream, void *ctx)
{
    rec_note(1, dev_in, dev_out, items, stream, ctx);
}

/* One step of a run: a copy in, a kernel, a copy out, or another copy. */
enum { STEP_IN, STEP_KERNEL, STEP_OUT, STEP_OTHER };
typedef struct {
    int kind;
    const char *host;    /* a copy's host end */
    const char *dev;     /* a copy's device end; a kernel's dev_in */
    const char *dev_out; /* a kernel's dev_out */
    size_t size;         /* a copy's bytes; a kernel's words */
    cudaStream_t stream;
    int blocking;        /* a cudaMemcpy, not cudaMemcpyAsync */
} step;

/* What the runs of one pipeline showed: its stream number i (0 to streams - 1) is the stream chunk i went on, in
 * every run; din, dout and bytes: where the latest run's chunk i read and wrote on the device. */
typedef struct {
    cudaStream_t s[32];
    const char *din[32], *dout[32];
    size_t bytes[32];
    int known; /* stream numbers seen so far, 0 to known - 1 */
} pipe_seen;

/* What a run was asked to do, for checking and for messages. */
typedef struct {
    lab_order order;
    int streams;
    size_t chunk, items;
    const uint32_t *in;
    uint32_t *out;
    char what[512];
    pipe_seen *seen; /* the pipeline's, kept across its runs */
    const char *note; /* added to what: which pipeline, when two are alive; NULL: nothing */
    uint32_t *keep;  /* not NULL: room for items + 16 words, where in is kept to find a run that writes it */
    int window;      /* 1 + the chunk held back WINDOW_NS in the first run of a pipeline made beside LEGACY_BUSY_NS of
                      * work on the legacy stream; 0: none */
    int window_after; /* 1: its copy out is held back (the work queued after its kernel); 0: its kernel */
} run_spec;

/* chunk_words - how many words chunk c of r holds */
static size_t chunk_words(const run_spec *r, size_t c)
{
    size_t first = c * r->chunk;
    return r->items - first < r->chunk ? r->items - first : r->chunk;
}

/* overlaps - 1 when the na bytes at a and the nb bytes at b share one */
static int overlaps(const char *a, size_t na, const char *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + nb && y < x + na;
}

/* not_device_memory - NULL when p lies in device memory (cudaMalloc's, at its start or inside it), else what it is,
 * in words for a message: managed memory (xl_buffer_kind names its flags), pinned or pageable host memory */
static const char *not_device_memory(const void *p)
{
    unsigned int flags = 0;
    if (xl_buffer_kind(p, &flags) == XL_ALLOC_MANAGED)
        return flags == cudaMemAttachHost ? "managed memory (cudaMallocManaged, cudaMemAttachHost)"
                                          : "managed memory (cudaMallocManaged)";
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return "memory the CUDA runtime does not know";
    }
    switch (a.type) {
    case cudaMemoryTypeDevice:
        return NULL;
    case cudaMemoryTypeManaged:
        return "managed memory (cudaMallocManaged)";
    case cudaMemoryTypeHost:
        return "pinned host memory";
    default:
        return "pageable host memory";
    }
}

/* describe - one step as the student asked for it, in words of in and out */
static void describe(const run_spec *r, const step *s, char *buf, size_t len)
{
    uintptr_t in = (uintptr_t)r->in, out = (uintptr_t)r->out, h = (uintptr_t)s->host;
    switch (s->kind) {
    case STEP_IN:
        if (h >= in && h <= in + r->items * sizeof(uint32_t))
            snprintf(buf, len, "a copy in of %zu bytes from word %zu", s->size, (size_t)(h - in) / 4);
        else
            snprintf(buf, len, "a copy in of %zu bytes from %p, outside `in`", s->size, (const void *)s->host);
        break;
    case STEP_OUT:
        if (h >= out && h <= out + r->items * sizeof(uint32_t))
            snprintf(buf, len, "a copy out of %zu bytes to word %zu", s->size, (size_t)(h - out) / 4);
        else
            snprintf(buf, len, "a copy out of %zu bytes to %p, outside `out`", s->size, (const void *)s->host);
        break;
    case STEP_KERNEL:
        snprintf(buf, len, "a kernel launch of %zu words", s->size);
        break;
    default:
        snprintf(buf, len, "a copy of %zu bytes that is neither in nor out (device to device, or host to host)",
                 s->size);
    }
}

/* steps_of - the run's copies and launches as steps, in the order asked for; pieces of one copy asked for one
 * after the other (same direction, stream, contiguous) count as one. Returns how many. */
static int steps_of(const xl_copy_rec *copies, int ncopies, const launch_rec *launches, int nlaunches, step *steps)
{
    int n = 0, li = 0;
    for (int ci = 0; ci <= ncopies; ci++) {
        for (; li < nlaunches && (launches[li].after <= ci || ci == ncopies); li++)
            steps[n++] = (step){STEP_KERNEL, NULL, (const char *)launches[li].din, (const char *)launches[li].dout,
                                launches[li].items, launches[li].stream, 0};
        if (ci == ncopies)
            break;
        const xl_copy_rec *c = &copies[ci];
        enum cudaMemcpyKind dir = xl_copy_dir(c);
        step s = {STEP_OTHER, NULL, NULL, NULL, c->bytes, c->stream, !c->async};
        if (dir == cudaMemcpyHostToDevice)
            s.kind = STEP_IN, s.host = c->src, s.dev = c->dst;
        else if (dir == cudaMemcpyDeviceToHost)
            s.kind = STEP_OUT, s.host = c->dst, s.dev = c->src;
        step *prev = n ? &steps[n - 1] : NULL;
        if (prev && s.kind != STEP_OTHER && prev->kind == s.kind && prev->stream == s.stream &&
            prev->blocking == s.blocking && prev->host + prev->size == s.host && prev->dev + prev->size == s.dev)
            prev->size += s.size;
        else
            steps[n++] = s;
    }
    return n;
}

/* expect_issue_order - the steps are exactly, in order, those of r's order: depth-first copy in, kernel and copy
 * out of chunk 0, then of chunk 1, ...; breadth-first, a round of `streams` chunks at a time, every copy in, then
 * every kernel, then every copy out. Each kernel reads where its chunk's copy in wrote, each copy out reads what
 * its kernel wrote. Chunk c's steps all go on one stream of the pipeline's own, that of chunk c - streams, and
 * chunks less than `streams` apart on different ones. */
static void expect_issue_order(const run_spec *r, const step *st, int nst)
{
    static cudaStream_t stream_of[MAX_STEPS];
    static const char *din_of[MAX_STEPS], *dout_of[MAX_STEPS];
    size_t chunks = (r->items + r->chunk - 1) / r->chunk, S = (size_t)r->streams;
    const char *rule = r->order == LAB_DEPTH_FIRST
                           ? "depth-first issues chunk by chunk: copy in, kernel, copy out of chunk c, then of chunk c+1"
                           : "breadth-first issues a round of `streams` chunks stage by stage: the copies in of the "
                             "round's chunks, then their kernels, then their copies out, then the next round";
    static const char *const stage[] = {"copy in", "kernel", "copy out"};
    char saw[160];
    int j = 0;
    for (size_t round = 0; round < chunks; round += r->order == LAB_DEPTH_FIRST ? 1 : S) {
        size_t end = r->order == LAB_DEPTH_FIRST ? round + 1 : (round + S < chunks ? round + S : chunks);
        for (int k = STEP_IN; k <= STEP_OUT; k++)
            for (size_t c = round; c < end; c++, j++) {
                size_t first = c * r->chunk, n = chunk_words(r, c);
                cr_assert(j < nst,
                          "%s: lab_pipeline_run asked for %d copies and kernels, and it needs %zu (3 for each of %zu "
                          "chunks): chunk %zu's %s is missing",
                          r->what, nst, 3 * chunks, chunks, c, stage[k]);
                const step *s = &st[j];
                int ok = s->kind == k;
                if (ok && k == STEP_IN)
                    ok = s->host == (const char *)(r->in + first) && s->size == n * sizeof(uint32_t);
                if (ok && k == STEP_KERNEL)
                    ok = s->size == n && s->dev == din_of[c];
                if (ok && k == STEP_OUT)
                    ok = s->host == (const char *)(r->out + first) && s->size == n * sizeof(uint32_t) &&
                         s->dev == dout_of[c];
                if (!ok) {
                    describe(r, s, saw, sizeof saw);
                    if (s->kind == k && k == STEP_KERNEL && s->size == n)
                        cr_fatal("%s: chunk %zu's kernel reads device memory %p, but its copy in went to %p",
                                r->what, c, (const void *)s->dev, (const void *)din_of[c]);
                    if (s->kind == k && k == STEP_OUT && s->size == n * sizeof(uint32_t) &&
                        s->host == (const char *)(r->out + first))
                        cr_fatal("%s: chunk %zu's copy out reads device memory %p, but its kernel wrote to %p",
                                r->what, c, (const void *)s->dev, (const void *)dout_of[c]);
                    cr_fatal("%s: step %d (counting copies and kernel launches from 0) should be chunk %zu's %s (words "
                            "%zu to %zu), but it was %s. The order: %s",
                            r->what, j, c, stage[k], first, first + n - 1, saw, rule);
                }
                if (k == STEP_IN)
                    stream_of[c] = s->stream, din_of[c] = s->dev;
                else if (k == STEP_KERNEL)
                    dout_of[c] = s->dev_out;
                cr_assert(s->blocking == 0, "%s: chunk %zu's %s is a cudaMemcpy, which runs on the legacy default stream "
                          "and blocks the host: use cudaMemcpyAsync on the chunk's stream", r->what, c, stage[k]);
                cr_assert(s->stream == stream_of[c],
                          "%s: chunk %zu's %s went on another stream than its copy in: a chunk's copy in, kernel and "
                          "copy out go on one stream, whose order keeps them in sequence",
                          r->what, c, stage[k]);
            }
    }
    if (j < nst) {
        describe(r, &st[j], saw, sizeof saw);
        cr_fatal("%s: after the last chunk's steps (%zu chunks, 3 steps each) lab_pipeline_run asked for %d more, "
                "the first %s: chunk c is words [c * chunk_items, ...), the last one shorter, and there are "
                "ceil(items / chunk_items) of them",
                r->what, chunks, nst - j, saw);
    }
    for (size_t c = 0; c < chunks; c++) {
        cr_assert(stream_of[c] != 0 && stream_of[c] != cudaStreamLegacy && stream_of[c] != cudaStreamPerThread,
                  "%s: chunk %zu went on the default stream: every copy and kernel goes on the pipeline's own streams",
                  r->what, c);
        if (c >= S)
            cr_assert(stream_of[c] == stream_of[c - S],
                      "%s: chunk %zu went on another stream than chunk %zu, %d chunks before it: chunk c goes on stream "
                      "c mod streams, so each stream's order keeps its device buffers safe",
                      r->what, c, c - S, r->streams);
        else
            for (size_t e = 0; e < c; e++)
                cr_assert(stream_of[c] != stream_of[e],
                          "%s: chunks %zu and %zu went on the same stream, but chunk c goes on stream c mod %d: are all "
                          "%d streams created and used?",
                          r->what, e, c, r->streams, r->streams);
    }
    /* device memory: a kernel writes no word it reads, and chunks on different streams (less than S apart) share
     * none, since nothing orders one stream's copies before another's kernel */
    static const char *const buf[] = {"device buffer in", "device buffer out"};
    for (size_t c = 0; c < chunks; c++) {
        size_t bc = chunk_words(r, c) * sizeof(uint32_t);
        const char *mc[2] = {din_of[c], dout_of[c]};
        cr_assert(overlaps(mc[0], bc, mc[1], bc) == 0,
                  "%s: chunk %zu's kernel reads %zu bytes at %p and writes them at %p, which overlap: lab_kernel "
                  "reads dev_in and writes dev_out, two separate buffers (f is not computed in place)",
                  r->what, c, bc, (const void *)mc[0], (const void *)mc[1]);
        for (size_t e = c >= S ? c - S + 1 : 0; e < c; e++) {
            size_t be = chunk_words(r, e) * sizeof(uint32_t);
            const char *me[2] = {din_of[e], dout_of[e]};
            for (int x = 0; x < 2; x++)
                for (int y = 0; y < 2; y++)
                    cr_assert(overlaps(me[x], be, mc[y], bc) == 0,
                              "%s: chunks %zu and %zu, on different streams, share device memory: chunk %zu's %s (%zu "
                              "bytes at %p) overlaps chunk %zu's %s (%zu bytes at %p). Each stream has device buffers "
                              "of its own: nothing orders one stream's copies after another stream's kernel",
                              r->what, e, c, e, buf[x], be, (const void *)me[x], c, buf[y], bc, (const void *)mc[y]);
        }
    }
    /* each stream's buffers are device memory: managed pages migrate on demand, host memory crosses the link at
     * every access of the kernel */
    for (size_t c = 0; c < chunks && c < S; c++)
        for (int x = 0; x < 2; x++) {
            const char *kind = not_device_memory(x ? dout_of[c] : din_of[c]);
            cr_assert(kind == NULL, "%s: chunk %zu's %s (at %p) is %s: each stream's buffers in and out are device "
                      "memory, from cudaMalloc (lab.h)", r->what, c, buf[x], (const void *)(x ? dout_of[c] : din_of[c]),
                      kind);
        }
    /* the pipeline's streams, numbered by the chunks: chunk c on its stream c mod S in every run */
    pipe_seen *m = r->seen;
    for (size_t c = 0; m && c < chunks && c < S; c++) {
        if ((int)c < m->known)
            cr_assert(stream_of[c] == m->s[c],
                      "%s: chunk %zu went on another stream than in this pipeline's earlier runs: chunk c goes on the "
                      "pipeline's stream c mod streams, the same stream in every run (does something carry over from "
                      "one run to the next, or from another pipeline?)",
                      r->what, c);
        else
            m->s[c] = stream_of[c], m->known = (int)c + 1;
        m->din[c] = din_of[c], m->dout[c] = dout_of[c], m->bytes[c] = chunk_words(r, c) * sizeof(uint32_t);
    }
}

/* stream_number - s's number in r's pipeline (the chunk that first went on it), or -1 */
static int stream_number(const run_spec *r, cudaStream_t s)
{
    for (int i = 0; r->seen && i < r->seen->known; i++)
        if (r->seen->s[i] == s)
            return i;
    return -1;
}

/* expect_streams_independent - no stream waits for another's work: every cudaStreamWaitEvent among the n recorded
 * calls (common/synclog.h) waits for an event last recorded, in this run, on the stream that waits (such a wait
 * holds nothing up) or not at all in this run (the last run waited for every stream before it returned) */
static void expect_streams_independent(const run_spec *r, const xl_sync_rec *recs, int n)
{
    for (int i = 0; i < n; i++) {
        if (recs[i].kind != XL_SYNC_WAIT_EVENT)
            continue;
        int j = i - 1;
        while (j >= 0 && !(recs[j].kind == XL_SYNC_RECORD && recs[j].event == recs[i].event))
            j--;
        if (j < 0 || kit_same_stream(recs[j].stream, recs[i].stream))
            continue;
        int w = stream_number(r, recs[i].stream), e = stream_number(r, recs[j].stream);
        char ws[64], es[64];
        if (w >= 0)
            snprintf(ws, sizeof ws, "its stream %d", w);
        else
            snprintf(ws, sizeof ws, "stream %p", (void *)recs[i].stream);
        if (e >= 0)
            snprintf(es, sizeof es, "its stream %d", e);
        else
            snprintf(es, sizeof es, "stream %p", (void *)recs[j].stream);
        cr_fatal("%s: lab_pipeline_run made %s wait (cudaStreamWaitEvent) for an event recorded on %s: chunks on "
                 "different streams never wait for each other. A stream's own order keeps its chunk's copy in, kernel "
                 "and copy out in sequence (and the GPU runs one kit kernel at a time by itself); a wait between "
                 "streams makes every chunk after a slow one wait for it too",
                 r->what, ws, es);
    }
}

/* expect_default_priority - every stream among the n recorded copies has the default (least) priority: a pipeline's
 * kernels fill the GPU, so streams of a greater priority hold back other work that shares the device */
static void expect_default_priority(const run_spec *r, const xl_copy_rec *copies, int n)
{
    int least = 0, greatest = 0;
    XL_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (int i = 0; i < n; i++) {
        int prio = least;
        if (!copies[i].async || copies[i].stream == 0 || (i > 0 && copies[i].stream == copies[i - 1].stream))
            continue;
        if (cudaStreamGetPriority(copies[i].stream, &prio) != cudaSuccess) {
            cudaGetLastError();
            continue; /* not a stream the runtime knows: the stream checks say so */
        }
        int w = stream_number(r, copies[i].stream);
        cr_assert(prio == least, "%s: lab_pipeline_run's stream %d has priority %d, not the default %d: other work "
                  "shares the device, and the pipeline's kernels (which fill the GPU) would be scheduled ahead of it. "
                  "lab.h: make the streams with the default priority (cudaStreamCreateWithFlags)",
                  r->what, w, prio, least);
    }
}

/* run_checked - one run of r on p, fresh input, poisoned output, chunk `hold`'s kernel (-1: none) held back:
 * every word right as soon as lab_pipeline_run returns, then the issue order, the streams (as in p's earlier runs)
 * and the device buffers, nothing more held after the run than before it (an event or stream made in the run and
 * never released), and among the waits it asked for (common/synclog.h) none for the whole device or the legacy
 * stream, and none of one of its streams for another */
static void run_checked(lab_pipeline *p, run_spec *r, uint32_t *in, uint32_t *out, int hold)
{
    static xl_copy_rec copies[MAX_STEPS];
    static xl_sync_rec syncs[MAX_STEPS];
    static step steps[2 * MAX_STEPS];
    int b = ++rk.runs % 2; /* every run brings a k of its own: another launch function and ctx than the run before */
    lab_kernel k = {b ? rec_launch_b : rec_launch, &run_tokens[rk.runs % 8]};
    const lab_kernel given = k;
    rk.want_b = b, rk.want_ctx = k.ctx;
    r->in = in, r->out = out;
    snprintf(r->what, sizeof r->what, "%s, %d streams, chunks of %zu words, %zu words",
             r->order == LAB_DEPTH_FIRST ? "depth-first" : "breadth-first", r->streams, r->chunk, r->items);
    if (hold >= 0)
        snprintf(r->what + strlen(r->what), sizeof r->what - strlen(r->what),
                 ", chunk %d held back %.0f ms on its stream (stream %d of %d) so that it finishes last", hold,
                 HOLD_NS * 1e-6, hold % r->streams, r->streams);
    if (r->note)
        snprintf(r->what + strlen(r->what), sizeof r->what - strlen(r->what), ", %s", r->note);
    if (r->window)
        snprintf(r->what + strlen(r->what), sizeof r->what - strlen(r->what), ", its first run, the pipeline made "
                 "beside %.0f ms of work on the legacy stream and chunk %d's %s held back %.0f ms",
                 LEGACY_BUSY_NS * 1e-6, r->window - 1, r->window_after ? "copy out" : "kernel", WINDOW_NS * 1e-6);
    if (in == out)
        snprintf(r->what + strlen(r->what), sizeof r->what - strlen(r->what), ", in place (out == in)");
    if (in == out) /* in place: only the guard after the array is poisoned, before the input is kept */
        xl_poison(out + r->items, 16 * sizeof(uint32_t));
    xl_fill_random(in, r->items * sizeof(uint32_t), xl_fresh_seed());
    if (r->keep)
        memcpy(r->keep, in, (r->items + 16) * sizeof(uint32_t));
    if (in != out)
        xl_poison(out, (r->items + 16) * sizeof(uint32_t));
    rk.n = 0, rk.foreign = 0, rk.stale = 0, rk.hold = hold, rk.hold_ns = HOLD_NS, rk.hold_after = 0;
    if (r->window)
        rk.hold = r->window - 1, rk.hold_ns = WINDOW_NS, rk.hold_after = r->window_after;
    kit_held before = kit_held_now();
    xl_copylog_start(copies, MAX_STEPS);
    xl_synclog_start(syncs, MAX_STEPS);
    int rc = lab_pipeline_run(p, in, out, r->items, r->order, &k);
    int nsyncs = xl_synclog_stop();
    int ncopies = xl_copylog_stop();
    xl_expect_ok(rc, "lab_pipeline_run");
    expect_out(in == out ? r->keep : in, out, r->items, r->what); /* at once: a held-back chunk lands last */
    kit_expect_released(before, r->what);
    cr_assert(k.launch == given.launch && k.ctx == given.ctx, "%s: lab_pipeline_run changed *k, the caller's const "
              "lab_kernel: read it only", r->what);
    if (r->keep && in != out) {
        size_t w = 0;
        while (w < r->items + 16 && in[w] == r->keep[w])
            w++;
        cr_assert(w == r->items + 16, "%s: lab_pipeline_run wrote into in (word %zu%s), the caller's const input: "
                  "read it only", r->what, w, w >= r->items ? ", past its items words" : "");
    }
    cr_assert(ncopies <= MAX_STEPS && rk.n <= MAX_STEPS, "%s: %d copies and %d kernel launches, far more than 3 per chunk",
              r->what, ncopies, rk.n);
    cr_assert(rk.stale == 0, "%s: %d kernel launches used the lab_kernel of an earlier run, not this run's k: launch "
              "with the k (launch and ctx) each run is given, never one kept from before", r->what, rk.stale);
    cr_assert(rk.foreign == 0, "%s: k->launch was called %d times with another ctx than k->ctx: pass k->ctx on, the "
              "kernel needs it", r->what, rk.foreign);
    /* every copy and kernel asked for before any wait on the host: a wait mid-run holds back the issue of every later
     * chunk, on every stream, behind the one it waits for */
    for (int i = 0; i < nsyncs && i < MAX_STEPS; i++) {
        xl_sync_kind kind = syncs[i].kind;
        if ((kind == XL_SYNC_DEVICE || kind == XL_SYNC_STREAM || kind == XL_SYNC_EVENT) &&
            syncs[i].copies_before < ncopies)
            cr_fatal("%s: lab_pipeline_run waited on the host (%s) after asking for %d of its %d copies: ask for "
                     "every chunk's copies and kernel first, then wait for your streams (lab.h). A wait mid-run holds "
                     "back the issue of every later chunk, on every stream, behind the one it waits for; each stream's "
                     "own order already keeps its buffers safe",
                     r->what, xl_sync_name(kind), syncs[i].copies_before, ncopies);
    }
    expect_issue_order(r, steps, steps_of(copies, ncopies, rk.recs, rk.n, steps));
    /* lab.h: non-blocking streams of the default priority (a blocking one waits for the legacy stream's work) */
    kit_expect_nonblocking_streams(copies, ncopies < MAX_STEPS ? ncopies : MAX_STEPS, r->what);
    expect_default_priority(r, copies, ncopies < MAX_STEPS ? ncopies : MAX_STEPS);
    /* lab.h: it waits for this pipeline's streams only, in either order */
    kit_expect_no_device_sync(syncs, nsyncs < MAX_STEPS ? nsyncs : MAX_STEPS, r->what);
    expect_streams_independent(r, syncs, nsyncs < MAX_STEPS ? nsyncs : MAX_STEPS);
}

/* expect_apart - pipelines a and b, both alive, share no stream and no device memory (what they showed in their
 * latest runs, each of which used all its streams); what names them */
static void expect_apart(const pipe_seen *a, const pipe_seen *b, const char *what)
{
    for (int i = 0; i < a->known; i++)
        for (int j = 0; j < b->known; j++) {
            cr_assert(a->s[i] != b->s[j],
                      "%s: the second pipeline's stream %d is the first's stream %d: each pipeline has streams of its "
                      "own (is something kept in a static or global variable, shared by every pipeline?)",
                      what, j, i);
            const char *ma[2] = {a->din[i], a->dout[i]}, *mb[2] = {b->din[j], b->dout[j]};
            for (int x = 0; x < 2; x++)
                for (int y = 0; y < 2; y++)
                    cr_assert(overlaps(ma[x], a->bytes[i], mb[y], b->bytes[j]) == 0,
                              "%s: the second pipeline's stream %d uses device memory at %p that the first's stream %d "
                              "uses too (at %p): each pipeline has device buffers of its own (is something kept in a "
                              "static or global variable?)",
                              what, j, (const void *)mb[y], i, (const void *)ma[x]);
        }
}

/* check_order - for 1, 3, 4, 32 and a random 3 to 8 streams with random chunk sizes, and a random 1 to 32 streams
 * with chunks of 1 word: exact results right away, the issue order of `order` and the streams, for lengths at
 * exact multiples of the chunk, one word more or less, under one chunk and over several rounds; twice, a chunk
 * held back to finish last; then two pipelines alive at once, run in turn, the first destroyed before the second's
 * last run */
static void check_order(lab_order order)
{
    enum { MAX_WORDS = 1 << 21, NITEMS = 6 };
    /* sr <= 8: no two of its streams share one of the GPU's 8 hardware queues (CUDA_DEVICE_MAX_CONNECTIONS), where
     * work queued behind the held-back chunk would wait for it too */
    int sr = (int)kit_rand_int(3, 8), s1 = (int)kit_rand_int(1, 32);
    size_t cr = (size_t)kit_rand_int(2, 8191), c32 = (size_t)kit_rand_int(2, 16383);
    size_t m = (size_t)kit_rand_int(sr + 1, 3 * sr);
    if (m % (size_t)sr == (size_t)sr - 1)
        m++; /* the last chunk (number m) off the held-back stream sr - 1 */
    const struct {
        int streams;
        size_t chunk;
        size_t items[NITEMS]; /* 0 ends the list */
        int hold_at;          /* the run (index into items) in which chunk `hold` is held back; -1: none */
        int hold;
    } configs[] = {
        {1, 4097, {1, 4096, 4097, 3 * 4097, 3 * 4097 + 5, (1u << 20) + 7}, -1, -1},
        {3, 1u << 18, {4096, 1u << 20, (1u << 20) - 1, (1u << 20) + 1, (1u << 20) + 7}, -1, -1},
        /* 256 chunks, the last on stream 3; chunk 0 (stream 0) finishes last: a wait for every stream but the first,
         * or for the last stream only (the last chunk's), returns before it lands */
        {4, 4097, {3 * 4097 + 5, 8 * 4097, 8 * 4097 - 1, 8 * 4097 + 1, (1u << 20) + 7}, 4, 0},
        {32, c32, {(size_t)kit_rand_int(1, (long)c32 - 1), 32 * c32, 32 * c32 - 1, 32 * c32 + 1, 65 * c32}, -1, -1},
        /* m + 1 chunks, the last on stream m mod sr, not sr - 1; chunk sr - 1 (the last stream) finishes last: a wait
         * for every stream but the last, or for the last chunk's, or stream 0's, returns before it lands */
        {sr, cr, {(size_t)kit_rand_int(1, (long)cr - 1), m * cr, m * cr - 1, m * cr + 1}, 3, sr - 1},
        {s1, 1, {1, (size_t)s1, (size_t)kit_rand_int(s1 + 1, 300)}, -1, -1},
    };
    uint32_t *in = host_array(MAX_WORDS), *out = host_array(MAX_WORDS);
    uint32_t *keep = malloc((MAX_WORDS + 16) * sizeof(uint32_t)); /* in, kept: a run must not write it */
    cr_assert(keep != NULL, "out of memory");
    rk.kit = wl_kernel(&rk.kc);
    (void)kit_held_now(); /* its pinned word made now, not beside the legacy stream's work below (it would wait) */
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        pipe_seen seen = {0};
        /* made while the legacy stream works: anything the create queues there lands during the first run, in the
         * window held open on the last stream that run uses (chunk min(S, chunks) - 1): between copy in and kernel
         * for odd configs, between kernel and copy out for even ones */
        legacy_busy();
        lab_pipeline *p = new_pipeline(configs[i].chunk, configs[i].streams);
        for (int j = 0; j < NITEMS && configs[i].items[j]; j++) {
            run_spec r = {order, configs[i].streams, configs[i].chunk, configs[i].items[j], NULL, NULL, "", &seen, NULL,
                          keep, 0, 0};
            if (j == 0) {
                size_t chunks = (r.items + r.chunk - 1) / r.chunk;
                r.window = 1 + (int)(chunks < (size_t)r.streams ? chunks - 1 : (size_t)r.streams - 1);
                r.window_after = i % 2 == 0;
            }
            run_checked(p, &r, in, out, j == configs[i].hold_at ? configs[i].hold : -1);
        }
        lab_pipeline_destroy(p);
    }
    /* two pipelines alive at once, run in turn: each on streams and buffers of its own, and the second keeps working
     * once the first is destroyed; together they leave nothing held. Each run uses every stream (1 to 3 rounds). */
    int ns[2] = {(int)kit_rand_int(1, 32), (int)kit_rand_int(1, 32)};
    size_t nc[2] = {(size_t)kit_rand_int(1, 4096), (size_t)kit_rand_int(1, 4096)};
    pipe_seen seen[2];
    memset(seen, 0, sizeof seen);
    lab_pipeline *two[2] = {NULL, NULL};
    static const char *const notes[] = {
        "the first of two pipelines alive at once", "the second of two pipelines alive at once",
        "the first of two pipelines alive at once, run again after the second", "the second of two pipelines, "
        "run after the first was destroyed"};
    static const int plan[] = {0, 1, 0, -1, 1}; /* run pipeline 0, 1, 0 again; -1: destroy pipeline 0 */
    char what[256];
    snprintf(what, sizeof what, "%s runs of two pipelines alive at once, (%zu words, %d streams) then (%zu words, %d "
             "streams)", order == LAB_DEPTH_FIRST ? "depth-first" : "breadth-first", nc[0], ns[0], nc[1], ns[1]);
    kit_held h = kit_held_now();
    for (size_t t = 0, runs = 0; t < sizeof plan / sizeof plan[0]; t++) {
        int w = plan[t];
        if (w < 0) {
            lab_pipeline_destroy(two[0]);
            two[0] = NULL;
            continue;
        }
        int made = 0;
        if (!two[w]) { /* made beside work on the legacy stream, its last stream's first copy out held back */
            legacy_busy();
            two[w] = new_pipeline(nc[w], ns[w]);
            made = 1;
        }
        size_t full = nc[w] * (size_t)ns[w];
        run_spec r = {order, ns[w], nc[w], (size_t)kit_rand(full, 3 * full + 1), NULL, NULL, "", &seen[w],
                      notes[runs++], keep, made ? ns[w] : 0, 1};
        run_checked(two[w], &r, in, out, -1);
        if (t == 1)
            expect_apart(&seen[0], &seen[1], what);
    }
    lab_pipeline_destroy(two[1]);
    kit_expect_released(h, what);
    /* in place (out == in, which lab.h allows): each result replaces its input; 1 to 8 streams, over 1 to 3 rounds */
    int sp = (int)kit_rand_int(1, 8);
    size_t cp = (size_t)kit_rand_int(1, 1 << 16), full = cp * (size_t)sp;
    pipe_seen seen_p = {0};
    lab_pipeline *p = new_pipeline(cp, sp);
    run_spec rp = {order, sp, cp, (size_t)kit_rand(full, 3 * full + 1), NULL, NULL, "", &seen_p, NULL, keep, 0, 0};
    run_checked(p, &rp, in, in, -1);
    lab_pipeline_destroy(p);
    /* pageable in and out (malloc'd, which lab.h allows): every copy still on the chunk's own stream, nothing left
     * pinned after the run; 1 to 8 streams over 1 to 3 rounds, then in place */
    sp = (int)kit_rand_int(1, 8);
    cp = (size_t)kit_rand_int(1, 1 << 16), full = cp * (size_t)sp;
    pipe_seen seen_m = {0};
    uint32_t *pg_in = malloc((MAX_WORDS + 16) * sizeof(uint32_t));
    uint32_t *pg_out = malloc((MAX_WORDS + 16) * sizeof(uint32_t));
    cr_assert(pg_in != NULL && pg_out != NULL, "out of memory");
    p = new_pipeline(cp, sp);
    for (int j = 0; j < 2; j++) {
        run_spec rm = {order, sp, cp, (size_t)kit_rand(full, 3 * full + 1), NULL, NULL, "", &seen_m,
                       "in and out pageable (malloc'd)", keep, 0, 0};
        run_checked(p, &rm, pg_in, j ? pg_in : pg_out, -1);
    }
    lab_pipeline_destroy(p);
    free(pg_in);
    free(pg_out);
    lab_host_free(in);
    lab_host_free(out);
    free(keep);
    /* a chunk past 2^24 words (64 MiB) that is no multiple of 2^20, then a short one: any chunk_items is valid, and a
     * chunk copied in pieces keeps its tail */
    int sb = (int)kit_rand_int(1, 2);
    size_t cb = ((size_t)1 << 24) + (size_t)kit_rand(1, ((size_t)1 << 20) - 1), nb = cb + (size_t)kit_rand(1, 4096);
    pipe_seen seen_b = {0};
    in = host_array(nb), out = host_array(nb);
    keep = malloc((nb + 16) * sizeof(uint32_t));
    cr_assert(keep != NULL, "out of memory");
    p = new_pipeline(cb, sb);
    run_spec rb = {order, sb, cb, nb, NULL, NULL, "", &seen_b, NULL, keep, 0, 0};
    run_checked(p, &rb, in, out, -1);
    lab_pipeline_destroy(p);
    lab_host_free(in);
    lab_host_free(out);
    free(keep);
}

/* ===== Part A: the pipeline ===== */

/* create_said - lab_pipeline_create(chunk_items, streams) with its stderr captured, then passed on: what it returned;
 * *lines, the lines it wrote (1 where stderr could not be captured: nothing to judge), and said, their text */
static lab_pipeline *create_said(size_t chunk_items, int streams, int *lines, char *said, size_t len)
{
    int saved = kit_capture_begin();
    lab_pipeline *p = lab_pipeline_create(chunk_items, streams);
    *lines = kit_capture_end(saved, said, len);
    if (saved < 0)
        *lines = 1;
    fputs(said, stderr);
    return p;
}

/* expect_create_refused - lab_pipeline_create(chunk_items, streams) returns NULL with one line on stderr; why says
 * which rule of lab.h the arguments break */
static void expect_create_refused(size_t chunk_items, int streams, const char *why)
{
    char said[512], call[128];
    int lines;
    lab_pipeline *p = create_said(chunk_items, streams, &lines, said, sizeof said);
    if (p)
        lab_pipeline_destroy(p);
    snprintf(call, sizeof call, "lab_pipeline_create(%zu words, %d streams)", chunk_items, streams);
    cr_assert(p == NULL, "%s returned a pipeline: it must return NULL (%s)", call, why);
    kit_expect_one_line(0, lines, said, call, "NULL"); /* 0: create_said counts what it could not capture as 1 line */
}

/* What pipeline_attempt saw: the first create that returned NULL with other than one line on stderr. */
static struct {
    long calls; /* attempts so far: in kit_expect_create_failures' sweep, attempt k + 1 has create k + 1 failing */
    long bad;   /* that attempt's number; 0: none yet */
    int lines;
    char said[320];
} attempt_said;

/* pipeline_attempt - kit_expect_create_failures' attempt (ctx a kit_create_args): lab_pipeline_create, its stderr
 * captured, then lab_pipeline_destroy of what it returned; 1 when it returned NULL (noted in attempt_said unless it
 * wrote one line), else 0 */
static int pipeline_attempt(void *ctx)
{
    const kit_create_args *a = ctx;
    char said[sizeof attempt_said.said];
    int lines;
    attempt_said.calls++;
    lab_pipeline *p = create_said(a->size, a->count, &lines, said, sizeof said);
    if (p) {
        lab_pipeline_destroy(p);
        return 0;
    }
    if (lines != 1 && !attempt_said.bad) {
        attempt_said.bad = attempt_said.calls, attempt_said.lines = lines;
        memcpy(attempt_said.said, said, sizeof said);
    }
    return 1;
}
KIT_ALLOC_ATTEMPT(host_alloc_attempt, lab_host_alloc, lab_host_free)

/* The creates lab_pipeline_create must refuse, and the runs lab_pipeline_run must refuse or make. */
typedef struct {
    size_t chunk[8];
    int streams[8];
    int n;
    lab_pipeline *p;
    const uint32_t *in;
    uint32_t *out;
    size_t items;
    const lab_kernel *k, *none;
    int calls; /* good_runs: calls so far */
} refusal_args;

/* refused_creates - kit_expect_no_heap_leak's attempt: each create of a once (a pipeline made is destroyed); 0 when
 * every one returned NULL */
static int refused_creates(void *ctx)
{
    const refusal_args *a = ctx;
    int made = 0;
    for (int i = 0; i < a->n; i++) {
        lab_pipeline *p = lab_pipeline_create(a->chunk[i], a->streams[i]);
        if (p)
            lab_pipeline_destroy(p), made++;
    }
    (void)cudaGetLastError();
    return made ? -1 : 0;
}

/* refused_runs - kit_expect_no_heap_leak's attempt: each bad argument of lab_pipeline_run alone, with a->items words
 * and with none; 0 when every one returned -1 */
static int refused_runs(void *ctx)
{
    const refusal_args *a = ctx;
    int ok = 1;
    for (size_t items = a->items;; items = 0) {
        lab_order o = items ? LAB_BREADTH_FIRST : LAB_DEPTH_FIRST;
        ok &= lab_pipeline_run(NULL, a->in, a->out, items, o, a->k) == -1;
        ok &= lab_pipeline_run(a->p, a->in, a->out, items, o, NULL) == -1;
        ok &= lab_pipeline_run(a->p, a->in, a->out, items, o, a->none) == -1;
        ok &= lab_pipeline_run(a->p, a->in, a->out, items, (lab_order)7, a->k) == -1;
        ok &= lab_pipeline_run(a->p, a->in, a->out, items, (lab_order)-1, a->k) == -1;
        if (items == 0)
            break;
        ok &= lab_pipeline_run(a->p, NULL, a->out, items, o, a->k) == -1;
        ok &= lab_pipeline_run(a->p, a->in, NULL, items, o, a->k) == -1;
    }
    return ok ? 0 : -1;
}

/* good_runs - kit_expect_no_heap_leak's attempt: one run, in turn of a->items words depth-first, of a->items words
 * breadth-first and of 0 words without arrays; 0 when it returned 0 */
static int good_runs(void *ctx)
{
    refusal_args *a = ctx;
    int turn = a->calls++ % 3;
    if (turn == 2)
        return lab_pipeline_run(a->p, NULL, NULL, 0, LAB_BREADTH_FIRST, a->k);
    return lab_pipeline_run(a->p, a->in, a->out, a->items, turn ? LAB_BREADTH_FIRST : LAB_DEPTH_FIRST, a->k);
}

XL_TEST(pipeline, arguments, 5, XL_GPU,
        "lab_pipeline_create and lab_pipeline_run refuse bad arguments (NULL, -1; the create with one line on stderr), "
        "0 words is fine; create and destroy "
        "(right after a run) leave nothing held; a create or lab_host_alloc that runs out of memory at any step "
        "returns NULL with one line on stderr, holding nothing, with no error left",
        20)
{
    wl_kernel_ctx kc = {0};
    lab_kernel k = wl_kernel(&kc), none = {NULL, NULL};
    int s_bad = (int)kit_rand_int(33, 100000), s_ok = (int)kit_rand_int(1, 32);
    size_t c_ok = (size_t)kit_rand_int(1, 4096);
    char what[256];
    XL_CHECK(cudaFree(0));
    kit_held h0 = kit_held_now();
    /* each refusal with one line on stderr (lab.h: NULL, with a message) */
    expect_create_refused(0, s_ok, "lab.h: chunk_items >= 1");
    expect_create_refused(c_ok, 0, "lab.h: 1 to 32 streams");
    expect_create_refused(c_ok, -1, "lab.h: 1 to 32 streams");
    expect_create_refused(c_ok, 33, "lab.h: 1 to 32 streams");
    expect_create_refused(c_ok, s_bad, "lab.h: 1 to 32 streams");
    /* sizes no machine holds: 2^61 words (8 EiB), and a count whose bytes wrap past 2^64 to a few KiB */
    size_t huge[2] = {(size_t)1 << 61, kit_wrapping_count(sizeof(uint32_t))};
    for (int i = 0; i < 2; i++) {
        char said[512];
        int lines;
        lab_pipeline *p = create_said(huge[i], s_ok, &lines, said, sizeof said);
        if (p)
            lab_pipeline_destroy(p);
        cr_assert(p == NULL, "lab_pipeline_create(%zu words, %d streams) returned a pipeline: that is %s bytes a "
                  "buffer, out of memory (check that chunk_items * 4 does not overflow a size_t)",
                  huge[i], s_ok, i ? "more than 2^64" : "2^63");
        cudaError_t left = cudaGetLastError();
        cr_assert(left == cudaSuccess, "lab_pipeline_create(%zu words) returned NULL but left %s for the next "
                  "cudaGetLastError to find: where you handle a failed call, clear its error", huge[i],
                  cudaGetErrorName(left));
        snprintf(what, sizeof what, "lab_pipeline_create(%zu words, %d streams), out of device memory", huge[i], s_ok);
        kit_expect_one_line(0, lines, said, what, "NULL");
    }
    kit_expect_released(h0, "lab_pipeline_create refused bad arguments and sizes no GPU holds");
    /* each refusal, repeated: a few hundred bytes malloc'd and not freed on the way out are under KIT_HEAP_SLACK once,
     * but grow the heap every time */
    refusal_args bad = {.chunk = {0, c_ok, c_ok, c_ok, c_ok}, .streams = {s_ok, 0, -1, 33, s_bad}, .n = 5};
    snprintf(what, sizeof what, "lab_pipeline_create refusing (0 words, %d streams), (%zu words, 0, -1, 33 and %d "
             "streams)", s_ok, c_ok, s_bad);
    kit_expect_no_heap_leak(refused_creates, &bad, what, "lab.h asks for nothing leaked on bad arguments: check "
                              "them before you malloc anything, or free what you made before returning NULL");
    refusal_args oom = {.chunk = {huge[0], huge[1]}, .streams = {s_ok, s_ok}, .n = 2};
    snprintf(what, sizeof what, "lab_pipeline_create(%zu and %zu words, %d streams), out of memory", huge[0], huge[1],
             s_ok);
    kit_expect_no_heap_leak(refused_creates, &oom, what, "lab.h asks for nothing leaked when out of memory: free "
                              "everything made so far, the struct too, before returning NULL");
    lab_pipeline_destroy(NULL);
    kit_create_args z = {(size_t)kit_rand_int(1, 1 << 16), (int)kit_rand_int(1, 8)};
    snprintf(what, sizeof what, "lab_pipeline_create(%zu words, %d streams)", z.size, z.count);
    attempt_said.calls = attempt_said.bad = 0;
    long made = kit_expect_create_failures(pipeline_attempt, &z, what); /* out of memory at each create in turn */
    if (attempt_said.bad) {
        snprintf(what, sizeof what, "lab_pipeline_create(%zu words, %d streams), with its create number %ld (a stream "
                 "or a device buffer) failing as out of memory,", z.size, z.count, attempt_said.bad);
        kit_expect_one_line(0, attempt_said.lines, attempt_said.said, what, "NULL");
    }
    cr_assert(made >= 2L * z.count, "%s made %ld allocations and streams: it needs a stream and device buffers "
              "for each of its streams", what, made);
    size_t host_bytes = (size_t)kit_rand_int(1, 1 << 20);
    snprintf(what, sizeof what, "lab_host_alloc(%zu)", host_bytes);
    kit_expect_create_failures(host_alloc_attempt, &host_bytes, what);

    uint32_t *in = host_array(8), *out = host_array(8);
    kit_held h1 = kit_held_now();
    lab_pipeline *p = new_pipeline(c_ok, s_ok);
    for (size_t items = 8;; items = 0) { /* each bad argument alone, with words to do and with none */
        lab_order o = (lab_order)kit_rand_int(0, 1);
        cr_assert(lab_pipeline_run(NULL, in, out, items, o, &k) == -1,
                  "lab_pipeline_run(NULL, ..., %zu words) must return -1", items);
        cr_assert(lab_pipeline_run(p, in, out, items, o, NULL) == -1, "a NULL kernel must give -1 (%zu words)", items);
        cr_assert(lab_pipeline_run(p, in, out, items, o, &none) == -1, "a kernel without launch must give -1 (%zu "
                  "words)", items);
        cr_assert(lab_pipeline_run(p, in, out, items, (lab_order)7, &k) == -1, "an unknown order must give -1 (%zu "
                  "words)", items);
        cr_assert(lab_pipeline_run(p, in, out, items, (lab_order)-1, &k) == -1, "order -1 must give -1 (%zu words)",
                  items);
        if (items == 0)
            break;
        cr_assert(lab_pipeline_run(p, NULL, out, items, o, &k) == -1, "in == NULL must give -1");
        cr_assert(lab_pipeline_run(p, in, NULL, items, o, &k) == -1, "out == NULL must give -1");
    }
    refusal_args runs = {.p = p, .in = in, .out = out, .items = 8, .k = &k, .none = &none};
    kit_expect_no_heap_leak(refused_runs, &runs, "lab_pipeline_run refusing each bad argument (8 words and 0)",
                              "check the arguments before you malloc anything, or free what you made before "
                              "returning -1");
    cr_assert(kc.launches == 0, "lab_pipeline_run with bad arguments launched %d kernels: check them before any work",
              kc.launches);
    xl_expect_ok(lab_pipeline_run(p, in, out, 0, LAB_BREADTH_FIRST, &k), "lab_pipeline_run of 0 words");
    /* 0 words: nothing to read or write, so in and out may be NULL (lab.h: an error only when items > 0) */
    for (int i = 0; i < 3; i++) {
        lab_order o = (lab_order)kit_rand_int(0, 1);
        const uint32_t *i0 = i == 2 ? in : NULL;
        uint32_t *o0 = i == 1 ? out : NULL;
        int rc = lab_pipeline_run(p, i0, o0, 0, o, &k);
        cr_assert(rc == 0, "lab_pipeline_run(p, %s, %s, 0 words, %s) returned %d: with 0 words there is nothing to "
                  "read or write, and lab.h makes a NULL in or out a bad argument only when items > 0; return 0",
                  i0 ? "in" : "NULL", o0 ? "out" : "NULL", o == LAB_DEPTH_FIRST ? "LAB_DEPTH_FIRST" :
                  "LAB_BREADTH_FIRST", rc);
    }
    cr_assert(kc.launches == 0, "0 words launched %d kernels", kc.launches);
    size_t w8 = 0;
    cr_assert(xl_check_poison(out, (8 + 16) * sizeof(uint32_t), &w8) == 0 &&
                  xl_check_poison(in, (8 + 16) * sizeof(uint32_t), &w8) == 0,
              "lab_pipeline_run wrote into in or out (byte %zu) in a call it refused or with 0 words: such a call "
              "leaves the caller's arrays untouched", w8);
    lab_pipeline_destroy(p);
    snprintf(what, sizeof what, "lab_pipeline_create(%zu words, %d streams) and lab_pipeline_destroy", c_ok, s_ok);
    kit_expect_released(h1, what);
    /* destroy right after a run that used every stream */
    size_t n = c_ok * (size_t)s_ok + 1;
    uint32_t *big_in = host_input(n), *big_out = host_array(n);
    h1 = kit_held_now();
    p = new_pipeline(c_ok, s_ok);
    /* a pipeline runs many times: runs, repeated, must not grow the heap */
    refusal_args again = {.p = p, .in = big_in, .out = big_out, .items = n, .k = &k};
    snprintf(what, sizeof what, "lab_pipeline_run of %zu words (chunks of %zu, %d streams) depth-first, "
             "breadth-first, and of 0 words, in turn", n, c_ok, s_ok);
    kit_expect_no_heap_leak(good_runs, &again, what, "something lab_pipeline_run mallocs is not freed before it "
                            "returns: a run holds nothing it made once it returns");
    xl_poison(big_out, (n + 16) * sizeof(uint32_t));
    xl_expect_ok(lab_pipeline_run(p, big_in, big_out, n, LAB_DEPTH_FIRST, &k), "lab_pipeline_run");
    lab_pipeline_destroy(p);
    snprintf(what, sizeof what,
             "lab_pipeline_create(%zu words, %d streams), a run of %zu words and lab_pipeline_destroy right after it",
             c_ok, s_ok, n);
    kit_expect_released(h1, what);
    expect_out(big_in, big_out, n, what);
    lab_host_free(big_in);
    lab_host_free(big_out);
    lab_host_free(in);
    lab_host_free(out);
    lab_host_free(NULL);
}

XL_TEST(pipeline, pinned_host, 5, XL_GPU,
        "lab_host_alloc gives pinned memory (pageable copies cannot overlap), not write-combined, that the GPU "
        "writes into; lab_host_free releases it",
        15)
{
    kit_expect_pinned_alloc(lab_host_alloc, lab_host_free, "lab_host_alloc",
                            "every copy from or to it goes through the driver's staging buffer and blocks the host, "
                            "so the streams cannot overlap them (use cudaMallocHost)");
    enum { MAX = 4 << 20 };
    size_t sizes[] = {1, 4096, 4097, 3 * 4096, (size_t)kit_rand_int(2, MAX)};
    unsigned char *src = kit_host_alloc(MAX);
    void *dev = kit_dev_alloc(MAX);
    xl_fill_random(src, MAX, xl_fresh_seed());
    xl_dev_upload(dev, src, MAX);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char what[96];
        kit_held h0 = kit_held_now();
        unsigned char *p = lab_host_alloc(sizes[i]);
        cr_assert(p != NULL, "lab_host_alloc(%zu) returned NULL", sizes[i]);
        cr_assert(kit_is_pinned(p), "lab_host_alloc(%zu) returned pageable memory (use cudaMallocHost)", sizes[i]);
        kit_expect_not_write_combined(p, "lab_host_alloc");
        cudaError_t err = cudaMemcpy(p, dev, sizes[i], cudaMemcpyDeviceToHost);
        cr_assert(err == cudaSuccess,
                  "a copy from the GPU into lab_host_alloc(%zu)'s memory failed (%s): the results are copied into "
                  "it, so the GPU must be able to write it",
                  sizes[i], cudaGetErrorString(err));
        snprintf(what, sizeof what, "a copy from the GPU into lab_host_alloc(%zu)'s memory", sizes[i]);
        kit_expect_host_bytes(p, src, sizes[i], 0, what);
        lab_host_free(p);
        snprintf(what, sizeof what, "lab_host_alloc(%zu) and lab_host_free", sizes[i]);
        kit_expect_released(h0, what);
    }
    free(src);
    XL_CHECK(cudaFree(dev));
}

XL_TEST(results, depth_first, 10, XL_GPU,
        "depth-first: every word exact as soon as the run returns, issued chunk by chunk before any host wait, with "
        "each run's own kernel, chunk c on stream c mod S in every run, no stream waiting for another, each with its "
        "own device buffers in and out, in untouched; 1 to 32 streams, chunks of 1 word up, lengths at multiples of a "
        "chunk and +-1, a chunk past 2^24 words, in place (out == in); pipelines made beside work on the legacy "
        "stream, each holding its `streams` streams; two pipelines alive at once",
        60)
{
    check_order(LAB_DEPTH_FIRST);
}

XL_TEST(results, breadth_first, 10, XL_GPU,
        "breadth-first: every word exact as soon as the run returns, issued round by round of S chunks before any "
        "host wait, with each run's own kernel, chunk c on stream c mod S in every run, no stream waiting for "
        "another, each with its own device buffers in and out, in untouched; 1 to 32 streams, chunks of 1 word up, "
        "lengths at multiples of a chunk and +-1, a chunk past 2^24 words, in place (out == in); pipelines made "
        "beside work on the legacy stream, each holding its `streams` streams; two pipelines "
        "alive at once",
        60)
{
    check_order(LAB_BREADTH_FIRST);
}

/* One run for kit_ms_beside_busy. */
typedef struct {
    lab_pipeline *p;
    uint32_t *in, *out;
    lab_kernel k;
    lab_order order;
} run_ctx;

/* run_once - one run of 2^20 words in r->order */
static void run_once(void *ctx)
{
    run_ctx *r = ctx;
    xl_expect_ok(lab_pipeline_run(r->p, r->in, r->out, 1u << 20, r->order, &r->k), "lab_pipeline_run");
}

/* host_fn_hold - an unrelated host function: *started set, then HOSTFN_NS of sleep */
static void CUDART_CB host_fn_hold(void *arg)
{
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
    struct timespec t = {(time_t)(HOSTFN_NS / 1000000000ull), (long)(HOSTFN_NS % 1000000000ull)};
    while (nanosleep(&t, &t) != 0) {
    }
}

/* ms_beside_host_fn - how long call(ctx) takes (ms) once an unrelated HOSTFN_NS host function has started on a
 * non-blocking stream of the grader's (per_thread 0) or on the caller's per-thread default stream
 * (cudaStreamPerThread, per_thread 1); returns once that stream is done too */
static double ms_beside_host_fn(void (*call)(void *ctx), void *ctx, int per_thread)
{
    static int started;
    cudaStream_t other = cudaStreamPerThread;
    if (!per_thread)
        XL_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
    XL_CHECK(cudaLaunchHostFunc(other, host_fn_hold, &started));
    double give_up = xl_now_ms() + 5000.0;
    while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) && xl_now_ms() < give_up)
        xl_sleep_ms(0.2);
    cr_assert(__atomic_load_n(&started, __ATOMIC_ACQUIRE), "grader error: a host function did not start in 5 s");
    double t0 = xl_now_ms();
    call(ctx);
    double ms = xl_now_ms() - t0;
    XL_CHECK(cudaStreamSynchronize(other));
    if (!per_thread)
        XL_CHECK(cudaStreamDestroy(other));
    return ms;
}

XL_TEST(pipeline, narrow_wait, 5, XL_TIMED,
        "lab_pipeline_run waits for its own streams only, not for a 300 ms kernel on another stream, a 300 ms host "
        "function on another stream or 300 ms of work on cudaStreamPerThread", 15)
{
    wl_kernel_ctx kc = {0};
    run_ctx r = {new_pipeline(1u << 18, 4), host_input(1u << 20), host_array(1u << 20), wl_kernel(&kc),
                 LAB_DEPTH_FIRST};
    run_once(&r); /* warm-up */
    for (int o = 0; o < 2; o++) {
        r.order = o ? LAB_BREADTH_FIRST : LAB_DEPTH_FIRST;
        const char *name = o ? "breadth-first" : "depth-first";
        char what[64];
        snprintf(what, sizeof what, "%s, beside the 300 ms kernel", name);
        xl_poison(r.out, (1u << 20) * sizeof(uint32_t));
        double ms = kit_ms_beside_busy(run_once, &r, KIT_OTHER_NS);
        expect_out(r.in, r.out, 1u << 20, what);
        xl_timed_check(ms, XL_AT_MOST(KIT_NARROW_MS),
                       o ? "lab_pipeline_run's time beside an unrelated kernel, breadth-first (ms)"
                         : "lab_pipeline_run's time beside an unrelated kernel (ms)",
                       "lab_pipeline_run %s took %.0f ms for 4 MiB while an unrelated 300 ms kernel ran on another "
                       "stream: it waited for the whole device (cudaDeviceSynchronize, or the legacy default stream); "
                       "wait for your own streams",
                       name, ms);
        xl_note("lab_pipeline_run %s of 4 MiB took %.1f ms beside the 300 ms kernel", name, ms);
        /* an unrelated 300 ms host function on another stream (the runtime runs host functions one at a time):
         * a run that learns of its end through host functions of its own waits for it */
        xl_poison(r.out, (1u << 20) * sizeof(uint32_t));
        snprintf(what, sizeof what, "%s, beside a 300 ms host function", name);
        ms = ms_beside_host_fn(run_once, &r, 0);
        expect_out(r.in, r.out, 1u << 20, what);
        xl_timed_check(ms, XL_AT_MOST(KIT_NARROW_MS),
                       o ? "lab_pipeline_run's time beside an unrelated host function, breadth-first (ms)"
                         : "lab_pipeline_run's time beside an unrelated host function (ms)",
                       "lab_pipeline_run %s took %.0f ms for 4 MiB while an unrelated 300 ms host function "
                       "(cudaLaunchHostFunc) ran on another stream: it waited for it. The runtime runs host functions "
                       "one at a time, so a run told of its end by host functions of its own waits behind everyone "
                       "else's; wait for your own streams (cudaStreamSynchronize or an event of each)",
                       name, ms);
        xl_note("lab_pipeline_run %s of 4 MiB took %.1f ms beside the 300 ms host function", name, ms);
        /* the same host function on the caller's per-thread default stream (cudaStreamPerThread): not the
         * pipeline's work either */
        xl_poison(r.out, (1u << 20) * sizeof(uint32_t));
        snprintf(what, sizeof what, "%s, beside 300 ms of work on cudaStreamPerThread", name);
        ms = ms_beside_host_fn(run_once, &r, 1);
        expect_out(r.in, r.out, 1u << 20, what);
        xl_timed_check(ms, XL_AT_MOST(KIT_NARROW_MS),
                       o ? "lab_pipeline_run's time beside work on cudaStreamPerThread, breadth-first (ms)"
                         : "lab_pipeline_run's time beside work on cudaStreamPerThread (ms)",
                       "lab_pipeline_run %s took %.0f ms for 4 MiB while the caller's per-thread default stream "
                       "(cudaStreamPerThread) held 300 ms of unrelated work: it waited for that stream. lab.h: wait "
                       "for this pipeline's streams only",
                       name, ms);
        xl_note("lab_pipeline_run %s of 4 MiB took %.1f ms beside 300 ms of work on cudaStreamPerThread", name, ms);
    }
    lab_pipeline_destroy(r.p);
}

/* ===== Part B: overlap, read from the trace ===== */

/* What the trace of one run shows. */
typedef struct {
    double h2d_ms, d2h_ms, kernel_ms; /* total time with at least one such span */
    double both_ways_ms;              /* copies in and out at the same time */
    double kernel_beside_copy_ms;     /* a kernel and a copy at the same time */
} trace_view;

/* trace_run - one traced depth-first run, 16 chunks over 4 streams, and what its trace shows */
static void trace_run(trace_view *v)
{
    enum { MAX = 256 };
    static double h[2 * MAX], d[2 * MAX], k[2 * MAX], c[4 * MAX];
    wl_kernel_ctx kc = {0};
    wl_calibrate(&kc, CALIB_ITEMS, KERNEL_SHARE);
    lab_kernel kern = wl_kernel(&kc);
    lab_pipeline *p = new_pipeline(CHUNK, STREAMS);
    uint32_t *in = host_input(ITEMS), *out = host_array(ITEMS);
    xl_expect_ok(lab_pipeline_run(p, in, out, ITEMS, LAB_DEPTH_FIRST, &kern), "lab_pipeline_run"); /* warm-up */
    xl_poison(out, ITEMS * sizeof(uint32_t));
    xl_timeline *t = xl_timeline_create(4 * MAX);
    cr_assert(t != NULL, "out of memory");
    kc.tl = t, kc.run = "run";
    xl_timeline_trace_copies(t, "run");
    xl_expect_ok(lab_pipeline_run(p, in, out, ITEMS, LAB_DEPTH_FIRST, &kern), "lab_pipeline_run");
    xl_timeline_trace_copies(NULL, NULL);
    expect_out(in, out, ITEMS, "the traced run");
    int nh = xl_timeline_collect(t, "run", "H2D", h, MAX), nd = xl_timeline_collect(t, "run", "D2H", d, MAX);
    int nk = xl_timeline_collect(t, "run", "kernel", k, MAX);
    cr_assert(nh > 0 && nd > 0 && nk > 0 && nh <= MAX && nd <= MAX,
              "the trace holds %d copies in, %d copies out and %d kernels: use cudaMemcpyAsync for the copies", nh,
              nd, nk);
    memcpy(c, h, 2 * nh * sizeof(double));
    memcpy(c + 2 * nh, d, 2 * nd * sizeof(double));
    v->kernel_beside_copy_ms = xl_spans_overlap_ms(k, nk, c, nh + nd);
    v->kernel_ms = xl_spans_total_ms(k, nk);
    v->both_ways_ms = xl_spans_overlap_ms(h, nh, d, nd);
    v->h2d_ms = xl_spans_total_ms(h, nh);
    v->d2h_ms = xl_spans_total_ms(d, nd);
    char path[1200]; /* the report page draws this run's timeline */
    if (xl_results_data_path("timeline", path, sizeof path) == 0)
        xl_timeline_write(t, path, NULL, "grader", 1);
    xl_timeline_destroy(t);
    lab_pipeline_destroy(p);
    lab_host_free(in);
    lab_host_free(out);
}

/* measure_both_ways - xl_measure_fn: one traced run; the time copies in and out ran at once over the shorter
 * direction's time. Timed, so checked as a speed figure: another process on the GPU makes a low one NOT GRADED */
static void measure_both_ways(void *ctx, double *share, char *figures, size_t len)
{
    (void)ctx;
    trace_view v;
    trace_run(&v);
    *share = v.both_ways_ms / fmin(v.h2d_ms, v.d2h_ms);
    snprintf(figures, len, "copies in and out at once for %.2f ms (copies in %.2f ms, out %.2f ms)", v.both_ways_ms,
             v.h2d_ms, v.d2h_ms);
}

/* measure_kernels_beside - xl_measure_fn: one traced run; the time kernels ran beside a copy over the kernels'
 * time (checked as a speed figure, as measure_both_ways) */
static void measure_kernels_beside(void *ctx, double *share, char *figures, size_t len)
{
    (void)ctx;
    trace_view v;
    trace_run(&v);
    *share = v.kernel_beside_copy_ms / v.kernel_ms;
    snprintf(figures, len, "kernels beside a copy for %.2f of their %.2f ms", v.kernel_beside_copy_ms, v.kernel_ms);
}

XL_TEST(overlap, copies_both_ways, 10, XL_TIMED,
        "traced: copies in and out run at the same time (128 MiB, 16 chunks, 4 streams, depth-first)", 30)
{
    xl_gpu_info g;
    char why[256];
    if (xl_gpu_probe(&g, why, sizeof why) == 0 && g.copy_engines < 2)
        cr_skip_test("this GPU reports %d copy engines (asyncEngineCount), so a copy in and a copy out cannot run at "
                     "the same time on it: this test cannot be passed here, by the reference either; grade lab 05 "
                     "on a GPU with two or more",
                     g.copy_engines);
    xl_ratio_check(measure_both_ways, NULL, XL_AT_LEAST_PCT(BOTH_WAYS_NEED),
                   "copies in and out at the same time, of the shorter direction (chunks on different streams let one "
                   "chunk's copy in run beside another's copy out: are your streams separate, non-blocking, and not "
                   "waited on after every chunk?)");
}

XL_TEST(overlap, kernels_with_copies, 5, XL_TIMED,
        "traced: kernels run while copies run (128 MiB, 16 chunks, 4 streams, depth-first)", 30)
{
    xl_ratio_check(measure_kernels_beside, NULL, XL_AT_LEAST_PCT(KERNEL_OVERLAP_NEED),
                   "the kernels' time beside a copy (a kernel runs while another chunk is copied only if that chunk "
                   "is on another stream)");
}

/* ===== Part C: speed ===== */

/* What an efficiency measurement runs. */
typedef struct {
    lab_order order;
    wl_kernel_ctx kc;
    lab_kernel k;
    base_pipe *base;
    lab_pipeline *p;
    uint32_t *in, *out;
    wl_bufs link; /* the kit's own buffers for measuring the link, allocated once for every attempt */
} speed_ctx;

/* measure_eff - xl_measure_fn: the link and kernel alone (the ideal), the sequential run and yours,
 * interleaved, 3 of each, medians; every output checked */
static void measure_eff(void *ctx, double *eff, char *figures, size_t len)
{
    speed_ctx *c = ctx;
    wl_link l;
    double seq[3], mine[3];
    wl_measure_on(&c->link, ITEMS, CHUNK, &c->k, 3, &l);
    for (int r = 0; r < 3; r++) {
        double t0 = xl_now_ms();
        cr_assert(base_run(c->base, c->in, c->out, ITEMS, &c->k) == 0, "the kit's baseline failed");
        seq[r] = xl_now_ms() - t0;
        xl_poison(c->out, ITEMS * sizeof(uint32_t));
        t0 = xl_now_ms();
        xl_expect_ok(lab_pipeline_run(c->p, c->in, c->out, ITEMS, c->order, &c->k), "lab_pipeline_run");
        mine[r] = xl_now_ms() - t0;
        expect_out(c->in, c->out, ITEMS, "in the speed test");
    }
    double ts = xl_median(seq, 3), t = xl_median(mine, 3), ti = wl_ideal_ms(&l, ITEMS, CHUNK);
    *eff = (ts - t) / (ts - ti);
    xl_sound_spread(seq, 3, XL_SOUND_SPREAD, "the kit's sequential baseline (ms)");
    xl_sound_within(ts / ti, XL_SOUND_SEQ_OVER_IDEAL, INFINITY, "the kit's sequential time over its ideal time");
    xl_sound_within(*eff, -INFINITY, XL_EFF_MAX, "the efficiency");
    snprintf(figures, len,
             "%s, 4 streams, 16 chunks of 8 MiB: sequential %.2f ms, yours %.2f ms (spread %.2f-%.2f), ideal %.2f ms "
             "-> efficiency %.2f; link in %.1f, out %.1f, both at once %.1f GB/s; a chunk's kernel %.3f ms",
             c->order == LAB_DEPTH_FIRST ? "depth-first" : "breadth-first", ts, t, fmin(fmin(mine[0], mine[1]), mine[2]),
             fmax(fmax(mine[0], mine[1]), mine[2]), ti, *eff, l.h2d_gbps, l.d2h_gbps, l.duplex_gbps, l.kernel_chunk_ms);
}

/* check_efficiency - the order's efficiency at 4 streams and 8 MiB chunks */
static void check_efficiency(lab_order order)
{
    speed_ctx c = {.order = order};
    wl_bufs_alloc(&c.link, ITEMS);
    wl_calibrate_on(&c.kc, &c.link, ITEMS, KERNEL_SHARE);
    c.k = wl_kernel(&c.kc);
    c.base = base_create(ITEMS);
    cr_assert(c.base != NULL, "the kit's baseline could not be created");
    c.p = new_pipeline(CHUNK, STREAMS);
    c.in = host_input(ITEMS);
    c.out = host_array(ITEMS);
    xl_expect_ok(lab_pipeline_run(c.p, c.in, c.out, ITEMS, order, &c.k), "lab_pipeline_run"); /* warm-up */
    xl_ratio_check(measure_eff, &c, XL_AT_LEAST(EFF_NEED),
                   order == LAB_DEPTH_FIRST ? "overlap efficiency, depth-first" : "overlap efficiency, breadth-first");
    lab_pipeline_destroy(c.p);
    base_destroy(c.base);
    wl_bufs_free(&c.link);
    lab_host_free(c.in);
    lab_host_free(c.out);
}

XL_TEST(speed, depth_first, 15, XL_TIMED,
        "depth-first, 4 streams, 8 MiB chunks of 128 MiB: efficiency >= " XL_STR(EFF_NEED) " against sequential and the "
        "duplex ideal",
        60)
{
    check_efficiency(LAB_DEPTH_FIRST);
}

XL_TEST(speed, breadth_first, 10, XL_TIMED,
        "breadth-first, 4 streams, 8 MiB chunks of 128 MiB: efficiency >= " XL_STR(EFF_NEED) " against sequential and the "
        "duplex ideal",
        60)
{
    check_efficiency(LAB_BREADTH_FIRST);
}
