/* 02-pinned-copy.c - the grader of lab 02 (pinned copy). Course staff only.
 *
 * Built against the student's labs/02-pinned-copy/lab.cu (make grade LAB=02), the
 * reference solution (IMPL=solution) and each planted mutant (make test). Speed is
 * judged against the kit's own copies in the same run, and the bytes of the student's
 * timed copies (sent to buffers of their own) are checked afterwards. Races are made
 * certain by queuing GPU work (the delay kernel, then a write of the same data) on the
 * caller's stream ahead of each checked call: only work on that stream, waited for,
 * gives the right bytes with the stream idle on return. The kit's call wrappers record
 * the copies a call makes (common/copylog.h) and count what it leaves allocated.
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
#include "common/delay.h"
#include "common/devmem.h"
#include "common/faults.h"
#include "common/memacct.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/hostwatch.h"
#include "grader/kit.h"
#include "labs/02-pinned-copy/lab.h"

XL_LAB("02", "pinned-copy");

#define GUARD 4096
#define DELAY_NS 20000000ull      /* the caller's stream is kept busy 20 ms ahead of each checked call */
#define DELAY_MS ((int)(DELAY_NS / 1000000))
#define STALE_BYTE 0x5A           /* what work queued ahead leaves in a buffer: neither the poison nor the data */
#define BUSY_NS 100000000ull      /* narrow_wait: a 100 ms kernel on another stream ... */
#define NARROW_MS 50.0            /* ... beside which a 1 MiB copy (0.03 ms) must return in 50 ms */
#define LOG_MAX 4096              /* copies recorded per checked call */
#define BIG (256u << 20)          /* speed tests: far past the fixed cost of a copy */
#define MID (64u << 20)
#define LOOP_N 16                 /* the pool test: 16 transfers of 64 MiB */
#define PAGE 4096
#define COPY_PAST ((size_t)512 << 20) /* the exact copy tests' largest copy is a little more: past every piece size
                                       * up to 512 MiB that a copy made in pieces might use */
#define TRIP_PAST ((size_t)256 << 20) /* the round trip's: past 256 MiB pieces (its speed test checks 256 MiB) */
#define HUGE_PIN ((size_t)4 << 30) /* alloc.failure_is_clean pins a little more than this */
/* Thresholds, each measured against the kit in the same run. Margins seen for the reference in 3 gradings on an
 * H200 (2026-11-22): pinned copies and the round trip 100% of the kit's, spread under 0.5%; the pool 23.8x to
 * 29.3x the allocate-per-transfer loop; pinned 3.6x to 8.5x pageable (D2H is the closer direction). The H100 gave
 * the reference full points in all 10 gradings of its last run; its explorer saw the pool at 21.8x to 32.1x.
 * Pinned against pageable was 2x until 18 stability runs on the H100 gave it a margin of 2.5 spreads (median 4.1x,
 * 3.1x to 5.6x): the spread is the kit's pageable rate from one grading to the next (7.6 to 17.4 GB/s), not the
 * student's pinned copy (54.0 to 55.0 GB/s). A pageable mistake measures 1.0x to 1.1x, because both sides are
 * timed interleaved in one run; 1.5x, the premise's own bar, sits between them with more room.
 * The round trip needed 90% of the kit's until 42 runs in another H100 session gave it a margin of 2.3 spreads: that
 * machine had slow spells of the link (the kit's 7 round trips of one measurement took 9.8 to 21.3 ms) that fell
 * on the student's side in 3 runs (85% to 89%; the second try gave 100%). The mistake it is there for is far
 * slower (the planted round trip staged through malloc'd memory: 4% on that H100), so 80% still catches it and
 * leaves the reference room. */
#define PINNED_NEED 90            /* your pinned copy against cudaMemcpyAsync from the same sources */
#define PAGEABLE_NEED 1.5         /* your pinned copy against the kit's pageable copy */
#define PAGEABLE_PREMISE 1.5      /* below this kit pinned/pageable ratio the machine gives pinning no edge */
#define POOL_NEED 5               /* the kit's allocate-per-transfer loop against your pooled loop */
#define ROUND_NEED 80

/* random_host - malloc'd host memory holding fresh random data (every page touched); fails the test on OOM */
static unsigned char *random_host(size_t bytes)
{
    unsigned char *p = malloc(bytes ? bytes : 1);
    cr_assert(p != NULL, "the grader could not allocate %zu bytes of host memory", bytes);
    xl_fill_random(p, bytes, xl_fresh_seed());
    return p;
}

/* pinned_random - cudaMallocHost'd memory holding fresh random data; fails the test on error */
static unsigned char *pinned_random(size_t bytes)
{
    void *p = NULL;
    XL_CHECK(cudaMallocHost(&p, bytes));
    xl_fill_random(p, bytes, xl_fresh_seed());
    return p;
}

/* expect_stream_done - fails unless all work on the caller's stream s is finished right after what returned: the
 * grader had queued DELAY_MS ms of work on s just before the call, so a call that returns sooner either did not wait
 * for its copies or made them on another stream (which does not wait for s) */
static void expect_stream_done(cudaStream_t s, const char *what)
{
    cudaError_t q = cudaStreamQuery(s);
    if (q == cudaErrorNotReady) {
        cudaGetLastError(); /* the answer "not yet" is not an error of the code under test */
        XL_CHECK(cudaStreamSynchronize(s));
    }
    cr_assert(q != cudaErrorNotReady,
              "%s returned while the %d ms of GPU work that the grader had queued on the stream it was given, just "
              "before the call, was still running. Either it did not wait for its copies (cudaStreamSynchronize(stream) "
              "before returning), or it made them on another stream (stream 0, or one of its own), which does not wait "
              "for the work queued before them: queue every copy on the stream you are given, then wait for it",
              what, DELAY_MS);
    XL_CHECK(q);
}

/* within - 1 when [p, p + n) lies inside [base, base + len) */
static int within(const void *p, size_t n, const void *base, size_t len)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
    return a >= b && a + n <= b + len;
}

/* The streams a caller may pass besides one of its own: the legacy stream by both of its names, and the per-thread
 * default stream. */
static cudaStream_t const default_streams[3] = {0, cudaStreamLegacy, cudaStreamPerThread};
#define N_DEFAULT 3

/* stream_label - how a message names the stream s */
static const char *stream_label(cudaStream_t s)
{
    return s == 0                     ? "stream 0"
           : s == cudaStreamLegacy    ? "cudaStreamLegacy"
           : s == cudaStreamPerThread ? "cudaStreamPerThread"
                                      : "a stream of the grader's";
}

/* What stderr got between kit_capture_begin and hear_end: a refusal's line, to be counted once the call is checked. */
static struct {
    int saved; /* kit_capture_begin's answer: -1 when stderr could not be captured (nothing is then checked) */
    int lines;
    char text[512];
} heard;

/* hear_end - stderr back, what the call printed kept in heard (saved: kit_capture_begin's answer) */
static void hear_end(int saved)
{
    heard.saved = saved;
    heard.lines = kit_capture_end(saved, heard.text, sizeof heard.text);
    size_t len = strlen(heard.text);
    while (len > 0 && heard.text[len - 1] == '\n')
        heard.text[--len] = '\0';
    for (size_t i = 0; i < len; i++) /* the lines on one, for the message */
        heard.text[i] = heard.text[i] == '\n' ? '|' : heard.text[i];
}

/* expect_said - fails unless the call heard last printed exactly one line on stderr (at least one when only_one is 0:
 * a failure met inside another of the lab's functions, which may have said it already); call names it */
static void expect_said(int only_one, const char *call)
{
    cr_assert(heard.saved < 0 || (only_one ? heard.lines == 1 : heard.lines >= 1),
              "%s printed %d lines on stderr%s%s%s: lab.h asks for one line that says what was wrong "
              "(fprintf(stderr, ...))",
              call, heard.lines, heard.lines ? " (\"" : "", heard.text, heard.lines ? "\")" : "");
}

/* ===== Part A: pinned buffers ===== */

/* alloc_zero_again - kit_expect_no_heap_leak's attempt: lab_pinned_alloc(0), which must return NULL */
static int alloc_zero_again(void *ctx)
{
    (void)ctx;
    void *p = lab_pinned_alloc(0);
    if (p)
        lab_pinned_free(p);
    return p == NULL ? 0 : -1;
}

KIT_ALLOC_ATTEMPT(alloc_attempt, lab_pinned_alloc, lab_pinned_free)

XL_TEST(alloc, pinned, 5, XL_GPU,
        "lab_pinned_alloc returns ordinary page-locked memory of the size asked (not write-combined; the GPU can "
        "write it), released by lab_pinned_free; 0 bytes gives NULL", 10)
{
    char what[128];
    kit_expect_pinned_alloc(lab_pinned_alloc, lab_pinned_free, "lab_pinned_alloc",
                            "the copy engines cannot DMA from it directly (use cudaMallocHost or cudaHostAlloc)");
    size_t n = (size_t)kit_rand_int(1, 8 << 20);
    unsigned char *want = random_host(n);
    void *dev = kit_dev_alloc(n);
    cudaStream_t s = kit_stream();
    xl_dev_upload(dev, want, n);
    kit_held before = kit_held_now();
    unsigned char *p = lab_pinned_alloc(n);
    cr_assert(p != NULL, "lab_pinned_alloc(%zu) returned NULL", n);
    cr_assert(kit_is_pinned(p) && kit_is_pinned(p + n - 1),
              "lab_pinned_alloc(%zu) returned memory that is not page-locked over all of its %zu bytes", n, n);
    kit_expect_not_write_combined(p, "lab_pinned_alloc");
    XL_CHECK(cudaMemcpyAsync(p, dev, n, cudaMemcpyDeviceToHost, s));
    XL_CHECK(cudaStreamSynchronize(s));
    snprintf(what, sizeof what, "a device-to-host copy of %zu bytes into lab_pinned_alloc(%zu)", n, n);
    kit_expect_host_bytes(p, want, n, 0, what);
    lab_pinned_free(p);
    snprintf(what, sizeof what, "lab_pinned_alloc(%zu) and lab_pinned_free", n);
    kit_expect_released(before, what);
    before = kit_held_now();
    int saved = kit_capture_begin();
    void *none = lab_pinned_alloc(0);
    hear_end(saved);
    cr_assert(none == NULL, "lab_pinned_alloc(0) must return NULL");
    expect_said(1, "lab_pinned_alloc(0)");
    cr_assert(cudaGetLastError() == cudaSuccess, "lab_pinned_alloc(0) left a CUDA error pending");
    kit_expect_released(before, "lab_pinned_alloc(0), which returns NULL");
    kit_expect_no_heap_leak(alloc_zero_again, NULL, "lab_pinned_alloc(0), which returns NULL",
                            "a refusal frees everything it allocated before it returns");
    XL_CHECK(cudaFree(dev));
    free(want);
}

XL_TEST(alloc, failure_is_clean, 5, XL_GPU,
        "lab_pinned_alloc fails only where it must: 1 PiB, SIZE_MAX and an allocation failing as out of memory "
        "return NULL with one line, nothing held and no CUDA error pending; more than 4 GiB, which the machine can "
        "pin, gives a buffer", 40)
{
    /* what cannot be pinned: 1 PiB, and the largest size_t (a size rounded up inside wraps to a small one there) */
    static const size_t never[2] = {(size_t)1 << 50, SIZE_MAX};
    static const char *const never_name[2] = {"1 PiB", "SIZE_MAX bytes"};
    for (int k = 0; k < 2; k++) {
        char call[96];
        snprintf(call, sizeof call, "lab_pinned_alloc(%s), which cannot be pinned,", never_name[k]);
        kit_held held = kit_held_now();
        int saved = kit_capture_begin();
        void *p = lab_pinned_alloc(never[k]);
        hear_end(saved);
        cudaError_t err = cudaGetLastError();
        cr_assert(p == NULL, "lab_pinned_alloc(%s) did not return NULL", never_name[k]);
        cr_assert(err == cudaSuccess,
                  "after the failed lab_pinned_alloc(%s) a CUDA error was still pending (%s): read it with "
                  "cudaGetLastError() so that the next check does not blame other code",
                  never_name[k], cudaGetErrorString(err));
        expect_said(1, call);
        kit_expect_released(held, call);
    }
    /* the failure path met at the allocation itself (the kit makes it fail as out of memory), repeated: nothing
     * held, no CUDA error left, no heap growth */
    size_t small = (size_t)kit_rand_int(1, 1 << 16);
    char call[64];
    snprintf(call, sizeof call, "lab_pinned_alloc(%zu)", small);
    kit_expect_create_failures(alloc_attempt, &small, call);
    void *q = lab_pinned_alloc(4096);
    cr_assert(q != NULL, "after a failed allocation, lab_pinned_alloc(4096) must work again");
    lab_pinned_free(q);

    /* past 4 GiB: no limit of the student's own (1 GiB, 2^31, 2^32) may refuse what the machine can pin */
    size_t huge = HUGE_PIN + (size_t)kit_rand_int(1, 64 << 20);
    char what[96];
    kit_held before = kit_held_now();
    unsigned char *h = lab_pinned_alloc(huge);
    if (!h) {
        void *k = NULL;
        cudaError_t e = cudaMallocHost(&k, huge);
        cudaGetLastError(); /* the grader's try, which may fail as the student's did */
        if (e == cudaSuccess)
            XL_CHECK(cudaFreeHost(k));
        cr_assert(e != cudaSuccess,
                  "lab_pinned_alloc(%zu), 4 GiB + %zu bytes, returned NULL, but cudaMallocHost of as much works on "
                  "this machine: lab.h's NULL is only for 0 bytes or memory that cannot be pinned, with no limit of "
                  "your own",
                  huge, huge - HUGE_PIN);
        xl_note("this machine could not pin %zu bytes (%s): lab_pinned_alloc's NULL was right", huge,
                cudaGetErrorString(e));
        return;
    }
    cr_assert(kit_is_pinned(h) && kit_is_pinned(h + huge - 1),
              "lab_pinned_alloc(%zu), 4 GiB + %zu bytes, returned memory that is not page-locked over all of it", huge,
              huge - HUGE_PIN);
    snprintf(what, sizeof what, "lab_pinned_alloc(%zu), 4 GiB + %zu bytes,", huge, huge - HUGE_PIN);
    kit_expect_not_write_combined(h, what); /* the ordinary kind at every size */
    h[0] = 1, h[huge - 1] = 2; /* both ends writable */
    lab_pinned_free(h);
    snprintf(what, sizeof what, "lab_pinned_alloc(%zu) and lab_pinned_free", huge);
    kit_expect_released(before, what);
}

/* ===== Part B: copies ===== */

/* check_copy - one checked copy of n bytes in direction dir on the caller's stream s, behind DELAY_MS ms of work
 * queued on s that ends in the destination being overwritten (H2D) or the source being written (D2H): only a copy
 * on s that is waited for gives the data, and only if s is idle when it returns. registered: the host side is
 * malloc'd memory pinned with cudaHostRegister (pinned as much as cudaMallocHost's, which it is otherwise) */
static void check_copy(size_t n, lab_dir dir, cudaStream_t s, int registered)
{
    char what[160];
    unsigned char *host, *want = random_host(n);
    if (registered) {
        size_t len = (n + GUARD + PAGE - 1) / PAGE * PAGE; /* pages of its own: none shared with other memory */
        host = aligned_alloc(PAGE, len);
        cr_assert(host != NULL, "the grader could not allocate %zu bytes of host memory", len);
        memset(host, XL_POISON_BYTE, len);
        XL_CHECK(cudaHostRegister(host, len, cudaHostRegisterDefault));
    } else {
        host = kit_pinned_alloc(n + GUARD);
    }
    void *dev = kit_dev_alloc(n + GUARD), *real = NULL;
    if (dir == LAB_H2D) {
        memcpy(host, want, n);
        XL_CHECK(cudaDeviceSynchronize()); /* the setup done, on every stream, before anything is queued on s */
        kit_queue_busy_memset(s, DELAY_NS, dev, STALE_BYTE, n);
    } else {
        real = kit_dev_alloc(n);
        xl_dev_upload(real, want, n);
        xl_dev_fill(dev, STALE_BYTE, n);
        XL_CHECK(cudaDeviceSynchronize()); /* the setup done, on every stream, before anything is queued on s */
        kit_queue_busy_copy(s, DELAY_NS, dev, real, n); /* the source holds the data only after the work on s */
    }
    snprintf(what, sizeof what, "lab_pinned_copy(%s) of %zu bytes on %s%s", dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H", n,
             stream_label(s), registered ? ", the host side pinned with cudaHostRegister" : "");
    kit_held before = kit_held_now();
    xl_expect_ok(lab_pinned_copy(dir == LAB_H2D ? dev : (void *)host, dir == LAB_H2D ? (void *)host : dev, n, dir, s),
                 "lab_pinned_copy");
    expect_stream_done(s, what);
    kit_expect_released(before, what);
    size_t at = strlen(what);
    strncat(what, ", read right after it returned", sizeof what - at - 1);
    if (dir == LAB_H2D)
        kit_expect_dev_bytes(dev, want, n, GUARD, what);
    else
        kit_expect_host_bytes(host, want, n, GUARD, what);
    what[at] = '\0'; /* src is const: it holds what it held, and the bytes past it too */
    strncat(what, ": src, which it only reads", sizeof what - at - 1);
    if (dir == LAB_H2D)
        kit_expect_host_bytes(host, want, n, GUARD, what);
    else
        kit_expect_dev_bytes(dev, want, n, GUARD, what);
    XL_CHECK(cudaFree(dev));
    if (real)
        XL_CHECK(cudaFree(real));
    if (registered) {
        XL_CHECK(cudaHostUnregister(host));
        free(host);
    } else {
        XL_CHECK(cudaFreeHost(host));
    }
    free(want);
}

/* check_sizes - check_copy in direction dir of every awkward size, one random size up to 3 MiB (from memory pinned
 * with cudaHostRegister too), exactly COPY_PAST (an exact multiple of every piece size up to it: a last piece sized
 * bytes % piece is 0 there) and a little more, on one stream of the kit's, then of a random size up to 3 MiB on
 * each default stream; returns the kit's stream */
static cudaStream_t check_sizes(lab_dir dir)
{
    cudaStream_t s = kit_stream();
    for (size_t i = 0; i < kit_n_awkward; i++)
        check_copy(kit_awkward_sizes[i], dir, s, 0);
    check_copy((size_t)kit_rand_int(1, 3 << 20), dir, s, 0);
    check_copy((size_t)kit_rand_int(1, 3 << 20), dir, s, 1);
    check_copy(COPY_PAST, dir, s, 0);
    check_copy(COPY_PAST + (size_t)kit_rand_int(1, 4 << 20), dir, s, 0);
    for (int d = 0; d < N_DEFAULT; d++)
        check_copy((size_t)kit_rand_int(1, 3 << 20), dir, default_streams[d], 0);
    return s;
}

/* expect_refused_copy - lab_pinned_copy(dst, src, 16, dir, s) returns -1 with one line on stderr, having copied
 * nothing (no copy asked for; dst and src, and the guard bytes past them, as they were), holding nothing and leaving no
 * CUDA error pending; a NULL buffer is not read. args names the arguments, why the rule */
static void expect_refused_copy(void *dst, const void *src, lab_dir dir, cudaStream_t s, const char *args,
                                const char *why)
{
    static xl_copy_rec recs[LOG_MAX];
    enum { SEEN = 16 + GUARD };
    static unsigned char was[2][SEEN], is[2][SEEN];
    const void *buf[2] = {dst, src};
    char call[128];
    snprintf(call, sizeof call, "lab_pinned_copy(%s)", args);
    for (int k = 0; k < 2; k++)
        if (buf[k])
            XL_CHECK(cudaMemcpy(was[k], buf[k], SEEN, cudaMemcpyDefault));
    kit_held before = kit_held_now();
    int saved = kit_capture_begin();
    xl_copylog_start(recs, LOG_MAX);
    int rc = lab_pinned_copy(dst, src, 16, dir, s);
    int nrec = xl_copylog_stop();
    hear_end(saved);
    cudaError_t err = cudaGetLastError();
    XL_CHECK(cudaDeviceSynchronize());
    cr_assert(rc == -1, "%s returned %d: %s", call, rc, why);
    expect_said(1, call);
    cr_assert(nrec == 0, "%s returned -1 after asking for %d copies: a refused call copies nothing", call, nrec);
    cr_assert(err == cudaSuccess, "%s left a CUDA error pending (%s): a refusal makes no CUDA call that fails",
              call, cudaGetErrorString(err));
    kit_expect_released(before, call);
    for (int k = 0; k < 2; k++) {
        if (!buf[k])
            continue;
        XL_CHECK(cudaMemcpy(is[k], buf[k], SEEN, cudaMemcpyDefault));
        size_t bad = 0;
        cr_assert(xl_compare(is[k], was[k], SEEN, &bad) == 0,
                  "%s returned -1 but changed %s at byte %zu (of its 16 and the %d after them): a refused call "
                  "writes nothing",
                  call, k ? "src" : "dst", bad, GUARD);
    }
}

/* Bad directions: every value but LAB_H2D (0) and LAB_D2H (1) is one, those a cudaMemcpyKind would accept (2, 3 as
 * dir + 1 or dir itself) first, then the ends of the type and a random large one. */
#define N_BAD_DIRS 6

/* bad_dir - bad direction number k (0 .. N_BAD_DIRS - 1) */
static int bad_dir(int k)
{
    static const int fixed[4] = {3, 2, -1, INT_MIN};
    return k < 4 ? fixed[k] : k == 4 ? INT_MAX : (int)kit_rand_int(4, INT_MAX - 1);
}

/* expect_null_copies - lab_pinned_copy in direction dir with dst, src or both NULL (the others real buffers of 16
 * bytes, dst and src as dir takes them) returns -1 each time, whether the NULL one is the host or the device side;
 * then with both real and every bad direction, -1 */
static void expect_null_copies(void *dst, const void *src, lab_dir dir, cudaStream_t s)
{
    static const char *const side[2][2] = {{"the device side", "the host side"}, {"the host side", "the device side"}};
    const char *name = dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H";
    int d = dir == LAB_H2D ? 0 : 1;
    char args[64], why[160];
    snprintf(args, sizeof args, "NULL dst, src, 16, %s", name);
    snprintf(why, sizeof why, "dst is %s here, and a NULL buffer on either side must return -1", side[d][0]);
    expect_refused_copy(NULL, src, dir, s, args, why);
    snprintf(args, sizeof args, "dst, NULL src, 16, %s", name);
    snprintf(why, sizeof why, "src is %s here, and a NULL buffer on either side must return -1", side[d][1]);
    expect_refused_copy(dst, NULL, dir, s, args, why);
    snprintf(args, sizeof args, "NULL, NULL, 16, %s", name);
    expect_refused_copy(NULL, NULL, dir, s, args, "NULL buffers must return -1");
    for (int k = 0; k < N_BAD_DIRS; k++) {
        int bad = bad_dir(k);
        snprintf(args, sizeof args, "%s, %s, 16, direction %d", d ? "h" : "dev", d ? "dev" : "h", bad);
        snprintf(why, sizeof why,
                 "a bad direction must return -1: only LAB_H2D (0) and LAB_D2H (1) are directions, whatever %d "
                 "would mean as a cudaMemcpyKind",
                 bad);
        expect_refused_copy(dst, src, (lab_dir)bad, s, args, why);
    }
}

/* One lab_pinned_copy for kit_expect_no_heap_leak: a small copy, or a refusal (bad direction). */
typedef struct {
    void *host, *dev;
    size_t bytes;
    lab_dir dir;
    cudaStream_t s;
} copy_again_args;

/* copy_again - kit_expect_no_heap_leak's attempt: the copy a describes; 0 when it returned what it must (-1 for a
 * bad direction) */
static int copy_again(void *ctx)
{
    const copy_again_args *a = ctx;
    int good = a->dir == LAB_H2D || a->dir == LAB_D2H;
    int rc = a->dir == LAB_D2H ? lab_pinned_copy(a->host, a->dev, a->bytes, a->dir, a->s)
                               : lab_pinned_copy(a->dev, a->host, a->bytes, a->dir, a->s);
    return rc == (good ? 0 : -1) ? 0 : -1;
}

/* expect_copy_no_heap_leak - lab_pinned_copy in direction dir, of a random size up to 64 KiB, then refused (a bad
 * direction), repeated: the host heap does not grow with the calls */
static void expect_copy_no_heap_leak(lab_dir dir, cudaStream_t s)
{
    char what[128];
    copy_again_args a = {NULL, NULL, (size_t)kit_rand_int(1, 64 << 10), dir, s};
    a.host = kit_pinned_alloc(a.bytes);
    a.dev = kit_dev_alloc(a.bytes);
    snprintf(what, sizeof what, "lab_pinned_copy(%s) of %zu bytes", dir == LAB_H2D ? "LAB_H2D" : "LAB_D2H", a.bytes);
    kit_expect_no_heap_leak(copy_again, &a, what, "free everything it allocates before it returns");
    a.dir = (lab_dir)bad_dir((int)kit_rand_int(0, N_BAD_DIRS - 1));
    snprintf(what, sizeof what, "lab_pinned_copy(direction %d) of %zu bytes, which returns -1", (int)a.dir, a.bytes);
    kit_expect_no_heap_leak(copy_again, &a, what, "a refusal frees everything it allocated before it returns");
    XL_CHECK(cudaFree(a.dev));
    XL_CHECK(cudaFreeHost(a.host));
}

/* expect_zero_copy - lab_pinned_copy of 0 bytes in direction dir between real buffers of 16 bytes returns 0 and
 * does nothing: both buffers as they were, nothing held */
static void expect_zero_copy(lab_dir dir, cudaStream_t s)
{
    unsigned char want[16], got[16];
    unsigned char *h = kit_pinned_alloc(16 + GUARD);
    void *dev = kit_dev_alloc(16 + GUARD);
    const char *call = dir == LAB_H2D ? "lab_pinned_copy(dev, h, 0 bytes, LAB_H2D)" : "lab_pinned_copy(h, dev, 0 "
                                                                                     "bytes, LAB_D2H)";
    xl_fill_random(h, 16, xl_fresh_seed());
    xl_fill_random(want, 16, xl_fresh_seed());
    xl_dev_upload(dev, want, 16);
    memcpy(got, h, 16);
    XL_CHECK(cudaDeviceSynchronize());
    kit_held before = kit_held_now();
    int rc = dir == LAB_H2D ? lab_pinned_copy(dev, h, 0, LAB_H2D, s) : lab_pinned_copy(h, dev, 0, LAB_D2H, s);
    XL_CHECK(cudaDeviceSynchronize());
    cr_assert(rc == 0, "%s returned %d: a copy of 0 bytes does nothing and returns 0", call, rc);
    kit_expect_released(before, call);
    kit_expect_host_bytes(h, got, 16, GUARD, call);
    kit_expect_dev_bytes(dev, want, 16, GUARD, call);
    XL_CHECK(cudaFree(dev));
    XL_CHECK(cudaFreeHost(h));
}

/* expect_copy_rules - the rest of what lab_pinned_copy in direction dir must do on the kit's stream s: refuse NULL
 * buffers and every bad direction, copy nothing for 0 bytes, and grow no heap */
static void expect_copy_rules(lab_dir dir, cudaStream_t s)
{
    unsigned char *h = kit_pinned_alloc(16 + GUARD);
    void *dev = kit_dev_alloc(16 + GUARD);
    xl_fill_random(h, 16, xl_fresh_seed());
    xl_dev_upload(dev, h + 8, 8); /* the device buffer: random, and unlike the host buffer */
    xl_dev_upload((char *)dev + 8, h, 8);
    if (dir == LAB_H2D)
        expect_null_copies(dev, h, LAB_H2D, s);
    else
        expect_null_copies(h, dev, LAB_D2H, s);
    expect_zero_copy(dir, s);
    expect_copy_no_heap_leak(dir, s);
    XL_CHECK(cudaFree(dev));
    XL_CHECK(cudaFreeHost(h));
}

XL_TEST(copy, h2d_exact, 10, XL_GPU,
        "lab_pinned_copy host to device: byte-exact for sizes from 1 byte to past 512 MiB, on the caller's stream (0, "
        "cudaStreamLegacy and cudaStreamPerThread too), complete when it returns, src untouched and nothing held; 0 "
        "bytes does nothing; NULL buffers and every bad direction are refused with one line, copying nothing", 15)
{
    expect_copy_rules(LAB_H2D, check_sizes(LAB_H2D));
}

XL_TEST(copy, d2h_exact, 10, XL_GPU,
        "lab_pinned_copy device to host: byte-exact for sizes from 1 byte to past 512 MiB, on the caller's stream (0, "
        "cudaStreamLegacy and cudaStreamPerThread too), complete when it returns, src untouched and nothing held; 0 "
        "bytes does nothing; NULL buffers and every bad direction are refused with one line, copying nothing", 15)
{
    expect_copy_rules(LAB_D2H, check_sizes(LAB_D2H));
}

#define WATCH_MAX 64 /* batches whose buffers a watched loop records */
enum { WATCH_NONE, WATCH_NAIVE, WATCH_POOLED };

/* How batches are produced: every byte (exact test) or one stamp per page (speed test); and, for a watched loop,
 * what the buffer each batch is produced into must be (the loop's mode, as lab.h defines it). */
typedef struct {
    uint64_t seed;
    int stamps_only;
    size_t bytes;               /* the batch's bytes: what produce must be told (lab.h) */
    int watch;                  /* WATCH_NAIVE: a pinned buffer of the loop's own, the only one it holds;
                                 * WATCH_POOLED: one of the pool's buffers, nothing pinned by the loop */
    long pinned_before;         /* pinned allocations and registrations held when the loop was called */
    unsigned char **pool_bufs;  /* WATCH_POOLED: every buffer of the pool, pool_bytes each */
    int pool_count;
    size_t pool_bytes;
    unsigned char **held;       /* WATCH_POOLED: the pool's buffers the caller holds (taken, not given back) */
    int n_held;
    int produced;               /* calls of produce so far */
    const void *buf[WATCH_MAX]; /* the buffer each batch was produced into */
    char wrong[320];            /* the first thing seen wrong, "" for none */
} produce_ctx;

static void produce(void *buf, size_t bytes, int i, void *ctx);

/* What the narrow-wait test runs: each function that takes a stream and need not wait for the device (the naive
 * loop frees pinned memory, and cudaFreeHost waits for the whole device), on 1 MiB. */
typedef struct {
    void *host, *out, *dev;
    lab_pool *pool;
    cudaStream_t s;
    int which; /* 0 lab_pinned_copy, 1 lab_loop_pooled, 2 lab_round_trip */
} narrow_ctx;

static const char *const narrow_name[3] = {"lab_pinned_copy", "lab_loop_pooled", "lab_round_trip"};

/* narrow_call - one call of narrow_ctx's function, for kit_ms_beside_busy */
static void narrow_call(void *ctx)
{
    narrow_ctx *c = ctx;
    produce_ctx pc = {.seed = 1, .stamps_only = 1, .bytes = 1 << 18};
    int rc = c->which == 0   ? lab_pinned_copy(c->dev, c->host, 1 << 20, LAB_H2D, c->s)
             : c->which == 1 ? lab_loop_pooled(c->pool, c->dev, 1 << 18, 4, produce, &pc, c->s)
                             : lab_round_trip(c->out, c->host, c->dev, 1 << 20, c->s);
    xl_expect_ok(rc, narrow_name[c->which]);
    cr_assert(c->which != 1 || pc.wrong[0] == 0, "lab_loop_pooled(bytes %d, n 4, %s): %s", 1 << 18,
              stream_label(c->s), pc.wrong);
}

/* ms_beside_own - how long call(ctx) takes while an unrelated busy_ns kernel runs on the non-blocking stream other,
 * which no default stream waits for (kit_ms_beside_busy's kernel is on the legacy stream, which a call on stream 0
 * must wait for); the kernel is then ended early through the pinned word release and the device waited for */
static double ms_beside_own(void (*call)(void *ctx), void *ctx, cudaStream_t other, volatile unsigned *release,
                            uint64_t busy_ns)
{
    *release = 0;
    xl_delay_released(other, busy_ns, release);
    double t0 = xl_now_ms();
    call(ctx);
    double ms = xl_now_ms() - t0;
    *release = 1;
    XL_CHECK(cudaDeviceSynchronize());
    return ms;
}

XL_TEST(copy, narrow_wait, 5, XL_TIMED,
        "lab_pinned_copy, lab_loop_pooled and lab_round_trip wait for their own stream, not for the whole device: "
        "on a stream of the caller's beside a kernel on the legacy stream, and on 0, cudaStreamLegacy and "
        "cudaStreamPerThread beside a kernel on a non-blocking stream", 15)
{
    narrow_ctx c = {kit_pinned_alloc(1 << 20), kit_pinned_alloc(1 << 20), kit_dev_alloc(1 << 20),
                    lab_pool_create(1 << 18, 2), kit_stream(), 0};
    cudaStream_t own = c.s, other = kit_stream();
    unsigned *release = NULL;
    double worst = 0;
    XL_CHECK(cudaHostAlloc((void **)&release, sizeof *release, cudaHostAllocMapped)); /* ends the kernel early */
    cr_assert(c.pool != NULL, "lab_pool_create(%d, 2) returned NULL", 1 << 18);
    kit_held before = kit_held_now();
    for (int d = -1; d < N_DEFAULT; d++) {
        c.s = d < 0 ? own : default_streams[d];
        for (c.which = 0; c.which < 3; c.which++) {
            narrow_call(&c); /* warm-up */
            double ms = d < 0 ? kit_ms_beside_busy(narrow_call, &c, BUSY_NS)
                              : ms_beside_own(narrow_call, &c, other, release, BUSY_NS);
            xl_timed_check(ms, XL_AT_MOST(NARROW_MS), "a 1 MiB call's time beside another stream's kernel (ms)",
                           "%s of 1 MiB on %s took %.0f ms while %s ran a %d ms kernel (need under %.0f ms): it "
                           "waited for the whole device (cudaDeviceSynchronize%s); wait for the stream it was given "
                           "only (cudaStreamSynchronize(stream)), whichever stream that is",
                           narrow_name[c.which], stream_label(c.s), ms,
                           d < 0 ? "the legacy stream 0" : "a non-blocking stream of the grader's",
                           (int)(BUSY_NS / 1000000), NARROW_MS,
                           d < 0 ? ", or a copy or wait on the legacy stream 0" : "");
            if (d < 0)
                xl_note("%s of 1 MiB took %.2f ms beside a %d ms kernel on another stream", narrow_name[c.which], ms,
                        (int)(BUSY_NS / 1000000));
            worst = d < 0 ? worst : fmax(worst, ms);
        }
    }
    xl_note("on 0, cudaStreamLegacy and cudaStreamPerThread, the slowest of those calls took %.2f ms beside a %d ms "
            "kernel on a non-blocking stream", worst, (int)(BUSY_NS / 1000000));
    kit_expect_released(before, "the calls of lab_pinned_copy, lab_loop_pooled and lab_round_trip above, on a "
                                "stream of the grader's, 0, cudaStreamLegacy and cudaStreamPerThread");
    lab_pool_destroy(c.pool);
    XL_CHECK(cudaFreeHost(release));
}

/* What the speed tests copy, and with whose code. */
typedef struct {
    void *host, *dev;
    size_t bytes;
    lab_dir dir;
} copy_ctx;

/* student_copy_work - xl_work_fn: one lab_pinned_copy */
static void student_copy_work(cudaStream_t s, void *ctx)
{
    copy_ctx *c = ctx;
    int rc = c->dir == LAB_H2D ? lab_pinned_copy(c->dev, c->host, c->bytes, LAB_H2D, s)
                               : lab_pinned_copy(c->host, c->dev, c->bytes, LAB_D2H, s);
    cr_assert(rc == 0, "lab_pinned_copy returned an error during a speed test");
}

/* kit_job - the kit's version of the copy in c */
static xl_copy_job kit_job(const copy_ctx *c)
{
    xl_copy_job j = {c->dir == LAB_H2D ? c->dev : c->host, c->dir == LAB_H2D ? c->host : c->dev, c->bytes,
                     c->dir == LAB_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost};
    return j;
}

/* Both directions of one comparison: the kit's copies (dirs) and yours (yours), which have the same sources but
 * destinations of their own, so that what your timed copies moved can be checked after the timing. */
typedef struct {
    copy_ctx dirs[2];
    copy_ctx yours[2];
    cudaStream_t s;
} speed_ctx;

static const char *dir_name[2] = {"H2D", "D2H"};

/* measure_pinned - xl_measure_fn: your pinned copies against cudaMemcpyAsync, interleaved; the worse direction.
 * The kit's copies take host to dev and back (host keeps its data); yours take host to their own device buffer, and
 * dev to their own host buffer, each checked against host after it is timed. */
static void measure_pinned(void *ctx, double *ratio, char *figures, size_t len)
{
    speed_ctx *sc = ctx;
    size_t used = 0;
    *ratio = INFINITY;
    xl_dev_fill(sc->yours[0].dev, XL_POISON_BYTE, sc->yours[0].bytes); /* each measurement from poison */
    for (int d = 0; d < 2 && used < len; d++) {
        copy_ctx *you_c = &sc->yours[d];
        xl_copy_job job = kit_job(&sc->dirs[d]);
        xl_timing kit, you;
        if (d == 1)
            xl_poison(you_c->host, you_c->bytes);
        xl_time_interleaved(xl_memcpy_async_work, &job, student_copy_work, you_c, sc->s, 7, &kit, &you);
        if (d == 0) /* read your device copy back through your D2H buffer, before that is poisoned */
            XL_CHECK(cudaMemcpy(sc->yours[1].host, you_c->dev, you_c->bytes, cudaMemcpyDeviceToHost));
        kit_expect_host_bytes(sc->yours[1].host, sc->dirs[0].host, you_c->bytes, 0,
                              d == 0 ? "your timed lab_pinned_copy(LAB_H2D) runs of 256 MiB, read back after the timing"
                                     : "your timed lab_pinned_copy(LAB_D2H) runs of 256 MiB, checked after the timing");
        double r = kit.median_ms / you.median_ms, b = (double)job.bytes;
        xl_sound_timing(kit.min_ms, kit.max_ms, XL_SOUND_SPREAD, "the kit's own pinned copy time (ms)");
        xl_sound_within(r, 0, XL_FASTER_MAX, "your copy's speed against the kit's same copy");
        *ratio = fmin(*ratio, r);
        used += snprintf(figures + used, len - used,
                         "%syour %s %.1f GB/s = %.0f%% of the kit's %.1f GB/s (kit spread %.1f-%.1f)", d ? "; " : "",
                         dir_name[d], xl_gbps(b, you.median_ms), 100 * r, xl_gbps(b, kit.median_ms),
                         xl_gbps(b, kit.max_ms), xl_gbps(b, kit.min_ms));
    }
}

XL_TEST(copy, pinned_speed, 10, XL_TIMED,
        "lab_pinned_copy of 256 MiB reaches " XL_STR(PINNED_NEED) "% of the kit's pinned rate, both directions, and the "
        "timed copies are exact", 30)
{
    speed_ctx sc;
    unsigned char *want = random_host(BIG);
    void *host = kit_pinned_alloc(BIG), *dev = kit_dev_alloc(BIG), *host_you = kit_pinned_alloc(BIG),
         *dev_you = kit_dev_alloc(BIG);
    memcpy(host, want, BIG);
    sc.s = kit_stream();
    sc.dirs[0] = (copy_ctx){host, dev, BIG, LAB_H2D};
    sc.dirs[1] = (copy_ctx){host, dev, BIG, LAB_D2H};
    sc.yours[0] = (copy_ctx){host, dev_you, BIG, LAB_H2D};
    sc.yours[1] = (copy_ctx){host_you, dev, BIG, LAB_D2H};
    kit_held before = kit_held_now();
    xl_ratio_check(measure_pinned, &sc, XL_AT_LEAST_PCT(PINNED_NEED), "pinned copy speed against the kit's");
    kit_expect_released(before, "your timed lab_pinned_copy runs of 256 MiB");
    kit_expect_host_bytes(host, want, BIG, 0, "the source of your timed lab_pinned_copy(LAB_H2D) runs of 256 MiB, "
                                             "which they only read");
    free(want);
}

/* Pinned copies (yours, or the kit's for the premise) against the kit's pageable ones. */
typedef struct {
    speed_ctx yours;     /* host buffer from lab_pinned_alloc */
    speed_ctx kits;      /* host buffer from cudaMallocHost */
    void *pageable;      /* malloc'd, for the kit's pageable copies */
    const void *want;    /* the data every buffer starts with; nothing copies into it */
    int premise_only;    /* 1: the kit's pinned copy (is there an edge on this machine at all?) */
} edge_ctx;

/* measure_edge - xl_measure_fn: pageable time / pinned time, the worse direction. Your copies (not the premise's)
 * are checked after each direction is timed: host to a device buffer of their own, then dev back into your buffer */
static void measure_edge(void *ctx, double *ratio, char *figures, size_t len)
{
    edge_ctx *e = ctx;
    speed_ctx *sc = e->premise_only ? &e->kits : &e->yours;
    size_t used = 0;
    *ratio = INFINITY;
    if (!e->premise_only)
        xl_dev_fill(sc->yours[0].dev, XL_POISON_BYTE, sc->yours[0].bytes);
    for (int d = 0; d < 2 && used < len; d++) {
        copy_ctx *c = &sc->dirs[d], pc = *c;
        pc.host = e->pageable;
        xl_copy_job pageable_job = kit_job(&pc), pinned_job = kit_job(c);
        xl_timing pageable, pinned;
        if (e->premise_only) {
            xl_time_interleaved(xl_memcpy_work, &pageable_job, xl_memcpy_async_work, &pinned_job, sc->s, 5,
                                &pageable, &pinned);
        } else {
            copy_ctx *you_c = &sc->yours[d];
            if (d == 1)
                xl_poison(you_c->host, you_c->bytes);
            xl_time_interleaved(xl_memcpy_work, &pageable_job, student_copy_work, you_c, sc->s, 5, &pageable, &pinned);
            if (d == 0) { /* your source as it was; then your device copy read back into it (D2H poisons it next) */
                kit_expect_host_bytes(you_c->host, e->want, you_c->bytes, 0,
                                      "the source of your timed lab_pinned_copy(LAB_H2D) runs of 64 MiB, which they "
                                      "only read");
                XL_CHECK(cudaMemcpy(you_c->host, you_c->dev, you_c->bytes, cudaMemcpyDeviceToHost));
            }
            kit_expect_host_bytes(you_c->host, e->want, you_c->bytes, 0,
                                  d == 0 ? "your timed lab_pinned_copy(LAB_H2D) runs of 64 MiB, read back after the "
                                           "timing"
                                         : "your timed lab_pinned_copy(LAB_D2H) runs of 64 MiB, checked after the "
                                           "timing");
        }
        double r = pageable.median_ms / pinned.median_ms, b = (double)c->bytes;
        xl_sound_timing(pageable.min_ms, pageable.max_ms, XL_SOUND_SPREAD_PAGEABLE, "the kit's own pageable copy time (ms)");
        *ratio = fmin(*ratio, r);
        used += snprintf(figures + used, len - used, "%s%s %s pinned %.1f GB/s, the kit's pageable %.1f GB/s: %.1fx",
                         d ? "; " : "", dir_name[d], e->premise_only ? "the kit's" : "your",
                         xl_gbps(b, pinned.median_ms), xl_gbps(b, pageable.median_ms), r);
    }
}

XL_TEST(copy, beats_pageable, 5, XL_TIMED,
        "your pinned copies of 64 MiB are at least " XL_STR(PAGEABLE_NEED) "x the kit's pageable ones, and exact", 30)
{
    unsigned char *want = random_host(MID);
    edge_ctx e = {.pageable = kit_host_alloc(MID), .want = want, .premise_only = 1};
    void *dev = kit_dev_alloc(MID), *dev_you = kit_dev_alloc(MID), *kit_host = kit_pinned_alloc(MID),
         *host = lab_pinned_alloc(MID);
    double premise;
    char figures[512];
    cr_assert(host != NULL, "lab_pinned_alloc(64 MiB) returned NULL");
    memcpy(host, want, MID); /* every source holds the same data, so dev always does */
    memcpy(kit_host, want, MID);
    memcpy(e.pageable, want, MID);
    e.yours.s = e.kits.s = kit_stream();
    e.yours.dirs[0] = (copy_ctx){host, dev, MID, LAB_H2D};
    e.yours.dirs[1] = (copy_ctx){host, dev, MID, LAB_D2H};
    e.yours.yours[0] = (copy_ctx){host, dev_you, MID, LAB_H2D};
    e.yours.yours[1] = (copy_ctx){host, dev, MID, LAB_D2H};
    e.kits.dirs[0] = (copy_ctx){kit_host, dev, MID, LAB_H2D};
    e.kits.dirs[1] = (copy_ctx){kit_host, dev, MID, LAB_D2H};
    measure_edge(&e, &premise, figures, sizeof figures);
    if (premise < PAGEABLE_PREMISE)
        cr_skip_test("on this machine pinned memory gives little edge (%s; under %.1fx), so this test does not "
                     "apply here",
                     figures, PAGEABLE_PREMISE);
    xl_note("premise: %s", figures);
    e.premise_only = 0;
    kit_held before = kit_held_now();
    xl_ratio_check(measure_edge, &e, XL_AT_LEAST_X(PAGEABLE_NEED), "your pinned copies against the kit's pageable");
    kit_expect_released(before, "your timed lab_pinned_copy runs of 64 MiB");
    lab_pinned_free(host);
}

/* ===== Part C: the pool ===== */

/* pool_get - lab_pool_get(pool) with this thread's host allocations watched, every one of them made to fail: fails
 * the test, naming call (what came before), when lab_pool_get allocated (lab.h: it never allocates; a free list built
 * on the first get would also hand out NULL when memory is short, with every buffer free) */
static unsigned char *pool_get(lab_pool *pool, const char *call)
{
    hostwatch_begin(1, 0);
    unsigned char *buf = lab_pool_get(pool);
    hostwatch_end();
    cr_assert(hostwatch_fired() == 0 && hostwatch_largest() == 0,
              "lab_pool_get (after %s) allocated host memory (malloc, calloc or new): lab.h says lab_pool_get never "
              "allocates; make everything the pool needs (its list of free buffers too) in lab_pool_create",
              call);
    return buf;
}

/* pool_tag - what the grader writes into buffer i of a pool: never 0 (nor what a cleared buffer holds) */
static unsigned char pool_tag(int i)
{
    return (unsigned char)(1 + i % 250);
}

/* all_are - 1 when every one of the bytes at p is v */
static int all_are(const unsigned char *p, size_t bytes, unsigned char v)
{
    for (size_t k = 0; k < bytes; k++)
        if (p[k] != v)
            return 0;
    return 1;
}

/* expect_pool - a pool of count buffers of bytes: lab_pool_get hands out count distinct buffers, each page-locked
 * over all its bytes, not write-combined and writable, without allocating, then NULL; what is put back comes out
 * again */
static void expect_pool(size_t bytes, int count)
{
    char call[64];
    unsigned char **b = malloc((size_t)count * sizeof *b), **got = malloc((size_t)count * sizeof *got);
    int *order = malloc((size_t)count * sizeof *order);
    cr_assert(b && got && order, "the grader could not allocate its tables for a pool of %d buffers", count);
    snprintf(call, sizeof call, "lab_pool_create(%zu, %d)", bytes, count);
    lab_pool *p = lab_pool_create(bytes, count);
    cr_assert(p != NULL, "%s returned NULL", call);
    kit_held made = kit_held_now();
    for (int i = 0; i < count; i++) {
        b[i] = pool_get(p, call);
        cr_assert(b[i] != NULL, "%s: lab_pool_get number %d of %d returned NULL", call, i + 1, count);
        cr_assert(kit_is_pinned(b[i]) && kit_is_pinned(b[i] + bytes - 1),
                  "%s: lab_pool_get number %d handed out memory that is not page-locked over its %zu bytes: pool "
                  "buffers must be pinned",
                  call, i + 1, bytes);
        kit_expect_not_write_combined(b[i], "lab_pool_get");
        int twice = -1; /* one assert a buffer: 300 buffers make 45,000 pairs */
        for (int j = 0; j < i; j++)
            twice = b[i] == b[j] ? j : twice;
        cr_assert(twice < 0, "%s: lab_pool_get handed out the same buffer twice (gets %d and %d)", call, twice + 1,
                  i + 1);
        memset(b[i], pool_tag(i), bytes);
    }
    for (int i = 0; i < count; i++)
        cr_assert(all_are(b[i], bytes, pool_tag(i)),
                  "%s: the buffers overlap: after all %d were filled, %zu bytes each, buffer %d no longer holds what "
                  "was written into it (each buffer needs bytes of its own)",
                  call, count, bytes, i + 1);
    cr_assert(pool_get(p, call) == NULL, "%s: all %d buffers are in use, so lab_pool_get must return NULL", call,
              count);
    kit_held now = kit_held_now();
    cr_assert(now.pinned.allocations == made.pinned.allocations &&
                  now.pinned.registrations == made.pinned.registrations &&
                  now.res.dev_allocations == made.res.dev_allocations,
              "%s: %d lab_pool_get calls allocated memory (%ld pinned buffers, %ld registrations, %ld device buffers "
              "more than after create): lab_pool_get only hands out what lab_pool_create made",
              call, count + 1, now.pinned.allocations - made.pinned.allocations,
              now.pinned.registrations - made.pinned.registrations, now.res.dev_allocations - made.res.dev_allocations);

    /* a random few given back, in a fresh order: exactly those come out again */
    int k = (int)kit_rand_int(1, count);
    for (int i = 0; i < count; i++)
        order[i] = i;
    for (int i = count - 1; i > 0; i--) {
        int j = (int)kit_rand_int(0, i), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (int i = 0; i < k; i++)
        lab_pool_put(p, b[order[i]]);
    for (int i = 0; i < k; i++) {
        int given = 0, was = -1; /* the buffer got[i] is */
        got[i] = pool_get(p, call);
        for (int j = 0; j < k; j++)
            given |= got[i] == b[order[j]];
        for (int j = 0; j < count; j++)
            was = got[i] == b[j] ? j : was;
        for (int j = 0; j < i; j++)
            given &= got[i] != got[j];
        cr_assert(got[i] != NULL && given,
                  "%s: after %d of its buffers were given back with lab_pool_put, lab_pool_get number %d returned %s, "
                  "not one of those (each once)",
                  call, k, i + 1, got[i] ? "another buffer" : "NULL");
        cr_assert(all_are(got[i], bytes, pool_tag(was)),
                  "%s: a buffer given back with lab_pool_put and handed out again by lab_pool_get no longer holds "
                  "what was written into it (%zu bytes of 0x%02x): lab.h says its contents are whatever was last "
                  "written to it (lab_pool_get neither clears nor fills it)",
                  call, bytes, pool_tag(was));
    }
    cr_assert(pool_get(p, call) == NULL, "%s: %d buffers given back and %d taken again: lab_pool_get must return NULL",
              call, k, k);
    for (int i = 0; i < count; i++)
        lab_pool_put(p, b[i]);
    lab_pool_destroy(p);
    free(b);
    free(got);
    free(order);
}

/* no_pool_again - kit_expect_no_heap_leak's attempt: lab_pool_create of the kit_create_args, which must return NULL */
static int no_pool_again(void *ctx)
{
    const kit_create_args *a = ctx;
    lab_pool *p = lab_pool_create(a->size, a->count);
    if (p)
        lab_pool_destroy(p);
    return p == NULL ? 0 : -1;
}

/* expect_no_pool - lab_pool_create(bytes, count) returns NULL with one line on stderr (at least one when only_one is
 * 0: a buffer that cannot be pinned, which lab_pinned_alloc may have said already), holding nothing and leaving no
 * CUDA error pending */
static void expect_no_pool(size_t bytes, int count, int only_one, const char *why)
{
    char call[64];
    snprintf(call, sizeof call, "lab_pool_create(%zu, %d)", bytes, count);
    kit_held before = kit_held_now();
    int saved = kit_capture_begin();
    lab_pool *p = lab_pool_create(bytes, count);
    hear_end(saved);
    cudaError_t err = cudaGetLastError();
    if (p)
        lab_pool_destroy(p);
    cr_assert(p == NULL, "%s must return NULL: %s", call, why);
    expect_said(only_one, call);
    cr_assert(err == cudaSuccess, "%s returned NULL but left a CUDA error pending (%s): clear it (cudaGetLastError)",
              call, cudaGetErrorString(err));
    kit_expect_released(before, call);
}

/* expect_two_pools - two pools alive at once (same: of one shape, bytes and count), used in turn: each hands out count
 * buffers of its own (none of the other's), then NULL; one of them (either) destroyed, its buffers still taken, while
 * the other keeps its buffers, what they hold and what was given back */
static void expect_two_pools(int same)
{
    enum { MAXC = 5 };
    char what[224];
    size_t bytes[2] = {(size_t)kit_rand_int(1, 1 << 16), (size_t)kit_rand_int(1, 1 << 16)};
    int count[2] = {(int)kit_rand_int(2, MAXC), (int)kit_rand_int(2, MAXC)}, got[2] = {0, 0};
    if (same)
        bytes[1] = bytes[0], count[1] = count[0];
    int gone = (int)kit_rand_int(0, 1), kept = !gone; /* the pool destroyed first */
    unsigned char *b[2][MAXC];
    snprintf(what, sizeof what, "lab_pool_create(%zu, %d) and lab_pool_create(%zu, %d), both alive", bytes[0],
             count[0], bytes[1], count[1]);
    kit_held before = kit_held_now();
    lab_pool *p[2] = {lab_pool_create(bytes[0], count[0]), lab_pool_create(bytes[1], count[1])};
    cr_assert(p[0] != NULL && p[1] != NULL, "%s: a create returned NULL", what);
    for (int k = 0; got[0] < count[0] || got[1] < count[1]; k++) { /* from each pool in turn */
        int w = got[k % 2] < count[k % 2] ? k % 2 : !(k % 2);
        unsigned char *x = pool_get(p[w], what);
        cr_assert(x != NULL,
                  "%s, taking from each in turn: lab_pool_get number %d of pool %d returned NULL (each pool has "
                  "buffers of its own, none shared with the other)",
                  what, got[w] + 1, w + 1);
        for (int v = 0; v < 2; v++)
            for (int i = 0; i < got[v]; i++)
                cr_assert(x != b[v][i],
                          "%s, taking from each in turn: lab_pool_get of pool %d handed out buffer %d of pool %d "
                          "again: each pool has buffers of its own",
                          what, w + 1, i + 1, v + 1);
        memset(x, pool_tag(16 * w + got[w]), bytes[w]);
        b[w][got[w]++] = x;
    }
    for (int w = 0; w < 2; w++)
        cr_assert(pool_get(p[w], what) == NULL, "%s: all %d buffers of pool %d are taken, so its lab_pool_get must "
                  "return NULL", what, count[w], w + 1);
    lab_pool_put(p[kept], b[kept][0]);
    lab_pool_put(p[gone], b[gone][0]);
    lab_pool_destroy(p[gone]); /* with buffers still taken */
    snprintf(what, sizeof what,
             "lab_pool_create(%zu, %d) and lab_pool_create(%zu, %d), both alive, then pool %d destroyed", bytes[0],
             count[0], bytes[1], count[1], gone + 1);
    for (int i = 0; i < count[kept]; i++) {
        unsigned char *x = b[kept][i], tag = pool_tag(16 * kept + i);
        cr_assert(kit_is_pinned(x) && kit_is_pinned(x + bytes[kept] - 1),
                  "%s: buffer %d of pool %d is no longer pinned memory: destroy frees its own pool's buffers only",
                  what, i + 1, kept + 1);
        cr_assert(all_are(x, bytes[kept], tag),
                  "%s: buffer %d of pool %d no longer holds what was written into it", what, i + 1, kept + 1);
    }
    unsigned char *again = pool_get(p[kept], what);
    cr_assert(again == b[kept][0],
              "%s: lab_pool_get of pool %d returned %s, not the one buffer given back to it", what, kept + 1,
              again ? "another buffer" : "NULL");
    cr_assert(all_are(again, bytes[kept], pool_tag(16 * kept)),
              "%s: the buffer given back to pool %d and handed out again no longer holds what was written into it: "
              "lab.h says its contents are whatever was last written to it", what, kept + 1);
    cr_assert(pool_get(p[kept], what) == NULL, "%s: every buffer of pool %d is taken again, so its lab_pool_get must "
              "return NULL", what, kept + 1);
    lab_pool_destroy(p[kept]);
    strncat(what, ", then the other", sizeof what - strlen(what) - 1);
    kit_expect_released(before, what);
}

/* expect_big_pool - a pool of 2 buffers of a little more than 1 GiB each, more than 2^31 bytes in all: no limit of the
 * student's own (1 GiB or 2^31 a pool or a buffer) may refuse what the machine can pin; both buffers distinct,
 * page-locked end to end and writable at both ends, then NULL; destroyed, nothing held */
static void expect_big_pool(void)
{
    size_t bytes = ((size_t)1 << 30) + (size_t)kit_rand_int(1, 16 << 20);
    char call[64];
    snprintf(call, sizeof call, "lab_pool_create(%zu, 2)", bytes);
    kit_held before = kit_held_now();
    lab_pool *p = lab_pool_create(bytes, 2);
    if (!p) {
        void *k[2] = {NULL, NULL};
        cudaError_t e = cudaMallocHost(&k[0], bytes);
        if (e == cudaSuccess)
            e = cudaMallocHost(&k[1], bytes);
        cudaGetLastError(); /* the grader's try, which may fail as the student's did */
        for (int i = 0; i < 2; i++)
            if (k[i])
                XL_CHECK(cudaFreeHost(k[i]));
        cr_assert(e != cudaSuccess,
                  "%s, 1 GiB + %zu bytes each, returned NULL, but cudaMallocHost of as much works on this machine: "
                  "lab.h's NULL is only for count < 1, bytes 0 or memory that cannot be pinned, with no limit of your "
                  "own",
                  call, bytes - ((size_t)1 << 30));
        xl_note("this machine could not pin 2 buffers of %zu bytes (%s): lab_pool_create's NULL was right", bytes,
                cudaGetErrorString(e));
        return;
    }
    unsigned char *b[2] = {pool_get(p, call), pool_get(p, call)};
    for (int i = 0; i < 2; i++) {
        cr_assert(b[i] != NULL, "%s: lab_pool_get number %d of 2 returned NULL", call, i + 1);
        cr_assert(kit_is_pinned(b[i]) && kit_is_pinned(b[i] + bytes - 1),
                  "%s: lab_pool_get number %d handed out memory that is not page-locked over its %zu bytes", call,
                  i + 1, bytes);
        b[i][0] = (unsigned char)(i + 1), b[i][bytes - 1] = (unsigned char)(i + 3);
    }
    cr_assert(b[0] != b[1], "%s: lab_pool_get handed out the same buffer twice", call);
    for (int i = 0; i < 2; i++)
        cr_assert(b[i][0] == (unsigned char)(i + 1) && b[i][bytes - 1] == (unsigned char)(i + 3),
                  "%s: the buffers overlap: buffer %d no longer holds what was written at its ends", call, i + 1);
    cr_assert(pool_get(p, call) == NULL, "%s: both buffers are in use, so lab_pool_get must return NULL", call);
    lab_pool_destroy(p);
    snprintf(call, sizeof call, "lab_pool_create(%zu, 2) and lab_pool_destroy", bytes);
    kit_expect_released(before, call);
}

XL_TEST(pool, buffers, 10, XL_GPU,
        "the pool hands out exactly count ordinary pinned buffers of bytes each, for any count (up to 300 here) and "
        "bytes (past 1 GiB, 2 GiB in all, too), reuses what is put back (its contents kept), and never allocates; "
        "two pools alive at "
        "once, of one shape too, each keep their own buffers; "
        "a refused create (count < 1, bytes 0 or SIZE_MAX) says one line and holds nothing", 15)
{
    kit_held before = kit_held_now();
    expect_no_pool(4096, 0, 1, "count must be at least 1");
    int neg = -(int)kit_rand_int(1, 1 << 20);
    expect_no_pool(4096, neg, 1, "count must be at least 1");
    expect_no_pool(4096, INT_MIN, 1, "count must be at least 1");
    expect_no_pool(0, 2, 1, "bytes must be at least 1");
    expect_no_pool(SIZE_MAX, (int)kit_rand_int(1, 4), 0, "no buffer of SIZE_MAX bytes can be pinned");
    char what[160];
    snprintf(what, sizeof what, "lab_pool_create(4096, 0), (4096, %d), (4096, INT_MIN), (0, 2) and (SIZE_MAX, ...), "
             "which return NULL", neg);
    kit_expect_released(before, what);
    kit_create_args refused = {(size_t)kit_rand_int(1, 1 << 20), -(int)kit_rand_int(0, 1 << 20)};
    snprintf(what, sizeof what, "lab_pool_create(%zu, %d), which returns NULL", refused.size, refused.count);
    kit_expect_no_heap_leak(no_pool_again, &refused, what, "a refusal frees everything it allocated before it returns");
    expect_pool((size_t)kit_rand_int(1, 1 << 20), (int)kit_rand_int(2, 6));
    expect_pool((size_t)kit_rand_int(1, 1 << 20), 1);
    expect_pool((size_t)kit_rand_int(1, 5000), (int)kit_rand_int(17, 40));
    expect_pool((size_t)kit_rand_int(1, 64), (int)kit_rand_int(257, 300)); /* more than a fixed table would hold */
    expect_two_pools(0);
    expect_two_pools(1); /* one shape: each create still makes a new pool */
    expect_big_pool();
    lab_pool_destroy(NULL);
}

/* pinned_held - pinned allocations and registrations held now */
static long pinned_held(void)
{
    xl_pinned now = xl_pinned_now();
    return now.allocations + now.registrations;
}

/* in_pool - the index of the pool buffer of p that holds [buf, buf + bytes), or -1 */
static int in_pool(const produce_ctx *p, const void *buf, size_t bytes)
{
    for (int j = 0; j < p->pool_count; j++)
        if (within(buf, bytes, p->pool_bufs[j], p->pool_bytes))
            return j;
    return -1;
}

/* watch_batch - for produce: notes the buffer batch i is produced into and the first thing wrong with it (naive:
 * not pinned, or not the one pinned buffer the loop holds; pooled: not a buffer of the pool, or the loop holds pinned
 * memory of its own); 0 when buf is NULL (nothing to produce into) */
static int watch_batch(produce_ctx *p, void *buf, size_t bytes, int i)
{
    long held = pinned_held() - p->pinned_before;
    int taken = -1; /* the caller's held buffer that buf lies in, if any */
    for (int j = 0; p->watch == WATCH_POOLED && buf && j < p->n_held; j++)
        taken = within(buf, bytes, p->held[j], p->pool_bytes) ? j : taken;
    if (i >= 0 && i < WATCH_MAX)
        p->buf[i] = buf;
    if (p->wrong[0])
        return buf != NULL;
    if (!buf) {
        snprintf(p->wrong, sizeof p->wrong, "batch %d was to be produced into NULL", i);
        return 0;
    }
    if (p->watch == WATCH_NAIVE && !(kit_is_pinned(buf) && kit_is_pinned((char *)buf + bytes - 1)))
        snprintf(p->wrong, sizeof p->wrong,
                 "batch %d was produced into memory that is not page-locked over its %zu bytes: the naive loop "
                 "allocates a pinned buffer for each batch (lab_pinned_alloc), not pageable memory",
                 i, bytes);
    else if (p->watch == WATCH_NAIVE && held != 1)
        snprintf(p->wrong, sizeof p->wrong,
                 "while batch %d was produced, the loop held %ld pinned buffers: the naive loop allocates one pinned "
                 "buffer for each batch and frees it after that batch's copy, before the next batch",
                 i, held);
    else if (p->watch == WATCH_POOLED && in_pool(p, buf, bytes) < 0)
        snprintf(p->wrong, sizeof p->wrong,
                 "batch %d was produced into memory that is not one of the pool's %d buffers: the pooled loop takes "
                 "its buffers from the pool (lab_pool_get)",
                 i, p->pool_count);
    else if (taken >= 0)
        snprintf(p->wrong, sizeof p->wrong,
                 "batch %d was produced into a buffer the caller had taken from the pool (lab_pool_get) and not given "
                 "back: the loop takes free buffers with lab_pool_get",
                 i);
    else if (p->watch == WATCH_POOLED && held != 0)
        snprintf(p->wrong, sizeof p->wrong,
                 "while batch %d was produced, the loop held %ld pinned buffers of its own: the pooled loop allocates "
                 "nothing, it reuses the pool's buffers",
                 i, held);
    return 1;
}

/* expect_produce_args - notes in p->wrong the first argument of produce call number at + 1 that is wrong: bytes
 * not the batch's (not the buffer's length), batches out of order, a buffer that is write-combined (the cheap check
 * skipped while a CUDA error is pending, which the grader's own call must not clear) */
static void expect_produce_args(produce_ctx *p, const void *buf, size_t bytes, int i, int at)
{
    if (p->wrong[0])
        return;
    if (bytes != p->bytes)
        snprintf(p->wrong, sizeof p->wrong,
                 "batch %d was produced with bytes %zu, not the batch's %zu: produce(buf, bytes, i, ctx) is told the "
                 "batch's size (the loop's bytes argument), whatever the length of the buffer it fills",
                 i, bytes, p->bytes);
    else if (i != at)
        snprintf(p->wrong, sizeof p->wrong,
                 "produce call number %d was for batch %d: each batch is produced once, in order i = 0 .. n - 1", at + 1,
                 i);
    else if (buf && cudaPeekAtLastError() == cudaSuccess && kit_is_write_combined(buf))
        snprintf(p->wrong, sizeof p->wrong,
                 "batch %d (%zu bytes) was produced into write-combined memory, which the host reads many times "
                 "slower: pinned buffers are of the ordinary kind (cudaMallocHost), at every size",
                 i, bytes);
}

/* produce - lab_produce_fn: batch i from the seed, its arguments checked (into p->wrong); fills no more than the
 * batch's bytes, whatever it is told */
static void produce(void *buf, size_t bytes, int i, void *ctx)
{
    produce_ctx *p = ctx;
    expect_produce_args(p, buf, bytes, i, p->produced++);
    bytes = bytes < p->bytes ? bytes : p->bytes;
    if (p->watch != WATCH_NONE && !watch_batch(p, buf, bytes, i))
        return;
    if (!buf) {
        if (!p->wrong[0])
            snprintf(p->wrong, sizeof p->wrong, "batch %d was to be produced into NULL", i);
        return;
    }
    if (!p->stamps_only) {
        xl_fill_random(buf, bytes, p->seed + (uint64_t)i);
        return;
    }
    for (size_t off = 0; off + 8 <= bytes; off += PAGE) {
        uint64_t v = p->seed ^ ((uint64_t)i << 40) ^ off;
        memcpy((char *)buf + off, &v, 8);
    }
}

/* expect_batches - every batch i sits at dev + i * bytes; whole bytes, or one stamp per page */
static void expect_batches(const void *dev, size_t bytes, int n, const produce_ctx *p, const char *who)
{
    char what[192];
    if (!p->stamps_only) {
        unsigned char *want = kit_host_alloc(bytes);
        for (int i = 0; i < n; i++) {
            xl_fill_random(want, bytes, p->seed + (uint64_t)i);
            snprintf(what, sizeof what, "%s, batch %d of %d", who, i, n);
            kit_expect_dev_bytes((const char *)dev + (size_t)i * bytes, want, bytes, i + 1 < n ? 0 : GUARD, what);
        }
        free(want);
        return;
    }
    size_t pages = bytes / PAGE;
    uint64_t *got = malloc(pages * 8);
    for (int i = 0; i < n; i++) {
        XL_CHECK(cudaMemcpy2D(got, 8, (const char *)dev + (size_t)i * bytes, PAGE, 8, pages, cudaMemcpyDeviceToHost));
        for (size_t k = 0; k < pages; k++)
            cr_assert(got[k] == (p->seed ^ ((uint64_t)i << 40) ^ (k * PAGE)), "%s: batch %d is wrong at byte %zu", who,
                      i, k * PAGE);
    }
    free(got);
}

/* expect_copies_on - fails unless every copy recorded was a cudaMemcpyAsync on the caller's stream s, and total
 * bytes went host to device in all */
static void expect_copies_on(const xl_copy_rec *recs, int nrec, cudaStream_t s, size_t total, const char *call)
{
    size_t h2d = 0;
    cr_assert(nrec <= LOG_MAX, "%s made %d copies, more than the %d the grader records: copy each batch in one piece",
              call, nrec, LOG_MAX);
    kit_expect_copies_on(recs, nrec, s, call);
    for (int k = 0; k < nrec; k++)
        h2d += xl_copy_dir(&recs[k]) == cudaMemcpyHostToDevice ? recs[k].bytes : 0;
    cr_assert(h2d == total, "%s copied %zu bytes host to device; its batches are %zu bytes", call, h2d, total);
}

/* expect_loop_done - what a loop of n batches of bytes into dev on s leaves when it returns, with the nrec copies it
 * made in recs (behind: work was queued on s before the loop): s idle, every batch in place (nothing written for
 * n = 0), every copy a cudaMemcpyAsync on s; call names the loop */
static void expect_loop_done(cudaStream_t s, const void *dev, size_t bytes, int n, const produce_ctx *pc,
                             const xl_copy_rec *recs, int nrec, int behind, const char *call)
{
    unsigned char none = 0;
    if (behind)
        expect_stream_done(s, call);
    if (n > 0)
        expect_batches(dev, bytes, n, pc, call);
    else
        kit_expect_dev_bytes(dev, &none, 0, GUARD, call);
    expect_copies_on(recs, nrec, s, n * bytes, call);
}

/* expect_watched - fails on what watch_batch saw wrong during call, and unless every host-to-device copy of the nrec
 * in recs read from a buffer a batch was produced into (naive) or from a buffer of the pool (pooled): pinned memory
 * all the way, no staging copy of its own */
static void expect_watched(const produce_ctx *pc, const xl_copy_rec *recs, int nrec, size_t bytes, int n,
                           const char *call)
{
    cr_assert(pc->wrong[0] == 0, "%s: %s", call, pc->wrong);
    for (int k = 0; k < nrec && k < LOG_MAX; k++) {
        const xl_copy_rec *r = &recs[k];
        int from_batch = 0;
        if (xl_copy_dir(r) != cudaMemcpyHostToDevice)
            continue;
        if (pc->watch == WATCH_POOLED)
            from_batch = in_pool(pc, r->src, r->bytes) >= 0;
        for (int i = 0; pc->watch == WATCH_NAIVE && i < n && i < WATCH_MAX; i++)
            from_batch |= pc->buf[i] != NULL && within(r->src, r->bytes, pc->buf[i], bytes);
        cr_assert(from_batch,
                  "%s: copy %d (%zu bytes to the device) read from memory that no batch was produced into%s: copy "
                  "each batch straight from the pinned buffer it was produced into",
                  call, k + 1, r->bytes, pc->watch == WATCH_POOLED ? " (not a buffer of the pool)" : "");
    }
}

/* expect_naive - lab_loop_naive of n batches of bytes on s (behind: after DELAY_MS ms of work on s that ends by
 * overwriting the destination): every batch produced into a pinned buffer of its own (the only one the loop holds
 * then) and copied from it, in place, every copy on s, nothing held afterwards */
static void expect_naive(cudaStream_t s, size_t bytes, int n, int behind)
{
    static xl_copy_rec recs[LOG_MAX];
    char call[96];
    produce_ctx pc = {.seed = xl_fresh_seed(), .bytes = bytes, .watch = WATCH_NAIVE};
    void *dev = kit_dev_alloc(n * bytes + GUARD);
    snprintf(call, sizeof call, "lab_loop_naive(bytes %zu, n %d, %s)", bytes, n, stream_label(s));
    kit_held before = kit_held_now();
    XL_CHECK(cudaDeviceSynchronize());
    if (behind)
        kit_queue_busy_memset(s, DELAY_NS, dev, STALE_BYTE, n * bytes);
    pc.pinned_before = pinned_held();
    xl_copylog_start(recs, LOG_MAX);
    int rc = lab_loop_naive(dev, bytes, n, produce, &pc, s);
    int nrec = xl_copylog_stop();
    xl_expect_ok(rc, "lab_loop_naive");
    expect_watched(&pc, recs, nrec, bytes, n, call);
    expect_loop_done(s, dev, bytes, n, &pc, recs, nrec, behind, call);
    kit_expect_released(before, call);
    XL_CHECK(cudaFree(dev));
}

/* naive_failing_again - kit_expect_no_heap_leak's attempt: lab_loop_naive(dev, bytes, n) with its pinned allocation
 * number fail_at failing; 0 when the failure was met and the loop returned -1 */
typedef struct {
    void *dev;
    size_t bytes;
    int n, fail_at;
    cudaStream_t s;
} naive_fail_args;

static int naive_failing_again(void *ctx)
{
    const naive_fail_args *a = ctx;
    produce_ctx pc = {.seed = 1, .stamps_only = 1, .bytes = a->bytes};
    xl_fail_create_after(a->fail_at - 1);
    int rc = lab_loop_naive(a->dev, a->bytes, a->n, produce, &pc, a->s);
    int fired = xl_fault_fired();
    xl_fail_create_after(-1);
    cudaGetLastError(); /* checked once by expect_naive_pins; here only the heap is */
    return fired && rc == -1 && pc.wrong[0] == 0 ? 0 : -1;
}

/* expect_naive_pins - lab_loop_naive of n (>= 2) batches asks for n pinned allocations, one a batch: the grader makes
 * allocation number k (1 .. n) fail, the last one (k = n) never reached by a loop that pins fewer. The loop then
 * returns -1, says so, leaves no CUDA error pending and holds nothing; batches 0 .. k - 2 are in place, and batch
 * k - 1 and the rest were neither produced nor sent (dev still holds the grader's poison there); repeated, the
 * failure grows no heap (heap: 1 to check the heap too) */
static void expect_naive_pins(cudaStream_t s, size_t bytes, int n, int k, int heap)
{
    char call[192];
    produce_ctx pc = {.seed = xl_fresh_seed(), .bytes = bytes};
    unsigned char none = 0;
    char *dev = kit_dev_alloc(n * bytes + GUARD);
    snprintf(call, sizeof call, "lab_loop_naive(bytes %zu, n %d) with its pinned allocation number %d (batch %d's) "
             "failing", bytes, n, k, k - 1);
    kit_held before = kit_held_now();
    int saved = kit_capture_begin();
    xl_fail_create_after(k - 1);
    int rc = lab_loop_naive(dev, bytes, n, produce, &pc, s);
    int fired = xl_fault_fired();
    xl_fail_create_after(-1);
    hear_end(saved);
    cudaError_t err = cudaGetLastError();
    cr_assert(fired,
              "lab_loop_naive(bytes %zu, n %d) returned %d without asking for a pinned allocation number %d: lab.h's "
              "naive loop allocates a pinned buffer for every batch (lab_pinned_alloc) and frees it after the batch's "
              "copy, n allocations for n batches, not one buffer pinned once and reused",
              bytes, n, rc, k);
    cr_assert(rc == -1,
              "%s returned %d: a batch that cannot be pinned never reaches the device, so the loop must return -1 "
              "(0 tells the caller that all %d batches arrived)",
              call, rc, n);
    expect_said(0, call);
    cr_assert(err == cudaSuccess,
              "%s left a CUDA error pending (%s): where it handles the failed allocation, clear its error "
              "(cudaGetLastError; lab_pinned_alloc does)",
              call, cudaGetErrorString(err));
    XL_CHECK(cudaStreamSynchronize(s));
    kit_expect_released(before, call);
    cr_assert(pc.wrong[0] == 0, "%s: %s", call, pc.wrong);
    cr_assert(pc.produced == k - 1,
              "%s called produce %d times, not %d: the %d batches before the failed one are produced and sent, then "
              "the loop stops (lab.h: that batch and the rest neither produced nor sent)",
              call, pc.produced, k - 1, k - 1);
    if (k > 1)
        expect_batches(dev, bytes, k - 1, &pc, call);
    char what[320];
    snprintf(what, sizeof what, "%s: dev from batch %d on, which the loop must not write (that batch and the rest "
             "neither produced nor sent)", call, k - 1);
    kit_expect_dev_bytes(dev + (size_t)(k - 1) * bytes, &none, 0, (size_t)(n - k + 1) * bytes + GUARD, what);
    if (heap) {
        naive_fail_args a = {dev, bytes, n, k, s};
        kit_expect_no_heap_leak(naive_failing_again, &a, call,
                                "where an allocation fails, free everything allocated so far before returning -1");
    }
    XL_CHECK(cudaFree(dev));
}

/* pool_buffers - the count free buffers of pool into b, all given back afterwards: each a buffer the caller does not
 * hold (held: the n_held it took), then NULL; call names what came before, for the message */
static void pool_buffers(lab_pool *pool, int count, unsigned char **b, unsigned char *const *held, int n_held,
                         const char *call)
{
    for (int i = 0; i < count; i++) {
        b[i] = pool_get(pool, call);
        cr_assert(b[i] != NULL,
                  "after %s, lab_pool_get gave %d of the %d buffers that must be free and then NULL: every buffer "
                  "the caller has not taken must be free again (a loop gives back every buffer it takes with "
                  "lab_pool_put)",
                  call, i, count);
        for (int j = 0; j < n_held; j++)
            cr_assert(b[i] != held[j],
                      "after %s, lab_pool_get number %d handed out a buffer the caller still holds: a loop gives "
                      "back only the buffers it took itself, and those the caller took stay taken",
                      call, i + 1);
    }
    unsigned char *more = pool_get(pool, call);
    if (more)
        lab_pool_put(pool, more);
    cr_assert(more == NULL,
              "after %s, lab_pool_get gave all %d free buffers and then one more (%d of the pool's buffers are taken "
              "by the caller): a loop gives back only the buffers it took itself",
              call, count, n_held);
    for (int i = 0; i < count; i++)
        lab_pool_put(pool, b[i]);
}

/* One loop for kit_expect_no_heap_leak: lab_loop_pooled through pool (NULL: lab_loop_naive), n batches of bytes
 * to dev on s. */
typedef struct {
    lab_pool *pool; /* NULL: the naive loop */
    void *dev;
    size_t bytes;
    int n;
    cudaStream_t s;
} loop_again_args;

/* pooled_none_again - kit_expect_no_heap_leak's attempt: the call a describes, which must return -1 having produced
 * nothing */
static int pooled_none_again(void *ctx)
{
    const loop_again_args *a = ctx;
    produce_ctx pc = {.seed = 1, .stamps_only = 1, .bytes = a->bytes};
    int rc = lab_loop_pooled(a->pool, a->dev, a->bytes, a->n, produce, &pc, a->s);
    return rc == -1 && pc.produced == 0 ? 0 : -1;
}

/* expect_pooled - lab_loop_pooled of n batches of bytes through a pool of count buffers somewhat longer than bytes,
 * taken of them held by the caller throughout, on s (behind: as in expect_naive). With a buffer free (taken < count):
 * every batch produced into a free buffer of the pool and copied from it, nothing pinned by the loop, every batch in
 * place, every copy on s, every buffer it took back in the pool. With none free: -1 and one line, having produced,
 * copied and pinned nothing. The caller's buffers keep what it wrote into them. */
static void expect_pooled(cudaStream_t s, size_t bytes, int count, int taken, int n, int behind)
{
    static xl_copy_rec recs[LOG_MAX];
    char call[224];
    size_t pool_bytes = bytes + (size_t)kit_rand_int(1, 4096); /* longer than bytes (bytes each: the other tests) */
    unsigned char **bufs = malloc((size_t)count * sizeof *bufs), **held = malloc((size_t)count * sizeof *held);
    cr_assert(bufs != NULL && held != NULL, "the grader could not allocate %d pointers", count);
    int m = snprintf(call, sizeof call, "lab_loop_pooled(a pool of %d buffers of %zu bytes, bytes %zu, n %d, %s)",
                     count, pool_bytes, bytes, n, stream_label(s));
    if (taken > 0)
        snprintf(call + m, sizeof call - m, " with %d of the buffers taken by the caller%s", taken,
                 taken == count ? " (none free)" : "");
    lab_pool *pool = lab_pool_create(pool_bytes, count);
    cr_assert(pool != NULL, "lab_pool_create(%zu, %d) returned NULL", pool_bytes, count);
    pool_buffers(pool, count, bufs, NULL, 0, "lab_pool_create");
    for (int j = 0; j < taken; j++) {
        held[j] = pool_get(pool, "lab_pool_create");
        cr_assert(held[j] != NULL, "lab_pool_create(%zu, %d): lab_pool_get number %d returned NULL", pool_bytes,
                  count, j + 1);
        memset(held[j], 0xC0 + j, pool_bytes);
    }
    produce_ctx pc = {.seed = xl_fresh_seed(), .bytes = bytes, .watch = WATCH_POOLED, .pool_bufs = bufs, .pool_count = count,
                      .pool_bytes = pool_bytes, .held = held, .n_held = taken};
    void *dev = kit_dev_alloc(n * bytes + GUARD);
    XL_CHECK(cudaDeviceSynchronize());
    if (behind)
        kit_queue_busy_memset(s, DELAY_NS, dev, STALE_BYTE, n * bytes);
    kit_held before = kit_held_now();
    pc.pinned_before = pinned_held();
    int saved = taken == count ? kit_capture_begin() : -1;
    xl_copylog_start(recs, LOG_MAX);
    int rc = lab_loop_pooled(pool, dev, bytes, n, produce, &pc, s);
    int nrec = xl_copylog_stop();
    if (taken == count) {
        hear_end(saved);
        cudaError_t err = cudaGetLastError();
        XL_CHECK(cudaDeviceSynchronize());
        cr_assert(rc == -1,
                  "%s returned %d: with no buffer free it must return -1 (lab.h: it never allocates one of its own)",
                  call, rc);
        cr_assert(pc.produced == 0 && nrec == 0,
                  "%s returned -1 after %d calls of produce and %d copies: with no buffer free it does nothing", call,
                  pc.produced, nrec);
        cr_assert(err == cudaSuccess, "%s left a CUDA error pending (%s)", call, cudaGetErrorString(err));
        expect_said(1, call);
        kit_expect_released(before, call);
        loop_again_args a = {pool, dev, bytes, n, s};
        kit_expect_no_heap_leak(pooled_none_again, &a, call, "a call that returns -1 frees everything it allocated");
    } else {
        xl_expect_ok(rc, "lab_loop_pooled");
        kit_expect_released(before, call);
        expect_watched(&pc, recs, nrec, bytes, n, call);
        expect_loop_done(s, dev, bytes, n, &pc, recs, nrec, behind, call);
    }
    for (int j = 0; j < taken; j++)
        cr_assert(held[j][0] == 0xC0 + j && held[j][pool_bytes - 1] == 0xC0 + j,
                  "%s: a buffer the caller held no longer holds what the caller wrote into it", call);
    pool_buffers(pool, count - taken, bufs, held, taken, call);
    for (int j = 0; j < taken; j++)
        lab_pool_put(pool, held[j]);
    lab_pool_destroy(pool);
    XL_CHECK(cudaFree(dev));
    free(bufs);
    free(held);
}

/* expect_pooled_far - lab_loop_pooled of batches of a little more than 256 MiB (past a copy made in pieces of that
 * size) into a device buffer of more than 2 GiB, the last batches past 2^31 bytes into it (an offset kept in an int
 * wraps there): each batch's first stamp, its stamp just past 256 MiB and its last stamp in place, produce told each
 * batch's bytes in order, and the pool's buffers of that size not write-combined. About 2.8 GB of copies: the naive
 * loop would pin as much, which costs seconds, so it is not run this far. */
static void expect_pooled_far(cudaStream_t s)
{
    char call[128];
    size_t bytes = (256u << 20) + (size_t)kit_rand_int(1, 16 << 20), last = (bytes - 8) / PAGE * PAGE;
    size_t at[3] = {0, 256u << 20, last};
    produce_ctx pc = {.seed = xl_fresh_seed(), .stamps_only = 1, .bytes = bytes};
    int n = (int)(((size_t)1 << 31) / bytes) + 3;
    uint64_t got[3];
    snprintf(call, sizeof call, "lab_loop_pooled(a pool of 2 buffers of %zu bytes, bytes %zu, n %d), %zu bytes in all",
             bytes, bytes, n, (size_t)n * bytes);
    lab_pool *pool = lab_pool_create(bytes, 2);
    cr_assert(pool != NULL, "lab_pool_create(%zu, 2) returned NULL", bytes);
    char *dev = kit_dev_alloc((size_t)n * bytes);
    xl_expect_ok(lab_loop_pooled(pool, dev, bytes, n, produce, &pc, s), "lab_loop_pooled");
    cr_assert(pc.wrong[0] == 0, "%s: %s", call, pc.wrong);
    cr_assert(pc.produced == n, "%s called produce %d times, once for each batch: %d", call, pc.produced, n);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            XL_CHECK(cudaMemcpy(&got[k], dev + (size_t)i * bytes + at[k], 8, cudaMemcpyDeviceToHost));
        for (int k = 0; k < 3; k++)
            cr_assert(got[k] == (pc.seed ^ ((uint64_t)i << 40) ^ at[k]),
                      "%s: batch %d, which starts %zu bytes into dev, is not in its place at byte %zu of the batch "
                      "(that page does not hold what was produced there): copy every byte of each batch from the "
                      "matching byte of its buffer, and keep offsets past 2^31 bytes in a size_t (an int wraps there)",
                      call, i, (size_t)i * bytes, at[k]);
    }
    lab_pool_destroy(pool);
    XL_CHECK(cudaFree(dev));
}

/* One loop with a NULL dev (its first copy refused), for kit_expect_no_heap_leak. */
typedef struct {
    lab_pool *pool; /* NULL: the naive loop */
    size_t bytes;
    int n;
    cudaStream_t s;
} null_dev_args;

/* null_dev_again - kit_expect_no_heap_leak's attempt: the loop a describes with dev NULL, which must return -1 */
static int null_dev_again(void *ctx)
{
    const null_dev_args *a = ctx;
    produce_ctx pc = {.seed = 1, .stamps_only = 1, .bytes = a->bytes};
    int rc = a->pool ? lab_loop_pooled(a->pool, NULL, a->bytes, a->n, produce, &pc, a->s)
                     : lab_loop_naive(NULL, a->bytes, a->n, produce, &pc, a->s);
    cudaGetLastError(); /* checked once by expect_null_dev; here only the heap is */
    return rc == -1 ? 0 : -1;
}

/* expect_null_dev - the loops' failure path at a copy: lab_loop_naive and lab_loop_pooled (through a pool of a few
 * buffers, with none and with some taken by the caller) with dev NULL, so that the first batch's copy is refused
 * (lab_pinned_copy's NULL), return -1 with a line said, no CUDA error pending, no batch produced after the failed one;
 * the naive loop holds nothing (its buffer freed on that path too), the pool has every buffer it lent back and the
 * caller's still taken; repeated, no heap growth */
static void expect_null_dev(cudaStream_t s)
{
    for (int pooled = 0; pooled < 3; pooled++) { /* 0 naive, 1 pooled, 2 pooled with buffers held by the caller */
        null_dev_args a = {NULL, (size_t)kit_rand_int(1, 1 << 16), (int)kit_rand_int(1, 4), s};
        int count = (int)kit_rand_int(pooled == 2 ? 2 : 1, 4), taken = pooled == 2 ? (int)kit_rand_int(1, count - 1) : 0;
        unsigned char *bufs[4], *held[4];
        char call[224];
        produce_ctx pc = {.seed = xl_fresh_seed(), .stamps_only = 1, .bytes = a.bytes};
        if (pooled) {
            a.pool = lab_pool_create(a.bytes, count);
            cr_assert(a.pool != NULL, "lab_pool_create(%zu, %d) returned NULL", a.bytes, count);
            for (int j = 0; j < taken; j++) {
                held[j] = pool_get(a.pool, "lab_pool_create");
                cr_assert(held[j] != NULL, "lab_pool_create(%zu, %d): lab_pool_get number %d returned NULL", a.bytes,
                          count, j + 1);
            }
            int m = snprintf(call, sizeof call,
                             "lab_loop_pooled(a pool of %d buffers of %zu bytes, dev NULL, bytes %zu, n %d)", count,
                             a.bytes, a.bytes, a.n);
            if (taken)
                snprintf(call + m, sizeof call - m, " with %d of the buffers taken by the caller", taken);
        } else {
            snprintf(call, sizeof call, "lab_loop_naive(dev NULL, bytes %zu, n %d)", a.bytes, a.n);
        }
        kit_held before = kit_held_now();
        int saved = kit_capture_begin();
        int rc = pooled ? lab_loop_pooled(a.pool, NULL, a.bytes, a.n, produce, &pc, s)
                        : lab_loop_naive(NULL, a.bytes, a.n, produce, &pc, s);
        hear_end(saved);
        cudaError_t err = cudaGetLastError();
        XL_CHECK(cudaStreamSynchronize(s));
        cr_assert(rc == -1,
                  "%s returned %d: batch 0's copy to a NULL dev fails (lab_pinned_copy refuses it), so the loop must "
                  "return -1",
                  call, rc);
        expect_said(0, call);
        cr_assert(err == cudaSuccess, "%s left a CUDA error pending (%s)", call, cudaGetErrorString(err));
        cr_assert(pc.wrong[0] == 0, "%s: %s", call, pc.wrong);
        cr_assert(pc.produced <= (pooled ? count - taken : 1),
                  "%s called produce %d times: batch 0's copy fails, and the loop stops there (%s)", call,
                  pc.produced, pooled ? "no more batches than the pool has buffers may be produced before it" :
                  "lab.h: the rest neither produced nor sent");
        kit_expect_released(before, call);
        if (pooled)
            pool_buffers(a.pool, count - taken, bufs, held, taken, call);
        kit_expect_no_heap_leak(null_dev_again, &a, call,
                                "where a copy fails, free (or give back) the batch's buffer before returning -1");
        if (pooled)
            pool_buffers(a.pool, count - taken, bufs, held, taken, call);
        lab_pool_destroy(a.pool);
    }
}

/* loop_again - kit_expect_no_heap_leak's attempt: the loop a describes, which must return 0 having produced every
 * batch */
static int loop_again(void *ctx)
{
    const loop_again_args *a = ctx;
    produce_ctx pc = {.seed = 1, .stamps_only = 1, .bytes = a->bytes};
    int rc = a->pool ? lab_loop_pooled(a->pool, a->dev, a->bytes, a->n, produce, &pc, a->s)
                     : lab_loop_naive(a->dev, a->bytes, a->n, produce, &pc, a->s);
    return rc == 0 && pc.produced == a->n && pc.wrong[0] == 0 ? 0 : -1;
}

/* pool_cycle_again - kit_expect_no_heap_leak's attempt: every free buffer of the pool taken (lab_pool_get), then
 * all given back (lab_pool_put) */
static int pool_cycle_again(void *ctx)
{
    lab_pool *pool = ((const loop_again_args *)ctx)->pool;
    void *b[8];
    int k = 0;
    while (k < 8 && (b[k] = lab_pool_get(pool)) != NULL)
        k++;
    while (k > 0)
        lab_pool_put(pool, b[--k]);
    return 0;
}

/* expect_loops_no_heap_leak - successful calls repeated: lab_loop_naive, lab_pool_get/lab_pool_put of every free
 * buffer, and lab_loop_pooled (the caller holding some of the pool's buffers, or none) grow no host heap; afterwards
 * the pool has its free buffers, and only those, free */
static void expect_loops_no_heap_leak(cudaStream_t s)
{
    char call[224];
    int count = (int)kit_rand_int(1, 4), taken = (int)kit_rand_int(0, count - 1);
    loop_again_args a = {NULL, NULL, (size_t)kit_rand_int(1, 1 << 16), (int)kit_rand_int(1, 4), s};
    unsigned char *bufs[4], *held[4] = {NULL, NULL, NULL, NULL};
    a.dev = kit_dev_alloc((size_t)a.n * a.bytes);
    snprintf(call, sizeof call, "lab_loop_naive(bytes %zu, n %d), which returns 0,", a.bytes, a.n);
    kit_expect_no_heap_leak(loop_again, &a, call, "free everything a successful call allocates before it returns");
    a.pool = lab_pool_create(a.bytes, count);
    cr_assert(a.pool != NULL, "lab_pool_create(%zu, %d) returned NULL", a.bytes, count);
    for (int j = 0; j < taken; j++) {
        held[j] = pool_get(a.pool, "lab_pool_create");
        cr_assert(held[j] != NULL, "lab_pool_create(%zu, %d): lab_pool_get number %d returned NULL", a.bytes, count,
                  j + 1);
    }
    snprintf(call, sizeof call, "lab_pool_get of every free buffer of a pool of %d (%d taken by the caller), then "
             "lab_pool_put of each,", count, taken);
    kit_expect_no_heap_leak(pool_cycle_again, &a, call, "lab_pool_get and lab_pool_put allocate nothing");
    snprintf(call, sizeof call, "lab_loop_pooled(a pool of %d buffers of %zu bytes, %d taken by the caller, bytes %zu, "
             "n %d), which returns 0,", count, a.bytes, taken, a.bytes, a.n);
    kit_expect_no_heap_leak(loop_again, &a, call,
                            "free everything a successful call allocates before it returns (the normal return too, "
                            "not only the -1 paths)");
    pool_buffers(a.pool, count - taken, bufs, held, taken, call);
    for (int j = 0; j < taken; j++)
        lab_pool_put(a.pool, held[j]);
    lab_pool_destroy(a.pool);
    XL_CHECK(cudaFree(a.dev));
}

/* null_ctx_target - where produce_null_ctx sends its batches; null_ctx_seen counts the calls given a ctx not NULL */
static produce_ctx *null_ctx_target;
static int null_ctx_seen;

/* produce_null_ctx - lab_produce_fn for a loop called with ctx NULL: produce into null_ctx_target */
static void produce_null_ctx(void *buf, size_t bytes, int i, void *ctx)
{
    null_ctx_seen += ctx != NULL;
    produce(buf, bytes, i, null_ctx_target);
}

/* expect_null_ctx - both loops called with ctx NULL (lab.h: the caller's, handed to produce as it is): 0, every
 * batch in place, produce given NULL each time */
static void expect_null_ctx(cudaStream_t s)
{
    for (int pooled = 0; pooled < 2; pooled++) {
        size_t bytes = (size_t)kit_rand_int(1, 1 << 16);
        int n = (int)kit_rand_int(1, 4);
        char call[128];
        produce_ctx pc = {.seed = xl_fresh_seed(), .bytes = bytes};
        lab_pool *pool = pooled ? lab_pool_create(bytes, 2) : NULL;
        void *dev = kit_dev_alloc(n * bytes + GUARD);
        cr_assert(pooled == 0 || pool != NULL, "lab_pool_create(%zu, 2) returned NULL", bytes);
        snprintf(call, sizeof call, "%s(bytes %zu, n %d, ctx NULL)", pooled ? "lab_loop_pooled" : "lab_loop_naive",
                 bytes, n);
        null_ctx_target = &pc, null_ctx_seen = 0;
        int rc = pooled ? lab_loop_pooled(pool, dev, bytes, n, produce_null_ctx, NULL, s)
                        : lab_loop_naive(dev, bytes, n, produce_null_ctx, NULL, s);
        xl_expect_ok(rc, call);
        cr_assert(null_ctx_seen == 0, "%s handed produce a ctx that is not NULL in %d of its %d calls: ctx goes to "
                  "produce as the caller gave it", call, null_ctx_seen, pc.produced);
        cr_assert(pc.wrong[0] == 0, "%s: %s", call, pc.wrong);
        cr_assert(pc.produced == n, "%s called produce %d times, once for each batch: %d", call, pc.produced, n);
        expect_batches(dev, bytes, n, &pc, call);
        lab_pool_destroy(pool);
        XL_CHECK(cudaFree(dev));
    }
}

XL_TEST(pool, loops_exact, 5, XL_GPU,
        "lab_loop_naive (a pinned buffer allocated and freed for each batch) and lab_loop_pooled (the pool's free "
        "buffers, nothing allocated) put every batch, byte-exact, in its place, on the caller's stream (0, "
        "cudaStreamLegacy and cudaStreamPerThread too), for any count and size, batches past 256 MiB and 2 GiB of dev "
        "too, produce told each batch's bytes in order (ctx NULL too); then the naive loop holds nothing and the pool "
        "has every buffer back; a failed allocation (naive: that batch and the rest not produced or sent), a failed "
        "copy (dev NULL) or no free buffer (pooled) returns -1 with a line, no CUDA error pending, nothing held", 20)
{
    cudaStream_t s = kit_stream();
    size_t bytes = (size_t)kit_rand_int(20000, 300000) | 1; /* odd */
    int few = (int)kit_rand_int(1, 3), many = (int)kit_rand_int(3, 6);
    expect_naive(s, bytes, (int)kit_rand_int(2, 5), 1);
    expect_naive(s, bytes, 1, 0);
    expect_naive(s, bytes, 0, 0);
    int pins = (int)kit_rand_int(2, 5);
    expect_naive_pins(s, bytes, pins, pins, 0);                          /* the last allocation fails */
    expect_naive_pins(s, bytes, pins, (int)kit_rand_int(1, pins - 1), 1); /* an earlier one: batches after it too */
    expect_pooled(s, bytes, few, 0, few + (int)kit_rand_int(1, 3), 1); /* more batches than buffers */
    expect_pooled(s, bytes, many, 0, (int)kit_rand_int(1, many - 1), 1); /* fewer */
    expect_pooled(s, bytes, few, 0, few, 0);                              /* as many */
    expect_pooled(s, bytes, few, 0, 0, 0);
    int taken = (int)kit_rand_int(1, many - 1); /* the caller holds some: more batches than free buffers */
    expect_pooled(s, bytes, many, taken, many - taken + (int)kit_rand_int(1, 3), 1);
    expect_pooled(s, bytes, few, few, (int)kit_rand_int(1, 3), 0); /* none free: -1 */
    for (int d = 0; d < N_DEFAULT; d++) {
        expect_naive(default_streams[d], bytes, (int)kit_rand_int(1, 3), 1);
        expect_pooled(default_streams[d], bytes, few, 0, few + (int)kit_rand_int(0, 2), 1);
    }
    expect_pooled(s, bytes, 1, 0, (int)kit_rand_int(2, 4), 1);            /* one buffer, free: enough for any n */
    taken = (int)kit_rand_int(1, 4);                                     /* one free, the caller holding the rest */
    expect_pooled(s, bytes, taken + 1, taken, (int)kit_rand_int(2, 4), 0);
    int lots = (int)kit_rand_int(10, 40); /* more free buffers than a small fixed table of the loop's holds */
    expect_pooled(s, bytes, lots, 0, (int)kit_rand_int(1, lots + 3), 1);
    taken = (int)kit_rand_int(1, lots - 9);
    expect_pooled(s, bytes, lots, taken, (int)kit_rand_int(1, lots + 3), 0);
    expect_null_dev(s);
    expect_null_ctx(s);
    expect_loops_no_heap_leak(s);
    expect_pooled_far(s);
}

/* The kit's allocate-per-transfer loop against the student's pooled loop. */
typedef struct {
    void *dev;
    lab_pool *pool;
    cudaStream_t s;
    produce_ctx pc;
} loop_ctx;

/* kit_loop_naive - the kit's naive loop: pin, produce, copy, wait, unpin, for every batch */
static void kit_loop_naive(loop_ctx *c)
{
    for (int i = 0; i < LOOP_N; i++) {
        void *buf;
        XL_CHECK(cudaMallocHost(&buf, MID));
        produce(buf, MID, i, &c->pc);
        XL_CHECK(cudaMemcpyAsync((char *)c->dev + (size_t)i * MID, buf, MID, cudaMemcpyHostToDevice, c->s));
        XL_CHECK(cudaStreamSynchronize(c->s));
        XL_CHECK(cudaFreeHost(buf));
    }
}

/* measure_loops - xl_measure_fn: kit naive time / your pooled time (host clock: allocation is host work) */
static void measure_loops(void *ctx, double *ratio, char *figures, size_t len)
{
    loop_ctx *c = ctx;
    double you_ms[3];
    xl_timing you;
    c->pc.produced = 0; /* produce checks that batches come in order: each loop from batch 0 */
    double t0 = xl_now_ms();
    kit_loop_naive(c);
    double naive_ms = xl_now_ms() - t0;
    for (int r = 0; r < 3; r++) {
        c->pc.seed = xl_fresh_seed();
        c->pc.produced = 0;
        t0 = xl_now_ms();
        cr_assert(lab_loop_pooled(c->pool, c->dev, MID, LOOP_N, produce, &c->pc, c->s) == 0,
                  "lab_loop_pooled returned an error");
        you_ms[r] = xl_now_ms() - t0;
        cr_assert(c->pc.wrong[0] == 0, "your timed lab_loop_pooled(bytes 64 MiB, n %d): %s", LOOP_N, c->pc.wrong);
        expect_batches(c->dev, MID, LOOP_N, &c->pc, "lab_loop_pooled");
    }
    xl_summarize(you_ms, 3, &you);
    *ratio = naive_ms / you.median_ms;
    snprintf(figures, len,
             "16 transfers of 64 MiB: the kit's allocate-per-transfer loop %.0f ms, your pooled loop %.1f ms "
             "(median of 3, spread %.1f-%.1f): %.1fx",
             naive_ms, you.median_ms, you.min_ms, you.max_ms, *ratio);
}

XL_TEST(pool, loop_speed, 10, XL_TIMED,
        "16 transfers of 64 MiB through the pool are at least " XL_STR(POOL_NEED) "x faster than pinning each", 40)
{
    loop_ctx c = {kit_dev_alloc((size_t)LOOP_N * MID), NULL, kit_stream(), {.seed = xl_fresh_seed(), .stamps_only = 1, .bytes = MID}};
    c.pool = lab_pool_create(MID, 2);
    cr_assert(c.pool != NULL, "lab_pool_create(64 MiB, 2) returned NULL");
    kit_held before = kit_held_now();
    xl_ratio_check(measure_loops, &c, XL_AT_LEAST_X(POOL_NEED), "pooled loop against allocate-per-transfer");
    kit_expect_released(before, "your timed lab_loop_pooled runs of 16 transfers of 64 MiB");
    lab_pool_destroy(c.pool);
}


/* ===== Part D: the round trip ===== */

/* expect_trip_copies - fails unless the round trip copied n bytes from host_in into dev and n bytes from dev straight
 * into host_out (in pieces or not): pinned all the way, no buffer of its own on the way */
static void expect_trip_copies(const xl_copy_rec *recs, int nrec, const void *out, const void *in, const void *dev,
                               size_t n, const char *call)
{
    size_t up = 0, down = 0, other = 0;
    cr_assert(nrec <= LOG_MAX, "%s made %d copies, more than the %d the grader records", call, nrec, LOG_MAX);
    for (int k = 0; k < nrec; k++) {
        const xl_copy_rec *r = &recs[k];
        enum cudaMemcpyKind dir = xl_copy_dir(r);
        if (dir == cudaMemcpyHostToDevice && within(r->src, r->bytes, in, n) && within(r->dst, r->bytes, dev, n))
            up += r->bytes;
        else if (dir == cudaMemcpyDeviceToHost && within(r->src, r->bytes, dev, n) && within(r->dst, r->bytes, out, n))
            down += r->bytes;
        else
            other += r->bytes;
    }
    cr_assert(up == n && down == n,
              "%s copied %zu bytes from host_in to dev and %zu from dev to host_out (need %zu each), and %zu bytes "
              "between other buffers: copy host_in to dev, then dev straight into host_out, both with "
              "cudaMemcpyAsync on the stream; a buffer of your own on the way costs two more passes over memory",
              call, up, down, n, other);
}

/* One small round trip for kit_expect_no_heap_leak. */
typedef struct {
    void *in, *out, *dev;
    size_t bytes;
    cudaStream_t s;
} trip_again_args;

/* trip_again - kit_expect_no_heap_leak's attempt: lab_round_trip of a->bytes */
static int trip_again(void *ctx)
{
    const trip_again_args *a = ctx;
    return lab_round_trip(a->out, a->in, a->dev, a->bytes, a->s);
}

/* trip_refused_again - kit_expect_no_heap_leak's attempt: lab_round_trip of a (a NULL buffer in it), which must
 * return -1 */
static int trip_refused_again(void *ctx)
{
    return trip_again(ctx) == -1 ? 0 : -1;
}

/* expect_trip_untouched - lab_round_trip(out, in, dev, bytes, s) with bytes 0, or 16 with the buffers whose bit is
 * set in nulls (1 host_out, 2 host_in, 4 dev) NULL, returns 0 (bytes 0) or -1 with one line (a NULL buffer), having
 * copied nothing (no copy asked for, every real buffer and the guard bytes past it as they were), holding nothing and
 * leaving no CUDA error pending */
static void expect_trip_untouched(void *out, void *in, void *dev, int nulls, size_t bytes, cudaStream_t s)
{
    static xl_copy_rec recs[LOG_MAX];
    static const char *const name[3] = {"host_out", "host_in", "dev"};
    enum { SEEN = 16 + GUARD };
    static unsigned char was[3][SEEN], is[3][SEEN];
    void *buf[3] = {nulls & 1 ? NULL : out, nulls & 2 ? NULL : in, nulls & 4 ? NULL : dev};
    char call[128];
    int want = nulls ? -1 : 0;
    snprintf(call, sizeof call, "lab_round_trip(%s, %s, %s, %zu)", buf[0] ? "host_out" : "NULL",
             buf[1] ? "host_in" : "NULL", buf[2] ? "dev" : "NULL", bytes);
    for (int k = 0; k < 3; k++)
        if (buf[k])
            XL_CHECK(cudaMemcpy(was[k], buf[k], SEEN, cudaMemcpyDefault));
    XL_CHECK(cudaDeviceSynchronize());
    kit_held before = kit_held_now();
    int saved = kit_capture_begin();
    xl_copylog_start(recs, LOG_MAX);
    int rc = lab_round_trip(buf[0], buf[1], buf[2], bytes, s);
    int nrec = xl_copylog_stop();
    hear_end(saved);
    cudaError_t err = cudaGetLastError();
    XL_CHECK(cudaDeviceSynchronize());
    cr_assert(rc == want, "%s returned %d: %s", call, rc,
              nulls ? "a NULL buffer must return -1 (lab.h), having copied nothing"
                    : "a round trip of 0 bytes does nothing and returns 0");
    if (nulls)
        expect_said(1, call);
    cr_assert(err == cudaSuccess, "%s left a CUDA error pending (%s)", call, cudaGetErrorString(err));
    cr_assert(nulls == 0 || nrec == 0, "%s returned -1 after asking for %d copies: a refused call copies nothing", call,
              nrec);
    kit_expect_released(before, call);
    for (int k = 0; k < 3; k++) {
        if (!buf[k])
            continue;
        XL_CHECK(cudaMemcpy(is[k], buf[k], SEEN, cudaMemcpyDefault));
        size_t bad = 0;
        cr_assert(xl_compare(is[k], was[k], SEEN, &bad) == 0,
                  "%s returned %d but changed %s at byte %zu (of its 16 and the %d after them): %s", call, rc,
                  name[k], bad, GUARD, nulls ? "a refused call writes nothing" : "0 bytes copies nothing");
    }
}

/* expect_trip_refusals - lab_round_trip with each of the 7 ways of some of its buffers NULL (16 bytes) refuses, then
 * repeated without heap growth; with 0 bytes between real buffers it does nothing and returns 0 */
static void expect_trip_refusals(cudaStream_t s)
{
    unsigned char *in = pinned_random(16 + GUARD), *out = pinned_random(16 + GUARD);
    void *dev = kit_dev_alloc(16 + GUARD);
    xl_dev_upload(dev, out + 3, 16); /* random, and unlike both host buffers */
    for (int nulls = 1; nulls < 8; nulls++)
        expect_trip_untouched(out, in, dev, nulls, 16, s);
    expect_trip_untouched(out, in, dev, 0, 0, s);
    int nulls = (int)kit_rand_int(1, 7);
    trip_again_args a = {nulls & 2 ? NULL : in, nulls & 1 ? NULL : out, nulls & 4 ? NULL : dev, 16, s};
    kit_expect_no_heap_leak(trip_refused_again, &a, "lab_round_trip with a NULL buffer, which returns -1",
                            "a refusal frees everything it allocated before it returns");
    XL_CHECK(cudaFreeHost(in));
    XL_CHECK(cudaFreeHost(out));
    XL_CHECK(cudaFree(dev));
}

XL_TEST(roundtrip, exact, 5, XL_GPU,
        "lab_round_trip brings every byte back through dev straight into host_out, on the caller's stream (0, "
        "cudaStreamLegacy and cudaStreamPerThread too), from 1 byte to past 256 MiB, complete when it returns, host_in "
        "untouched and nothing held; NULL buffers refused with one line, copying nothing; 0 bytes does nothing", 15)
{
    static xl_copy_rec recs[LOG_MAX];
    cudaStream_t own = kit_stream();
    const size_t past = kit_n_awkward + N_DEFAULT + 1; /* the last: a little more than TRIP_PAST */
    for (size_t i = 0; i <= past; i++) { /* the awkward sizes, then random ones on each stream, then a large one */
        size_t n = i < kit_n_awkward ? kit_awkward_sizes[i]
                   : i == past       ? TRIP_PAST + (size_t)kit_rand_int(1, 4 << 20)
                                     : (size_t)kit_rand_int(1, 3 << 20);
        cudaStream_t s = i <= kit_n_awkward || i == past ? own : default_streams[i - kit_n_awkward - 1];
        char what[128];
        unsigned char *want = random_host(n), *in = kit_pinned_alloc(n + GUARD), *out = kit_pinned_alloc(n + GUARD);
        void *dev = kit_dev_alloc(n + GUARD), *real = kit_dev_alloc(n);
        memcpy(in, want, n);
        xl_dev_upload(real, in, n);
        memset(in, STALE_BYTE, n);
        XL_CHECK(cudaDeviceSynchronize());
        xl_delay(s, DELAY_NS); /* the real input reaches host_in only through work queued on the caller's stream */
        XL_CHECK(cudaMemcpyAsync(in, real, n, cudaMemcpyDeviceToHost, s));
        snprintf(what, sizeof what, "lab_round_trip of %zu bytes on %s", n, stream_label(s));
        kit_held before = kit_held_now();
        xl_copylog_start(recs, LOG_MAX);
        int rc = lab_round_trip(out, in, dev, n, s);
        int nrec = xl_copylog_stop();
        xl_expect_ok(rc, "lab_round_trip");
        expect_stream_done(s, what);
        expect_trip_copies(recs, nrec, out, in, dev, n, what);
        kit_expect_copies_on(recs, nrec, s, what);
        kit_expect_released(before, what);
        strncat(what, ": host_out, read right after it returned", sizeof what - strlen(what) - 1);
        kit_expect_host_bytes(out, want, n, GUARD, what);
        snprintf(what, sizeof what, "lab_round_trip of %zu bytes on %s: dev, which the data goes through", n,
                 stream_label(s));
        kit_expect_dev_bytes(dev, want, n, GUARD, what);
        snprintf(what, sizeof what, "lab_round_trip of %zu bytes on %s: host_in, which it only reads", n,
                 stream_label(s));
        kit_expect_host_bytes(in, want, n, GUARD, what);
        XL_CHECK(cudaFreeHost(in));
        XL_CHECK(cudaFreeHost(out));
        XL_CHECK(cudaFree(dev));
        XL_CHECK(cudaFree(real));
        free(want);
    }
    trip_again_args a = {NULL, NULL, NULL, (size_t)kit_rand_int(1, 64 << 10), own};
    char what[96];
    a.in = pinned_random(a.bytes), a.out = kit_pinned_alloc(a.bytes), a.dev = kit_dev_alloc(a.bytes);
    snprintf(what, sizeof what, "lab_round_trip of %zu bytes", a.bytes);
    kit_expect_no_heap_leak(trip_again, &a, what, "free everything it allocates before it returns");
    XL_CHECK(cudaFreeHost(a.in));
    XL_CHECK(cudaFreeHost(a.out));
    XL_CHECK(cudaFree(a.dev));
    expect_trip_refusals(own);
}

/* One round trip's buffers. */
typedef struct {
    void *in, *out, *dev;
} trip_ctx;

/* The kit's round trips and yours: the same input, outputs (and device buffers) of their own. */
typedef struct {
    trip_ctx kit, you;
    int measured; /* measurements so far */
} trips_ctx;

/* kit_trip_work - xl_work_fn: the kit's round trip, both copies queued, no wait (the timer waits) */
static void kit_trip_work(cudaStream_t s, void *ctx)
{
    trip_ctx *t = ctx;
    XL_CHECK(cudaMemcpyAsync(t->dev, t->in, BIG, cudaMemcpyHostToDevice, s));
    XL_CHECK(cudaMemcpyAsync(t->out, t->dev, BIG, cudaMemcpyDeviceToHost, s));
}

/* student_trip_work - xl_work_fn: one lab_round_trip */
static void student_trip_work(cudaStream_t s, void *ctx)
{
    trip_ctx *t = ctx;
    cr_assert(lab_round_trip(t->out, t->in, t->dev, BIG, s) == 0, "lab_round_trip returned an error");
}

/* measure_trip - xl_measure_fn: kit round trip time / yours; your timed round trips' output checked afterwards */
static void measure_trip(void *ctx, double *ratio, char *figures, size_t len)
{
    trips_ctx *t = ctx;
    xl_timing kit, you;
    cudaStream_t s = kit_stream();
    if (t->measured++) { /* measured again: your buffers back to poison first */
        xl_poison(t->you.out, BIG);
        xl_dev_fill(t->you.dev, XL_POISON_BYTE, BIG);
    }
    xl_time_interleaved(kit_trip_work, &t->kit, student_trip_work, &t->you, s, 7, &kit, &you);
    kit_expect_host_bytes(t->you.out, t->you.in, BIG, 0,
                          "host_out of your timed lab_round_trip runs of 256 MiB, checked after the timing");
    *ratio = kit.median_ms / you.median_ms;
    xl_sound_timing(kit.min_ms, kit.max_ms, XL_SOUND_SPREAD, "the kit's own round trip time (ms)");
    xl_sound_within(*ratio, 0, XL_FASTER_MAX, "your round trip's speed against the kit's");
    snprintf(figures, len, "256 MiB there and back: yours %.2f ms, the kit's %.2f ms (spread %.2f-%.2f): %.0f%%",
             you.median_ms, kit.median_ms, kit.min_ms, kit.max_ms, 100 * *ratio);
    XL_CHECK(cudaStreamDestroy(s));
}

XL_TEST(roundtrip, speed, 10, XL_TIMED,
        "lab_round_trip of 256 MiB reaches " XL_STR(ROUND_NEED) "% of the kit's pinned round trip, and its timed runs "
        "are exact", 30)
{
    unsigned char *want = random_host(BIG);
    trips_ctx t = {{kit_pinned_alloc(BIG), kit_pinned_alloc(BIG), kit_dev_alloc(BIG)},
                   {NULL, kit_pinned_alloc(BIG), kit_dev_alloc(BIG)},
                   0};
    memcpy(t.kit.in, want, BIG);
    t.you.in = t.kit.in;
    kit_held before = kit_held_now();
    xl_ratio_check(measure_trip, &t, XL_AT_LEAST_PCT(ROUND_NEED), "round trip speed against the kit's");
    kit_expect_released(before, "your timed lab_round_trip runs of 256 MiB");
    kit_expect_host_bytes(t.you.in, want, BIG, 0, "host_in of your timed lab_round_trip runs of 256 MiB, which they "
                                                  "only read");
    free(want);
}

/* ===== Leaks ===== */

KIT_CREATE_ATTEMPT(pool_attempt, lab_pool_create, lab_pool_destroy)

XL_TEST(leaks, none, 5, XL_GPU,
        "lab_pinned_free and lab_pool_destroy release every pinned buffer, a pool's buffers still taken included, and "
        "a create that fails at any allocation holds nothing; resident memory stays where it "
        "started", 30)
{
    char fails[96];
    kit_create_args z = {(size_t)kit_rand_int(1, 1 << 16), (int)kit_rand_int(2, 6)};
    snprintf(fails, sizeof fails, "lab_pool_create(%zu, %d)", z.size, z.count);
    long made = kit_expect_create_failures(pool_attempt, &z, fails);
    cr_assert(made >= z.count, "%s made %ld pinned allocations; it must allocate its %d buffers", fails, made, z.count);

    const size_t n = 16u << 20;
    char what[224];
    xl_mem before_mem, after_mem;
    kit_held before = kit_held_now();
    for (int i = 0; i < 4; i++) {
        size_t bytes = (size_t)kit_rand_int(1, 4 << 20);
        unsigned char *p = lab_pinned_alloc(bytes);
        cr_assert(p != NULL, "lab_pinned_alloc(%zu) returned NULL", bytes);
        memset(p, 1, bytes);
        lab_pinned_free(p);
        snprintf(what, sizeof what, "lab_pinned_alloc(%zu) and lab_pinned_free", bytes);
        kit_expect_released(before, what);
    }
    /* pools destroyed with some, then all, of their buffers still taken; then with some of the taken ones given
     * back first, in another order than they were taken (the first one taken first), one at least still out */
    for (int round = 0; round < 3; round++) {
        int count = (int)kit_rand_int(round == 2 ? 3 : 2, 6);
        int taken = round == 1 ? count : (int)kit_rand_int(round == 2 ? 2 : 1, count - 1), back = 0;
        size_t bytes = (size_t)kit_rand_int(1, 1 << 20);
        void *b[6];
        lab_pool *pool = lab_pool_create(bytes, count);
        cr_assert(pool != NULL, "lab_pool_create(%zu, %d) returned NULL", bytes, count);
        for (int i = 0; i < taken; i++) {
            b[i] = lab_pool_get(pool);
            cr_assert(b[i] != NULL, "lab_pool_get number %d of %d returned NULL", i + 1, count);
        }
        if (round == 2) {
            back = (int)kit_rand_int(1, taken - 1);
            for (int i = taken - 2; i > 1; i--) { /* b[0] first, then others in a random order, the last kept */
                int j = (int)kit_rand_int(1, i);
                void *t = b[i];
                b[i] = b[j], b[j] = t;
            }
            for (int i = 0; i < back; i++)
                lab_pool_put(pool, b[i]);
        }
        lab_pool_destroy(pool);
        snprintf(what, sizeof what,
                 "lab_pool_create(%zu, %d), %d lab_pool_get, %d of them given back (the first one taken first), and "
                 "lab_pool_destroy (which frees every buffer of the pool, taken or not)",
                 bytes, count, taken, back);
        kit_expect_released(before, what);
    }

    /* resident memory, which sees what the counts above cannot (memory a pinned buffer was made from) */
    void *warm = lab_pinned_alloc(n); /* the first pinned allocation sets up the driver's own structures */
    cr_assert(warm != NULL, "lab_pinned_alloc(16 MiB) returned NULL");
    lab_pinned_free(warm);
    cr_assert(xl_mem_read(&before_mem) == 0, "cannot read /proc/self/status");
    for (int i = 0; i < 6; i++) {
        char *p = lab_pinned_alloc(n);
        cr_assert(p != NULL, "lab_pinned_alloc(16 MiB) returned NULL in cycle %d", i);
        memset(p, 1, n);
        lab_pinned_free(p);
    }
    lab_pool *pool = lab_pool_create(n, 3);
    cr_assert(pool != NULL, "lab_pool_create(16 MiB, 3) returned NULL");
    void *b = lab_pool_get(pool);
    memset(b, 1, n);
    lab_pool_put(pool, b);
    lab_pool_destroy(pool);
    cr_assert(xl_mem_read(&after_mem) == 0, "cannot read /proc/self/status");
    long grown = after_mem.rss_kib - before_mem.rss_kib;
    cr_assert(grown < 32 * 1024,
              "resident memory grew by %ld MiB over 6 allocate/free cycles of 16 MiB and a pool of 3 x 16 MiB: "
              "something is not freed (cudaFreeHost for each cudaMallocHost; every pool buffer in destroy)",
              grown / 1024);
    xl_note("resident memory before %ld MiB, after %ld MiB", before_mem.rss_kib / 1024, after_mem.rss_kib / 1024);
}
