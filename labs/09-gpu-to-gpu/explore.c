/* explore.c - lab 09's explorer: bytes from one GPU to another, over the link between them (peer access), through
 * the host (the kit's serial way, your double-buffered one), and by a kernel reading the other GPU's memory. Do not
 * edit.
 *
 * First the machine: the GPUs, what CUDA says about each pair (cudaDeviceCanAccessPeer, cudaDeviceGetP2PAttribute)
 * and what nvidia-smi says about the links (topo -m, nvlink -s). Then, from GPU 0 to GPU 1 (to GPU 0 itself where
 * there is one GPU, or with --dst 0), in three phases, because peer access is the process's state and every copy
 * between two GPUs runs at the rate that state allows:
 *   1. nothing enabled: a copy on GPU 0 (the kit's and yours, for scale), cudaMemcpyPeerAsync without peer access
 *      (two GPUs), the road through the host (the kit's serial way, your lab_stage_copy, the kit's ideal) and one
 *      pinned H2D for scale, at sizes from 64 KiB up x4 to --max; a chunk sweep of the road at 128 MiB; the
 *      done-when check of the road (interleaved rounds); a timeline of both roads, 16 chunks, GPU 0 to GPU 0;
 *   2. the kit's own enabling (two GPUs): the kit's peer copies both ways, both directions at once, and its reads;
 *   3. your group (two GPUs): lab_group_create, then your lab_peer_copy both ways, your lab_ring_exchange with two
 *      ranks (both directions at once) and your reads; what your group left enabled, asked with the real calls.
 * On one GPU the reads run there too (a kernel on GPU 0 reading GPU 0's memory). Every point is a warm-up, then the
 * median of --reps runs, timed with CUDA events on the first stream's device (a wait on the second stream's last
 * event before the end event), and its result is checked (a hash of the destination against the source's, on the
 * warm-up and on the last run, the destination poisoned before each) before its figures are shown. A function of
 * yours that returns -1 (or NULL) for the cheapest valid call (not written yet) is left out with one line.
 *     make run LAB=09 ARGS="--csv g2g.csv"
 * g2g.csv: sweep,way,impl,src_dev,dst_dev,bytes,chunk_bytes,passes,ms_median,ms_min,ms_max,gbps
 * (sweep size, chunk, reads or check; way local, peer, peer_off, serial, double, ideal, both, h2d, direct or copied;
 * impl kit or yours; src_dev -1 for the host (h2d); chunk_bytes 0 where not staged; passes the reads' passes, 0 for a
 * copy; gbps bytes / ms, both directions counted for both, bytes x passes for reads).
 * g2g-model.csv, one row (nan: not measured): gpus,src_dev,dst_dev,bytes,chunk_bytes,nvlink_links,nvlink_gbps_link,
 * nvlink_gbps,pcie_gbps,local_gbps,peer_gbps,peer_back_gbps,peer_off_gbps,serial_gbps,double_gbps,ideal_gbps,
 * both_gbps,h2d_gbps,check_bytes,eff,x_serial,read_cross_passes.
 * g2g-timeline.csv: run,lane,what,start_ms,end_ms,bytes (runs "serial" and "double-buffered").
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/csv.h"
#include "common/gpu.h"
#include "common/sizes.h"
#include "common/stats.h"
#include "common/timeline.h"
#include "common/trace.h"
#include "labs/09-gpu-to-gpu/baseline.h"

static const char *prog = "09-gpu-to-gpu-explore";

#define MAX_REPS 50
#define MIN_SIZE ((size_t)64 << 10)            /* the size sweep's first size; then x4 up to --max */
#define MAX_SIZES 16
#define MIN_MAX ((long long)1 << 20)
#define MAX_MAX ((long long)4 << 30)
#define CHUNK_SWEEP_BYTES ((size_t)128 << 20)  /* the chunk sweep's copy (or --max, if smaller) */
#define CHUNK_LO ((size_t)256 << 10)           /* its chunks: x2 from here to CHUNK_HI */
#define CHUNK_HI ((size_t)32 << 20)
#define MAX_CHUNKS 8
#define CHECK_BYTES ((size_t)128 << 20)        /* the done-when check of the road: the grader's speed.host size */
#define CHECK_ROUNDS 5                         /* its interleaved rounds; medians */
#define READ_BYTES ((size_t)256 << 20)         /* the reads' array (or --max, if smaller) */
#define N_PASSES 5
static const int passes_of[N_PASSES] = {1, 2, 4, 8, 16}; /* each twice the one before (read_hashes relies on it) */
#define TL_CHUNKS 16                           /* the timeline's chunks */
#define SMI_LINES 40                           /* nvidia-smi's lines shown, at most, for each command */

/* The grader's bars (grader/09-gpu-to-gpu.c), repeated here for the done-when lines. */
#define EFF_BAR 0.7   /* speed.host: (serial - yours) / (serial - ideal) */
#define X_BAR 1.6     /* speed.host #2, two GPUs: yours over the kit's serial */
#define PEER_BAR 0.90 /* speed.peer: your peer copy over the kit's, peer access on */
#define BOTH_BAR 1.6  /* speed.both: your ring of two, aggregate, over the kit's one direction */

/* ===== What is measured ===== */

enum { KIT, YOURS, NIMPLS };
static const char *const impl_csv[NIMPLS] = {"kit", "yours"};

typedef enum { W_LOCAL, W_PEER, W_PEER_OFF, W_SERIAL, W_DOUBLE, W_IDEAL, W_BOTH, W_H2D, W_DIRECT, W_COPIED, NWAYS } way;
static const char *const way_csv[NWAYS] = {"local",  "peer",  "peer_off", "serial", "double",
                                           "ideal",  "both",  "h2d",      "direct", "copied"};
static const char *const way_words[NWAYS] = {"copy on one GPU",
                                             "peer copy, peer access on",
                                             "cudaMemcpyPeerAsync without peer access",
                                             "serial copy through the host",
                                             "double-buffered copy through the host",
                                             "ideal overlap (no dependency between the two copies)",
                                             "both directions at once",
                                             "pinned H2D",
                                             "direct read over the link",
                                             "copy first, then read"};

/* One point: a way, whose code, between device slots from and to (0 the source GPU, 1 the destination). */
typedef struct {
    way w;
    int impl;
    int from, to;
    size_t bytes;
    size_t chunk;        /* staged ways: the stages' chunk */
    base_stage *bs;      /* serial, ideal */
    lab_stage *ls;       /* double */
    int passes;          /* reads */
    uint64_t want[2];    /* the hash each destination must have (both: [0] GPU 1's, [1] GPU 0's) */
} point;

/* Everything the measurements share. Slot i is device dev[i]; on one GPU slot 1 is slot 0's device, and its
 * buffers, streams and events are slot 0's (dst[1] == dst[0]), so "from slot 0 to slot 1" is GPU 0 to GPU 0 on two
 * streams. */
typedef struct {
    int gpus;                 /* cudaGetDeviceCount */
    int two;                  /* 1: dev[0] != dev[1] */
    int dev[2];
    char name[2][256];
    size_t mem[2];
    uint8_t *src[2], *dst[2]; /* device memory of dev[i], max bytes each; src holds fresh data */
    uint32_t *aux;            /* device memory of dev[1], read_bytes: the reads' scratch */
    uint8_t *host;            /* pinned, max bytes: the H2D's source, then the reads' expected hashes */
    cudaStream_t s[2][2];     /* two non-blocking streams of each device */
    cudaEvent_t t0[2], t1[2], mid[2]; /* timing events of each device */
    size_t max, chunk, read_bytes, check_bytes;
    int reps;
    size_t sizes[MAX_SIZES];
    int nsizes;
    int have_copy, have_direct, have_copied; /* 1: your function runs (the cheapest call returned 0) */
    int have_ring;            /* your lab_ring_exchange runs in your group (two GPUs) */
    int kit_path;             /* 1: the kit enabled peer access both ways (two GPUs with a path) */
    base_stage *bs;           /* the kit's stages from slot 0 to slot 1 in --chunk chunks */
    lab_stage *ls;            /* yours; NULL: your lab_stage_* left out */
    lab_group *g;             /* your group of the two GPUs, while phase 3 runs */
    uint64_t read_hash[N_PASSES]; /* out after p passes from zero: p x src, wrapping */
    /* results: [way][impl][size index][direction: 0 slot 0 to 1, 1 back]; median NaN: not measured */
    xl_timing t[NWAYS][NIMPLS][MAX_SIZES][2];
    xl_timing rd[2][NIMPLS][N_PASSES]; /* reads: [0] direct, [1] copied */
    double check_eff, check_x;
    int read_cross;           /* the kit's: passes from which copying first is faster; 0 none */
    int nvlink_links;
    double nvlink_gbps_link, pcie_gbps;
    xl_csv *csv;
} ex;


/* ===== Small helpers ===== */

/* use - makes slot i's device current */
static void use(const ex *e, int i)
{
    XL_CHECK(cudaSetDevice(e->dev[i]));
}

/* cell - v with the digits that matter into buf, "-" when v is NaN (not measured) */
static const char *cell(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, v >= 100 ? "%.0f" : (v >= 10 ? "%.1f" : "%.2f"), v);
    return buf;
}

/* moved - the bytes a point's rate counts: both directions for both, bytes x passes for the reads */
static double moved(const point *p)
{
    double b = (double)p->bytes;
    if (p->w == W_BOTH)
        b *= 2;
    if (p->w == W_DIRECT || p->w == W_COPIED)
        b *= p->passes;
    return b;
}

/* rate - GB/s for bytes in ms; NaN when ms is (not measured) */
static double rate(double bytes, double ms)
{
    return isnan(ms) || ms <= 0 ? NAN : bytes * 1e-6 / ms;
}

/* describe - "your double-buffered copy through the host, GPU 0 to GPU 1, 256 MiB in chunks of 4 MiB", into buf */
static const char *describe(const ex *e, const point *p, char *buf, size_t len)
{
    char a[32], b[32];
    int n = snprintf(buf, len, "%s %s, ", p->impl == YOURS ? "your" : "the kit's", way_words[p->w]);
    if (p->w == W_H2D)
        n += snprintf(buf + n, len - n, "host to GPU %d", e->dev[p->to]);
    else if (p->w == W_BOTH)
        n += snprintf(buf + n, len - n, "GPU %d to GPU %d and back", e->dev[p->from], e->dev[p->to]);
    else if (p->w == W_DIRECT || p->w == W_COPIED)
        n += snprintf(buf + n, len - n, "a kernel on GPU %d reading GPU %d's memory, %d pass%s", e->dev[p->to],
                      e->dev[p->from], p->passes, p->passes == 1 ? "" : "es");
    else
        n += snprintf(buf + n, len - n, "GPU %d to GPU %d", e->dev[p->from], e->dev[p->to]);
    snprintf(buf + n, len - n, ", %s%s%s", xl_format_size(p->bytes, a, sizeof a), p->chunk ? " in chunks of " : "",
             p->chunk ? xl_format_size(p->chunk, b, sizeof b) : "");
    return buf;
}

/* src_hash - the hash of the first bytes of slot i's source (waits) */
static uint64_t src_hash(const ex *e, int i, size_t bytes)
{
    int ok = 1;
    uint64_t h = base_hash(e->src[i], e->dev[i], bytes, e->s[i][1], &ok);
    if (!ok)
        xl_fail("the kit's hash of GPU %d's source failed (see the message above)", e->dev[i]);
    return h;
}

/* make - a point of way w (impl) from slot from to slot to over bytes, with the hashes its destinations must have */
static point make(const ex *e, way w, int impl, int from, int to, size_t bytes)
{
    point p = {w, impl, from, to, bytes, 0, NULL, NULL, 0, {0, 0}};
    if (w == W_SERIAL || w == W_IDEAL || w == W_DOUBLE) {
        p.chunk = e->chunk;
        p.bs = e->bs;
        p.ls = e->ls;
    }
    if (w != W_IDEAL && w != W_DIRECT && w != W_COPIED)
        p.want[0] = src_hash(e, from, bytes);
    if (w == W_BOTH)
        p.want[1] = src_hash(e, to, bytes);
    return p;
}

/* peer_on - 1 when slot i's device has peer access to slot j's, asked with the real calls: an enable that says
 * "already enabled" (its error cleared), else 0 (an enable that worked is undone at once) */
static int peer_on(const ex *e, int i, int j)
{
    int prev, on = 0;
    XL_CHECK(cudaGetDevice(&prev));
    use(e, i);
    cudaError_t err = cudaDeviceEnablePeerAccess(e->dev[j], 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled)
        on = 1;
    else if (err == cudaSuccess)
        XL_CHECK(cudaDeviceDisablePeerAccess(e->dev[j]));
    cudaGetLastError(); /* an enable refused (no path) or already enabled leaves its error as the last one */
    XL_CHECK(cudaSetDevice(prev));
    return on;
}

/* ===== Running a point ===== */

/* job_of - the read job of point p: out in slot to's dst, reading slot from's src */
static lab_read_job job_of(const ex *e, const point *p)
{
    return (lab_read_job){(uint32_t *)e->dst[p->to], e->dev[p->to], (const uint32_t *)e->src[p->from],
                          e->dev[p->from], p->bytes / sizeof(uint32_t)};
}

/* go - queues point p's work (the kit's code or yours); what the call returned */
static int go(ex *e, const point *p)
{
    int y = p->impl == YOURS, f = p->from, t = p->to;
    void *dst = e->dst[t];
    const void *src = e->src[f];
    lab_read_job j;
    switch (p->w) {
    case W_LOCAL:
    case W_PEER:
    case W_PEER_OFF:
        return y ? lab_peer_copy(dst, e->dev[t], src, e->dev[f], p->bytes, e->s[f][0])
                 : base_peer_copy(dst, e->dev[t], src, e->dev[f], p->bytes, e->s[f][0]);
    case W_SERIAL:
        return base_stage_serial(p->bs, dst, src, p->bytes, e->s[f][0], e->s[t][1]);
    case W_IDEAL:
        return base_stage_ideal(p->bs, dst, src, p->bytes, e->s[f][0], e->s[t][1]);
    case W_DOUBLE:
        return lab_stage_copy(p->ls, dst, src, p->bytes, e->s[f][0], e->s[t][1]);
    case W_BOTH:
        if (y) {
            void *const send[2] = {e->src[f], e->src[t]}, *const recv[2] = {e->dst[f], e->dst[t]};
            const cudaStream_t st[2] = {e->s[f][0], e->s[t][0]};
            return lab_ring_exchange(e->g, send, recv, p->bytes, st); /* rank 0 sends to rank 1, rank 1 to 0 */
        }
        return base_peer_copy(e->dst[t], e->dev[t], e->src[f], e->dev[f], p->bytes, e->s[f][0]) |
               base_peer_copy(e->dst[f], e->dev[f], e->src[t], e->dev[t], p->bytes, e->s[t][0]);
    case W_H2D:
        use(e, t);
        XL_CHECK(cudaMemcpyAsync(dst, e->host, p->bytes, cudaMemcpyHostToDevice, e->s[t][1]));
        return 0;
    case W_DIRECT:
        j = job_of(e, p);
        return y ? lab_read_direct(&j, p->passes, e->s[t][1]) : base_read_direct(&j, p->passes, e->s[t][1]);
    case W_COPIED:
        j = job_of(e, p);
        return y ? lab_read_copied(&j, e->aux, p->passes, e->s[t][1])
                 : base_read_copied(&j, e->aux, p->passes, e->s[t][1]);
    default:
        return -1;
    }
}

/* The streams a point's work runs on: the lead stream (slot li), where the timing events are recorded, and, where
 * the work spans two streams, the other one (slot oi; -1: none), which waits for the start and is waited for before
 * the end. */
typedef struct {
    int li, oi;
    cudaStream_t ls, os;
} frame;

static frame frame_of(const ex *e, const point *p)
{
    int f = p->from, t = p->to;
    switch (p->w) {
    case W_SERIAL:
    case W_IDEAL:
    case W_DOUBLE:
        return (frame){f, t, e->s[f][0], e->s[t][1]};
    case W_BOTH:
        return (frame){f, t, e->s[f][0], e->s[t][0]};
    case W_H2D:
    case W_DIRECT:
    case W_COPIED:
        return (frame){t, -1, e->s[t][1], NULL};
    default:
        return (frame){f, -1, e->s[f][0], NULL};
    }
}

/* run - one call of point p between two events on its lead stream's device, with both streams idle before it; the
 * time in ms. Exits after one line when the call returns an error. */
static double run(ex *e, const point *p)
{
    char what[192];
    frame fr = frame_of(e, p);
    float ms;
    use(e, fr.li);
    XL_CHECK(cudaStreamSynchronize(fr.ls));
    if (fr.oi >= 0) {
        use(e, fr.oi);
        XL_CHECK(cudaStreamSynchronize(fr.os));
    }
    use(e, fr.li);
    XL_CHECK(cudaEventRecord(e->t0[fr.li], fr.ls));
    if (fr.oi >= 0) {
        use(e, fr.oi);
        XL_CHECK(cudaStreamWaitEvent(fr.os, e->t0[fr.li], 0));
    }
    int rc = go(e, p);
    if (rc != 0)
        xl_fail("%s: returned %d (see its message above)", describe(e, p, what, sizeof what), rc);
    if (fr.oi >= 0) {
        use(e, fr.oi);
        XL_CHECK(cudaEventRecord(e->mid[fr.oi], fr.os));
        use(e, fr.li);
        XL_CHECK(cudaStreamWaitEvent(fr.ls, e->mid[fr.oi], 0));
    }
    use(e, fr.li);
    XL_CHECK(cudaEventRecord(e->t1[fr.li], fr.ls));
    XL_CHECK(cudaEventSynchronize(e->t1[fr.li]));
    XL_CHECK(cudaEventElapsedTime(&ms, e->t0[fr.li], e->t1[fr.li]));
    return ms;
}

/* prepare - p's destinations poisoned (the reads' out zeroed), untimed; waits */
static void prepare(ex *e, const point *p)
{
    int reads = p->w == W_DIRECT || p->w == W_COPIED;
    if (p->w == W_IDEAL)
        return;
    use(e, p->to);
    XL_CHECK(cudaMemsetAsync(e->dst[p->to], reads ? 0 : XL_POISON_BYTE, p->bytes, e->s[p->to][1]));
    XL_CHECK(cudaStreamSynchronize(e->s[p->to][1]));
    if (p->w == W_BOTH) {
        use(e, p->from);
        XL_CHECK(cudaMemsetAsync(e->dst[p->from], XL_POISON_BYTE, p->bytes, e->s[p->from][1]));
        XL_CHECK(cudaStreamSynchronize(e->s[p->from][1]));
    }
}

/* check_dst - returns when slot i's destination hashes to want over bytes; else one line and exit 1 */
static void check_dst(ex *e, const point *p, int i, uint64_t want)
{
    char what[192];
    int ok = 1;
    uint64_t got = base_hash(e->dst[i], e->dev[i], p->bytes, e->s[i][1], &ok);
    if (!ok)
        xl_fail("%s: the kit's hash of the result failed (see the message above)", describe(e, p, what, sizeof what));
    if (got != want)
        xl_fail("%s: the result on GPU %d is wrong after the call (its hash is %016llx, not %016llx: bytes missed, "
                "copied twice, too early, or from the wrong place; a read: a pass too few or too many); make grade "
                "LAB=09 says where", describe(e, p, what, sizeof what), e->dev[i], (unsigned long long)got,
                (unsigned long long)want);
}

/* verify - p's destinations checked against the hashes they must have (the ideal's is garbage: not checked) */
static void verify(ex *e, const point *p)
{
    if (p->w == W_IDEAL)
        return;
    check_dst(e, p, p->to, p->want[0]);
    if (p->w == W_BOTH)
        check_dst(e, p, p->from, p->want[1]);
}

/* measure - point p: a warm-up, then --reps runs, the warm-up's result and the last run's checked (each from a
 * poisoned destination); into t */
static void measure(ex *e, const point *p, xl_timing *t)
{
    double ms[MAX_REPS];
    prepare(e, p);
    run(e, p);
    verify(e, p);
    for (int r = 0; r < e->reps; r++) {
        if (r == e->reps - 1)
            prepare(e, p);
        ms[r] = run(e, p);
    }
    verify(e, p);
    xl_summarize(ms, e->reps, t);
}

/* measure_set - the n points of p timed in rounds interleaved (the first point first in round 0, the second first
 * in round 1, ...), so that a slow spell of the machine hits them all alike: a warm-up each, then rounds runs each,
 * the warm-up's result and the last round's checked; into t */
static void measure_set(ex *e, const point *p, int n, int rounds, xl_timing *t)
{
    double ms[4][MAX_REPS];
    for (int i = 0; i < n; i++) {
        prepare(e, &p[i]);
        run(e, &p[i]);
        verify(e, &p[i]);
    }
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < n; k++) {
            int i = (k + r) % n;
            if (r == rounds - 1)
                prepare(e, &p[i]);
            ms[i][r] = run(e, &p[i]);
            if (r == rounds - 1)
                verify(e, &p[i]);
        }
    for (int i = 0; i < n; i++)
        xl_summarize(ms[i], rounds, &t[i]);
}

/* csv_row - one row of the CSV, when there is one */
static void csv_row(ex *e, const char *sweep, const point *p, const xl_timing *t)
{
    if (e->csv)
        xl_csv_row(e->csv, "%s,%s,%s,%d,%d,%zu,%zu,%d,%.5f,%.5f,%.5f,%.3f", sweep, way_csv[p->w], impl_csv[p->impl],
                   p->w == W_H2D ? -1 : e->dev[p->from], e->dev[p->to], p->bytes, p->chunk, p->passes, t->median_ms,
                   t->min_ms, t->max_ms, rate(moved(p), t->median_ms));
}

/* at - measures way w (impl) from slot from to slot to at size k of the sweep, into its place (dir: 0 from slot 0,
 * 1 back) and the CSV; its rate */
static double at(ex *e, way w, int impl, int from, int to, int k, int dir)
{
    point p = make(e, w, impl, from, to, e->sizes[k]);
    xl_timing *t = &e->t[w][impl][k][dir];
    measure(e, &p, t);
    csv_row(e, "size", &p, t);
    return rate(moved(&p), t->median_ms);
}

/* road - the kit's serial and ideal ways and yours (when it runs) from slot 0 to slot 1 over bytes, in e's chunk,
 * interleaved (measure_set); into t[0] serial, t[1] ideal, t[2] yours (NaN: not measured) and the CSV as sweep */
static void road(ex *e, size_t bytes, int rounds, const char *sweep, xl_timing *t)
{
    point p[3] = {make(e, W_SERIAL, KIT, 0, 1, bytes), make(e, W_IDEAL, KIT, 0, 1, bytes)};
    int n = 2;
    if (e->ls)
        p[n++] = make(e, W_DOUBLE, YOURS, 0, 1, bytes);
    t[2] = (xl_timing){NAN, NAN, NAN, 0};
    measure_set(e, p, n, rounds, t);
    for (int i = 0; i < n; i++)
        csv_row(e, sweep, &p[i], &t[i]);
}

/* gbps_at - the rate of a measured point of the size sweep; NaN when not measured */
static double gbps_at(const ex *e, way w, int impl, int k, int dir)
{
    double b = (double)e->sizes[k] * (w == W_BOTH ? 2 : 1);
    return rate(b, e->t[w][impl][k][dir].median_ms);
}

/* efficiency - (serial - yours) / (serial - ideal), from times */
static double efficiency(double serial_ms, double yours_ms, double ideal_ms)
{
    return (serial_ms - yours_ms) / (serial_ms - ideal_ms);
}

/* ===== The machine ===== */

/* uuid_text - a device's UUID as nvidia-smi writes it ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx") into buf */
static const char *uuid_text(const struct cudaDeviceProp *p, char *buf, size_t len)
{
    const unsigned char *u = (const unsigned char *)p->uuid.bytes;
    snprintf(buf, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return buf;
}

/* smi - prints what an nvidia-smi command writes (at most SMI_LINES lines), each line also handed to line() with
 * ctx when line is not NULL; one line when it is not available */
static void smi(const char *args, void (*line)(const char *, void *), void *ctx)
{
    char cmd[128], buf[1024];
    int n = 0, more = 0;
    snprintf(cmd, sizeof cmd, "nvidia-smi %s 2>/dev/null", args);
    FILE *f = popen(cmd, "r");
    printf("nvidia-smi %s:\n", args);
    while (f && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = '\0';
        for (char *r = buf, *w = buf;; r++) { /* drop terminal escapes (ESC [ ... letter): topo -m underlines */
            if (*r == '\033' && r[1] == '[') {
                for (r += 2; *r && !((*r >= 'A' && *r <= 'Z') || (*r >= 'a' && *r <= 'z')); r++)
                    ;
                if (!*r)
                    break;
                continue;
            }
            if (!(*w++ = *r))
                break;
        }
        if (line)
            line(buf, ctx);
        if (n < SMI_LINES)
            printf("    %s\n", buf);
        else
            more++;
        n++;
    }
    int status = f ? pclose(f) : -1;
    if (more)
        printf("    (%d more lines)\n", more);
    if (n == 0 || status != 0)
        printf("    not available here (%s)\n", n ? "it failed" : "no output: no nvidia-smi, or nothing to report");
}

/* The NVLink links of one GPU in nvidia-smi nvlink -s's output ("GPU 0: NAME (UUID: GPU-...)", then one
 * "Link N: R GB/s" line a link; an inactive link has no rate). */
typedef struct {
    const char *uuid;
    int in;      /* 1 inside that GPU's block */
    int links;
    double gbps; /* the rate of one link */
} nvlink_scan;

static void nvlink_line(const char *l, void *ctx)
{
    nvlink_scan *s = ctx;
    int k;
    double r;
    if (strncmp(l, "GPU ", 4) == 0)
        s->in = strstr(l, s->uuid) != NULL;
    else if (s->in && sscanf(l, " Link %d: %lf GB/s", &k, &r) == 2) {
        s->links++;
        s->gbps = r;
    }
}

/* p2p_attr - cudaDeviceGetP2PAttribute of a and b; -1 (the error cleared) where the runtime cannot say */
static int p2p_attr(enum cudaDeviceP2PAttr attr, int a, int b)
{
    int v = 0;
    if (cudaDeviceGetP2PAttribute(&v, attr, a, b) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return v;
}

/* topology - the GPUs, what CUDA says of each pair, what nvidia-smi says of the links; the NVLink links of slot
 * 0's GPU into e */
static void topology(ex *e)
{
    char bus[32], mem[32], uuid[64];
    struct cudaDeviceProp p;
    int shown = e->gpus > 4 ? 4 : e->gpus;
    printf("GPUs: %d\n", e->gpus);
    for (int d = 0; d < e->gpus; d++) {
        XL_CHECK(cudaGetDeviceProperties(&p, d));
        XL_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
        printf("  GPU %d: %s, %s, PCI %s, %d copy engines\n", d, p.name, xl_format_size(p.totalGlobalMem, mem,
               sizeof mem), bus, p.asyncEngineCount);
        if (d == e->dev[0])
            uuid_text(&p, uuid, sizeof uuid);
    }
    if (e->gpus == 1) {
        printf("peer access: one GPU, no pair to ask about (a device is not its own peer)\n");
    } else {
        printf("peer access, each ordered pair (cudaDeviceCanAccessPeer; cudaDeviceGetP2PAttribute: access supported, "
               "performance rank, native atomics)%s:\n", shown < e->gpus ? ", among the first 4 GPUs" : "");
        for (int a = 0; a < shown; a++)
            for (int b = 0; b < shown; b++) {
                int can = 0;
                if (a == b)
                    continue;
                XL_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
                printf("  GPU %d -> GPU %d: can access %d; access supported %d, performance rank %d, native atomics "
                       "%d (-1: the runtime cannot say)\n", a, b, can, p2p_attr(cudaDevP2PAttrAccessSupported, a, b),
                       p2p_attr(cudaDevP2PAttrPerformanceRank, a, b),
                       p2p_attr(cudaDevP2PAttrNativeAtomicSupported, a, b));
            }
    }
    smi("topo -m", NULL, NULL);
    nvlink_scan s = {uuid, 0, 0, NAN};
    smi("nvlink -s", nvlink_line, &s);
    e->nvlink_links = s.links;
    e->nvlink_gbps_link = s.links ? s.gbps : NAN;
    if (s.links)
        printf("  GPU %d: %d NVLink links of %.1f GB/s: %.0f GB/s a direction on paper\n", e->dev[0], s.links,
               s.gbps, s.links * s.gbps);
}

/* ===== Phase 1: nothing enabled ===== */

/* sweep_sizes - every size: a copy on GPU 0 (kit, yours), cudaMemcpyPeerAsync without peer access (two GPUs, both
 * ways), the road through the host (the kit's serial and ideal, yours) and one pinned H2D; a line a size */
static void sweep_sizes(ex *e)
{
    char sz[32], c[8][16], off_cell[32];
    XL_RANGE_PUSH("size sweep, nothing enabled");
    printf("\nbandwidth against size, GPU %d to GPU %d, peer access off, %s chunks through the host; GB/s, median of "
           "%d (serial, double and ideal in interleaved rounds):\n", e->dev[0], e->dev[1], xl_format_size(e->chunk, sz, sizeof sz), e->reps);
    printf("%9s %10s %10s%s%10s %10s %10s %6s %10s\n", "size", "local kit", "local you", e->two ? "    no peer " : " ",
           "serial", "double", "ideal", "eff", "H2D");
    for (int k = 0; k < e->nsizes; k++) {
        size_t n = e->sizes[k];
        double lk = NAN, ly = NAN, off = NAN, se, db, id, h2d, eff = NAN;
        xl_timing tr[3];
        use(e, 0);
        XL_CHECK(cudaMemcpy(e->host, e->src[0], n, cudaMemcpyDeviceToHost)); /* the H2D's source: src's bytes */
        lk = at(e, W_LOCAL, KIT, 0, 0, k, 0);
        if (e->have_copy)
            ly = at(e, W_LOCAL, YOURS, 0, 0, k, 0);
        if (e->two) {
            off = at(e, W_PEER_OFF, KIT, 0, 1, k, 0);
            at(e, W_PEER_OFF, KIT, 1, 0, k, 1);
        }
        road(e, n, e->reps, "size", tr);
        e->t[W_SERIAL][KIT][k][0] = tr[0];
        e->t[W_IDEAL][KIT][k][0] = tr[1];
        e->t[W_DOUBLE][YOURS][k][0] = tr[2];
        se = rate(n, tr[0].median_ms);
        id = rate(n, tr[1].median_ms);
        db = rate(n, tr[2].median_ms);
        h2d = at(e, W_H2D, KIT, 0, 1, k, 0);
        if (e->ls && n >= 2 * e->chunk)
            eff = efficiency(e->t[W_SERIAL][KIT][k][0].median_ms, e->t[W_DOUBLE][YOURS][k][0].median_ms,
                             e->t[W_IDEAL][KIT][k][0].median_ms);
        if (e->two)
            snprintf(off_cell, sizeof off_cell, " %10s ", cell(off, c[2], 16));
        printf("%9s %10s %10s%s%10s %10s %10s %6s %10s\n", xl_format_size(n, sz, sizeof sz),
               cell(lk, c[0], 16), cell(ly, c[1], 16), e->two ? off_cell : " ", cell(se, c[3], 16),
               cell(db, c[4], 16), cell(id, c[5], 16), isnan(eff) ? "-" : (snprintf(c[6], 16, "%.2f", eff), c[6]),
               cell(h2d, c[7], 16));
    }
    printf("local: a copy on GPU %d (bytes counted once)%s; serial: the kit's, one pinned buffer, out then in; double: "
           "yours (lab_stage_copy); ideal: the same chunks out and in with nothing between them; eff = (serial - "
           "double) / (serial - ideal), from two chunks on; H2D: one pinned copy to GPU %d, for scale\n", e->dev[0],
           e->two ? "; no peer: cudaMemcpyPeerAsync between the GPUs without peer access (the driver stages it)" : "",
           e->dev[1]);
    XL_RANGE_POP();
}

/* sweep_chunks - the road at CHUNK_SWEEP_BYTES (or --max) in chunks of CHUNK_LO to CHUNK_HI: the kit's serial and
 * ideal, yours; a line a chunk */
static void sweep_chunks(ex *e)
{
    char sz[32], c[4][16];
    size_t n = e->max < CHUNK_SWEEP_BYTES ? e->max : CHUNK_SWEEP_BYTES;
    base_stage *keep_bs = e->bs;
    lab_stage *keep_ls = e->ls;
    size_t keep_chunk = e->chunk;
    XL_RANGE_PUSH("chunk sweep");
    printf("\nthe road through the host against chunk size, %s from GPU %d to GPU %d; GB/s, median of %d "
           "(interleaved):\n",
           xl_format_size(n, sz, sizeof sz), e->dev[0], e->dev[1], e->reps);
    printf("%9s %10s %10s %10s %6s\n", "chunk", "serial", "double", "ideal", "eff");
    for (size_t ch = CHUNK_LO; ch <= CHUNK_HI && ch <= n; ch *= 2) {
        xl_timing t[3];
        e->chunk = ch;
        if (!(e->bs = base_stage_create(e->dev[0], e->dev[1], ch)))
            xl_fail("the kit's base_stage_create failed for chunks of %s (see the message above)",
                    xl_format_size(ch, sz, sizeof sz));
        e->ls = keep_ls ? lab_stage_create(e->dev[0], e->dev[1], ch) : NULL;
        if (keep_ls && !e->ls)
            xl_fail("your lab_stage_create returned NULL for chunks of %s (see its message above)",
                    xl_format_size(ch, sz, sizeof sz));
        road(e, n, e->reps, "chunk", t);
        double eff = efficiency(t[0].median_ms, t[2].median_ms, t[1].median_ms);
        printf("%9s %10s %10s %10s %6s\n", xl_format_size(ch, sz, sizeof sz), cell(rate(n, t[0].median_ms), c[0], 16),
               cell(rate(n, t[2].median_ms), c[1], 16), cell(rate(n, t[1].median_ms), c[2], 16),
               isnan(eff) ? "-" : (snprintf(c[3], 16, "%.2f", eff), c[3]));
        base_stage_destroy(e->bs);
        lab_stage_destroy(e->ls);
    }
    e->bs = keep_bs;
    e->ls = keep_ls;
    e->chunk = keep_chunk;
    printf("small chunks pay each copy's fixed cost many times; large ones leave the first chunk's copy out and the "
           "last one's copy in running alone\n");
    XL_RANGE_POP();
}

/* check_road - the done-when check of the road: the kit's serial, its ideal and yours at check_bytes in --chunk
 * chunks, CHECK_ROUNDS interleaved rounds (the first and last checked), medians */
static void check_road(ex *e)
{
    char sz[32], ch[32];
    xl_timing t[3];
    size_t n = e->check_bytes;
    printf("\ndone-when check of the road through the host, %s in chunks of %s, GPU %d to GPU %d, %d interleaved "
           "rounds, medians:\n", xl_format_size(n, sz, sizeof sz), xl_format_size(e->chunk, ch, sizeof ch), e->dev[0],
           e->dev[1], CHECK_ROUNDS);
    e->check_eff = e->check_x = NAN;
    if (!e->ls) {
        printf("  not measured: your lab_stage_copy does not run yet\n");
        return;
    }
    XL_RANGE_PUSH("done-when check");
    road(e, n, CHECK_ROUNDS, "check", t);
    e->check_eff = efficiency(t[0].median_ms, t[2].median_ms, t[1].median_ms);
    e->check_x = t[0].median_ms / t[2].median_ms;
    printf("  the kit's serial %.2f ms, yours %.2f ms, the ideal %.2f ms: efficiency %.2f (the grader needs %.1f)\n",
           t[0].median_ms, t[2].median_ms, t[1].median_ms, e->check_eff, EFF_BAR);
    if (e->two)
        printf("  yours moves %.2fx the kit's serial rate (the grader needs %.1fx between two GPUs)\n", e->check_x,
               X_BAR);
    else
        printf("  yours moves %.2fx the kit's serial rate; on one GPU both copies share its one PCIe link, so the "
               "ideal is the link's rate with both directions busy, not twice one direction\n", e->check_x);
    XL_RANGE_POP();
}

/* spans_extent - from the first start to the last end of n spans (pairs) */
static double spans_extent(const double *pairs, int n, double *lo, double *hi)
{
    for (int i = 0; i < n; i++) {
        if (pairs[2 * i] < *lo)
            *lo = pairs[2 * i];
        if (pairs[2 * i + 1] > *hi)
            *hi = pairs[2 * i + 1];
    }
    return *hi - *lo;
}

/* overlap - a traced run's length and how long its copies out and in ran at once, from tl; 0 when it has no spans */
static int overlap(xl_timeline *tl, const char *runname, double *len_ms, double *both_ms)
{
    static double out[8 * TL_CHUNKS], in[8 * TL_CHUNKS];
    int no = xl_timeline_collect(tl, runname, "D2H", out, 4 * TL_CHUNKS);
    int ni = xl_timeline_collect(tl, runname, "H2D", in, 4 * TL_CHUNKS);
    double lo = INFINITY, hi = -INFINITY;
    if (no == 0 || ni == 0)
        return 0;
    spans_extent(out, no, &lo, &hi);
    *len_ms = spans_extent(in, ni, &lo, &hi);
    *both_ms = xl_spans_overlap_ms(out, no, in, ni);
    return 1;
}

/* timeline - one traced run of the kit's serial road and one of yours, TL_CHUNKS chunks, GPU 0 to GPU 0 (the
 * timeline's events are made on one device: it cannot trace a copy between two); the timeline, and a line */
static xl_timeline *timeline(ex *e)
{
    char sz[32], ch[32];
    size_t chunk = e->chunk * TL_CHUNKS <= e->max ? e->chunk : e->max / TL_CHUNKS, n = chunk * TL_CHUNKS;
    double len, both;
    XL_RANGE_PUSH("timeline");
    use(e, 0);
    xl_timeline *tl = xl_timeline_create(8 * TL_CHUNKS + 16);
    if (!tl)
        xl_fail("out of memory");
    size_t keep_chunk = e->chunk;
    base_stage *keep_bs = e->bs;
    lab_stage *keep_ls = e->ls;
    e->chunk = chunk;
    if (!(e->bs = base_stage_create(e->dev[0], e->dev[0], chunk)))
        xl_fail("the kit's base_stage_create failed for the timeline (see the message above)");
    e->ls = keep_ls ? lab_stage_create(e->dev[0], e->dev[0], chunk) : NULL;
    if (keep_ls && !e->ls)
        xl_fail("your lab_stage_create returned NULL for GPU %d to GPU %d (see its message above)", e->dev[0],
                e->dev[0]);
    const char *names[2] = {"serial", "double-buffered"};
    for (int i = 0; i < 2; i++) {
        if (i == 1 && !e->ls)
            break;
        point p = make(e, i ? W_DOUBLE : W_SERIAL, i ? YOURS : KIT, 0, 0, n);
        prepare(e, &p);
        run(e, &p); /* warm-up */
        prepare(e, &p);
        xl_timeline_trace_copies(tl, names[i]);
        run(e, &p);
        xl_timeline_trace_copies(NULL, NULL);
        verify(e, &p);
    }
    printf("\ntimeline, %s in %d chunks of %s, GPU %d to GPU %d:", xl_format_size(n, sz, sizeof sz), TL_CHUNKS,
           xl_format_size(chunk, ch, sizeof ch), e->dev[0], e->dev[0]);
    if (overlap(tl, names[0], &len, &both))
        printf(" the kit's serial copies took %.2f ms, out and in at once for %.2f ms;", len, both);
    if (!e->ls)
        printf(" yours: not recorded (your lab_stage_copy does not run yet)\n");
    else if (overlap(tl, names[1], &len, &both))
        printf(" yours %.2f ms, out and in at once for %.2f ms\n", len, both);
    else
        printf(" yours: no cudaMemcpyAsync seen (the timeline traces that call only)\n");
    base_stage_destroy(e->bs);
    lab_stage_destroy(e->ls);
    e->bs = keep_bs;
    e->ls = keep_ls;
    e->chunk = keep_chunk;
    XL_RANGE_POP();
    return tl;
}

/* ===== Reads ===== */

/* read_hashes - the hash of out after p passes from zero, p x src (wrapping), for every p of passes_of: computed on
 * the host from a copy of the source in the pinned buffer (each p twice the one before) */
static void read_hashes(ex *e)
{
    uint32_t *w = (uint32_t *)e->host;
    size_t words = e->read_bytes / sizeof(uint32_t);
    use(e, 0);
    XL_CHECK(cudaMemcpy(e->host, e->src[0], e->read_bytes, cudaMemcpyDeviceToHost));
    for (int k = 0; k < N_PASSES; k++) {
        if (k > 0)
            for (size_t i = 0; i < words; i++)
                w[i] *= 2u;
        e->read_hash[k] = base_hash_host(e->host, e->read_bytes);
    }
}

/* reads - way w (W_DIRECT or W_COPIED, impl) at every number of passes, into e->rd and the CSV */
static void reads(ex *e, way w, int impl)
{
    for (int k = 0; k < N_PASSES; k++) {
        point p = make(e, w, impl, 0, 1, e->read_bytes);
        p.passes = passes_of[k];
        p.want[0] = e->read_hash[k];
        xl_timing *t = &e->rd[w == W_COPIED][impl][k];
        measure(e, &p, t);
        csv_row(e, "reads", &p, t);
    }
}

/* print_reads - the reads' table, and where copying first starts to pay (the kit's ways) */
static void print_reads(ex *e)
{
    char sz[32], c[4][16];
    printf("\nreads: a kernel on GPU %d adds GPU %d's %s into its own array, pass after pass; ms, median of %d:\n",
           e->dev[1], e->dev[0], xl_format_size(e->read_bytes, sz, sizeof sz), e->reps);
    printf("%9s %11s %11s %11s %11s%s\n", "passes", "direct kit", "direct you", "copied kit", "copied you",
           e->two ? "  copy first (kit)" : "");
    e->read_cross = 0;
    for (int k = 0; k < N_PASSES; k++) {
        double d = e->rd[0][KIT][k].median_ms, cp = e->rd[1][KIT][k].median_ms;
        int wins = e->two && !isnan(d) && !isnan(cp) && cp < d;
        if (wins && !e->read_cross)
            e->read_cross = passes_of[k];
        printf("%9d %11s %11s %11s %11s%s%s\n", passes_of[k], cell(d, c[0], 16),
               cell(e->rd[0][YOURS][k].median_ms, c[1], 16), cell(cp, c[2], 16),
               cell(e->rd[1][YOURS][k].median_ms, c[3], 16),
               e->two ? "  " : "", !e->two ? "" : isnan(d) || isnan(cp) ? "-" : wins ? "faster" : "slower");
    }
    if (!e->two)
        printf("on one GPU nothing crosses a link: copying first only adds a copy\n");
    else if (e->read_cross)
        printf("copying first pays from %d passes on (the kit's ways)\n", e->read_cross);
    else if (!isnan(e->rd[0][KIT][0].median_ms))
        printf("copying first did not pay within %d passes (the kit's ways)\n", passes_of[N_PASSES - 1]);
}

/* ===== Phases 2 and 3: peer access on ===== */

/* peer_rows - the peer copies both ways and both at once (impl's: the kit's, or yours in your group) at every
 * size, a line a size */
static void peer_rows(ex *e, int impl)
{
    char sz[32], c[3][16], h[2][32];
    snprintf(h[0], sizeof h[0], "%d to %d", e->dev[0], e->dev[1]);
    snprintf(h[1], sizeof h[1], "%d to %d", e->dev[1], e->dev[0]);
    printf("%9s %10s %10s %16s\n", "size", h[0], h[1], "both (in all)");
    for (int k = 0; k < e->nsizes; k++) {
        double a = NAN, b = NAN, both = NAN;
        if (impl == KIT || e->have_copy) {
            a = at(e, W_PEER, impl, 0, 1, k, 0);
            b = at(e, W_PEER, impl, 1, 0, k, 1);
        }
        if (impl == KIT || e->have_ring)
            both = at(e, W_BOTH, impl, 0, 1, k, 0);
        printf("%9s %10s %10s %16s\n", xl_format_size(e->sizes[k], sz, sizeof sz), cell(a, c[0], 16),
               cell(b, c[1], 16), cell(both, c[2], 16));
    }
}

/* phase_kit - the kit enables peer access both ways (base_peer_enable), measures its copies and reads, and
 * disables what it enabled */
static void phase_kit(ex *e)
{
    int owned = 0, r = base_peer_enable(e->dev[0], e->dev[1], &owned);
    XL_RANGE_PUSH("the kit's peer access");
    if (r < 0)
        xl_fail("the kit's base_peer_enable failed for GPU %d and GPU %d (see the message above)", e->dev[0],
                e->dev[1]);
    e->kit_path = r == 1;
    if (!e->kit_path) {
        printf("\nno peer path between GPU %d and GPU %d (cudaDeviceCanAccessPeer says no): nothing enabled; copies "
               "between them go through the host, and a kernel cannot read the other GPU's memory\n", e->dev[0],
               e->dev[1]);
    } else {
        printf("\npeer access on, the kit's own enabling (base_peer_enable), cudaMemcpyPeerAsync; GB/s, median of "
               "%d:\n", e->reps);
        peer_rows(e, KIT);
        reads(e, W_DIRECT, KIT);
    }
    reads(e, W_COPIED, KIT);
    base_peer_disable(e->dev[0], e->dev[1], owned);
    XL_RANGE_POP();
}

/* access_text - "on" or "off" */
static const char *access_text(int on)
{
    return on ? "on" : "off";
}

/* phase_yours - your group of GPU 0 and GPU 1: what it enabled, your copies, your ring and your reads in it; what
 * destroy left */
static void phase_yours(ex *e)
{
    int devs[2] = {e->dev[0], e->dev[1]}, peer = -1;
    XL_RANGE_PUSH("your group");
    printf("\nyour group (lab_group_create of GPU %d and GPU %d):", e->dev[0], e->dev[1]);
    e->g = lab_group_create(devs, 2, &peer);
    if (!e->g)
        printf(" NULL (not written yet?): your ring is left out, and your peer copies below run with nothing "
               "enabled\n");
    else
        printf(" *peer = %d\n", peer);
    int ab = peer_on(e, 0, 1), ba = peer_on(e, 1, 0);
    printf("  peer access now, asked with the real calls: GPU %d to GPU %d %s, GPU %d to GPU %d %s\n", e->dev[0],
           e->dev[1], access_text(ab), e->dev[1], e->dev[0], access_text(ba));
    if (e->kit_path && e->g && !(ab && ba))
        printf("  the kit could enable both, your group left %s off: your copies below are staged by the driver, "
               "several times slower, and nothing says so\n", ab || ba ? "one direction" : "both");
    if (e->g) {
        void *const none[2] = {NULL, NULL};
        const cudaStream_t st[2] = {e->s[0][0], e->s[1][0]};
        e->have_ring = lab_ring_exchange(e->g, none, none, 0, st) == 0;
        if (!e->have_ring)
            printf("left out: your lab_ring_exchange: 0 bytes returned -1, not 0 (not written yet?)\n");
    }
    if (e->have_copy || e->have_ring) {
        printf("your copies in your group, GB/s, median of %d (both: your lab_ring_exchange with two ranks):\n",
               e->reps);
        peer_rows(e, YOURS);
    }
    if (e->have_copied)
        reads(e, W_COPIED, YOURS);
    if (e->have_direct && ba)
        reads(e, W_DIRECT, YOURS);
    else if (e->have_direct)
        printf("left out: your lab_read_direct: GPU %d has no peer access to GPU %d's memory after your group (a "
               "kernel reading it would fault)\n", e->dev[1], e->dev[0]);
    lab_group_destroy(e->g);
    e->g = NULL;
    ab = peer_on(e, 0, 1);
    ba = peer_on(e, 1, 0);
    if (ab || ba)
        printf("  after lab_group_destroy peer access is still on (GPU %d to GPU %d %s, GPU %d to GPU %d %s): destroy "
               "disables exactly what create enabled\n", e->dev[0], e->dev[1], access_text(ab), e->dev[1], e->dev[0],
               access_text(ba));
    XL_RANGE_POP();
}

/* ===== Done when ===== */

/* done_when - the lab's claims, from the figures above */
static void done_when(ex *e)
{
    char sz[32];
    int k = e->nsizes - 1;
    printf("\ndone-when checks at %s (the grader's speed.peer and speed.both copy 256 MiB):\n",
           xl_format_size(e->sizes[k], sz, sizeof sz));
    if (!e->two) {
        printf("  peer copies and both directions at once: need 2 GPUs (this run has one)\n");
        return;
    }
    if (!e->kit_path) {
        printf("  peer copies: no peer path between these GPUs: nothing to compare\n");
        return;
    }
    double kit = gbps_at(e, W_PEER, KIT, k, 0), yours = gbps_at(e, W_PEER, YOURS, k, 0);
    double off = gbps_at(e, W_PEER_OFF, KIT, k, 0), both = gbps_at(e, W_BOTH, YOURS, k, 0);
    if (isnan(yours))
        printf("  your peer copy: not measured\n");
    else
        printf("  your peer copy %.1f GB/s, the kit's %.1f GB/s with peer access on (%.0f %%; the grader needs %.0f "
               "%%), %.1f GB/s without it\n", yours, kit, 100 * yours / kit, 100 * PEER_BAR, off);
    if (isnan(both))
        printf("  both directions at once: not measured (your lab_ring_exchange)\n");
    else
        printf("  your ring of two, both directions at once, %.1f GB/s in all: %.2fx the kit's one direction (the "
               "grader needs %.1fx)\n", both, both / kit, BOTH_BAR);
}

/* ===== Setting up ===== */

/* Options, as given on the command line. */
typedef struct {
    size_t max_bytes, chunk_bytes;
    int reps, dst;
    const char *csv; /* NULL: no CSV */
} options;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.max_bytes = (size_t)256 << 20, .chunk_bytes = (size_t)4 << 20, .reps = 10, .dst = -1};
    const xl_opt opts[] = {
        {"max", XL_OPT_SIZE, &o->max_bytes, MIN_MAX, MAX_MAX,
         "the largest copy, 1M to 4G (default 256M); sizes go x4 from 64K"},
        {"chunk", XL_OPT_SIZE, &o->chunk_bytes, 1, (long long)LAB_CHUNK_MAX,
         "the chunk of the copies through the host, up to 64M (default 4M)"},
        {"reps", XL_OPT_INT, &o->reps, 1, MAX_REPS, "timed runs per point after one warm-up, 1 to 50 (default 10)"},
        {"dst", XL_OPT_INT, &o->dst, 0, 1023,
         "the GPU copied to from GPU 0 (default 1 where there are two, else 0; 0 measures one GPU)"},
        {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0,
         "also write the figures as CSV (NAME-model.csv and NAME-timeline.csv beside it)"}};
    xl_cli_or_exit(prog, "GPU to GPU: peer copies over the link, the road through the host (serial and "
                   "double-buffered), and a kernel reading the other GPU's memory.", opts,
                   sizeof opts / sizeof opts[0], argc, argv);
}

/* setup - the devices, buffers (fresh data), streams and events; which of your functions run. Exits 2 after one
 * line for options this host cannot take, 1 when something cannot be had. */
static void setup(ex *e, const options *o)
{
    char msg[256], sz[32];
    int slots;
    XL_CHECK(cudaGetDeviceCount(&e->gpus));
    e->dev[0] = 0;
    e->dev[1] = o->dst >= 0 ? o->dst : (e->gpus >= 2 ? 1 : 0);
    if (e->dev[1] >= e->gpus) {
        snprintf(msg, sizeof msg, "--dst %d: this host has %d GPU%s (0 to %d)", e->dev[1], e->gpus,
                 e->gpus == 1 ? "" : "s", e->gpus - 1);
        xl_cli_die(prog, msg);
    }
    e->two = e->dev[1] != e->dev[0];
    slots = e->two ? 2 : 1;
    e->max = o->max_bytes;
    e->chunk = o->chunk_bytes;
    e->reps = o->reps;
    e->read_bytes = (e->max < READ_BYTES ? e->max : READ_BYTES) / sizeof(uint32_t) * sizeof(uint32_t);
    e->check_bytes = e->max < CHECK_BYTES ? e->max : CHECK_BYTES;
    for (size_t n = MIN_SIZE; n <= e->max && e->nsizes < MAX_SIZES; n *= 4)
        e->sizes[e->nsizes++] = n;
    if (e->sizes[e->nsizes - 1] != e->max && e->nsizes < MAX_SIZES)
        e->sizes[e->nsizes++] = e->max;
    for (int i = 0; i < slots; i++) {
        struct cudaDeviceProp p;
        XL_CHECK(cudaGetDeviceProperties(&p, e->dev[i]));
        snprintf(e->name[i], sizeof e->name[i], "%s", p.name);
        e->mem[i] = p.totalGlobalMem;
        double need = 2.0 * (double)e->max + (i == slots - 1 ? (double)e->read_bytes : 0);
        if (need > 0.75 * (double)p.totalGlobalMem) {
            snprintf(msg, sizeof msg, "--max %s: GPU %d would hold %.1f GiB of buffers, more than three quarters of "
                     "its memory", xl_format_size(e->max, sz, sizeof sz), e->dev[i], need / (1 << 30));
            xl_cli_die(prog, msg);
        }
    }
    if ((double)e->max > 0.25 * (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE))
        xl_cli_die(prog, "--max: the pinned host buffer would be more than a quarter of this machine's memory");
    for (int i = 0; i < slots; i++) {
        use(e, i);
        XL_CHECK(cudaMalloc((void **)&e->src[i], e->max));
        XL_CHECK(cudaMalloc((void **)&e->dst[i], e->max));
        for (int k = 0; k < 2; k++)
            XL_CHECK(cudaStreamCreateWithFlags(&e->s[i][k], cudaStreamNonBlocking));
        XL_CHECK(cudaEventCreate(&e->t0[i]));
        XL_CHECK(cudaEventCreate(&e->t1[i]));
        XL_CHECK(cudaEventCreate(&e->mid[i]));
        if (base_fill_mix(e->src[i], e->dev[i], e->max, xl_fresh_seed(), e->s[i][0]) != 0)
            xl_fail("the kit's base_fill_mix failed on GPU %d (see the message above)", e->dev[i]);
    }
    if (!e->two) { /* slot 1 is slot 0 */
        e->src[1] = e->src[0];
        e->dst[1] = e->dst[0];
        e->s[1][0] = e->s[0][0];
        e->s[1][1] = e->s[0][1];
        e->t0[1] = e->t0[0];
        e->t1[1] = e->t1[0];
        e->mid[1] = e->mid[0];
    }
    use(e, 1);
    XL_CHECK(cudaMalloc((void **)&e->aux, e->read_bytes));
    use(e, 0);
    XL_CHECK(cudaHostAlloc((void **)&e->host, e->max, cudaHostAllocPortable));
    for (int i = 0; i < slots; i++) {
        use(e, i);
        XL_CHECK(cudaDeviceSynchronize());
    }
    for (int w = 0; w < NWAYS; w++)
        for (int m = 0; m < NIMPLS; m++)
            for (int k = 0; k < MAX_SIZES; k++)
                for (int d = 0; d < 2; d++)
                    e->t[w][m][k][d].median_ms = NAN;
    for (int w = 0; w < 2; w++)
        for (int m = 0; m < NIMPLS; m++)
            for (int k = 0; k < N_PASSES; k++)
                e->rd[w][m][k].median_ms = NAN;
    e->check_eff = e->check_x = NAN;
}

/* probe - which of your functions run (the cheapest valid call returns 0, or a stage), a line for each left out;
 * the kit's stage and yours in --chunk chunks */
static void probe(ex *e)
{
    char sz[32];
    lab_read_job none = {NULL, e->dev[0], NULL, e->dev[0], 0};
    use(e, 0);
    if (!(e->bs = base_stage_create(e->dev[0], e->dev[1], e->chunk)))
        xl_fail("the kit's base_stage_create failed for chunks of %s (see the message above)",
                xl_format_size(e->chunk, sz, sizeof sz));
    e->have_copy = lab_peer_copy(NULL, e->dev[0], NULL, e->dev[0], 0, e->s[0][0]) == 0;
    if (!e->have_copy)
        printf("left out: your lab_peer_copy: 0 bytes returned -1, not 0 (not written yet?)\n");
    e->ls = lab_stage_create(e->dev[0], e->dev[1], e->chunk);
    if (!e->ls) {
        printf("left out: your lab_stage_create returned NULL for chunks of %s (not written yet?)\n",
               xl_format_size(e->chunk, sz, sizeof sz));
    } else if (lab_stage_copy(e->ls, NULL, NULL, 0, e->s[0][0], e->s[1][1]) != 0) {
        printf("left out: your lab_stage_copy: 0 bytes returned -1, not 0 (not written yet?)\n");
        lab_stage_destroy(e->ls);
        e->ls = NULL;
    }
    e->have_direct = lab_read_direct(&none, 1, e->s[0][0]) == 0;
    if (!e->have_direct)
        printf("left out: your lab_read_direct: 0 words returned -1, not 0 (not written yet?)\n");
    e->have_copied = lab_read_copied(&none, NULL, 1, e->s[0][0]) == 0;
    if (!e->have_copied)
        printf("left out: your lab_read_copied: 0 words returned -1, not 0 (not written yet?)\n");
    cudaGetLastError(); /* the grader checks that a refusal leaves no error; here it must not stop the kit's calls */
}

/* teardown - releases what setup and probe made */
static void teardown(ex *e)
{
    int slots = e->two ? 2 : 1;
    base_stage_destroy(e->bs);
    lab_stage_destroy(e->ls);
    for (int i = 0; i < slots; i++) {
        use(e, i);
        XL_CHECK(cudaDeviceSynchronize());
        XL_CHECK(cudaFree(e->src[i]));
        XL_CHECK(cudaFree(e->dst[i]));
        for (int k = 0; k < 2; k++)
            XL_CHECK(cudaStreamDestroy(e->s[i][k]));
        XL_CHECK(cudaEventDestroy(e->t0[i]));
        XL_CHECK(cudaEventDestroy(e->t1[i]));
        XL_CHECK(cudaEventDestroy(e->mid[i]));
    }
    use(e, 1);
    XL_CHECK(cudaFree(e->aux));
    XL_CHECK(cudaFreeHost(e->host));
}

/* ===== Results ===== */

/* write_model - the model's row at the CSV beside path (xl_csv_sibling "model"); exits 1 after one line on failure */
static void write_model(const ex *e, const char *path, const xl_gpu_info *g)
{
    char where[4096], err[256];
    int k = e->nsizes - 1;
    if (xl_csv_sibling(path, "model", where, sizeof where) != 0)
        xl_fail("--csv %s: the path is too long for the model's file beside it", path);
    xl_csv *c = xl_csv_open(where, "gpus,src_dev,dst_dev,bytes,chunk_bytes,nvlink_links,nvlink_gbps_link,nvlink_gbps,"
                                   "pcie_gbps,local_gbps,peer_gbps,peer_back_gbps,peer_off_gbps,serial_gbps,"
                                   "double_gbps,ideal_gbps,both_gbps,h2d_gbps,check_bytes,eff,x_serial,"
                                   "read_cross_passes", err, sizeof err);
    if (!c)
        xl_fail("%s", err);
    xl_csv_row(c, "%d,%d,%d,%zu,%zu,%d,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f,%.2f,%.2f,%.2f,%.2f,%.1f,%.2f,%zu,%.3f,%.3f,%.0f",
               e->two ? 2 : 1, e->dev[0], e->dev[1], e->sizes[k], e->chunk, e->nvlink_links, e->nvlink_gbps_link,
               e->nvlink_links ? e->nvlink_links * e->nvlink_gbps_link : NAN, e->pcie_gbps,
               gbps_at(e, W_LOCAL, KIT, k, 0), gbps_at(e, W_PEER, KIT, k, 0), gbps_at(e, W_PEER, KIT, k, 1),
               gbps_at(e, W_PEER_OFF, KIT, k, 0), gbps_at(e, W_SERIAL, KIT, k, 0), gbps_at(e, W_DOUBLE, YOURS, k, 0),
               gbps_at(e, W_IDEAL, KIT, k, 0), gbps_at(e, W_BOTH, KIT, k, 0), gbps_at(e, W_H2D, KIT, k, 0),
               e->check_bytes, e->check_eff, e->check_x, e->read_cross ? (double)e->read_cross : NAN);
    xl_csv_comment(c, "rates at bytes (GB/s = 1e9 bytes/s), from the kit's code except double_gbps (yours); "
                      "peer_gbps GPU src_dev to dst_dev with peer access on, peer_back_gbps the reverse, "
                      "peer_off_gbps without it; both_gbps both directions at once, in all; nvlink_gbps "
                      "nvlink_links x nvlink_gbps_link (nvidia-smi nvlink -s), pcie_gbps the PCIe line rate, each a "
                      "direction on paper; eff and x_serial from the done-when check at check_bytes; "
                      "read_cross_passes: the passes from which the kit's copy-first read beats its direct one; "
                      "nan: not measured");
    xl_write_run_info(c, g, prog, e->reps);
    if (xl_csv_close(c, err, sizeof err) != 0)
        xl_fail("%s", err);
    printf("wrote %s\n", where);
}

/* print_summary - the summary line */
static void print_summary(const ex *e)
{
    char c[6][16];
    int k = e->nsizes - 1;
    printf("\nsummary at the largest size: a copy on GPU %d %s GB/s; through the host serial %s, double-buffered %s, "
           "ideal %s GB/s (H2D alone %s)", e->dev[0], cell(gbps_at(e, W_LOCAL, KIT, k, 0), c[0], 16),
           cell(gbps_at(e, W_SERIAL, KIT, k, 0), c[1], 16), cell(gbps_at(e, W_DOUBLE, YOURS, k, 0), c[2], 16),
           cell(gbps_at(e, W_IDEAL, KIT, k, 0), c[3], 16), cell(gbps_at(e, W_H2D, KIT, k, 0), c[4], 16));
    if (e->two)
        printf("; between the GPUs: peer access on %s GB/s, off %s GB/s\n", cell(gbps_at(e, W_PEER, KIT, k, 0),
               c[0], 16), cell(gbps_at(e, W_PEER_OFF, KIT, k, 0), c[5], 16));
    else
        printf("; peer copies need 2 GPUs\n");
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    static ex e;
    char err[256], v1[16], v2[16], drv[64];
    int gen, width;
    parse_options(argc, argv, &o);
    xl_gpu_require(prog, &g);
    setup(&e, &o);
    e.pcie_gbps = NAN;
    printf("lab 09 on %s: driver %s (CUDA %s), built with CUDA %s", g.name, xl_driver_release(drv, sizeof drv),
           xl_version_string(g.driver_version, v1, sizeof v1), xl_version_string(g.runtime_version, v2, sizeof v2));
    if (xl_pcie_link(&gen, &width, &e.pcie_gbps) == 0)
        printf("; PCIe gen %d x%d, %.1f GB/s a direction on paper", gen, width, e.pcie_gbps);
    printf("\n");
    topology(&e);
    if (e.gpus == 1)
        printf("\npeer copies need 2 GPUs; this host has 1: measuring device-local copies and the road through the "
               "host (device 0 to device 0)\n");
    else if (!e.two)
        printf("\n--dst %d: measuring on GPU %d alone (device %d to device %d); peer copies need two different GPUs\n",
               e.dev[1], e.dev[0], e.dev[0], e.dev[0]);
    if (o.csv && !(e.csv = xl_csv_open(o.csv, "sweep,way,impl,src_dev,dst_dev,bytes,chunk_bytes,passes,ms_median,"
                                              "ms_min,ms_max,gbps", err, sizeof err)))
        xl_fail("%s", err);
    probe(&e);
    sweep_sizes(&e);
    sweep_chunks(&e);
    check_road(&e);
    xl_timeline *tl = timeline(&e);
    read_hashes(&e);
    if (e.two) {
        phase_kit(&e);
        phase_yours(&e);
    } else {
        reads(&e, W_DIRECT, KIT);
        reads(&e, W_COPIED, KIT);
        if (e.have_direct)
            reads(&e, W_DIRECT, YOURS);
        if (e.have_copied)
            reads(&e, W_COPIED, YOURS);
    }
    print_reads(&e);
    done_when(&e);
    print_summary(&e);
    if (e.csv) {
        xl_csv_comment(e.csv, "GPU %d (%s) to GPU %d (%s)%s; times from CUDA events on the first stream's device, "
                              "with a wait for the second stream's work before the end event; the timeline: "
                              "NAME-timeline.csv, the rates: NAME-model.csv", e.dev[0], e.name[0], e.dev[1],
                       e.name[e.two], e.two ? "" : ": one GPU");
        if (xl_timeline_write_beside(tl, e.csv, &g, prog, e.reps) != 0)
            exit(1);
        e.csv = NULL;
        write_model(&e, o.csv, &g);
    }
    xl_timeline_destroy(tl);
    teardown(&e);
    return 0;
}
