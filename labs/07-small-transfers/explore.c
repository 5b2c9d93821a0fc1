/* explore.c - lab 07's explorer: many small pieces moved as a loop of copies, as one batch call, and packed. Do not
 * edit.
 *
 * Both ways (to the GPU and to the host) it times, per call and to the end of its copies (wall time through
 * cudaStreamSynchronize; a warm-up, then the median, fastest and slowest of --reps calls): the kit's loop of
 * cudaMemcpyAsync, the kit's cudaMemcpyBatchAsync and yours (lab_send_batch, lab_fetch_batch), the kit's plain
 * packed path and yours (lab_send_packed, lab_fetch_packed). First against the piece size (1024 pieces, 64 B up to
 * 1 MiB or what --max allows), then against the number of pieces (1 to 4096 of 4 KiB). The host's pieces lie in
 * one pinned arena, the device's in one device arena in the reverse order; every path's bytes are checked (its
 * first call and its last timed call, into poisoned memory) before its figures are shown. Then the model: the link's
 * T = L + s/B, fitted to runs of back-to-back copies of 4 B to 64 MiB, the host's packing rate (the kit's thread
 * pool, common/pool.h, and one thread's memcpy), and your lab_pack_pays_below from them. Last the done-when check:
 * at 1024 x 64 KiB, 11 interleaved rounds of the host's part alone (packing, or unpacking what the link wrote), one
 * copy of the same bytes alone, and your packed path; your packed rate against the lower of the other two.
 *     make run LAB=07 ARGS="--csv small.csv"
 * small.csv: sweep,direction,method,pieces,piece_bytes,ms_median,ms_min,ms_max,gbps (sweep "size" or "count":
 * methods loop, kit-batch, batch, kit-packed, packed; sweep "check": pool-memcpy (the host's part alone), one-copy
 * and packed); small-model.csv, beside it (xl_csv_sibling): direction,
 * latency_us,link_gbps,lone_copy_us,pack_threads,pack_gbps,memcpy_gbps,pays_below_bytes,pays_below_memcpy_bytes,
 * check_ratio (one row per direction; inf: packing pays at every size, nan: not measured).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/csv.h"
#include "common/devmem.h"
#include "common/gpu.h"
#include "common/pool.h"
#include "common/sizes.h"
#include "common/stats.h"
#include "common/timing.h"
#include "common/trace.h"
#include "labs/07-small-transfers/lab.h"

static const char *prog = "07-small-transfers-explore";

#define MAX_REPS 50
#define MAX_PIECES 4096                        /* the count sweep's largest; the packers are made for it */
#define SWEEP_PIECES 1024                      /* the size sweep's count */
#define SWEEP_MIN ((size_t)64)                 /* the size sweep's smallest piece */
#define SWEEP_MAX ((size_t)1 << 20)            /* and its largest, when --max allows 1024 of them */
#define COUNT_PIECE ((size_t)4 << 10)          /* the count sweep's piece: the 4 KiB */
#define FIT_MIN ((size_t)4)                    /* the link's fit: one copy of 4 B ... */
#define FIT_MAX ((size_t)64 << 20)             /* ... to 64 MiB */
#define FIT_BYTES_PER_RUN ((size_t)64 << 20)   /* a timed run of the fit moves about this much (2 to 256 copies) */
#define CHECK_PIECES 1024                      /* the done-when check: 1024 x 64 KiB */
#define CHECK_PIECE ((size_t)64 << 10)
#define CHECK_BYTES ((size_t)CHECK_PIECES * CHECK_PIECE)
#define CHECK_ROUNDS 11                        /* interleaved rounds; medians */

/* ===== What is measured ===== */

enum { H2D, D2H, NDIRS };
static const char *const dir_name[NDIRS] = {"H2D", "D2H"};
static const char *const dir_words[NDIRS] = {"to the GPU (H2D)", "to the host (D2H)"};

/* The ways to move the pieces: the kit's first, yours after each. */
typedef enum { M_LOOP, M_KIT_BATCH, M_BATCH, M_KIT_PACKED, M_PACKED, NMETHODS } method;
static const char *const method_csv[NMETHODS] = {"loop", "kit-batch", "batch", "kit-packed", "packed"};
static const char *const method_head[NMETHODS] = {"loop", "kit batch", "your batch", "kit packed", "your packed"};
static const char *const method_words[NMETHODS] = {"the kit's loop", "the kit's batch", "your batch",
                                                   "the kit's packed path", "your packed path"};

/* One direction's model and check. */
typedef struct {
    double latency_us;        /* L: what one more copy costs in a row of copies (fit) */
    double link_gbps;         /* B (fit) */
    double lone_us;           /* one 4-byte copy waited for alone, median wall time */
    double pays_below;        /* your lab_pack_pays_below(L, B, the pool's rate), bytes */
    double pays_below_memcpy; /* the same with one thread's memcpy rate */
    double check_ratio;       /* your packed rate over the lower of the host's and the link's; NaN: not measured */
} model;

/* Everything the measurements share. */
typedef struct {
    unsigned char *src;         /* pinned, max_bytes: the pieces' data (random), the source of every check */
    unsigned char *dst;         /* pinned, max_bytes: where pieces fetched to the host land */
    unsigned char *scratch;     /* pinned, CHECK_BYTES: a staging of the explorer's own (packing rate, the check) */
    unsigned char *dev;         /* device, max_bytes: the pieces on the GPU, in the reverse order */
    unsigned char *dev_scratch; /* device, CHECK_BYTES: where the check's one large copy lands */
    size_t max_bytes;
    int reps;
    cudaStream_t stream;        /* non-blocking: cudaMemcpyBatchAsync refuses the legacy stream */
    lab_piece pieces[MAX_PIECES];
    lab_packer *mine;
    base_packer *kit;
    xl_pool *pool;
    int have[NMETHODS][NDIRS];  /* 1: the method runs here (the batch API exists, your function is written) */
    double at4k[NDIRS][NMETHODS]; /* medians at 1024 x 4 KiB (size sweep), ms; NaN: not measured */
    double pack_gbps;           /* the host's packing rate: the pool's threads */
    double memcpy_gbps;         /* one thread's memcpy */
    model m[NDIRS];
    xl_csv *csv;                /* the sweep's CSV, or NULL */
} ex;

/* ===== Pieces, poison and checks ===== */

/* lay_out - n pieces of s bytes: host piece i at i * s of src (to the GPU) or dst (to the host); its device piece at
 * (n - 1 - i) * s of dev, the reverse order, so that no copy of a whole arena passes for the pieces */
static void lay_out(ex *e, int d, int n, size_t s)
{
    unsigned char *host = d == H2D ? e->src : e->dst;
    for (int i = 0; i < n; i++)
        e->pieces[i] = (lab_piece){host + (size_t)i * s, e->dev + (size_t)(n - 1 - i) * s, s};
}

/* prepare_fetch - the device arena holds the n pieces' bytes (src's, in the reverse order) for a fetch; done for
 * every stream when it returns */
static void prepare_fetch(ex *e, int n, size_t s)
{
    for (int i = 0; i < n; i++)
        memcpy(e->dst + (size_t)(n - 1 - i) * s, e->src + (size_t)i * s, s);
    xl_dev_upload(e->dev, e->dst, (size_t)n * s);
}

/* poison - the destination side of direction d, its first bytes, set to XL_POISON_BYTE */
static void poison(ex *e, int d, size_t bytes)
{
    if (d == H2D)
        xl_dev_fill(e->dev, XL_POISON_BYTE, bytes);
    else
        xl_poison(e->dst, bytes);
}

/* verify - returns when each of the n pieces of s bytes just moved in direction d holds its bytes; else one line and
 * exit 1. The device arena is read back whole into dst first. */
static void verify(ex *e, const char *what, int d, int n, size_t s)
{
    char sz[32];
    if (d == H2D)
        XL_CHECK(cudaMemcpy(e->dst, e->dev, (size_t)n * s, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        size_t bad;
        const unsigned char *got = e->dst + (size_t)(d == H2D ? n - 1 - i : i) * s;
        if (xl_compare(got, e->src + (size_t)i * s, s, &bad) != 0)
            xl_fail("%s, %s, %d pieces of %s: piece %d is wrong from its byte %zu on (make grade LAB=07 says more)",
                    what, dir_name[d], n, xl_format_size(s, sz, sizeof sz), i, bad);
    }
}

/* ===== Timing one way of moving the pieces ===== */

/* start - method m in direction d on the first n of e's pieces, queued on e's stream (the packed fetch waits for its
 * own work); what the function returned */
static int start(ex *e, method m, int d, int n)
{
    const lab_piece *p = e->pieces;
    cudaStream_t s = e->stream;
    switch (m) {
    case M_LOOP:
        return d == H2D ? base_send_loop(p, n, s) : base_fetch_loop(p, n, s);
    case M_KIT_BATCH:
        return d == H2D ? base_send_batch(p, n, s) : base_fetch_batch(p, n, s);
    case M_BATCH:
        return d == H2D ? lab_send_batch(p, n, s) : lab_fetch_batch(p, n, s);
    case M_KIT_PACKED:
        return d == H2D ? base_send_packed(e->kit, p, n, s) : base_fetch_packed(e->kit, p, n, s);
    case M_PACKED:
        return d == H2D ? lab_send_packed(e->mine, p, n, s) : lab_fetch_packed(e->mine, p, n, s);
    default:
        return -1;
    }
}

/* call_ms - the wall time of one call of method m and the wait for its stream, in ms; exits after one line when the
 * call returns an error */
static double call_ms(ex *e, method m, int d, int n, size_t s)
{
    char sz[32];
    double t0 = xl_now_ms();
    int rc = start(e, m, d, n);
    XL_CHECK(cudaStreamSynchronize(e->stream));
    double ms = xl_now_ms() - t0;
    if (rc != 0)
        xl_fail("%s, %s, %d pieces of %s: returned %d (see its message above)", method_words[m], dir_name[d], n,
                xl_format_size(s, sz, sizeof sz), rc);
    return ms;
}

/* measure - method m, direction d, n pieces of s bytes: a warm-up call, then reps timed calls, into t; the warm-up's
 * bytes and the last timed call's are checked, each into freshly poisoned memory. For a fetch, the device arena
 * must hold the pieces (prepare_fetch). */
static void measure(ex *e, method m, int d, int n, size_t s, xl_timing *t)
{
    double ms[MAX_REPS];
    lay_out(e, d, n, s);
    for (int r = -1; r < e->reps; r++) {
        int checked = r == -1 || r == e->reps - 1;
        if (checked)
            poison(e, d, (size_t)n * s);
        double v = call_ms(e, m, d, n, s);
        if (checked)
            verify(e, method_words[m], d, n, s);
        if (r >= 0)
            ms[r] = v;
    }
    xl_summarize(ms, e->reps, t);
}

/* csv_row - one row of the sweep's CSV, when there is one */
static void csv_row(ex *e, const char *sweep, int d, const char *what, int n, size_t s, const xl_timing *t)
{
    if (e->csv)
        xl_csv_row(e->csv, "%s,%s,%s,%d,%zu,%.5f,%.5f,%.5f,%.3f", sweep, dir_name[d], what, n, s, t->median_ms,
                   t->min_ms, t->max_ms, xl_gbps((double)n * s, t->median_ms));
}

/* ===== The sweeps ===== */

/* sweep_point - every method that runs here at n pieces of s bytes in direction d: a line of medians (and how many
 * times faster than the loop your packed path was), a CSV row each; medians into ms[] (NaN where not run) */
static void sweep_point(ex *e, const char *sweep, int d, int n, size_t s, double ms[NMETHODS])
{
    char sz[32], tot[32], cell[24];
    if (d == D2H)
        prepare_fetch(e, n, s);
    if (strcmp(sweep, "size") == 0)
        printf("  %-8s %-9s", xl_format_size(s, sz, sizeof sz), xl_format_size((size_t)n * s, tot, sizeof tot));
    else
        printf("  %-8d %-9s", n, xl_format_size((size_t)n * s, tot, sizeof tot));
    for (int m = 0; m < NMETHODS; m++) {
        ms[m] = NAN;
        if (!e->have[m][d]) {
            printf(" %11s", "-");
            continue;
        }
        xl_timing t;
        measure(e, (method)m, d, n, s, &t);
        ms[m] = t.median_ms;
        printf(" %11.4f", t.median_ms);
        csv_row(e, sweep, d, method_csv[m], n, s, &t);
    }
    if (isnan(ms[M_PACKED]))
        snprintf(cell, sizeof cell, "-");
    else
        snprintf(cell, sizeof cell, "%.1fx", ms[M_LOOP] / ms[M_PACKED]);
    printf(" %11s\n", cell);
}

/* sweep_header - the table's title and column heads */
static void sweep_header(const ex *e, int d, const char *title, const char *first)
{
    printf("%s %s, ms per call to the end of its copies (median of %d):\n", dir_words[d], title, e->reps);
    printf("  %-8s %-9s", first, "in all");
    for (int m = 0; m < NMETHODS; m++)
        printf(" %11s", method_head[m]);
    printf(" %11s\n", "loop/packed");
}

/* sweep_sizes - SWEEP_PIECES pieces of SWEEP_MIN doubling up to SWEEP_MAX (or --max / SWEEP_PIECES), both ways */
static void sweep_sizes(ex *e)
{
    XL_RANGE_PUSH("size sweep");
    for (int d = 0; d < NDIRS; d++) {
        sweep_header(e, d, "against the piece size, 1024 pieces", "piece");
        for (size_t s = SWEEP_MIN; s <= SWEEP_MAX && s * SWEEP_PIECES <= e->max_bytes; s *= 2) {
            double ms[NMETHODS];
            sweep_point(e, "size", d, SWEEP_PIECES, s, ms);
            if (s == COUNT_PIECE)
                memcpy(e->at4k[d], ms, sizeof ms);
        }
    }
    XL_RANGE_POP();
}

/* sweep_counts - 1 to MAX_PIECES pieces of COUNT_PIECE, both ways */
static void sweep_counts(ex *e)
{
    XL_RANGE_PUSH("count sweep");
    for (int d = 0; d < NDIRS; d++) {
        sweep_header(e, d, "against the number of 4 KiB pieces", "pieces");
        for (int n = 1; n <= MAX_PIECES; n *= 2) {
            double ms[NMETHODS];
            sweep_point(e, "count", d, n, COUNT_PIECE, ms);
        }
    }
    XL_RANGE_POP();
}

/* ===== The model: the link's L and B, the host's packing rate, the break-even ===== */

/* copies_ms - wall ms of k back-to-back cudaMemcpyAsync of bytes in direction d on e's stream, with one wait at the
 * end. Copy i moves the bytes at offset i * bytes (wrapping within the arenas) from src to dev, or from dev to dst:
 * each copy its own addresses, as a loop's pieces have. */
static double copies_ms(ex *e, int d, size_t bytes, int k)
{
    size_t span = e->max_bytes / bytes * bytes; /* the offsets used: whole copies within the arenas */
    double t0 = xl_now_ms();
    for (int i = 0; i < k; i++) {
        size_t at = (size_t)i * bytes % span;
        if (d == H2D)
            XL_CHECK(cudaMemcpyAsync(e->dev + at, e->src + at, bytes, cudaMemcpyHostToDevice, e->stream));
        else
            XL_CHECK(cudaMemcpyAsync(e->dst + at, e->dev + at, bytes, cudaMemcpyDeviceToHost, e->stream));
    }
    XL_CHECK(cudaStreamSynchronize(e->stream));
    return xl_now_ms() - t0;
}

/* fit_link - the link in direction d: for each size of FIT_MIN doubling to FIT_MAX, the median time per copy of
 * runs of k back-to-back copies (what a loop pays a piece; the one wait shared by k), the first copy's bytes checked,
 * fitted to T = L + s/B (xl_fit_latency_bw); and one 4-byte copy waited for alone. Exits after one line when no
 * fit. */
static void fit_link(ex *e, int d, model *mo)
{
    double bytes[32], ms[32], t[MAX_REPS];
    int np = 0;
    XL_RANGE_PUSH("link fit");
    if (d == D2H)
        xl_dev_upload(e->dev, e->src, e->max_bytes);
    for (size_t s = FIT_MIN; s <= FIT_MAX; s *= 2) {
        size_t per_run = FIT_BYTES_PER_RUN / s;
        int k = per_run < 2 ? 2 : per_run > 256 ? 256 : (int)per_run;
        poison(e, d, s);
        copies_ms(e, d, s, k); /* warm-up, then its bytes checked */
        verify(e, "one copy", d, 1, s);
        for (int r = 0; r < e->reps; r++)
            t[r] = copies_ms(e, d, s, k) / k;
        bytes[np] = (double)s;
        ms[np++] = xl_median(t, e->reps);
    }
    if (xl_fit_latency_bw(bytes, ms, np, &mo->latency_us, &mo->link_gbps) != 0)
        xl_fail("%s: the copy times of 4 B to 64 MiB give no fit of T = L + s/B (was the GPU busy?)", dir_name[d]);
    for (int r = 0; r < e->reps; r++)
        t[r] = 1e3 * copies_ms(e, d, FIT_MIN, 1);
    mo->lone_us = xl_median(t, e->reps);
    XL_RANGE_POP();
}

/* host_copy_ms - wall ms of one copy of CHECK_BYTES on the host, from to to: the pool's threads, or (pool NULL) one
 * thread's memcpy */
static double host_copy_ms(xl_pool *pool, void *to, const void *from)
{
    double t0 = xl_now_ms();
    if (pool)
        xl_pool_memcpy(pool, to, from, CHECK_BYTES);
    else
        memcpy(to, from, CHECK_BYTES);
    return xl_now_ms() - t0;
}

/* pack_rate - the host's packing rate in GB/s over CHECK_BYTES, from src to scratch (pool's threads, or one memcpy
 * with pool NULL): a warm-up copy whose bytes are checked, then the median of reps. The same 64 MiB each time: the
 * rate of data the host's caches may still hold, as packing data just produced is. */
static double pack_rate(ex *e, xl_pool *pool)
{
    double t[MAX_REPS];
    size_t bad;
    xl_poison(e->scratch, CHECK_BYTES);
    host_copy_ms(pool, e->scratch, e->src);
    if (xl_compare(e->scratch, e->src, CHECK_BYTES, &bad) != 0)
        xl_fail("the host's %s copy of 64 MiB is wrong from byte %zu on", pool ? "pool" : "memcpy", bad);
    for (int r = 0; r < e->reps; r++)
        t[r] = host_copy_ms(pool, e->scratch, e->src);
    return xl_gbps((double)CHECK_BYTES, xl_median(t, e->reps));
}

/* fmt_bytes - a piece size such as lab_pack_pays_below gives, for a person: "every size" (infinity), "no answer"
 * with the value (below 0 or not a number), else B, KiB, MiB or GiB with a decimal; returns buf */
static const char *fmt_bytes(double b, char *buf, size_t len)
{
    if (isinf(b) && b > 0)
        snprintf(buf, len, "every size");
    else if (!(b >= 0))
        snprintf(buf, len, "no answer (returned %g)", b);
    else if (b < 1024)
        snprintf(buf, len, "%.0f B", b);
    else if (b < 1024.0 * 1024)
        snprintf(buf, len, "%.1f KiB", b / 1024);
    else if (b < 1024.0 * 1024 * 1024)
        snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
    else
        snprintf(buf, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    return buf;
}

/* measure_model - both directions' L and B, the host's packing rates, and your lab_pack_pays_below from them, a
 * line each */
static void measure_model(ex *e)
{
    char a[48], b[48];
    e->pack_gbps = pack_rate(e, e->pool);
    e->memcpy_gbps = pack_rate(e, NULL);
    printf("the model: a loop pays L + s/B a piece; packing pays s/P on the host (P: the host's copy rate)\n");
    printf("  host packing P: %.1f GB/s with %d threads (xl_pool_memcpy), %.1f GB/s with one thread's memcpy\n",
           e->pack_gbps, xl_pool_threads(e->pool), e->memcpy_gbps);
    for (int d = 0; d < NDIRS; d++) {
        model *mo = &e->m[d];
        fit_link(e, d, mo);
        mo->pays_below = lab_pack_pays_below(mo->latency_us, mo->link_gbps, e->pack_gbps);
        mo->pays_below_memcpy = lab_pack_pays_below(mo->latency_us, mo->link_gbps, e->memcpy_gbps);
        printf("  %s: L = %.2f us a copy in a row of copies, B = %.1f GB/s (one 4-byte copy waited for alone: %.1f "
               "us)\n", dir_words[d], mo->latency_us, mo->link_gbps, mo->lone_us);
        printf("    your lab_pack_pays_below: packing pays below %s with the pool, below %s with one memcpy thread "
               "(as the kit's packed path packs)\n",
               fmt_bytes(mo->pays_below, a, sizeof a), fmt_bytes(mo->pays_below_memcpy, b, sizeof b));
    }
}

/* ===== The done-when check ===== */

/* one_copy_ms - wall ms of one copy of CHECK_BYTES over the link in direction d and the wait for it: src to
 * dev_scratch, or dev to scratch (as a fetch's trips land in its staging) */
static double one_copy_ms(ex *e, int d)
{
    double t0 = xl_now_ms();
    if (d == H2D)
        XL_CHECK(cudaMemcpyAsync(e->dev_scratch, e->src, CHECK_BYTES, cudaMemcpyHostToDevice, e->stream));
    else
        XL_CHECK(cudaMemcpyAsync(e->scratch, e->dev, CHECK_BYTES, cudaMemcpyDeviceToHost, e->stream));
    XL_CHECK(cudaStreamSynchronize(e->stream));
    return xl_now_ms() - t0;
}

/* host_turn_ms - the host's part of the packed path in direction d, alone, with the pool: packing reads the pieces
 * (src) into a staging of its own (scratch); unpacking reads what the link just wrote (scratch, after one_copy_ms)
 * into the pieces (dst, which the packed fetch then overwrites) */
static double host_turn_ms(ex *e, int d)
{
    return d == H2D ? host_copy_ms(e->pool, e->scratch, e->src) : host_copy_ms(e->pool, e->dst, e->scratch);
}

/* check_overlap - the done-when check in direction d, at CHECK_PIECES x CHECK_PIECE: a warm-up round, then
 * CHECK_ROUNDS rounds of three turns: the host's part alone (host_turn_ms: the pool's threads), one copy of the same
 * bytes over the link alone, and your packed path (its bytes checked in the warm-up and the last round, into poisoned
 * memory). To the GPU the host packs first; to the host the link copies first and the host unpacks what it wrote.
 * The medians' ratio, your packed rate over the lower of the other two, into the model, with a line and three CSV
 * rows. */
static void check_overlap(ex *e, int d)
{
    double pool[CHECK_ROUNDS], link[CHECK_ROUNDS], mine[CHECK_ROUNDS];
    xl_timing tp, tl, tm;
    XL_RANGE_PUSH("done-when check");
    if (d == D2H)
        prepare_fetch(e, CHECK_PIECES, CHECK_PIECE);
    lay_out(e, d, CHECK_PIECES, CHECK_PIECE);
    for (int r = -1; r < CHECK_ROUNDS; r++) {
        int checked = r == -1 || r == CHECK_ROUNDS - 1;
        double p = 0, l;
        if (d == H2D)
            p = host_turn_ms(e, d);
        l = one_copy_ms(e, d);
        if (d == D2H)
            p = host_turn_ms(e, d);
        if (checked)
            poison(e, d, CHECK_BYTES);
        double m = call_ms(e, M_PACKED, d, CHECK_PIECES, CHECK_PIECE);
        if (checked)
            verify(e, method_words[M_PACKED], d, CHECK_PIECES, CHECK_PIECE);
        if (r >= 0)
            pool[r] = p, link[r] = l, mine[r] = m;
    }
    xl_summarize(pool, CHECK_ROUNDS, &tp);
    xl_summarize(link, CHECK_ROUNDS, &tl);
    xl_summarize(mine, CHECK_ROUNDS, &tm);
    double host_gbps = xl_gbps((double)CHECK_BYTES, tp.median_ms);
    double link_gbps = xl_gbps((double)CHECK_BYTES, tl.median_ms);
    double mine_gbps = xl_gbps((double)CHECK_BYTES, tm.median_ms);
    e->m[d].check_ratio = mine_gbps / fmin(host_gbps, link_gbps);
    printf("  %s: host alone %.1f GB/s (%.3f ms), link alone %.1f GB/s (%.3f ms), your packed path %.1f GB/s (%.3f ms, "
           "%.3f-%.3f): %.2f of the lower\n",
           dir_words[d], host_gbps, tp.median_ms, link_gbps, tl.median_ms, mine_gbps, tm.median_ms, tm.min_ms,
           tm.max_ms, e->m[d].check_ratio);
    csv_row(e, "check", d, "pool-memcpy", 1, CHECK_BYTES, &tp);
    csv_row(e, "check", d, "one-copy", 1, CHECK_BYTES, &tl);
    csv_row(e, "check", d, "packed", CHECK_PIECES, CHECK_PIECE, &tm);
    XL_RANGE_POP();
}

/* check_both - the done-when check both ways, or one line saying why not */
static void check_both(ex *e)
{
    printf("done-when check: 1024 pieces of 64 KiB, %d interleaved rounds, medians; 1.00 = your packed path as fast "
           "as the slower of packing alone and copying alone (so the two overlapped fully)\n", CHECK_ROUNDS);
    for (int d = 0; d < NDIRS; d++) {
        e->m[d].check_ratio = NAN;
        if (e->have[M_PACKED][d])
            check_overlap(e, d);
        else
            printf("  %s: not measured: your packed path does not run yet\n", dir_words[d]);
    }
}

/* ===== Setting up ===== */

/* Options, as given on the command line. */
typedef struct {
    size_t max_bytes;
    int reps;
    const char *csv; /* NULL: no CSV */
} options;

/* parse_options - the command line into o; exits 0 after --help, 2 after one line on bad input */
static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.max_bytes = (size_t)1 << 30, .reps = 7};
    const xl_opt opts[] = {
        {"max", XL_OPT_SIZE, &o->max_bytes, 64 << 20, (long long)1 << 30,
         "the most bytes one call moves, 64M to 1G (default 1G: 1024 pieces of up to 1 MiB); lower it on a small "
         "machine"},
        {"reps", XL_OPT_INT, &o->reps, 1, MAX_REPS, "timed calls per point after one warm-up, 1 to 50 (default 7)"},
        {"csv", XL_OPT_OUTFILE, &o->csv, 0, 0, "also write the figures as CSV (the model beside it, NAME-model.csv)"}};
    xl_cli_or_exit(prog, "Many small transfers: a loop of copies, the batch call and packing, against piece size and "
                   "count; the model L + s/B and when packing pays.", opts, sizeof opts / sizeof opts[0], argc, argv);
}

/* probe - 1 when method m runs in direction d: the batch API exists and a call of 0 pieces returns 0 (your function
 * is written); else 0, with a line saying why it is left out */
static int probe(ex *e, method m, int d)
{
    if ((m == M_BATCH || m == M_KIT_BATCH) && !LAB_HAVE_BATCH) {
        if (m == M_BATCH && d == H2D)
            printf("left out: the batch calls: cudaMemcpyBatchAsync needs CUDA 12.8 or newer\n");
        return 0;
    }
    if (m == M_PACKED && !e->mine) {
        if (d == H2D)
            printf("left out: your packed path: lab_packer_create returned NULL (see its message above)\n");
        return 0;
    }
    if (start(e, m, d, 0) != 0) {
        printf("left out: %s %s: a call with no pieces returned an error, not 0 (not written yet?)\n",
               method_words[m], dir_name[d]);
        return 0;
    }
    XL_CHECK(cudaStreamSynchronize(e->stream));
    return 1;
}

/* setup - e's arenas (fresh random data in src), stream, packers, pool and which methods run; exits 1 after one line
 * when something cannot be had */
static void setup(ex *e, const options *o)
{
    e->max_bytes = o->max_bytes;
    e->reps = o->reps;
    XL_CHECK(cudaMallocHost((void **)&e->src, e->max_bytes));
    XL_CHECK(cudaMallocHost((void **)&e->dst, e->max_bytes));
    XL_CHECK(cudaMallocHost((void **)&e->scratch, CHECK_BYTES));
    XL_CHECK(cudaMalloc((void **)&e->dev, e->max_bytes));
    XL_CHECK(cudaMalloc((void **)&e->dev_scratch, CHECK_BYTES));
    XL_CHECK(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
    xl_fill_random(e->src, e->max_bytes, xl_fresh_seed());
    if (!(e->pool = xl_pool_create(xl_pool_default_threads())))
        xl_fail("cannot start the kit's packing threads (xl_pool_create)");
    if (!(e->kit = base_packer_create(e->max_bytes, MAX_PIECES)))
        xl_fail("cannot create the kit's packer for %zu MiB (out of pinned memory? try a smaller --max)",
                e->max_bytes >> 20);
    e->mine = lab_packer_create(e->max_bytes, MAX_PIECES);
    for (int m = 0; m < NMETHODS; m++)
        for (int d = 0; d < NDIRS; d++)
            e->have[m][d] = probe(e, (method)m, d);
    for (int d = 0; d < NDIRS; d++)
        for (int m = 0; m < NMETHODS; m++)
            e->at4k[d][m] = NAN;
}

/* teardown - releases what setup made */
static void teardown(ex *e)
{
    lab_packer_destroy(e->mine);
    base_packer_destroy(e->kit);
    xl_pool_destroy(e->pool);
    XL_CHECK(cudaStreamDestroy(e->stream));
    XL_CHECK(cudaFree(e->dev));
    XL_CHECK(cudaFree(e->dev_scratch));
    XL_CHECK(cudaFreeHost(e->src));
    XL_CHECK(cudaFreeHost(e->dst));
    XL_CHECK(cudaFreeHost(e->scratch));
}

/* ===== Results ===== */

/* write_model - the model's table at the CSV beside path (xl_csv_sibling "model"); exits 1 after one line on failure */
static void write_model(const ex *e, const char *path, const xl_gpu_info *g)
{
    char where[4096], err[256];
    if (xl_csv_sibling(path, "model", where, sizeof where) != 0)
        xl_fail("--csv %s: the path is too long for the model's file beside it", path);
    xl_csv *c = xl_csv_open(where, "direction,latency_us,link_gbps,lone_copy_us,pack_threads,pack_gbps,memcpy_gbps,"
                                   "pays_below_bytes,pays_below_memcpy_bytes,check_ratio", err, sizeof err);
    if (!c)
        xl_fail("%s", err);
    for (int d = 0; d < NDIRS; d++) {
        const model *mo = &e->m[d];
        xl_csv_row(c, "%s,%.4f,%.3f,%.3f,%d,%.3f,%.3f,%.6g,%.6g,%.4f", dir_name[d], mo->latency_us, mo->link_gbps,
                   mo->lone_us, xl_pool_threads(e->pool), e->pack_gbps, e->memcpy_gbps, mo->pays_below,
                   mo->pays_below_memcpy, mo->check_ratio);
    }
    xl_csv_comment(c, "L and B: T = L + s/B fitted to runs of back-to-back cudaMemcpyAsync of 4 B to 64 MiB (time per "
                      "copy); pays_below: lab_pack_pays_below(L, B, pack_gbps or memcpy_gbps), inf = every size");
    xl_write_run_info(c, g, prog, e->reps);
    if (xl_csv_close(c, err, sizeof err) != 0)
        xl_fail("%s", err);
    printf("wrote %s\n", where);
}

/* cell - a median in ms, or "-" when it was not measured, into buf */
static const char *cell(double ms, char *buf, size_t len)
{
    if (isnan(ms))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3f ms", ms);
    return buf;
}

/* times_loop - " (N.Nx)", how many times faster than the loop's median a median is, or "" */
static const char *times_loop(double ms, double loop_ms, char *buf, size_t len)
{
    if (isnan(ms) || isnan(loop_ms) || !(ms > 0))
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, " (%.1fx)", loop_ms / ms);
    return buf;
}

/* ratio_text - a ratio with two decimals, or "-" when it was not measured, into buf */
static const char *ratio_text(double r, char *buf, size_t len)
{
    if (isnan(r))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f", r);
    return buf;
}

/* print_summary - the short table, both directions side by side, then the summary line */
static void print_summary(const ex *e)
{
    char a[48], b[48], c[48], f[48], g[48], r1[16], r2[16];
    static const int rows[] = {M_LOOP, M_KIT_BATCH, M_BATCH, M_KIT_PACKED, M_PACKED};
    printf("\n%-34s %-24s %-24s\n", "", "to the GPU (H2D)", "to the host (D2H)");
    printf("%-34s %-24.2f %-24.2f\n", "L, us a copy (in a row of copies)", e->m[H2D].latency_us, e->m[D2H].latency_us);
    printf("%-34s %-24.1f %-24.1f\n", "B, GB/s", e->m[H2D].link_gbps, e->m[D2H].link_gbps);
    printf("%-34s %-24s %-24s\n", "packing pays below (pool)", fmt_bytes(e->m[H2D].pays_below, a, sizeof a),
           fmt_bytes(e->m[D2H].pays_below, b, sizeof b));
    printf("1024 x 4 KiB, per call (x the loop):\n");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int m = rows[i];
        char h[100], dd[100];
        snprintf(h, sizeof h, "%s%s", cell(e->at4k[H2D][m], a, sizeof a),
                 times_loop(e->at4k[H2D][m], e->at4k[H2D][M_LOOP], b, sizeof b));
        snprintf(dd, sizeof dd, "%s%s", cell(e->at4k[D2H][m], c, sizeof c),
                 times_loop(e->at4k[D2H][m], e->at4k[D2H][M_LOOP], f, sizeof f));
        printf("  %-32s %-24s %-24s\n", method_words[m], h, dd);
    }
    printf("%-34s %-24s %-24s\n", "done-when check (1.00 at best)", ratio_text(e->m[H2D].check_ratio, r1, sizeof r1),
           ratio_text(e->m[D2H].check_ratio, r2, sizeof r2));
    printf("summary: 1024 x 4 KiB to the GPU: loop %s, your batch %s, your packed path %s%s; L %.2f us, B %.1f GB/s, "
           "host packing %.1f GB/s; packing pays below %s; done-when check %s to the GPU, %s to the host\n",
           cell(e->at4k[H2D][M_LOOP], a, sizeof a), cell(e->at4k[H2D][M_BATCH], b, sizeof b),
           cell(e->at4k[H2D][M_PACKED], c, sizeof c),
           times_loop(e->at4k[H2D][M_PACKED], e->at4k[H2D][M_LOOP], f, sizeof f), e->m[H2D].latency_us,
           e->m[H2D].link_gbps, e->pack_gbps, fmt_bytes(e->m[H2D].pays_below, g, sizeof g), r1, r2);
}

int main(int argc, char **argv)
{
    options o;
    xl_gpu_info g;
    static ex e;
    char err[256];
    parse_options(argc, argv, &o);
    xl_gpu_require(prog, &g);
    if (o.max_bytes > g.total_mem_bytes / 4)
        xl_cli_die(prog, "--max is more than a quarter of the GPU's memory (the arena and two packers' staging)");
    if (o.csv && !(e.csv = xl_csv_open(o.csv, "sweep,direction,method,pieces,piece_bytes,ms_median,ms_min,ms_max,gbps",
                                       err, sizeof err)))
        xl_fail("%s", err);
    setup(&e, &o);
    printf("lab 07 on %s: pieces from one pinned arena to one device arena and back; up to %zu MiB a call\n", g.name,
           o.max_bytes >> 20);
    sweep_sizes(&e);
    sweep_counts(&e);
    measure_model(&e);
    check_both(&e);
    print_summary(&e);
    if (e.csv) {
        xl_csv_comment(e.csv, "wall time per call through cudaStreamSynchronize; host pieces in one pinned arena, "
                              "device pieces in one device arena in the reverse order");
        xl_write_run_info(e.csv, &g, prog, e.reps);
        if (xl_csv_close(e.csv, err, sizeof err) != 0)
            xl_fail("%s", err);
        printf("wrote %s\n", o.csv);
        write_model(&e, o.csv, &g);
    }
    teardown(&e);
    return 0;
}
