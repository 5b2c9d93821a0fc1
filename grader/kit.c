/* kit.c - the kit's reference measurements and byte checks for graders (see kit.h). */
#include "kit.h"

#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/delay.h"
#include "common/devlog.h"
#include "common/devmem.h"
#include "common/faults.h"
#include "common/timing.h"
#include "grade.h"

void kit_time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, int warmup, int reps,
                   xl_timing *out)
{
    xl_copy_job c = {dst, src, bytes, kind};
    xl_time_gpu(xl_memcpy_work, &c, 0, warmup, reps, out);
}

/* guarded_pages - the pages kit_tail_guarded maps for bytes: enough for them, and one more as the guard */
static size_t guarded_pages(size_t bytes, size_t page)
{
    return (bytes + page - 1) / page + 1;
}

void *kit_tail_guarded(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = guarded_pages(bytes, page);
    unsigned char *base = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(base != MAP_FAILED, "the grader could not map %zu bytes of host memory", pages * page);
    cr_assert(mprotect(base + (pages - 1) * page, page, PROT_NONE) == 0, "the grader could not protect a page");
    return base + (pages - 1) * page - bytes; /* mmap's pages are zeroed */
}

void kit_tail_guarded_free(void *p, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = guarded_pages(bytes, page);
    unsigned char *end = (unsigned char *)p + bytes; /* where the guard page begins */
    munmap(end - (pages - 1) * page, pages * page);
}

void *kit_host_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    cr_assert(p != NULL, "the grader could not allocate %zu bytes of host memory", bytes);
    xl_poison(p, bytes);
    return p;
}

void *kit_pinned_alloc(size_t bytes)
{
    void *p = NULL;
    XL_CHECK(cudaMallocHost(&p, bytes));
    xl_poison(p, bytes);
    return p;
}

int kit_is_pinned(const void *p)
{
    struct cudaPointerAttributes a;
    XL_CHECK(cudaPointerGetAttributes(&a, p));
    return a.type == cudaMemoryTypeHost;
}

int kit_is_write_combined(const void *p)
{
    unsigned int flags = 0;
    int wc = cudaHostGetFlags(&flags, (void *)p) == cudaSuccess && (flags & cudaHostAllocWriteCombined);
    cudaGetLastError(); /* pageable memory: not this check's error to leave */
    return wc;
}

int kit_is_mapped(const void *host, void **dev)
{
    struct cudaPointerAttributes a;
    unsigned int flags = 0;
    void *d = NULL;
    int mapped = cudaPointerGetAttributes(&a, host) == cudaSuccess && a.type == cudaMemoryTypeHost &&
                 cudaHostGetFlags(&flags, (void *)host) == cudaSuccess && (flags & cudaHostAllocMapped) &&
                 cudaHostGetDevicePointer(&d, (void *)host, 0) == cudaSuccess;
    cudaGetLastError(); /* a call above that failed: not this check's error to leave */
    if (dev)
        *dev = mapped ? d : NULL;
    return mapped;
}

int kit_is_managed(const void *p)
{
    struct cudaPointerAttributes a;
    int managed = cudaPointerGetAttributes(&a, p) == cudaSuccess && a.type == cudaMemoryTypeManaged;
    cudaGetLastError();
    return managed;
}

cudaStream_t kit_stream(void)
{
    cudaStream_t s;
    XL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

void *kit_dev_alloc(size_t bytes)
{
    void *p = NULL;
    XL_CHECK(cudaMalloc(&p, bytes));
    xl_dev_fill(p, XL_POISON_BYTE, bytes);
    return p;
}

/* expect_bytes - the shared check: data equal, then guard untouched */
static void expect_bytes(const unsigned char *got, const void *want, size_t bytes, size_t guard, const char *what)
{
    size_t bad = 0;
    cr_assert(xl_compare(got, want, bytes, &bad) == 0,
              "%s: byte %zu of %zu is wrong (0x%02x, expected 0x%02x)%s", what, bad, bytes, got[bad],
              ((const unsigned char *)want)[bad],
              bad >= bytes - bytes % 4096 ? ": the tail of the buffer was not copied" : "");
    cr_assert(xl_check_poison(got + bytes, guard, &bad) == 0,
              "%s: wrote past the end of the destination (byte %zu after the last one)", what, bad);
}

void kit_expect_dev_bytes(const void *dev, const void *want, size_t bytes, size_t guard, const char *what)
{
    unsigned char *got = malloc(bytes + guard);
    cr_assert(got != NULL, "the grader could not allocate %zu bytes", bytes + guard);
    XL_CHECK(cudaMemcpy(got, dev, bytes + guard, cudaMemcpyDeviceToHost));
    expect_bytes(got, want, bytes, guard, what);
    free(got);
}

void kit_expect_host_bytes(const void *host, const void *want, size_t bytes, size_t guard, const char *what)
{
    expect_bytes(host, want, bytes, guard, what);
}

const size_t kit_awkward_sizes[] = {1, 3, 4095, 4097, 65536 + 13, (1u << 20) + 7, (64u << 20) + 1};
const size_t kit_n_awkward = sizeof kit_awkward_sizes / sizeof kit_awkward_sizes[0];

/* release_word - the pinned word that ends the unrelated kernel of a narrow-wait test early, made once a process;
 * NULL where it cannot be made (no GPU: the kernel then runs its whole time) */
static volatile unsigned *release_word(void)
{
    static unsigned *word;
    static int tried;
    if (!tried) {
        tried = 1;
        if (cudaHostAlloc((void **)&word, sizeof *word, cudaHostAllocMapped) != cudaSuccess) {
            cudaGetLastError();
            word = NULL;
        }
    }
    return word;
}

/* busy_begin - the unrelated kernel: busy_ns on the legacy default stream (blocking streams, cudaStreamCreate's,
 * wait for it too), or until busy_end */
static void busy_begin(uint64_t busy_ns)
{
    volatile unsigned *w = release_word();
    if (!w) {
        xl_delay(cudaStreamLegacy, busy_ns);
        return;
    }
    *w = 0;
    xl_delay_released(cudaStreamLegacy, busy_ns, w);
}

/* busy_end - ends the unrelated kernel now (the calls are timed: a call that waited for it has already waited) and
 * waits for the device */
static void busy_end(void)
{
    volatile unsigned *w = release_word();
    if (w)
        *w = 1;
    XL_CHECK(cudaDeviceSynchronize());
}

double kit_ms_beside_busy(void (*call)(void *ctx), void *ctx, uint64_t busy_ns)
{
    busy_begin(busy_ns);
    double t0 = xl_now_ms();
    call(ctx);
    double ms = xl_now_ms() - t0;
    busy_end();
    return ms;
}

double kit_ms_beside_busy_each(void (*call)(void *ctx, int k), void *ctx, int n, uint64_t busy_ns, double *ms)
{
    busy_begin(busy_ns);
    double t0 = xl_now_ms(), t = t0;
    for (int k = 0; k < n; k++) {
        call(ctx, k);
        double now = xl_now_ms();
        ms[k] = now - t;
        t = now;
    }
    busy_end();
    return t - t0;
}

void kit_expect_pinned_alloc(void *(*alloc)(size_t bytes), void (*release)(void *p), const char *name,
                             const char *why)
{
    /* the last size is fresh in each run, so that no size threshold inside alloc goes unseen */
    const size_t sizes[] = {1, 4097, (64u << 20) + 3, (size_t)kit_rand(256u << 20, 1u << 30) | 1};
    for (int i = 0; i < (int)(sizeof sizes / sizeof *sizes); i++) {
        unsigned char *p = alloc(sizes[i]);
        char call[64];
        cr_assert(p != NULL, "%s(%zu) returned NULL", name, sizes[i]);
        cr_assert(kit_is_pinned(p), "%s(%zu) returned pageable memory: %s", name, sizes[i], why);
        snprintf(call, sizeof call, "%s(%zu)", name, sizes[i]);
        kit_expect_not_write_combined(p, call);
        memset(p, 7, sizes[i]);
        cr_assert(p[sizes[i] - 1] == 7, "%s(%zu): the last byte cannot be written", name, sizes[i]);
        release(p);
    }
    release(NULL);
}

/* ===== Contract coverage ===== */

uint64_t kit_rand(uint64_t lo, uint64_t hi)
{
    static uint64_t state; /* seeded fresh in each test's process */
    if (!state)
        state = xl_fresh_seed() | 1;
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    if (hi <= lo)
        return lo;
    uint64_t span = hi - lo + 1;
    return span == 0 ? z : lo + z % span;
}

long kit_rand_int(long lo, long hi)
{
    return hi <= lo ? lo : lo + (long)kit_rand(0, (uint64_t)(hi - lo));
}

size_t kit_heap_now(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

void kit_expect_unchanged(const void *p, const void *copy, int n, size_t size, const char *what, const char *item)
{
    const unsigned char *a = p, *b = copy;
    for (int i = 0; i < n; i++)
        if (memcmp(a + (size_t)i * size, b + (size_t)i * size, size) != 0)
            cr_fatal("%s changed the caller's %s: number %d of %d is not what was passed (a value changed, or the "
                     "order). lab.h hands them in as const: read them, and work on a copy of your own", what, item, i,
                     n);
}

kit_held kit_held_now(void)
{
    release_word(); /* the kit's own, made before any count */
    kit_held h = {xl_pinned_now(), xl_resources_now(), kit_heap_now()};
    return h;
}

void kit_expect_released(kit_held before, const char *what)
{
    kit_held now = kit_held_now();
    char grew[512] = "";
    size_t used = 0;
    /* add - names one kind of resource that grew */
#define ADD(cond, ...)                                                                                         \
    if (cond && used < sizeof grew)                                                                            \
        used += snprintf(grew + used, sizeof grew - used, __VA_ARGS__);
    ADD(now.pinned.allocations > before.pinned.allocations, "%s%ld pinned buffers (%zu bytes)", used ? ", " : "",
        now.pinned.allocations - before.pinned.allocations, now.pinned.alloc_bytes - before.pinned.alloc_bytes)
    ADD(now.pinned.registrations > before.pinned.registrations, "%s%ld registrations (cudaHostRegister)",
        used ? ", " : "", now.pinned.registrations - before.pinned.registrations)
    ADD(now.res.dev_allocations > before.res.dev_allocations, "%s%ld device buffers (%zu bytes)", used ? ", " : "",
        now.res.dev_allocations - before.res.dev_allocations, now.res.dev_bytes - before.res.dev_bytes)
    ADD(now.res.streams > before.res.streams, "%s%ld streams", used ? ", " : "", now.res.streams - before.res.streams)
    ADD(now.res.events > before.res.events, "%s%ld events", used ? ", " : "", now.res.events - before.res.events)
    ADD(now.heap > before.heap + KIT_HEAP_SLACK, "%s%zu KiB of host memory (malloc'd and never freed)",
        used ? ", " : "", (now.heap - before.heap) >> 10)
#undef ADD
    cr_assert(used == 0, "after %s, still held: %s. Release everything a call made before it returns, or in the "
              "matching destroy/free", what, grew);
}

void kit_expect_no_heap_leak(int (*attempt)(void *ctx), void *ctx, const char *what, const char *hint)
{
    double t0 = xl_now_ms();
    cr_assert(attempt(ctx) == 0, "%s failed when called again (see its message above)", what);
    double one = xl_now_ms() - t0;
    int reps = one * KIT_REPEAT_MAX <= KIT_REPEAT_MS ? KIT_REPEAT_MAX
               : one * KIT_REPEAT_MIN >= KIT_REPEAT_MS ? KIT_REPEAT_MIN
                                                        : (int)(KIT_REPEAT_MS / one);
    size_t grew[KIT_HEAP_ROUNDS] = {0}, bar = (size_t)reps * KIT_HEAP_PER_CALL, least = SIZE_MAX, all = 0;
    for (int r = 0; r < KIT_HEAP_ROUNDS && least > bar; r++) {
        int quiet = kit_quiet_begin(); /* the calls' own lines, as many times over: the first call's are above */
        size_t h0 = kit_heap_now();
        int failed = 0;
        for (int i = 0; i < reps && !failed; i++)
            failed = attempt(ctx) != 0;
        size_t h1 = kit_heap_now();
        kit_quiet_end(quiet);
        cr_assert(failed == 0, "%s failed when called again (its message was kept out of the output; the first call's "
                  "is above)", what);
        grew[r] = h1 > h0 ? h1 - h0 : 0;
        least = grew[r] < least ? grew[r] : least;
        all += grew[r];
    }
    cr_assert(least <= bar,
              "%s, called %d times in each of %d rounds, left the host heap %zu, %zu and %zu bytes larger (about %zu "
              "bytes a call): %s", what, reps, KIT_HEAP_ROUNDS, grew[0], grew[1], grew[2],
              all / (KIT_HEAP_ROUNDS * (size_t)reps), hint);
}

/* The arguments of failing_once: a create's attempt and the create number to fail. */
typedef struct {
    int (*attempt)(void *ctx);
    void *ctx;
    long fail_at; /* creates that succeed before the one that fails */
} failing_args;

/* failing_once - kit_expect_no_heap_leak's attempt: a->attempt with its create number a->fail_at + 1 failing; 0 when
 * the failure happened and the call reported it (what every call of the sweep already checked once) */
static int failing_once(void *ctx)
{
    failing_args *a = ctx;
    xl_fail_create_after(a->fail_at);
    int failed = a->attempt(a->ctx);
    int fired = xl_fault_fired();
    xl_fail_create_after(-1);
    (void)cudaGetLastError();
    return fired && failed ? 0 : 1;
}

void kit_expect_failure_path_no_leak(int (*attempt)(void *ctx), void *ctx, long fail_at, const char *what)
{
    char w[320];
    failing_args fa = {attempt, ctx, fail_at};
    snprintf(w, sizeof w, "%s with its create number %ld failing", what, fail_at + 1);
    kit_expect_no_heap_leak(failing_once, &fa, w, "where a create fails, free everything malloc'd so far (the struct "
                            "and its arrays too) on that path, whichever create it was, before returning the failure");
}

#define FAIL_PATH_SYNCS 256 /* waits recorded per failing attempt (more are counted) */

/* create_failures - kit_expect_create_failures, and where said is 1 each failed attempt must write exactly one line
 * on stderr (kit_expect_one_line) */
static long create_failures(int (*attempt)(void *ctx), void *ctx, const char *what, int said)
{
    static xl_sync_rec syncs[FAIL_PATH_SYNCS];
    char w[320], text[1024];
    for (long k = 0;; k++) {
        kit_held before = kit_held_now();
        int saved = said ? kit_capture_begin() : -1;
        xl_synclog_start(syncs, FAIL_PATH_SYNCS);
        xl_fail_create_after(k);
        double t0 = xl_now_ms();
        int failed = attempt(ctx);
        double took = xl_now_ms() - t0;
        int fired = xl_fault_fired();
        xl_fail_create_after(-1);
        int nsync = xl_synclog_stop();
        int lines = said ? kit_capture_end(saved, text, sizeof text) : 0;
        if (said && lines)
            fprintf(stderr, "%s", text); /* shown as the call wrote it */
        snprintf(w, sizeof w, fired ? "%s, when its create number %ld failed (the kit made it fail as out of memory),"
                                    : "%s (all its %ld creates made) and its destroy", what, fired ? k + 1 : k);
        kit_expect_no_device_sync(syncs, nsync < FAIL_PATH_SYNCS ? nsync : FAIL_PATH_SYNCS, w);
        if (said && fired && failed)
            kit_expect_one_line(saved, lines, text, w, "NULL");
        if (!fired) {
            cr_assert(failed == 0, "%s failed although all its %ld creates succeeded (see its message above)", what, k);
            snprintf(w, sizeof w, "%s and its destroy", what);
            kit_expect_no_heap_leak(attempt, ctx, w, "something it mallocs (a struct, an array of buffers, streams "
                                    "or events) is not freed by its destroy");
            /* the failure paths leak the same way: the first create failing, and the last (all but one made) where
             * a whole create is quick enough to repeat */
            long last = took <= KIT_FAIL_PATH_MS ? k - 1 : 0;
            for (long f = 0; f < k && f <= last; f = f + 1 < last ? last : f + 1)
                kit_expect_failure_path_no_leak(attempt, ctx, f, what);
            return k;
        }
        cudaError_t left = cudaGetLastError();
        cr_assert(failed,
                  "%s: its create number %ld (an allocation, a stream, an event or an advice) failed as out of memory, "
                  "yet it reported success: check the result of every CUDA call that creates something",
                  what, k + 1);
        cr_assert(left == cudaSuccess,
                  "%s: after its create number %ld failed, it left %s for the next cudaGetLastError to find: where "
                  "you handle a failed call, clear its error (cudaGetLastError)",
                  what, k + 1, cudaGetErrorName(left));
        snprintf(w, sizeof w, "%s, which failed when its create number %ld could not be made", what, k + 1);
        kit_expect_released(before, w);
    }
}

long kit_expect_create_failures(int (*attempt)(void *ctx), void *ctx, const char *what)
{
    return create_failures(attempt, ctx, what, 0);
}

long kit_expect_create_failures_said(int (*attempt)(void *ctx), void *ctx, const char *what)
{
    return create_failures(attempt, ctx, what, 1);
}

void kit_expect_not_write_combined(const void *p, const char *name)
{
    unsigned int flags = 0;
    if (cudaHostGetFlags(&flags, (void *)p) != cudaSuccess) { /* registered or pageable memory: not write-combined */
        cudaGetLastError();
        return;
    }
    int write_combined = (flags & cudaHostAllocWriteCombined) != 0;
    cr_assert(write_combined == 0,
              "%s returned write-combined memory (cudaHostAllocWriteCombined): the host reads it many times slower "
              "than ordinary memory, and this lab's host reads it; allocate it with cudaMallocHost or "
              "cudaHostAlloc(..., cudaHostAllocDefault)",
              name);
}

void kit_queue_busy_memset(cudaStream_t stream, uint64_t busy_ns, void *dev, int byte, size_t bytes)
{
    xl_delay(stream, busy_ns);
    XL_CHECK(cudaMemsetAsync(dev, byte, bytes, stream));
}

void kit_queue_busy_copy(cudaStream_t stream, uint64_t busy_ns, void *dst, const void *src, size_t bytes)
{
    xl_delay(stream, busy_ns);
    XL_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void *kit_guarded(const void *src, size_t bytes)
{
    size_t page = (size_t)getpagesize(), span = (bytes + page - 1) / page * page;
    cr_assert(bytes >= 1 && span >= bytes, "kit_guarded: %zu bytes", bytes);
    char *base = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(base != MAP_FAILED, "kit_guarded: cannot map %zu bytes", span + page);
    cr_assert(mprotect(base + span, page, PROT_NONE) == 0, "kit_guarded: cannot protect the guard page");
    char *p = base + span - bytes;
    memcpy(p, src, bytes);
    return p;
}

void kit_guarded_free(void *p, size_t bytes)
{
    if (!p)
        return;
    size_t page = (size_t)getpagesize(), span = (bytes + page - 1) / page * page;
    munmap((char *)p + bytes - span, span + page);
}

int kit_quiet_begin(void)
{
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0 && dup2(null, 2) >= 0) {
        close(null);
        return saved;
    }
    if (null >= 0)
        close(null);
    if (saved >= 0)
        close(saved);
    return -1;
}

void kit_quiet_end(int saved)
{
    if (saved < 0)
        return;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

void kit_expect_sources_written(const xl_copy_rec *recs, int nrec, const char *call)
{
    for (int k = 0; k < nrec; k++)
        cr_assert(recs[k].src_untouched == 0,
                  "%s: copy %d of %d (%zu bytes host to device) read host memory never written: %zu of its pages "
                  "were untouched. Fill the host buffer before timing (memset will do): untouched pages read as "
                  "zeros from one shared page, which is faster than copying real data",
                  call, k + 1, nrec, recs[k].bytes, recs[k].src_untouched);
}

void kit_expect_copies_on(const xl_copy_rec *recs, int nrec, cudaStream_t s, const char *call)
{
    for (int k = 0; k < nrec; k++)
        cr_assert(recs[k].async && recs[k].stream == s,
                  "%s: copy %d of %d (%zu bytes) went %s, not with cudaMemcpyAsync on the stream it was given: "
                  "queue every copy on that stream",
                  call, k + 1, nrec, recs[k].bytes,
                  !recs[k].async ? "with cudaMemcpy (the legacy stream 0)"
                  : recs[k].stream == 0 ? "on the legacy stream 0" : "on another stream");
}

/* stream_name - s as a message names it, in buf */
static const char *stream_name(cudaStream_t s, char *buf, size_t len)
{
    if (s == 0)
        return "the legacy stream 0";
    if (s == cudaStreamLegacy)
        return "cudaStreamLegacy";
    if (s == cudaStreamPerThread)
        return "cudaStreamPerThread";
    snprintf(buf, len, "stream %p", (void *)s);
    return buf;
}

void kit_expect_launches_on(const xl_mem_rec *recs, int n, cudaStream_t s, const char *call)
{
    char got[48], want[48];
    int launches = 0;
    for (int k = 0; k < n; k++)
        launches += recs[k].kind == XL_MEM_LAUNCH;
    cr_assert(launches > 0, "%s: no <<< >>> launch recorded: launch your kernel with <<< >>> on the stream given",
              call);
    for (int k = 0, i = 0; k < n; k++) {
        if (recs[k].kind != XL_MEM_LAUNCH)
            continue;
        i++;
        cr_assert(recs[k].stream == s,
                  "%s: launch %d of %d (%u blocks of %u threads) went on %s, not on the stream it was given (%s): "
                  "launch every kernel on that stream",
                  call, i, launches, recs[k].grid, recs[k].block, stream_name(recs[k].stream, got, sizeof got),
                  stream_name(s, want, sizeof want));
    }
}

size_t kit_wrapping_count(size_t elem_bytes)
{
    return SIZE_MAX / elem_bytes + 1 + (size_t)kit_rand_int(0, (long)((16u << 10) / elem_bytes) - 1);
}

/* ===== A student call under watch ===== */

static jmp_buf guard_jmp;     /* where a failed CUDA check inside the call lands */
static char *guard_failure;   /* and where its message goes */
static size_t guard_len;

/* leave_call - the fail handler during a guarded call: keeps the message and leaves the call */
static void leave_call(const char *msg)
{
    snprintf(guard_failure, guard_len, "%s", msg);
    longjmp(guard_jmp, 1);
}

/* fail_test - the fail handler of a test: the message fails it */
static void fail_test(const char *msg)
{
    cr_fatal("%s", msg);
}

void kit_guarded_call(void (*call)(void *ctx), void *ctx, int *created, int *stopped, char *failure, size_t len)
{
    static volatile int failed; /* static: nothing a longjmp could clobber */
    guard_failure = failure, guard_len = len, failed = 0;
    failure[0] = '\0';
    xl_set_fail_handler(leave_call);
    xl_fail_create_after(0);
    if (setjmp(guard_jmp) == 0)
        call(ctx);
    else
        failed = 1;
    *created = xl_fault_fired();
    xl_fail_create_after(-1);
    xl_set_fail_handler(fail_test);
    if (*created)
        cudaGetLastError(); /* the out-of-memory error the kit planted */
    *stopped = failed;
}

/* ===== More than one GPU ===== */

void kit_use_device(int d)
{
    XL_CHECK(xl_set_device_unlogged(d));
    xl_gpu_used(d);
}

int kit_peer_enabled(int a, int b)
{
    int was = 0, on = 0;
    XL_CHECK(cudaGetDevice(&was));
    XL_CHECK(xl_set_device_unlogged(a));
    cudaError_t e = xl_peer_enable_unlogged(b);
    if (e == cudaSuccess) /* it was not: back as it was */
        XL_CHECK(xl_peer_disable_unlogged(b));
    else {
        on = e == cudaErrorPeerAccessAlreadyEnabled;
        cudaGetLastError(); /* already enabled, or no path at all: the probe's own error */
    }
    XL_CHECK(xl_set_device_unlogged(was));
    return on;
}

void kit_peer_reset(void)
{
    int was = 0, n = 0;
    XL_CHECK(cudaGetDevice(&was));
    XL_CHECK(cudaGetDeviceCount(&n));
    for (int a = 0; a < n; a++) {
        XL_CHECK(xl_set_device_unlogged(a));
        for (int b = 0; b < n; b++)
            if (b != a && xl_peer_disable_unlogged(b) != cudaSuccess)
                cudaGetLastError(); /* not enabled: nothing to undo */
    }
    XL_CHECK(xl_set_device_unlogged(was));
}

/* device_of - the device p's memory belongs to, -1 for host memory (or memory the runtime does not know) */
static int device_of(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
}

int kit_dev_copies(const xl_peer_rec *peer, int n, const xl_copy_rec *copies, int m, kit_dev_copy *out, int max)
{
    int k = 0, i = 0;
    for (int c = 0; c <= m; c++) {
        for (; i < n && peer[i].copies_before <= c; i++) { /* the peer copies made before copy c */
            const xl_peer_rec *r = &peer[i];
            if ((r->kind != XL_PEER_COPY && r->kind != XL_PEER_COPY_SYNC) || k >= max)
                continue;
            out[k++] = (kit_dev_copy){xl_peer_kind_name(r->kind), r->dst, r->dst_dev, r->src, r->src_dev, r->bytes,
                                      r->stream, r->kind == XL_PEER_COPY, cudaMemcpyDeviceToDevice};
        }
        if (c < m && k < max) {
            const xl_copy_rec *r = &copies[c];
            out[k++] = (kit_dev_copy){r->async ? "cudaMemcpyAsync" : "cudaMemcpy", r->dst, device_of(r->dst), r->src,
                                      device_of(r->src), r->bytes, r->stream, r->async, xl_copy_dir(r)};
        }
    }
    return k;
}

static FILE *capture_file; /* where stderr goes between kit_capture_begin and kit_capture_end */

int kit_capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    int saved = capture_file ? dup(2) : -1;
    if (saved >= 0 && dup2(fileno(capture_file), 2) >= 0)
        return saved;
    if (saved >= 0)
        close(saved);
    if (capture_file)
        fclose(capture_file);
    capture_file = NULL;
    return -1;
}

int kit_capture_end(int saved, char *text, size_t len)
{
    size_t got = 0;
    int lines = 0;
    if (len)
        text[0] = '\0';
    if (saved < 0 || !capture_file)
        return 0;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(capture_file);
    int ch, last = '\n';
    while ((ch = fgetc(capture_file)) != EOF) {
        if (got + 1 < len)
            text[got++] = (char)ch;
        lines += ch == '\n';
        last = ch;
    }
    lines += last != '\n';
    if (len > 1 && got + 1 == len) /* perhaps cut short: it still ends as the output did (kit_expect_one_line) */
        text[got - 1] = last == '\n' ? '\n' : text[got - 1] == '\n' ? ' ' : text[got - 1];
    if (len)
        text[got] = '\0';
    fclose(capture_file);
    capture_file = NULL;
    return lines;
}

void kit_expect_one_line(int saved, int lines, const char *text, const char *call, const char *returned)
{
    char one[400];
    size_t k = 0;
    for (const char *c = text; *c && k + 4 < sizeof one; c++) /* the lines on one, " | " between */
        if (*c != '\n')
            one[k++] = *c;
        else if (c[1])
            one[k++] = ' ', one[k++] = '|', one[k++] = ' ';
    one[k] = '\0';
    cr_assert(saved < 0 || lines == 1,
              "%s returned %s and wrote %d lines on stderr%s%s%s: lab.h asks for %s with a message of one line saying "
              "what was wrong (one fprintf(stderr, ...) ending in a newline)",
              call, returned, lines, lines ? " (\"" : "", one, lines ? "\")" : "", returned);
    size_t n = strlen(text);
    cr_assert(saved < 0 || n == 0 || text[n - 1] == '\n',
              "%s returned %s and wrote its line on stderr without a newline at the end (\"%s\"): end the message "
              "with \\n, so that the next line does not run on after it", call, returned, one);
}

/* ===== Waits, streams and threads (lab 10) ===== */

/* legacy - 1 when s is the legacy default stream, by either of its names */
static int legacy(cudaStream_t s)
{
    return s == 0 || s == cudaStreamLegacy;
}

int kit_same_stream(cudaStream_t a, cudaStream_t b)
{
    return legacy(a) || legacy(b) ? legacy(a) && legacy(b) : a == b;
}

void kit_expect_no_host_wait(const xl_sync_rec *recs, int n, const char *call, const char *rule)
{
    for (int k = 0; k < n; k++) {
        xl_sync_kind kind = recs[k].kind;
        cr_assert(kind != XL_SYNC_DEVICE && kind != XL_SYNC_STREAM && kind != XL_SYNC_EVENT,
                  "%s called %s (after %d copies and %d launches of its own): %s", call, xl_sync_name(kind),
                  recs[k].copies_before, recs[k].launches_before, rule);
    }
}

void kit_expect_no_device_sync(const xl_sync_rec *recs, int n, const char *call)
{
    char name[48];
    for (int k = 0; k < n; k++) {
        const xl_sync_rec *r = &recs[k];
        cr_assert(r->kind != XL_SYNC_DEVICE,
                  "%s: call %d of the %d that waited or ordered work was cudaDeviceSynchronize (after %d copies and "
                  "%d launches): it waits for all work on the GPU, not only yours, and holds up whatever else was "
                  "queued. Wait for your own stream (cudaStreamSynchronize) or an event recorded on it",
                  call, k + 1, n, r->copies_before, r->launches_before);
        if (r->kind == XL_SYNC_EVENT || !legacy(r->stream))
            continue;
        cr_fatal("%s: call %d of the %d that waited or ordered work was %s on %s (after %d copies and %d launches): "
                 "%s. Use your own streams, made with cudaStreamNonBlocking",
                 call, k + 1, n, xl_sync_name(r->kind),
                 stream_name(r->stream, name, sizeof name), r->copies_before, r->launches_before,
                 r->kind == XL_SYNC_STREAM ? "the legacy stream is tied to every blocking stream, so this waits "
                                             "for work that is not your loop's"
                 : r->kind == XL_SYNC_RECORD ? "the event then stands behind every blocking stream's work, so a wait "
                                               "on it waits for all of that"
                                             : "the legacy stream then waits for your event, and every blocking "
                                               "stream's later work waits behind it");
    }
}

void kit_expect_nonblocking_streams(const xl_copy_rec *recs, int n, const char *call)
{
    char name[48];
    cudaStream_t checked = 0; /* the last stream found non-blocking: copies come in runs on one stream */
    for (int k = 0; k < n; k++) {
        const xl_copy_rec *c = &recs[k];
        cr_assert(c->async,
                  "%s: copy %d of %d (%zu bytes) went with cudaMemcpy, which copies on the legacy stream 0 and "
                  "waits for everything there: use cudaMemcpyAsync on one of your loop's streams",
                  call, k + 1, n, c->bytes);
        cr_assert(legacy(c->stream) == 0,
                  "%s: copy %d of %d (%zu bytes) went on %s, which waits for, and holds up, every blocking stream: "
                  "queue it on one of your loop's streams, made with cudaStreamNonBlocking",
                  call, k + 1, n, c->bytes, stream_name(c->stream, name, sizeof name));
        cr_assert(c->stream != cudaStreamPerThread,
                  "%s: copy %d of %d (%zu bytes) went on cudaStreamPerThread, the thread's default stream, not one "
                  "of your loop's: it waits for the legacy stream 0 as a blocking stream does. Queue it on a stream "
                  "your loop made with cudaStreamNonBlocking",
                  call, k + 1, n, c->bytes);
        if (c->stream == checked)
            continue;
        unsigned flags = 0;
        cudaError_t e = cudaStreamGetFlags(c->stream, &flags);
        if (e != cudaSuccess)
            cudaGetLastError(); /* the message says it; leave no error behind */
        cr_assert(e == cudaSuccess,
                  "%s: copy %d of %d (%zu bytes) went on %s, whose flags cudaStreamGetFlags could not read (%s): "
                  "was that stream destroyed while the loop still used it?",
                  call, k + 1, n, c->bytes, stream_name(c->stream, name, sizeof name), cudaGetErrorString(e));
        cr_assert(flags & cudaStreamNonBlocking,
                  "%s: copy %d of %d (%zu bytes) went on %s, made without cudaStreamNonBlocking (as cudaStreamCreate "
                  "makes it): it waits for the legacy stream 0, and anything queued there, every time. Create your "
                  "streams with cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)",
                  call, k + 1, n, c->bytes, stream_name(c->stream, name, sizeof name));
        checked = c->stream;
    }
}
