/* 03-nonblocking-sync.c - the grader of lab 03 (the non-blocking sync bug). Course staff only.
 *
 * Races are made certain, not likely: the GPU is kept busy (the delay kernel) ahead of every
 * copy, so a read without a wait sees poison every time. That work is queued on the caller's
 * stream before each call, with the input the call needs put in place only after it, so work
 * put on any other stream computes from stale input or lands too early, every time. Narrow waits
 * are checked with an unrelated long kernel on another stream; overlap with host work is a ratio
 * measured in the same run. Fresh random data and random sizes on every repetition; the callbacks
 * count their calls; what a call leaves allocated is counted at the CUDA calls.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
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
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "labs/03-nonblocking-sync/lab.h"

XL_LAB("03", "nonblocking-sync");

#define REPS 20
#define DELAY_NS 10000000ull     /* 10 ms of GPU work ahead of each copy */
#define FETCH_GPU_NS 1000000ull  /* gpu_work's own delay in fetch.correct_under_delay: far less than the 10 ms the
                                    caller's stream works before the input is in place */
#define STALE_BYTE 0x3C          /* the result's input until the caller's stream puts the real one in place */
#define SEND_BUSY_NS 20000000ull /* 20 ms of work on the caller's stream before lab_send, then a memset of dev: */
#define BUSY_BYTE 0x5A           /* a batch copied on any other stream lands first and is overwritten */
#define GPU_WORK_BYTE 0xC3       /* what gpu_work(i) writes into batch i's destination: its copy must overwrite it */
#define SEND_MAX_BATCHES 12
#define SEND_MAX_BYTES ((2u << 20) + 1)
#define SEND_BIG_MIN (((size_t)4 << 20) + 1) /* once, 2 to 4 batches past 4 MiB: no size takes another path */
#define SEND_BIG_MAX (((size_t)6 << 20) + 1)
#define SEND_BIG_BATCHES 4
#define SEND_MANY_MIN 1100       /* once, thousands of batches of at most 1 KiB: past any array of 1024 */
#define SEND_MANY_MAX 4000
#define BIG_BUFFER_MIN ((size_t)256 << 20) /* a fetch buffer past this is pinned too */
#define OTHER_QUEUED_NS 500000000ull /* work another thread queues on job->stream after copy 0: fill(1) never waits */
#define SEND_FIRST_NS 50000000ull    /* for it, only for copy 0, behind gpu_work(0)'s 50 ms */
#define FILL1_MAX_MS 250.0
#define MAX_COPIES 1024          /* copies recorded per lab_fetch */
#define FETCH_GUARD 16           /* poisoned bytes after job->host's bytes, which lab_fetch must not write */
#define GPU_WORK_MS 40.0         /* GPU work in the overlap test, longer than the host work: */
#define HOST_WORK_MS 20.0        /* a fetch without a wait reads poison 20 ms early, every time */
#define OVERLAP_NEED 0.8         /* (H + G - T) / min(H, G): 1 is perfect overlap, 0 none */
#define CALLER_BUSY_NS 120000000ull /* the caller's stream works 120 ms before a call: the host's own work starts */
#define HOST_START_MS 50.0          /* within this, not once that work is done (a host wait on the stream first) */
#define LONG_HOST_MS 30.0 /* host work longer than the caller's 10 ms, gpu_work and the copy: consume follows it */
#define QUEUED_NS 100000000ull /* work host_work queues on job->stream after the copy: consume must not wait for it */
#define FIRST_WAIT_NS 400000000ull /* the first of two calls waits this long for its copy while the second runs */
#define SECOND_WAIT_MS 50.0     /* the second starts this long after the first has asked for its work, */
#define SECOND_MAX_MS 150.0     /* and ends within this (its own work takes a few ms), not behind the first's wait */
/* Why 40 and 20 ms: with host and GPU work of 30 ms each, a fetch without a wait read the result just as the copy
 * ended, and the skeleton once got 10 of 45 points on the H200; now it reads poison 20 ms early, every time, and
 * every wrong wait planted in the mutants scores near 0 or takes >= 300 ms beside the 300 ms kernel.
 * The reference's figures and margins on the H100 and H200: refdata/stability/ (docs/instructors.md's table). */

/* ===== Two calls at once, each in a thread ===== */

/* How the two calls of a concurrent round overlap, every time: the first waits in one of its callbacks (its event
 * made and recorded by then) while the second call runs from start to end in the other thread. State shared between
 * calls (an event in a static or global variable) is then overwritten and released by the second call while the first
 * still needs it. */
struct together {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stage; /* 0: the first call has not reached that callback; 1: it waits there; 2: the second call is over */
    int missed; /* 1: the first call waited there MEET_WAIT_S and the second call had not ended (it waited for it) */
};
#define TOGETHER_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0}
#define MEET_WAIT_S 5 /* a call that never reaches that callback (or that runs the calls one after the other) is waited
                         for no longer than this */
#define FAILURE_LEN 512

/* together_reach - sets t's stage to at least stage, then waits until it is at least until (at most MEET_WAIT_S);
 * 1 when it stopped waiting there, 0 when the stage came */
static int together_reach(struct together *t, int stage, int until)
{
    int late = 0;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += MEET_WAIT_S;
    pthread_mutex_lock(&t->lock);
    if (t->stage < stage)
        t->stage = stage;
    pthread_cond_broadcast(&t->cond);
    while (t->stage < until)
        if (pthread_cond_timedwait(&t->cond, &t->lock, &deadline) == ETIMEDOUT) {
            late = t->stage < until;
            break;
        }
    pthread_mutex_unlock(&t->lock);
    return late;
}

/* together_meet - in the first call's callback: waits there while the second call runs */
static void together_meet(struct together *t)
{
    if (together_reach(t, 1, 2))
        t->missed = 1; /* read by the test's thread once both threads are joined */
}

/* In a concurrent round's thread, a failed CUDA check (the student's or the kit's) stops that thread's call with its
 * message, for the test's own thread to fail with: Criterion's asserts belong to the test's thread only. */
static __thread jmp_buf *worker_stop;
static __thread char *worker_failure;

/* fail_here - the fail handler of a test that runs threads: in a worker, stops it; in the test's thread, fails the
 * test with the message, as the grading model's own handler does */
static void fail_here(const char *msg)
{
    if (worker_stop) {
        snprintf(worker_failure, FAILURE_LEN, "%s", msg);
        longjmp(*worker_stop, 1);
    }
    cr_fatal("%s", msg);
}

/* One thread of a concurrent round. */
typedef struct {
    void (*call)(void *arg);
    void *arg;
    struct together *second; /* not NULL: the second call, made once the first waits in its callback */
    int stopped;                /* a failed CUDA check stopped call */
    char failure[FAILURE_LEN];  /* its message */
} worker;

static void *worker_main(void *p)
{
    worker *w = p;
    jmp_buf stop;
    worker_failure = w->failure;
    worker_stop = &stop;
    if (w->second)
        together_reach(w->second, 0, 1);
    if (setjmp(stop) == 0)
        w->call(w->arg);
    else
        w->stopped = 1;
    worker_stop = NULL;
    if (w->second)
        together_reach(w->second, 2, 2); /* the first call goes on */
    return NULL;
}

/* run_together - call(a) and call(b) at once, each in a thread of its own: call(b) starts once call(a) waits in its
 * callback at meet (together_meet) and runs to its end while call(a) waits; returns once both are joined, failing the
 * test when a failed CUDA check stopped either (what names the calls) */
static void run_together(void (*call)(void *arg), void *a, void *b, struct together *meet, const char *what)
{
    worker w[2] = {{.call = call, .arg = a}, {.call = call, .arg = b, .second = meet}};
    pthread_t th[2];
    xl_set_fail_handler(fail_here);
    for (int k = 0; k < 2; k++)
        cr_assert(pthread_create(&th[k], NULL, worker_main, &w[k]) == 0, "grader error: pthread_create failed");
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++)
        cr_assert(w[k].stopped == 0, "%s: the %s call stopped: %s", what, k ? "second" : "first", w[k].failure);
    cr_assert(meet->missed == 0,
              "%s: the second call had not ended after the first had waited %d s in its callback: one call waited "
              "for the other (a lock held over the whole call?). lab.h: calls may run at once, in several threads, "
              "none waiting for another", what, MEET_WAIT_S);
}

/* second_ms_beside_wait - call(a) in a thread of its own and, once the first call has set *started (its copy asked
 * for, its wait for it next; FIRST_WAIT_NS of work ahead of that copy) and SECOND_WAIT_MS more, call(b) in this
 * thread: how long call(b) took (ms). A call held back by the first's wait (a lock held over a wait) takes about
 * FIRST_WAIT_NS less SECOND_WAIT_MS; its own work, a few ms. what names the calls. */
static double second_ms_beside_wait(void (*call)(void *arg), void *a, void *b, const int *started, const char *what)
{
    worker w = {.call = call, .arg = a};
    pthread_t th;
    xl_set_fail_handler(fail_here);
    cr_assert(pthread_create(&th, NULL, worker_main, &w) == 0, "grader error: pthread_create failed");
    double give_up = xl_now_ms() + MEET_WAIT_S * 1000.0;
    while (!__atomic_load_n(started, __ATOMIC_ACQUIRE) && xl_now_ms() < give_up)
        xl_sleep_ms(0.2);
    int reached = __atomic_load_n(started, __ATOMIC_ACQUIRE);
    xl_sleep_ms(SECOND_WAIT_MS);
    double t0 = xl_now_ms();
    call(b);
    double ms = xl_now_ms() - t0;
    pthread_join(th, NULL);
    cr_assert(w.stopped == 0, "%s: the first call stopped: %s", what, w.failure);
    cr_assert(reached, "%s: the first call never called its callback in %d s", what, MEET_WAIT_S);
    return ms;
}

/* expect_events_released - no more events are held now than at before: what names the calls made since */
static void expect_events_released(kit_held before, const char *what)
{
    long left = kit_held_now().res.events - before.res.events;
    cr_assert(left <= 0, "after %s, %ld events are still held: the calls shared one event (a static or global "
              "variable), so one call's own event was lost. Keep the event in a local variable of each call (lab.h: "
              "calls may run at once, in several threads)", what, left);
}

/* ms_beside_blocking_busy - runs call(ctx) while an unrelated KIT_OTHER_NS kernel runs on a blocking stream
 * (cudaStreamCreate's) and returns how long call took in ms; then waits for that kernel. For a call on
 * cudaStreamPerThread, which waits for no blocking stream but the legacy one: a call that waits for its own work only
 * takes a few ms, one that waits on the legacy stream 0 (an event recorded there, cudaMemcpy) or for the device waits
 * for the kernel. */
static double ms_beside_blocking_busy(void (*call)(void *ctx), void *ctx)
{
    cudaStream_t b;
    XL_CHECK(cudaStreamCreate(&b));
    xl_delay(b, KIT_OTHER_NS);
    double t0 = xl_now_ms();
    call(ctx);
    double ms = xl_now_ms() - t0;
    XL_CHECK(cudaStreamSynchronize(b));
    XL_CHECK(cudaStreamDestroy(b));
    return ms;
}

/* rand_bytes - a fresh size in [lo, hi] (lo >= 1), as likely in each power-of-two range as in any other: a few bytes
 * as often as megabytes */
static size_t rand_bytes(size_t lo, size_t hi)
{
    int bot = 0, top = 0;
    while (bot < 62 && ((size_t)2 << bot) <= lo)
        bot++;
    while (top < 62 && ((size_t)2 << top) <= hi)
        top++;
    int e = (int)kit_rand_int(bot, top);
    size_t a = (size_t)1 << e, b = ((size_t)2 << e) - 1;
    return (size_t)kit_rand(a < lo ? lo : a, b > hi ? hi : b);
}

/* ===== Fetch fixtures ===== */

/* What a fetch moves and how its callbacks behave. */
typedef struct {
    void *dev;            /* the result buffer lab_fetch copies from */
    const void *src;      /* gpu_work copies it into dev */
    void *real;           /* not NULL: the expected data, which the caller's stream copies into src before the call */
    const unsigned char *want; /* the expected bytes, on the host */
    size_t bytes;
    uint64_t gpu_ns;      /* delay before the result is written */
    double host_ms;       /* host work, spinning */
    cudaStream_t stream;  /* the job's stream */
    const void *host;     /* the job's destination */
    cudaStream_t gpu_stream; /* the stream gpu_work was last given */
    int gpu_worked, host_worked, consumed; /* how many times each callback ran */
    int check;            /* consume verifies the data */
    int rep;              /* the repetition, for messages (0: none) */
    double host_at;       /* when host_work last started (xl_now_ms) */
    int copies_at_host;   /* copies asked for (xl_copylog_count, the record open) when host_work last started */
    cudaError_t stream_at_host; /* cudaStreamQuery(stream) then: cudaErrorNotReady while the GPU still works */
    char order[64];       /* the callbacks' names in the order they ran, ", " between */
    struct together *meet; /* not NULL: host_work waits there while another thread's fetch runs (together_meet) */
    struct together *consume_meet; /* not NULL: consume waits there while another thread's fetch runs */
    int in_thread;        /* 1: runs in a thread of a concurrent round: consume notes what it found in wrong */
    size_t wrong;         /* then 1 + the first wrong byte consume read (0: all right; SIZE_MAX: not job->host) */
    pthread_t caller;     /* the thread that calls lab_fetch: every callback runs on it */
    int other_thread;     /* callbacks called on another thread */
    int host_done;        /* host_work has returned (since job_for) */
    int consumed_early;   /* consume calls made before host_work had returned */
    uint64_t queue_ns;    /* not 0: host_work queues this much work on job->stream, after the copy */
    int scan;             /* 1: host_work reads job->host, which holds only poison or the result's own bytes then */
    size_t scribbled;     /* then 1 + the first byte of host holding neither (lab_fetch wrote it itself); 0: none */
    cudaError_t stream_at_consume; /* cudaStreamQuery(stream) when consume ran: NotReady while that work runs */
    int started;          /* set (atomically) when host_work starts: the call's copy is asked for, its wait next */
} fetch_ctx;

/* The fetch of a job whose ctx is NULL: a caller whose callbacks keep their state elsewhere (lab.h: ctx is only
 * handed to the callbacks, so NULL is as valid as any). NULL while no such job runs. */
static fetch_ctx *fetch_null_ctx;

/* state_of - what a callback of fn's job was given ctx for: ctx itself, or where the job's ctx is NULL (null_state
 * set), null_state, after checking that ctx came through as NULL */
static void *state_of(void *ctx, void *null_state, const char *fn)
{
    if (!null_state)
        return ctx;
    cr_assert(ctx == NULL, "%s passed ctx %p to a callback of a job whose ctx is NULL: pass job->ctx unchanged, "
              "whatever it is", fn, ctx);
    return null_state;
}

/* fetch_state - the fetch_ctx a callback was given ctx for */
static fetch_ctx *fetch_state(void *ctx)
{
    return state_of(ctx, fetch_null_ctx, "lab_fetch");
}

/* ran - appends the callback name to order (", " between), as far as order's len bytes hold */
static void ran(char *order, size_t len, const char *name)
{
    size_t used = strlen(order);
    if (used < len)
        snprintf(order + used, len - used, "%s%s", used ? ", " : "", name);
}

/* on_caller - notes a callback of f's called on another thread than the caller's */
static void on_caller(fetch_ctx *f)
{
    if (!pthread_equal(pthread_self(), f->caller))
        f->other_thread++;
}

/* fetch_gpu_work - the GPU keeps busy, then writes the result into dev */
static void fetch_gpu_work(cudaStream_t s, void *ctx)
{
    fetch_ctx *f = fetch_state(ctx);
    on_caller(f);
    ran(f->order, sizeof f->order, "gpu_work");
    f->gpu_worked++;
    f->gpu_stream = s;
    xl_delay(s, f->gpu_ns);
    XL_CHECK(cudaMemcpyAsync(f->dev, f->src, f->bytes, cudaMemcpyDeviceToDevice, s));
}

/* spin_ms - keeps the CPU busy for ms, as real host work would */
static void spin_ms(double ms)
{
    double end = xl_now_ms() + ms;
    while (xl_now_ms() < end) {
    }
}

/* fetch_host_work - host work independent of the result */
static void fetch_host_work(void *ctx)
{
    fetch_ctx *f = fetch_state(ctx);
    on_caller(f);
    f->host_done = 0;
    __atomic_store_n(&f->started, 1, __ATOMIC_RELEASE);
    f->host_at = xl_now_ms();
    f->copies_at_host = xl_copylog_count();
    f->stream_at_host = cudaStreamQuery(f->stream);
    if (f->stream_at_host == cudaErrorNotReady)
        cudaGetLastError(); /* "not yet" is no error of the code under test */
    ran(f->order, sizeof f->order, "host_work");
    f->host_worked++;
    if (f->scan && f->host) { /* the copy may be writing it: a byte is the poison or the result's, nothing else */
        const unsigned char *h = f->host;
        for (size_t k = 0; k < f->bytes && !f->scribbled; k++)
            if (h[k] != XL_POISON_BYTE && h[k] != f->want[k])
                f->scribbled = 1 + k;
    }
    spin_ms(f->host_ms);
    if (f->queue_ns) /* the next step's work, queued on job->stream after the copy */
        xl_delay(f->stream, f->queue_ns);
    if (f->meet)
        together_meet(f->meet);
    f->host_done = 1;
}

/* fetch_consume - reads the result: the last page first (a copy in flight writes it last) */
static void fetch_consume(const void *host, size_t bytes, void *ctx)
{
    fetch_ctx *f = fetch_state(ctx);
    size_t bad = 0, tail = bytes < 4096 ? bytes : 4096;
    char when[64] = "";
    on_caller(f);
    ran(f->order, sizeof f->order, "consume");
    f->consumed++;
    f->consumed_early += !f->host_done;
    if (f->queue_ns) {
        f->stream_at_consume = cudaStreamQuery(f->stream);
        if (f->stream_at_consume == cudaErrorNotReady)
            cudaGetLastError(); /* "not yet" is no error of the code under test */
    }
    if (f->in_thread) { /* the test's own thread checks what it found, once it has joined this one */
        const unsigned char *h = host;
        if (host != f->host || bytes != f->bytes)
            f->wrong = SIZE_MAX;
        else if (xl_compare(h, f->want, bytes, &bad) != 0)
            f->wrong = 1 + bad;
        if (f->consume_meet) /* the other call's consume runs while this one's does */
            together_meet(f->consume_meet);
        return;
    }
    if (f->rep)
        snprintf(when, sizeof when, " (repetition %d, %zu bytes)", f->rep, f->bytes);
    cr_assert(host == f->host && bytes == f->bytes,
              "lab_fetch called consume(%p, %zu bytes)%s; it must pass job->host (%p) and job->bytes (%zu)", host,
              bytes, when, f->host, f->bytes);
    if (!f->check)
        return;
    const unsigned char *h = host;
    int tail_ok = xl_compare(h + bytes - tail, f->want + bytes - tail, tail, &bad) == 0;
    if (tail_ok)
        tail_ok = xl_compare(h, f->want, bytes, &bad) == 0;
    else
        bad += bytes - tail;
    cr_assert(tail_ok, "consume read byte %zu of %zu wrong%s (0x%02x, expected 0x%02x): %s", bad, bytes, when, h[bad],
              f->want[bad],
              !f->gpu_worked ? "consume ran before gpu_work was called: enqueue gpu_work, then the copy, first"
              : f->gpu_stream != f->stream
                  ? "lab_fetch gave gpu_work a stream other than job->stream, so the GPU work ran before the input "
                    "the caller had queued on job->stream was in place. Enqueue gpu_work and the copy on job->stream"
                  : "the copy had not written it yet. Wait for the copy (an event recorded after it, or its stream) "
                    "before reading the result, and put the copy on job->stream, after gpu_work");
}

/* fetch_setup - fresh expected data of bytes, its device copy, a poisoned result buffer; a job on stream s. The
 * buffers hold a byte at least: a result of 0 bytes still comes from a real dev (lab.h: only NULL is refused). */
static void fetch_setup(fetch_ctx *f, size_t bytes, uint64_t gpu_ns, double host_ms, cudaStream_t s)
{
    size_t room = bytes ? bytes : 1;
    unsigned char *want = kit_host_alloc(room);
    void *src = kit_dev_alloc(room);
    xl_fill_random(want, room, xl_fresh_seed());
    xl_dev_upload(src, want, room);
    *f = (fetch_ctx){.dev = kit_dev_alloc(room), .src = src, .want = want, .bytes = bytes, .gpu_ns = gpu_ns,
                     .host_ms = host_ms, .stream = s, .check = 1, .caller = pthread_self()};
    XL_CHECK(cudaDeviceSynchronize()); /* the poison is in dev before any stream starts */
}

/* fetch_stale - src holds stale bytes from now on, the expected input kept in real (fetch_queue_input puts it back) */
static void fetch_stale(fetch_ctx *f)
{
    void *stale = kit_dev_alloc(f->bytes ? f->bytes : 1);
    xl_dev_fill(stale, STALE_BYTE, f->bytes ? f->bytes : 1);
    XL_CHECK(cudaDeviceSynchronize());
    f->real = (void *)f->src;
    f->src = stale;
}

/* fetch_queue_input - the caller's stream works 10 ms, then puts the result's input in place */
static void fetch_queue_input(fetch_ctx *f)
{
    kit_queue_busy_copy(f->stream, DELAY_NS, (void *)f->src, f->real, f->bytes);
}

/* fetch_behind_caller - the caller's stream works 10 ms, then puts the result's input in place: until then src holds
 * stale bytes, so gpu_work enqueued on any stream but the job's computes from stale input */
static void fetch_behind_caller(fetch_ctx *f)
{
    fetch_stale(f);
    fetch_queue_input(f);
}

/* fetch_teardown - frees what fetch_setup and fetch_behind_caller allocated */
static void fetch_teardown(fetch_ctx *f)
{
    XL_CHECK(cudaFree(f->dev));
    XL_CHECK(cudaFree((void *)f->src));
    if (f->real)
        XL_CHECK(cudaFree(f->real));
    free((void *)f->want);
}

/* job_for - a lab_fetch_job on f's stream into host, with f's callbacks */
static lab_fetch_job job_for(fetch_ctx *f, void *host)
{
    f->host = host;
    f->caller = pthread_self(); /* a concurrent round's thread sets its own */
    f->host_done = 0;
    lab_fetch_job j = {f->stream, fetch_gpu_work, f->dev, host, f->bytes, fetch_host_work, fetch_consume, f};
    return j;
}

/* expect_fetch_refuses_null - a job of bytes with one member NULL, each in turn, the rest valid: lab_fetch returns
 * -1, calls no callback, leaves no error and holds nothing */
static void expect_fetch_refuses_null(cudaStream_t s, size_t bytes)
{
    static const char *const member[5] = {"gpu_work", "dev", "host", "host_work", "consume"};
    fetch_ctx f;
    fetch_setup(&f, bytes, 0, 0, s);
    void *host = kit_pinned_alloc(4096);
    xl_poison(host, 4096);
    kit_held before = kit_held_now();
    for (int m = 0; m < 5; m++) {
        lab_fetch_job j = job_for(&f, host);
        if (m == 0) j.gpu_work = NULL;
        if (m == 1) j.dev = NULL;
        if (m == 2) j.host = NULL;
        if (m == 3) j.host_work = NULL;
        if (m == 4) j.consume = NULL;
        f.gpu_worked = f.host_worked = f.consumed = 0;
        int rc = lab_fetch(&j);
        cudaError_t left = cudaGetLastError();
        cr_assert(rc == -1 && f.gpu_worked + f.host_worked + f.consumed == 0 && left == cudaSuccess,
                  "lab_fetch with job->%s NULL (the rest valid, %zu bytes) returned %d after %d gpu_work, %d host_work "
                  "and %d consume calls, leaving %s: lab.h asks for -1 on a NULL argument, before any work, whatever "
                  "the size (0 bytes too)",
                  member[m], bytes, rc, f.gpu_worked, f.host_worked, f.consumed, cudaGetErrorName(left));
    }
    kit_expect_released(before, "lab_fetch refusing a job with a NULL member");
    XL_CHECK(cudaStreamSynchronize(s));
    size_t bad = 0;
    cr_assert(xl_check_poison(host, 4096, &bad) == 0, "lab_fetch wrote into job->host (byte %zu) in a call it refused "
              "(a NULL member, %zu bytes): a refused call leaves the caller's buffers untouched", bad, bytes);
    XL_CHECK(cudaFreeHost(host));
    fetch_teardown(&f);
}

/* expect_fetch_callbacks_here - f's lab_fetch called every callback on the thread that called it, consume only once
 * host_work had returned, and, where host_work queued work on job->stream after the copy, consume while that work
 * still ran (it waited for the copy only); when names the call */
static void expect_fetch_callbacks_here(const fetch_ctx *f, const char *when)
{
    cr_assert(f->other_thread == 0,
              "lab_fetch called %d of its callbacks on another thread than the one that called it%s. lab.h: lab_fetch "
              "calls gpu_work, host_work and consume itself, on the calling thread (not from a stream callback such "
              "as cudaLaunchHostFunc)", f->other_thread, when);
    cr_assert(f->consumed_early == 0,
              "lab_fetch called consume before host_work had returned%s (host_work took %.1f ms). lab.h: gpu_work, "
              "host_work and consume, in that order: consume once host_work has returned and the copy is done",
              when, f->host_ms);
    if (f->queue_ns)
        cr_assert(f->stream_at_consume == cudaErrorNotReady,
                  "lab_fetch called consume only once job->stream had also done the %.0f ms of work that host_work "
                  "queued there after the copy%s: it waited for the whole stream. lab.h: wait for this copy only (an "
                  "event recorded right after it)", f->queue_ns * 1e-6, when);
}

/* expect_copies_on - every copy into host[0 .. bytes) among the n recorded was a cudaMemcpyAsync on stream s */
static void expect_copies_on(const xl_copy_rec *recs, int n, const void *host, size_t bytes, cudaStream_t s,
                             const char *when)
{
    for (int i = 0; i < n && i < MAX_COPIES; i++) {
        const char *d = recs[i].dst, *h = host;
        if (d < h || d >= h + bytes)
            continue;
        cr_assert(recs[i].async && recs[i].stream == s,
                  "lab_fetch copied %zu bytes of the result%s with %s on %s, not on job->stream: put the copy on "
                  "job->stream, where it runs after gpu_work and the caller's own work",
                  recs[i].bytes, when, recs[i].async ? "cudaMemcpyAsync" : "cudaMemcpy",
                  recs[i].stream ? "another stream" : "the legacy default stream (stream 0)");
    }
}

/* expect_host_work_beside_gpu - f's lab_fetch, called with work the caller had queued on job->stream (ms of it),
 * ran host_work while that work still ran, and after asking for every copy into host[0 .. f->bytes) among the n
 * recorded: the GPU work and the copy run while the host works, at every size */
static void expect_host_work_beside_gpu(const fetch_ctx *f, const xl_copy_rec *recs, int n, const void *host,
                                        const char *when)
{
    cr_assert(f->stream_at_host == cudaErrorNotReady,
              "lab_fetch called host_work only once job->stream had finished all its work (the caller's and "
              "gpu_work's)%s: it waited before host_work. lab.h: run host_work at once, while the GPU works, at any "
              "size, and wait for the copy only before consume", when);
    for (int i = 0; i < n && i < MAX_COPIES; i++) {
        const char *d = recs[i].dst, *h = host;
        if (d < h || d >= h + f->bytes)
            continue;
        cr_assert(i < f->copies_at_host,
                  "lab_fetch asked for the copy of the result into job->host after host_work had started%s, so the "
                  "copy waits for the host work instead of running beside it. lab.h: enqueue gpu_work and the copy, "
                  "then call host_work", when);
    }
}

/* fetch_refusals - kit_expect_no_heap_leak's attempt: lab_fetch(NULL), then the valid job ctx with each member that
 * may not be NULL set to NULL in turn; 0 when every call returned -1 */
static int fetch_refusals(void *ctx)
{
    const lab_fetch_job *good = ctx;
    int ok = lab_fetch(NULL) == -1;
    for (int m = 0; m < 5; m++) {
        lab_fetch_job j = *good;
        if (m == 0) j.gpu_work = NULL;
        if (m == 1) j.dev = NULL;
        if (m == 2) j.host = NULL;
        if (m == 3) j.host_work = NULL;
        if (m == 4) j.consume = NULL;
        ok &= lab_fetch(&j) == -1;
    }
    return ok ? 0 : -1;
}

/* fetch_again - kit_expect_no_heap_leak's attempt: lab_fetch of the valid job ctx; what it returned */
static int fetch_again(void *ctx)
{
    return lab_fetch(ctx);
}

/* expect_fetch_keeps_no_heap - lab_fetch refusing bad jobs, and fetching a small result, each repeated on s: neither
 * grows the host heap call after call */
static void expect_fetch_keeps_no_heap(cudaStream_t s)
{
    fetch_ctx f;
    size_t n = rand_bytes(1, 1u << 16);
    char what[160];
    fetch_setup(&f, n, 0, 0, s);
    void *host = lab_fetch_buffer(n);
    cr_assert(host != NULL, "lab_fetch_buffer(%zu) returned NULL", n);
    lab_fetch_job j = job_for(&f, host);
    kit_expect_no_heap_leak(fetch_refusals, &j, "lab_fetch(NULL) and lab_fetch with each NULL member in turn",
                            "check the arguments before you malloc anything, or free what you made before "
                            "returning -1");
    snprintf(what, sizeof what, "lab_fetch of %zu bytes", n);
    kit_expect_no_heap_leak(fetch_again, &j, what, "something lab_fetch mallocs is not freed before it returns (lab.h: "
                            "it holds nothing once it returns)");
    XL_CHECK(cudaStreamSynchronize(s));
    lab_fetch_buffer_free(host);
    fetch_teardown(&f);
}

/* same_fetch_job - 1 when a and b hold the same members */
static int same_fetch_job(const lab_fetch_job *a, const lab_fetch_job *b)
{
    return a->stream == b->stream && a->gpu_work == b->gpu_work && a->dev == b->dev && a->host == b->host &&
           a->bytes == b->bytes && a->host_work == b->host_work && a->consume == b->consume && a->ctx == b->ctx;
}

/* ===== Part A: fetch ===== */

/* A concurrent round's fetch, run in a thread of its own. */
typedef struct {
    lab_fetch_job job;
    int rc;
} fetch_in_thread;

static void fetch_in_thread_call(void *arg)
{
    fetch_in_thread *t = arg;
    ((fetch_ctx *)t->job.ctx)->caller = pthread_self(); /* its callbacks run on this thread */
    t->rc = lab_fetch(&t->job);
}

/* fetch_two_at_once - two fetches at once, each in a thread, on its own stream s[k] behind the caller's work: the
 * second from start to end while the first waits in host_work, its copy still 40 ms away (in_consume 0), or while the
 * first waits in consume (in_consume 1: the two consumes run at once). Both results arrive, and are still in host
 * after the calls, and neither call loses an event. */
static void fetch_two_at_once(const cudaStream_t s[2], int in_consume)
{
    const char *const what = in_consume ? "two lab_fetch calls at once, each in a thread with its own job and stream "
                                          "(the second made and ended while the first was in consume)"
                                        : "two lab_fetch calls at once, each in a thread with its own job and stream "
                                          "(the second made and ended while the first waited in host_work)";
    static xl_copy_rec recs[MAX_COPIES];
    struct together meet = TOGETHER_INIT;
    fetch_ctx f[2];
    fetch_in_thread t[2];
    kit_held before = kit_held_now();
    for (int k = 0; k < 2; k++) {
        size_t n = rand_bytes(1, 4 << 20);
        fetch_setup(&f[k], n, FETCH_GPU_NS, 0.1, s[k]);
        void *host = lab_fetch_buffer(n);
        cr_assert(host != NULL, "lab_fetch_buffer(%zu) returned NULL", n);
        xl_poison(host, n);
        t[k] = (fetch_in_thread){.job = job_for(&f[k], host), .rc = -2};
        f[k].in_thread = 1;
        fetch_stale(&f[k]);
    }
    if (in_consume)                  /* consume waits there while the second call runs (its consume too), */
        f[0].consume_meet = &meet;
    else                             /* host_work waits there while the second call runs, */
        f[0].meet = &meet;
    xl_delay(s[0], 4 * DELAY_NS);    /* and the first call's copy lands 40 ms after the second's */
    for (int k = 0; k < 2; k++)      /* queued once nothing more waits for the device */
        fetch_queue_input(&f[k]);
    xl_copylog_start(recs, MAX_COPIES); /* one record for both threads */
    run_together(fetch_in_thread_call, &t[0], &t[1], &meet, what);
    int copies = xl_copylog_stop();
    for (int k = 0; k < 2; k++) {
        char when[320];
        XL_CHECK(cudaStreamSynchronize(s[k]));
        cr_assert(t[k].rc == 0 && f[k].gpu_worked == 1 && f[k].host_worked == 1 && f[k].consumed == 1,
                  "%s: the %s call (%zu bytes) returned %d after %d gpu_work, %d host_work and %d consume calls; each "
                  "must return 0 after one of each (lab.h: calls may run at once)",
                  what, k ? "second" : "first", f[k].bytes, t[k].rc, f[k].gpu_worked, f[k].host_worked, f[k].consumed);
        snprintf(when, sizeof when, " (%s, the %s call, %zu bytes)", what, k ? "second" : "first", f[k].bytes);
        expect_host_work_beside_gpu(&f[k], recs, copies, t[k].job.host, when);
        expect_fetch_callbacks_here(&f[k], when);
    }
    expect_events_released(before, what);
    for (int k = 0; k < 2; k++) {
        size_t bad = f[k].wrong && f[k].wrong != SIZE_MAX ? f[k].wrong - 1 : 0;
        cr_assert(f[k].wrong != SIZE_MAX, "%s: the %s call did not pass its own job->host and job->bytes (%zu) to "
                  "consume", what, k ? "second" : "first", f[k].bytes);
        cr_assert(f[k].wrong == 0, "%s: consume of the %s call read byte %zu of %zu wrong (0x%02x, expected 0x%02x): "
                  "it waited for something other than its own copy. Keep each call's event in a local variable, never "
                  "in a static or global one (lab.h: calls may run at once)",
                  what, k ? "second" : "first", bad, f[k].bytes, ((const unsigned char *)t[k].job.host)[bad],
                  f[k].want[bad]);
        cr_assert(xl_compare(t[k].job.host, f[k].want, f[k].bytes, &bad) == 0, "%s: after the %s call returned, "
                  "byte %zu of its job->host (%zu bytes) no longer held the result: lab.h: only the copy writes host, "
                  "and the result stays there for the caller", what, k ? "second" : "first", bad, f[k].bytes);
        lab_fetch_buffer_free(t[k].job.host);
        fetch_teardown(&f[k]);
    }
    kit_expect_released(before, what);
}

/* fetch_waits_apart - two fetches at once, each on its own stream s[k]: the first, in a thread, waits for its copy
 * behind FIRST_WAIT_NS of gpu_work while the second, in this thread, runs from start to end in a few ms, not held
 * back by the first's wait; both results arrive, on the callers' threads, and no event is lost */
static void fetch_waits_apart(const cudaStream_t s[2])
{
    static const char *const what = "two lab_fetch calls at once, each in a thread with its own job and stream (the "
                                    "second made while the first waited 400 ms for its copy)";
    fetch_ctx f[2];
    fetch_in_thread t[2];
    kit_held before = kit_held_now();
    for (int k = 0; k < 2; k++) {
        size_t n = rand_bytes(1, 1u << 20);
        fetch_setup(&f[k], n, k ? FETCH_GPU_NS : FIRST_WAIT_NS, 0.1, s[k]);
        void *host = lab_fetch_buffer(n);
        cr_assert(host != NULL, "lab_fetch_buffer(%zu) returned NULL", n);
        xl_poison(host, n);
        t[k] = (fetch_in_thread){.job = job_for(&f[k], host), .rc = -2};
        f[k].in_thread = 1;
    }
    double ms = second_ms_beside_wait(fetch_in_thread_call, &t[0], &t[1], &f[0].started, what);
    for (int k = 0; k < 2; k++) {
        char when[320];
        XL_CHECK(cudaStreamSynchronize(s[k]));
        snprintf(when, sizeof when, " (%s, the %s call, %zu bytes)", what, k ? "second" : "first", f[k].bytes);
        cr_assert(t[k].rc == 0 && f[k].gpu_worked == 1 && f[k].host_worked == 1 && f[k].consumed == 1,
                  "lab_fetch returned %d after %d gpu_work, %d host_work and %d consume calls%s; each call must "
                  "return 0 after one of each", t[k].rc, f[k].gpu_worked, f[k].host_worked, f[k].consumed, when);
        cr_assert(f[k].wrong == 0, "consume read the result wrong%s (%s): wait for the call's own copy, on an event of "
                  "its own", when, f[k].wrong == SIZE_MAX ? "not job->host and job->bytes" : "a byte wrong");
        expect_fetch_callbacks_here(&f[k], when);
    }
    cr_assert(ms <= SECOND_MAX_MS,
              "%s: the second call (%zu bytes, a few ms of its own work) took %.0f ms: it waited while the first "
              "waited for its copy (a lock held over a wait?). lab.h: calls may run at once, none waiting for another",
              what, f[1].bytes, ms);
    expect_events_released(before, what);
    for (int k = 0; k < 2; k++) {
        lab_fetch_buffer_free(t[k].job.host);
        fetch_teardown(&f[k]);
    }
    kit_expect_released(before, what);
}

XL_TEST(fetch, correct_under_delay, 10, XL_GPU,
        "lab_fetch: consume sees the whole result, 20 times, 0 bytes to 64 MiB (some random), behind 10 ms of work on "
        "job->stream (the legacy stream 0 and cudaStreamPerThread once each), ctx NULL once, and two calls at once in "
        "two threads (neither waiting for the other, their consumes at once too, nor one held back 50 ms into the other's "
        "400 ms wait); the result still in host after the call; callbacks "
        "once each, on the calling thread, in order gpu_work, host_work, consume (consume after host_work returns, "
        "30 ms of it too, and not held back by work host_work queues on job->stream), the copy asked for before "
        "host_work, which runs while the GPU works, at every size; the job, dev and host past "
        "bytes untouched; a NULL member refused at 0 bytes too; nothing is left allocated or on the heap, from the "
        "first call on", 30)
{
    static const size_t sizes[] = {1, 4097, (1u << 20) + 5, 64u << 20, 0 /* random */};
    static xl_copy_rec recs[MAX_COPIES];
    cudaStream_t s = kit_stream(), pair[2] = {s, kit_stream()};
    kit_held before = kit_held_now(); /* before the first call: what any call makes and keeps counts */
    cr_assert(lab_fetch(NULL) == -1, "lab_fetch(NULL) must return -1");
    kit_expect_released(before, "lab_fetch(NULL), the first call of the test (an event made once and kept is held)");
    expect_fetch_refuses_null(s, 4096);
    expect_fetch_refuses_null(s, 0); /* the empty result is valid, but not with a NULL member */
    lab_fetch_buffer_free(NULL);
    kit_expect_released(before, "lab_fetch refusing bad jobs");
    expect_fetch_keeps_no_heap(s);
    kit_expect_released(before, "lab_fetch refusing bad jobs and fetching, repeated");
    for (int r = 0; r < REPS; r++) {
        /* repetition 11 fetches an empty result (0 bytes): valid, every callback runs */
        size_t n = r == 10 ? 0 : sizes[r % 5] ? sizes[r % 5] : rand_bytes(2, 4 << 20);
        /* every stream is valid: repetition 6 runs on the legacy stream 0, 7 on cudaStreamPerThread */
        cudaStream_t js = r == 5 ? (cudaStream_t)0 : r == 6 ? cudaStreamPerThread : s;
        char when[96];
        fetch_ctx f;
        snprintf(when, sizeof when, " (repetition %d, %zu bytes%s)", r + 1, n,
                 r == 5   ? ", job->stream 0"
                 : r == 6 ? ", job->stream cudaStreamPerThread"
                 : r == 7 ? ", ctx NULL"
                          : "");
        fetch_setup(&f, n, FETCH_GPU_NS, 0.1, js);
        f.rep = r + 1;
        f.scan = 1;
        if (r == 2 || r == 12) /* host work that outlasts the caller's work, gpu_work and the copy */
            f.host_ms = LONG_HOST_MS;
        if (r == 4 || r == 5 || r == 9 || r == 16) /* host_work queues the next step's work on job->stream */
            f.queue_ns = QUEUED_NS;
        unsigned char *host = lab_fetch_buffer(n + FETCH_GUARD); /* the job's host is its first n bytes */
        cr_assert(host != NULL, "lab_fetch_buffer(%zu) returned NULL", n + FETCH_GUARD);
        xl_poison(host, n + FETCH_GUARD);
        lab_fetch_job j = job_for(&f, host);
        if (r == 7) { /* ctx is the caller's, for its callbacks only: NULL is valid */
            j.ctx = NULL;
            fetch_null_ctx = &f;
        }
        const lab_fetch_job given = j;
        fetch_behind_caller(&f);
        xl_copylog_start(recs, MAX_COPIES);
        int rc = lab_fetch(&j);
        int copies = xl_copylog_stop();
        fetch_null_ctx = NULL;
        cr_assert(rc == 0, "lab_fetch returned %d%s: every stream (0 and cudaStreamPerThread too), any ctx (NULL "
                  "too: it is only handed to the callbacks) and any size (0 bytes too: an empty result) make a valid "
                  "job", rc, when);
        cr_assert(f.consumed == 1 && f.host_worked == 1 && f.gpu_worked == 1,
                  "lab_fetch called gpu_work %d times, host_work %d times and consume %d times%s; it must call each "
                  "once",
                  f.gpu_worked, f.host_worked, f.consumed, when);
        cr_assert(strcmp(f.order, "gpu_work, host_work, consume") == 0,
                  "lab_fetch called its callbacks in the order %s%s; lab.h: gpu_work (enqueued first), then "
                  "host_work (while the GPU works), then consume (once the result is in host)", f.order, when);
        cr_assert(f.gpu_stream == js, "lab_fetch gave gpu_work a stream other than job->stream%s: all GPU work of a "
                  "fetch goes on job->stream", when);
        expect_copies_on(recs, copies, host, n, js, when);
        expect_host_work_beside_gpu(&f, recs, copies, host, when);
        expect_fetch_callbacks_here(&f, when);
        cr_assert(f.scribbled == 0, "when host_work began, byte %zu of job->host held 0x%02x, neither the poison the "
                  "caller left there (0x%02x) nor the result's byte (0x%02x)%s: lab_fetch wrote into host itself "
                  "before host_work (a memset of the destination?), a pass over the whole result on the host's "
                  "critical path. lab.h: only the copy writes host", f.scribbled - 1,
                  host[f.scribbled ? f.scribbled - 1 : 0], XL_POISON_BYTE, f.want[f.scribbled ? f.scribbled - 1 : 0],
                  when);
        cr_assert(same_fetch_job(&j, &given), "lab_fetch changed the job it was given%s: lab.h hands it a const "
                  "lab_fetch_job, the caller's, to read only", when);
        XL_CHECK(cudaStreamSynchronize(js));
        size_t bad = 0;
        cr_assert(xl_check_poison(host + n, FETCH_GUARD, &bad) == 0, "lab_fetch wrote into job->host past its %zu "
                  "bytes (byte %zu after them)%s: copy job->bytes, no more", n, bad, when);
        cr_assert(xl_compare(host, f.want, n, &bad) == 0, "after lab_fetch returned%s, byte %zu of job->host held "
                  "0x%02x, not the result's 0x%02x: lab_fetch wrote into host after the copy (a memset once consume "
                  "returned?). lab.h: only the copy writes host, and the result stays there for the caller", when,
                  bad, host[bad], f.want[bad]);
        if (n > 0) /* dev is the caller's, const: read, never written */
            kit_expect_dev_bytes(f.dev, f.want, n, 0, "the result in job->dev after lab_fetch (a const input, to "
                                 "read only)");
        lab_fetch_buffer_free(host);
        fetch_teardown(&f);
    }
    kit_expect_released(before, "lab_fetch(NULL), bad jobs and 20 rounds of lab_fetch_buffer, lab_fetch and "
                        "lab_fetch_buffer_free");
    fetch_two_at_once(pair, 0);
    fetch_two_at_once(pair, 1);
    fetch_waits_apart(pair);
    XL_CHECK(cudaStreamDestroy(pair[1]));
}

/* What a narrow-wait test runs: one fetch into a poisoned buffer, so only a correct wait passes. */
typedef struct {
    fetch_ctx f;
    cudaStream_t s;
    void *host;
} fetch_run;

/* fetch_poisoned - xl_poison the destination, then one lab_fetch (consume checks every byte) */
static void fetch_poisoned(void *ctx)
{
    fetch_run *r = ctx;
    xl_poison(r->host, r->f.bytes);
    lab_fetch_job j = job_for(&r->f, r->host);
    xl_expect_ok(lab_fetch(&j), "lab_fetch");
    expect_fetch_callbacks_here(&r->f, "");
}

XL_TEST(fetch, narrow_wait, 5, XL_TIMED,
        "lab_fetch waits for its copy only, not for a 300 ms kernel on another stream (on cudaStreamPerThread too), "
        "and runs host_work at once "
        "behind 120 ms of the caller's work on job->stream, and consume not held back by 100 ms of work host_work "
        "queues there", 15)
{
    fetch_run r = {.s = kit_stream()};
    fetch_setup(&r.f, 1u << 20, 2000000, 0.1, r.s);
    r.host = lab_fetch_buffer(r.f.bytes);
    cr_assert(r.host != NULL, "lab_fetch_buffer returned NULL");
    fetch_poisoned(&r); /* warm-up */
    double ms = kit_ms_beside_busy(fetch_poisoned, &r, KIT_OTHER_NS);
    xl_timed_check(ms, XL_AT_MOST(KIT_NARROW_MS), "lab_fetch's time beside an unrelated kernel (ms)",
              "lab_fetch took %.0f ms while an unrelated 300 ms kernel ran on another stream (its own work takes "
              "about 3 ms): it waited for more than its copy. cudaDeviceSynchronize waits for every stream, and "
              "so does anything on the legacy default stream (stream 0, cudaMemcpy); wait on an event recorded "
              "after the copy, or on its stream",
              ms);
    xl_note("lab_fetch took %.1f ms beside the 300 ms kernel", ms);
    { /* job->stream cudaStreamPerThread, beside the kernel on a blocking stream: the wait covers the copy only */
        fetch_run p = {.s = cudaStreamPerThread};
        fetch_setup(&p.f, 1u << 20, 2000000, 0.1, p.s);
        p.host = lab_fetch_buffer(p.f.bytes);
        cr_assert(p.host != NULL, "lab_fetch_buffer returned NULL");
        fetch_poisoned(&p); /* warm-up */
        double pms = ms_beside_blocking_busy(fetch_poisoned, &p);
        xl_timed_check(pms, XL_AT_MOST(KIT_NARROW_MS), "lab_fetch's time on cudaStreamPerThread beside an unrelated "
                       "kernel on a blocking stream (ms)",
                       "lab_fetch with job->stream cudaStreamPerThread took %.0f ms while an unrelated 300 ms kernel "
                       "ran on another (blocking) stream (its own work takes about 3 ms): it waited for more than its "
                       "copy. An event recorded on the legacy stream 0, or cudaMemcpy, waits for every blocking "
                       "stream; record the event on job->stream, whatever stream that is", pms);
        lab_fetch_buffer_free(p.host);
        fetch_teardown(&p.f);
    }
    /* the caller's stream busy 120 ms: lab_fetch enqueues behind that work and runs host_work meanwhile */
    static xl_copy_rec recs[MAX_COPIES];
    xl_delay(r.s, CALLER_BUSY_NS);
    double t0 = xl_now_ms();
    xl_copylog_start(recs, MAX_COPIES);
    fetch_poisoned(&r);
    int copies = xl_copylog_stop();
    double start = r.f.host_at - t0;
    expect_host_work_beside_gpu(&r.f, recs, copies, r.host, " (1 MiB, behind 120 ms of the caller's work)");
    XL_CHECK(cudaStreamSynchronize(r.s));
    r.f.queue_ns = QUEUED_NS; /* host_work queues the next step's work on job->stream: consume waits for the copy */
    fetch_poisoned(&r);
    XL_CHECK(cudaStreamSynchronize(r.s));
    r.f.queue_ns = 0;
    xl_timed_check(start, XL_AT_MOST(HOST_START_MS), "when lab_fetch started host_work behind 120 ms of the "
                   "caller's work on job->stream (ms)",
                   "lab_fetch called host_work %.0f ms after it was called, behind 120 ms of work the caller had "
                   "queued on job->stream: it waited on the host for the caller's work first (a stream synchronize "
                   "before enqueueing?). Enqueue gpu_work and the copy behind that work, on job->stream, and run "
                   "host_work at once; wait only for the copy, before consume",
                   start);
    lab_fetch_buffer_free(r.host);
    fetch_teardown(&r.f);
}

/* measure_overlap - xl_measure_fn: host work alone (H), GPU work and copy alone (G), then lab_fetch into a
 * poisoned buffer (T, and consume checks the result), all in this run; the efficiency (H + G - T) / min(H, G) */
static void measure_overlap(void *ctx, double *eff, char *figures, size_t len)
{
    fetch_run *o = ctx;
    double h[3], g[3], t[3];
    for (int r = 0; r < 3; r++) {
        double t0 = xl_now_ms();
        fetch_host_work(&o->f);
        h[r] = xl_now_ms() - t0;
        t0 = xl_now_ms();
        fetch_gpu_work(o->s, &o->f);
        XL_CHECK(cudaMemcpyAsync(o->host, o->f.dev, o->f.bytes, cudaMemcpyDeviceToHost, o->s));
        XL_CHECK(cudaStreamSynchronize(o->s));
        g[r] = xl_now_ms() - t0;
        xl_poison(o->host, o->f.bytes); /* a fetch that does not wait reads poison, however fast it is */
        lab_fetch_job j = job_for(&o->f, o->host);
        t0 = xl_now_ms();
        xl_expect_ok(lab_fetch(&j), "lab_fetch");
        t[r] = xl_now_ms() - t0;
        expect_fetch_callbacks_here(&o->f, " (the overlap run)");
    }
    double H = xl_median(h, 3), G = xl_median(g, 3), T = xl_median(t, 3);
    *eff = (H + G - T) / fmin(H, G);
    xl_sound_spread(h, 3, XL_SOUND_SPREAD, "the kit's host work (ms)");
    xl_sound_spread(g, 3, XL_SOUND_SPREAD, "the kit's GPU work and copy (ms)");
    xl_sound_within(*eff, -INFINITY, XL_EFF_MAX, "the overlap");
    snprintf(figures, len,
             "host work %.1f ms, GPU work and copy %.1f ms, lab_fetch %.1f ms (spread %.1f-%.1f): overlap %.2f "
             "(1 = it took max(H, G) = %.1f ms, 0 = the sum %.1f ms)",
             H, G, T, fmin(fmin(t[0], t[1]), t[2]), fmax(fmax(t[0], t[1]), t[2]), *eff, fmax(H, G), H + G);
}

XL_TEST(fetch, overlap, 10, XL_TIMED,
        "lab_fetch runs 20 ms of host work while the GPU works 40 ms: total near 40 ms, not 60 (overlap at least "
        XL_STR(OVERLAP_NEED) ")", 30)
{
    fetch_run o = {.s = kit_stream()};
    fetch_setup(&o.f, 1u << 20, (uint64_t)(GPU_WORK_MS * 1e6), HOST_WORK_MS, o.s);
    o.host = lab_fetch_buffer(o.f.bytes);
    cr_assert(o.host != NULL, "lab_fetch_buffer returned NULL");
    xl_ratio_check(measure_overlap, &o, XL_AT_LEAST(OVERLAP_NEED), "overlap of host work with GPU work");
    lab_fetch_buffer_free(o.host);
    fetch_teardown(&o.f);
}

/* pageable_copy_return_ms - how long cudaMemcpyAsync into pageable memory takes to return behind f's GPU work:
 * the premise of the pinned buffer (the host can do nothing else meanwhile) */
static double pageable_copy_return_ms(fetch_ctx *f, cudaStream_t s, void *pageable)
{
    fetch_gpu_work(s, f);
    double t0 = xl_now_ms();
    XL_CHECK(cudaMemcpyAsync(pageable, f->dev, f->bytes, cudaMemcpyDeviceToHost, s));
    double ms = xl_now_ms() - t0;
    XL_CHECK(cudaStreamSynchronize(s));
    return ms;
}

KIT_ALLOC_ATTEMPT(fetch_buffer_attempt, lab_fetch_buffer, lab_fetch_buffer_free)

XL_TEST(fetch, pinned_destination, 5, XL_GPU,
        "lab_fetch delivers into lab_fetch_buffer memory, and that memory is pinned (pageable would not overlap) and "
        "not write-combined (consume reads it); a failed lab_fetch_buffer returns NULL and leaves no error", 20)
{
    size_t small = (size_t)kit_rand_int(1, 1 << 20);
    char what[64];
    snprintf(what, sizeof what, "lab_fetch_buffer(%zu)", small);
    kit_expect_create_failures(fetch_buffer_attempt, &small, what);
    fetch_run r = {.s = kit_stream()};
    fetch_setup(&r.f, (1u << 20) + 3, DELAY_NS, 0.1, r.s);
    r.host = lab_fetch_buffer(r.f.bytes);
    cr_assert(r.host != NULL, "lab_fetch_buffer returned NULL");
    fetch_poisoned(&r);
    cr_assert(kit_is_pinned(r.host),
              "lab_fetch_buffer returned pageable memory. cudaMemcpyAsync into pageable memory does not return "
              "until the copy is done (the driver copies through its staging buffer), so the host work cannot "
              "overlap: allocate it with cudaMallocHost");
    kit_expect_not_write_combined(r.host, "lab_fetch_buffer");
    lab_fetch_buffer_free(r.host);
    fetch_teardown(&r.f);
    { /* any size: a buffer past 256 MiB is pinned too */
        size_t big = BIG_BUFFER_MIN + (size_t)kit_rand(1, BIG_BUFFER_MIN / 4);
        void *b = lab_fetch_buffer(big);
        cr_assert(b != NULL, "lab_fetch_buffer(%zu) returned NULL", big);
        int pinned = kit_is_pinned(b) && kit_is_pinned((char *)b + big - 1);
        lab_fetch_buffer_free(b);
        cr_assert(pinned, "lab_fetch_buffer(%zu) returned pageable memory: a result of that size copied into it "
                  "would not overlap the host's work at all. lab.h: the buffer is one lab_fetch can copy into while "
                  "the host keeps working, at any size: pin it (cudaMallocHost) whatever its size", big);
    }
    /* the premise, measured: into malloc'd memory the "async" copy returns only once the GPU work and the copy
     * are done */
    fetch_ctx f;
    fetch_setup(&f, 1u << 20, 20000000, 20, r.s);
    void *pageable = kit_host_alloc(f.bytes);
    pageable_copy_return_ms(&f, r.s, pageable);
    xl_note("cudaMemcpyAsync into pageable memory returned after %.1f ms, behind 20 ms of GPU work: the host could "
            "do nothing meanwhile", pageable_copy_return_ms(&f, r.s, pageable));
    free(pageable);
    fetch_teardown(&f);
}

/* ===== Part B: send ===== */

/* What a send moves, and what its callbacks saw. */
typedef struct {
    uint64_t seed;
    uint64_t gpu_ns;
    cudaStream_t stream;  /* the job's */
    void *host;           /* the job's */
    unsigned char *dev;   /* the job's */
    size_t bytes;
    int n;
    int fills, fills_out_of_order, fills_elsewhere; /* fill calls; for a batch not next; on another buffer or size */
    int gpu_works, gpu_out_of_order, gpu_other_stream; /* gpu_work calls; for a batch not next; on another stream */
    double fill0_at;      /* when fill was called for batch 0 (xl_now_ms) */
    double fill1_at;      /* and for batch 1 */
    int next;             /* the callback due next: 2i for fill(i), 2i + 1 for gpu_work(i) */
    char last[32];        /* the last callback called, e.g. "gpu_work(2)" ("" before the first) */
    char misorder[160];   /* the first callback called out of that order, and what was due ("": none) */
    struct together *meet; /* not NULL: fill(1) waits there while another thread's send runs (together_meet) */
    pthread_t caller;     /* the thread that calls lab_send: every callback runs on it */
    int other_thread;     /* callbacks called on another thread */
    uint64_t first_ns;    /* not 0: gpu_work(0)'s delay, in place of gpu_ns */
    int started;          /* set (atomically) when gpu_work(0) is called: copy 0 and the wait for it come next */
} send_ctx;

/* The send of a job whose ctx is NULL (its callbacks keep their state elsewhere); NULL while no such job runs. */
static send_ctx *send_null_ctx;

/* send_state - the send_ctx a callback was given ctx for */
static send_ctx *send_state(void *ctx)
{
    return state_of(ctx, send_null_ctx, "lab_send");
}

/* send_ran - notes that the callback of code (2i: fill(i), 2i + 1: gpu_work(i)) was called, and the first one
 * called out of the order lab.h gives: fill(0), gpu_work(0), fill(1), gpu_work(1), ... */
static void send_ran(send_ctx *c, int code, int i)
{
    char name[32];
    snprintf(name, sizeof name, "%s(%d)", code % 2 ? "gpu_work" : "fill", i);
    if (code != c->next && !c->misorder[0]) {
        if (c->last[0])
            snprintf(c->misorder, sizeof c->misorder, "%s right after %s, where %s(%d) was due", name, c->last,
                     c->next % 2 ? "gpu_work" : "fill", c->next / 2);
        else
            snprintf(c->misorder, sizeof c->misorder, "%s first, where fill(0) was due", name);
    }
    snprintf(c->last, sizeof c->last, "%s", name);
    c->next = code + 1;
}

/* send_fill - batch i: fresh random bytes from the seed */
static void send_fill(void *host, size_t bytes, int i, void *ctx)
{
    send_ctx *c = send_state(ctx);
    c->other_thread += !pthread_equal(pthread_self(), c->caller);
    send_ran(c, 2 * i, i);
    if (i == 0)
        c->fill0_at = xl_now_ms();
    if (i == 1)
        c->fill1_at = xl_now_ms();
    if (i == 1 && c->meet) /* a concurrent round: another thread's send runs meanwhile */
        together_meet(c->meet);
    c->fills_out_of_order += i != c->fills;
    c->fills++;
    if (host != c->host || bytes != c->bytes) {
        c->fills_elsewhere++;
        return;
    }
    xl_fill_random(host, bytes, c->seed + (uint64_t)i);
}

/* send_gpu_work - keeps the GPU busy, then writes GPU_WORK_BYTE into batch i's destination, which batch i's copy
 * must overwrite: it is enqueued before that copy */
static void send_gpu_work(cudaStream_t s, int i, void *ctx)
{
    send_ctx *c = send_state(ctx);
    c->other_thread += !pthread_equal(pthread_self(), c->caller);
    send_ran(c, 2 * i + 1, i);
    c->gpu_out_of_order += i != c->gpu_works;
    c->gpu_works++;
    c->gpu_other_stream += s != c->stream;
    xl_delay(s, i == 0 && c->first_ns ? c->first_ns : c->gpu_ns);
    if (i == 0)
        __atomic_store_n(&c->started, 1, __ATOMIC_RELEASE);
    if (i >= 0 && i < c->n)
        XL_CHECK(cudaMemsetAsync(c->dev + (size_t)i * c->bytes, GPU_WORK_BYTE, c->bytes, s));
}

/* send_setup - dev (room bytes) poisoned, then a job that sends n batches of bytes through host on s, fresh data */
static lab_send_job send_setup(send_ctx *c, cudaStream_t s, void *host, void *dev, size_t room, size_t bytes, int n,
                               uint64_t gpu_ns)
{
    *c = (send_ctx){.seed = xl_fresh_seed(), .gpu_ns = gpu_ns, .stream = s, .host = host, .dev = dev,
                    .bytes = bytes, .n = n, .caller = pthread_self()};
    xl_dev_fill(dev, XL_POISON_BYTE, room);
    XL_CHECK(cudaDeviceSynchronize());
    lab_send_job j = {s, send_gpu_work, host, dev, bytes, n, send_fill, c};
    return j;
}

/* same_send_job - 1 when a and b hold the same members */
static int same_send_job(const lab_send_job *a, const lab_send_job *b)
{
    return a->stream == b->stream && a->gpu_work == b->gpu_work && a->host == b->host && a->dev == b->dev &&
           a->bytes == b->bytes && a->n == b->n && a->fill == b->fill && a->ctx == b->ctx;
}

/* send_refusals - kit_expect_no_heap_leak's attempt: lab_send(NULL), then the valid job ctx (n >= 1) with each member
 * that may not be NULL set to NULL in turn, with its n and with n = 0, then n = -1; 0 when every call returned -1 */
static int send_refusals(void *ctx)
{
    const lab_send_job *good = ctx;
    int ok = lab_send(NULL) == -1;
    for (int m = 0; m < 9; m++) {
        lab_send_job j = *good;
        if (m % 4 == 0) j.gpu_work = NULL;
        if (m % 4 == 1) j.host = NULL;
        if (m % 4 == 2) j.dev = NULL;
        if (m % 4 == 3) j.fill = NULL;
        if (m >= 4)
            j.n = m == 8 ? -1 : 0;
        if (m == 8)
            j.gpu_work = good->gpu_work;
        ok &= lab_send(&j) == -1;
    }
    return ok ? 0 : -1;
}

/* send_again - kit_expect_no_heap_leak's attempt: lab_send of the valid job ctx; what it returned */
static int send_again(void *ctx)
{
    return lab_send(ctx);
}

/* send_call - one lab_send, then the host buffer is poisoned at once (lab.h: it is free when lab_send returns) */
static void send_call(void *job)
{
    const lab_send_job *j = job;
    xl_expect_ok(lab_send(j), "lab_send");
    xl_poison(j->host, j->bytes);
}

/* all_bytes - 1 when buf[0 .. bytes) all hold byte */
static int all_bytes(const unsigned char *buf, size_t bytes, unsigned char byte)
{
    for (size_t k = 0; k < bytes; k++)
        if (buf[k] != byte)
            return 0;
    return 1;
}

/* send_why - what a batch that did not arrive intact holds instead, and the likely cause */
static const char *send_why(const unsigned char *got, size_t bytes)
{
    if (all_bytes(got, bytes, BUSY_BYTE))
        return "it holds what the caller's stream wrote there before lab_send was called: the copy ran on another "
               "stream than job->stream (or on the legacy default stream), ahead of the caller's work. Enqueue every "
               "copy on job->stream";
    if (all_bytes(got, bytes, GPU_WORK_BYTE))
        return "it holds what gpu_work(i) wrote there: batch i's copy ran before gpu_work(i)'s work. Enqueue "
               "gpu_work(i) before batch i's copy, on job->stream";
    if (all_bytes(got, bytes, XL_POISON_BYTE))
        return "nothing arrived there";
    return "the host buffer was overwritten before its copy had read it: before fill writes it again, wait for an "
           "event recorded after the previous copy, however small the batch";
}

/* send_expect_as - once the stream is done: fill and gpu_work ran once per batch, in order, and every batch of j
 * arrived intact, nothing past them; which names the call in messages ("repetition 3") */
static void send_expect_as(const lab_send_job *j, const char *which)
{
    const send_ctx *c = j->ctx ? j->ctx : send_null_ctx;
    size_t guard = 16, bad = 0;
    unsigned char *want = kit_host_alloc(j->bytes), *got = kit_host_alloc(j->bytes + guard);
    XL_CHECK(cudaStreamSynchronize(j->stream));
    cr_assert(c->fills == j->n && c->fills_out_of_order == 0 && c->fills_elsewhere == 0,
              "%s, %d batches of %zu bytes: lab_send called fill %d times (%d for a batch out of order, %d "
              "not on job->host with job->bytes); call it once per batch, for batch 0, 1, 2, ..., on job->host",
              which, j->n, j->bytes, c->fills, c->fills_out_of_order, c->fills_elsewhere);
    cr_assert(c->gpu_works == j->n && c->gpu_out_of_order == 0 && c->gpu_other_stream == 0,
              "%s, %d batches of %zu bytes: lab_send called gpu_work %d times (%d for a batch out of order, "
              "%d with a stream other than job->stream); call it once per batch, in order, with job->stream",
              which, j->n, j->bytes, c->gpu_works, c->gpu_out_of_order, c->gpu_other_stream);
    cr_assert(c->other_thread == 0,
              "%s, %d batches of %zu bytes: lab_send called %d of its callbacks on another thread than the one that "
              "called it. lab.h: lab_send calls fill and gpu_work itself, on the calling thread", which, j->n,
              j->bytes, c->other_thread);
    cr_assert(c->misorder[0] == 0,
              "%s, %d batches of %zu bytes: lab_send called %s. lab.h: for each batch i, in order, fill(i) "
              "(the host writes batch i), then gpu_work(i), then batch i's copy: gpu_work(i) may read what fill(i) "
              "left in ctx", which, j->n, j->bytes, c->misorder);
    for (int i = 0; i < j->n; i++) {
        xl_fill_random(want, j->bytes, c->seed + (uint64_t)i);
        XL_CHECK(cudaMemcpy(got, (char *)j->dev + (size_t)i * j->bytes, j->bytes, cudaMemcpyDeviceToHost));
        cr_assert(xl_compare(got, want, j->bytes, &bad) == 0,
                  "batch %d of %d (%s, %zu bytes each) is wrong on the device from byte %zu (0x%02x, "
                  "expected 0x%02x): %s",
                  i, j->n, which, j->bytes, bad, got[bad], want[bad], send_why(got, j->bytes));
    }
    XL_CHECK(cudaMemcpy(got, (char *)j->dev + (size_t)j->n * j->bytes, guard, cudaMemcpyDeviceToHost));
    cr_assert(xl_check_poison(got, guard, &bad) == 0,
              "%s, %d batches of %zu bytes: lab_send wrote past the last batch (byte %zu after it)", which,
              j->n, j->bytes, bad);
    free(want);
    free(got);
}

/* expect_send_copies_on - every copy into j's batches among the n recorded was a cudaMemcpyAsync on job->stream
 * (repetition rep): a copy on a stream of lab_send's own leaves work the caller queues on job->stream afterwards
 * unordered with it */
static void expect_send_copies_on(const xl_copy_rec *recs, int n, const lab_send_job *j, int rep)
{
    const char *lo = j->dev, *hi = lo + (size_t)j->n * j->bytes;
    for (int i = 0; i < n; i++) {
        const char *d = recs[i].dst;
        if (d < lo || d >= hi)
            continue;
        cr_assert(recs[i].async && kit_same_stream(recs[i].stream, j->stream),
                  "repetition %d, %d batches of %zu bytes: lab_send copied %zu bytes of a batch with %s on %s, not "
                  "on job->stream. lab.h: enqueue gpu_work(i) and then the copy on job->stream, where work the "
                  "caller queues there afterwards runs after it", rep, j->n, j->bytes, recs[i].bytes,
                  recs[i].async ? "cudaMemcpyAsync" : "cudaMemcpy",
                  recs[i].async && recs[i].stream ? "another stream" : "the legacy default stream (stream 0)");
    }
}

/* send_expect - send_expect_as for repetition rep */
static void send_expect(const lab_send_job *j, int rep)
{
    char which[32];
    snprintf(which, sizeof which, "repetition %d", rep);
    send_expect_as(j, which);
}

/* A concurrent round's send, run in a thread of its own. */
typedef struct {
    lab_send_job job;
    int rc;
} send_in_thread;

static void send_in_thread_call(void *arg)
{
    send_in_thread *t = arg;
    ((send_ctx *)t->job.ctx)->caller = pthread_self(); /* its callbacks run on this thread */
    t->rc = lab_send(&t->job);
}

/* send_two_at_once - two sends at once, each in a thread, of its own batches through its own host buffer on its own
 * stream s[k] behind the caller's work: the second from start to end while the first waits in fill(1), its batch 1
 * behind 5 ms of gpu_work. Every batch of both arrives, and neither call loses an event. */
static void send_two_at_once(const cudaStream_t s[2])
{
    static const char *const what = "two lab_send calls at once, each in a thread with its own job and stream (the "
                                    "second made and ended while the first waited in fill(1))";
    struct together meet = TOGETHER_INIT;
    send_ctx c[2];
    send_in_thread t[2];
    kit_held before = kit_held_now();
    for (int k = 0; k < 2; k++) {
        int n = (int)kit_rand_int(3, 6);
        size_t bytes = rand_bytes(1, 1u << 20), room = (size_t)n * bytes + 16;
        t[k] = (send_in_thread){.job = send_setup(&c[k], s[k], kit_pinned_alloc(bytes), kit_dev_alloc(room), room,
                                                  bytes, n, k ? 1000000 : 5000000),
                                .rc = -2};
    }
    for (int k = 0; k < 2; k++) /* queued once nothing more waits for the device */
        kit_queue_busy_memset(s[k], SEND_BUSY_NS, c[k].dev, BUSY_BYTE, (size_t)t[k].job.n * t[k].job.bytes);
    c[0].meet = &meet; /* fill(1) waits there while the second call runs */
    run_together(send_in_thread_call, &t[0], &t[1], &meet, what);
    for (int k = 0; k < 2; k++)
        cr_assert(t[k].rc == 0, "%s: the %s call (%d batches of %zu bytes) returned %d; each must return 0 (lab.h: "
                  "calls may run at once)", what, k ? "second" : "first", t[k].job.n, t[k].job.bytes, t[k].rc);
    expect_events_released(before, what);
    for (int k = 0; k < 2; k++) {
        xl_poison(t[k].job.host, t[k].job.bytes); /* lab.h: the host buffer is free once lab_send returns */
        send_expect_as(&t[k].job, k ? "the second of two calls at once" : "the first of two calls at once");
        XL_CHECK(cudaFreeHost(t[k].job.host));
        XL_CHECK(cudaFree(t[k].job.dev));
    }
    kit_expect_released(before, what);
}

/* send_waits_apart - two sends at once, each of its own batches through its own host buffer on its own stream s[k]:
 * the first, in a thread, waits for copy 0 behind FIRST_WAIT_NS of gpu_work(0) while the second, in this thread,
 * sends 3 to 6 small batches from start to end in a few ms, not held back by the first's wait; every batch arrives */
static void send_waits_apart(const cudaStream_t s[2])
{
    static const char *const what = "two lab_send calls at once, each in a thread with its own job and stream (the "
                                    "second made while the first waited 400 ms for its copy 0)";
    send_ctx c[2];
    send_in_thread t[2];
    kit_held before = kit_held_now();
    for (int k = 0; k < 2; k++) {
        int n = k ? (int)kit_rand_int(3, 6) : 2;
        size_t bytes = rand_bytes(1, 64u << 10), room = (size_t)n * bytes + 16;
        t[k] = (send_in_thread){.job = send_setup(&c[k], s[k], kit_pinned_alloc(bytes), kit_dev_alloc(room), room,
                                                  bytes, n, 1000000),
                                .rc = -2};
    }
    c[0].first_ns = FIRST_WAIT_NS;
    double ms = second_ms_beside_wait(send_in_thread_call, &t[0], &t[1], &c[0].started, what);
    for (int k = 0; k < 2; k++)
        cr_assert(t[k].rc == 0, "%s: the %s call (%d batches of %zu bytes) returned %d; each must return 0 (lab.h: "
                  "calls may run at once)", what, k ? "second" : "first", t[k].job.n, t[k].job.bytes, t[k].rc);
    cr_assert(ms <= SECOND_MAX_MS,
              "%s: the second call (%d batches of %zu bytes, a few ms of its own work) took %.0f ms: it waited while "
              "the first waited for its copy (a lock held over a wait?). lab.h: calls may run at once, none waiting "
              "for another", what, t[1].job.n, t[1].job.bytes, ms);
    expect_events_released(before, what);
    for (int k = 0; k < 2; k++) {
        xl_poison(t[k].job.host, t[k].job.bytes); /* lab.h: the host buffer is free once lab_send returns */
        send_expect_as(&t[k].job, k ? "the second of two calls at once" : "the first of two calls at once");
        XL_CHECK(cudaFreeHost(t[k].job.host));
        XL_CHECK(cudaFree(t[k].job.dev));
    }
    kit_expect_released(before, what);
}

XL_TEST(send, correct_under_delay, 10, XL_GPU,
        "lab_send: every batch arrives intact behind 20 ms of work on job->stream (the legacy stream 0 and "
        "cudaStreamPerThread once each), ctx NULL once, for 0 to 12 batches of 1 byte to 2 MiB (random, a few bytes "
        "as often as megabytes), once batches past 4 MiB and once hundreds, though the host refills one buffer, and two calls at once in two "
        "threads (neither waiting for the other, nor one held back 50 ms into the other's 400 ms wait); fill(i), "
        "gpu_work(i), copy i, in that order, on the calling thread; n = 0 waits for "
        "nothing; the job untouched; a NULL member refused with n = 0 too; nothing is left allocated or on the heap, "
        "from the first call on", 30)
{
    const size_t most = (size_t)SEND_MAX_BATCHES * SEND_MAX_BYTES, big = SEND_BIG_BATCHES * SEND_BIG_MAX;
    const size_t room = (most > big ? most : big) + 16;
    cudaStream_t s = kit_stream(), pair[2] = {s, kit_stream()};
    void *host = kit_pinned_alloc(SEND_BIG_MAX), *dev = kit_dev_alloc(room);
    send_ctx c;
    kit_held before = kit_held_now(); /* before the first call: what any call makes and keeps counts */
    cr_assert(lab_send(NULL) == -1, "lab_send(NULL) must return -1");
    kit_expect_released(before, "lab_send(NULL), the first call of the test (an event made once and kept is held)");
    /* each bad argument alone, the rest valid: each NULL member with n from 1 up and with n = 0 (nothing to send,
     * still a bad job), n < 0, and n < 0 with a NULL member too */
    static const char *const bad[6] = {"gpu_work NULL", "host NULL", "dev NULL", "fill NULL", "n = -1", "n = INT_MIN"};
    for (int m = 0; m < 11; m++) {
        int member = m < 8 ? m % 4 : m - 4, n = m < 4 ? (int)kit_rand_int(1, 3) : 0;
        lab_send_job j = send_setup(&c, s, host, dev, room, 4096, n, 0);
        if (member == 0 || member == 6) j.gpu_work = NULL;
        if (member == 1) j.host = NULL;
        if (member == 2) j.dev = NULL;
        if (member == 3) j.fill = NULL;
        if (member == 4 || member == 6) j.n = -1;
        if (member == 5) j.n = INT_MIN;
        int rc = lab_send(&j);
        cudaError_t left = cudaGetLastError();
        char rest[48] = "";
        if (member < 4)
            snprintf(rest, sizeof rest, " (the rest valid, n = %d)", n);
        cr_assert(rc == -1 && c.fills == 0 && c.gpu_works == 0 && left == cudaSuccess,
                  "lab_send with %s%s returned %d after %d fills and %d gpu_work calls, leaving %s: it must return -1 "
                  "before any work (lab.h: no NULL, n >= 0; a NULL member is refused when n = 0 too)",
                  member == 6 ? "gpu_work NULL and n = -1" : bad[member], rest, rc, c.fills, c.gpu_works,
                  cudaGetErrorName(left));
    }
    kit_expect_released(before, "lab_send refusing bad jobs");
    { /* nothing was sent: dev still holds send_setup's poison */
        unsigned char got[3 * 4096 + 16];
        size_t bad = 0;
        XL_CHECK(cudaStreamSynchronize(s));
        XL_CHECK(cudaMemcpy(got, dev, sizeof got, cudaMemcpyDeviceToHost));
        cr_assert(xl_check_poison(got, sizeof got, &bad) == 0, "lab_send wrote into job->dev (byte %zu) in a call it "
                  "refused: a refused call sends nothing", bad);
    }
    /* refusals and sends, repeated: nothing malloc'd a call and kept */
    int nr = (int)kit_rand_int(1, 3);
    size_t br = rand_bytes(1, 1u << 16);
    lab_send_job jr = send_setup(&c, s, host, dev, room, br, nr, 0);
    kit_expect_no_heap_leak(send_refusals, &jr, "lab_send(NULL), and lab_send with each NULL member in turn (n >= 1 "
                            "and n = 0) and with n = -1", "check the arguments before you malloc anything, or free "
                            "what you made before returning -1");
    char what_r[96];
    snprintf(what_r, sizeof what_r, "lab_send of %d batches of %zu bytes", nr, br);
    kit_expect_no_heap_leak(send_again, &jr, what_r, "something lab_send mallocs is not freed before it returns "
                            "(lab.h: it holds nothing once it returns)");
    XL_CHECK(cudaStreamSynchronize(s));
    kit_expect_released(before, "lab_send refusing bad jobs and sending, repeated");
    for (int r = 0; r < 11; r++) {
        /* repetition 11 sends hundreds of small batches: no count of events or batches is fixed in advance */
        int n = r == 0    ? 1
                : r == 1  ? 0
                : r == 2  ? SEND_MAX_BATCHES
                : r == 9  ? (int)kit_rand_int(2, SEND_BIG_BATCHES)
                : r == 10 ? (int)kit_rand_int(SEND_MANY_MIN, SEND_MANY_MAX)
                          : (int)kit_rand_int(2, SEND_MAX_BATCHES - 1);
        /* repetitions 8 and 9 send several batches of at most a page, and of at most 64 KiB: a copy of any size
         * reads the host buffer until it has run, behind the caller's work; repetition 10, batches past 4 MiB */
        size_t bytes = r == 0    ? 1
                       : r == 3  ? 1u << 20
                       : r == 7  ? rand_bytes(1, 4096)
                       : r == 8  ? rand_bytes(4097, 64u << 10)
                       : r == 9  ? rand_bytes(SEND_BIG_MIN, SEND_BIG_MAX)
                       : r == 10 ? rand_bytes(1, 1024)
                                 : rand_bytes(2, SEND_MAX_BYTES);
        /* every stream is valid: repetition 5 runs on the legacy stream 0, 6 on cudaStreamPerThread */
        cudaStream_t js = r == 4 ? (cudaStream_t)0 : r == 5 ? cudaStreamPerThread : s;
        lab_send_job j = send_setup(&c, js, host, dev, room, bytes, n, r == 10 ? 10000 : 1000000);
        if (n > 0) /* batches copied on any other stream land before this memset, which overwrites them */
            kit_queue_busy_memset(js, SEND_BUSY_NS, dev, BUSY_BYTE, (size_t)n * bytes);
        else /* nothing to send: lab_send returns while this still runs (lab.h: it waits for nothing else) */
            xl_delay(js, SEND_BUSY_NS);
        if (r == 6) { /* ctx is the caller's, for its callbacks only: NULL is valid */
            j.ctx = NULL;
            send_null_ctx = &c;
        }
        const lab_send_job given = j;
        int maxrec = n + 64;
        xl_copy_rec *recs = kit_host_alloc((size_t)maxrec * sizeof *recs);
        xl_copylog_start(recs, maxrec);
        int rc = lab_send(&j);
        int copies = xl_copylog_stop();
        cudaError_t busy = n == 0 ? cudaStreamQuery(js) : cudaErrorNotReady;
        if (busy == cudaErrorNotReady)
            cudaGetLastError(); /* "not yet" is no error of the code under test */
        cr_assert(rc == 0, "lab_send returned %d (repetition %d, %d batches of %zu bytes%s): every stream (0 and "
                  "cudaStreamPerThread too) and any ctx (NULL too: it is only handed to the callbacks) make a valid "
                  "job", rc, r + 1, n, bytes,
                  r == 4   ? ", job->stream 0"
                  : r == 5 ? ", job->stream cudaStreamPerThread"
                  : r == 6 ? ", ctx NULL"
                           : "");
        cr_assert(same_send_job(&j, &given), "lab_send changed the job it was given (repetition %d, %d batches of %zu "
                  "bytes): lab.h hands it a const lab_send_job, the caller's, to read only", r + 1, n, bytes);
        cr_assert(busy == cudaErrorNotReady, "lab_send with n = 0 (nothing to send, repetition %d) returned only once "
                  "the %llu ms of work the caller had queued on job->stream was done: it waited for the stream. lab.h: "
                  "it waits for its own copies only, so with none it waits for nothing",
                  r + 1, SEND_BUSY_NS / 1000000);
        expect_send_copies_on(recs, copies < maxrec ? copies : maxrec, &j, r + 1);
        free(recs);
        xl_poison(j.host, j.bytes); /* lab.h: the host buffer is free once lab_send returns */
        send_expect(&j, r + 1);
        send_null_ctx = NULL;
    }
    kit_expect_released(before, "lab_send(NULL), bad jobs and 11 calls of lab_send");
    send_two_at_once(pair);
    send_waits_apart(pair);
    XL_CHECK(cudaStreamDestroy(pair[1]));
    XL_CHECK(cudaFreeHost(host));
    XL_CHECK(cudaFree(dev));
}

/* send_beside_queued - lab_send of 2 batches on s in a thread, copy 0 behind SEND_FIRST_NS of gpu_work(0);
 * OTHER_QUEUED_NS of other work is queued on s right behind the first event recorded there after copy 0 (inside
 * that record, so before any wait the call makes next), or, where the call records none, by this thread 20 ms after
 * copy 0 is asked for: fill(1) must come once copy 0 is done, not once that later work is (a wait on the whole
 * stream); batches intact */
static void send_beside_queued(cudaStream_t s, void *host, void *dev, size_t room)
{
    static const char *const what = "lab_send of 2 batches in a thread, with 500 ms of other work queued on "
                                    "job->stream right after copy 0 (behind its event)";
    static xl_copy_rec recs[16];
    send_ctx c;
    send_in_thread t = {.job = send_setup(&c, s, host, dev, room, 4096, 2, 1000000), .rc = -2};
    c.first_ns = SEND_FIRST_NS;
    worker w = {.call = send_in_thread_call, .arg = &t};
    pthread_t th;
    xl_set_fail_handler(fail_here);
    xl_copylog_start(recs, 16); /* one record for both threads */
    xl_synclog_delay_after_record(s, 1, OTHER_QUEUED_NS);
    cr_assert(pthread_create(&th, NULL, worker_main, &w) == 0, "grader error: pthread_create failed");
    double give_up = xl_now_ms() + MEET_WAIT_S * 1000.0;
    while (xl_copylog_count() < 1 && xl_now_ms() < give_up)
        xl_sleep_ms(0.2);
    int asked = xl_copylog_count() >= 1;
    xl_sleep_ms(20); /* its event recorded after copy 0 by now; copy 0 still 30 ms away */
    int held = xl_synclog_delay_fired();
    xl_synclog_delay_after_record(s, 0, 0);
    if (!held) /* no event recorded on s after copy 0: the same work, from this thread */
        xl_delay(s, OTHER_QUEUED_NS);
    pthread_join(th, NULL);
    xl_copylog_stop();
    cr_assert(w.stopped == 0, "%s: the call stopped: %s", what, w.failure);
    cr_assert(asked, "%s: lab_send asked for no copy in %d s", what, MEET_WAIT_S);
    cr_assert(t.rc == 0, "%s: lab_send returned %d", what, t.rc);
    send_expect_as(&t.job, what);
    double gap = c.fill1_at - c.fill0_at;
    xl_timed_check(gap, XL_AT_MOST(FILL1_MAX_MS), "when lab_send filled batch 1 beside another thread's work on "
                   "job->stream (ms after fill(0))",
                   "%s: lab_send called fill(1) %.0f ms after fill(0), though copy 0 was done after about 50 ms: it "
                   "waited for the whole stream (cudaStreamSynchronize), and so for other work queued there after "
                   "copy 0. lab.h: wait for your own copy only, on an event recorded right after it",
                   what, gap);
}

XL_TEST(send, narrow_wait, 5, XL_TIMED,
        "lab_send waits for its own copies only, not for a 300 ms kernel on another stream (on cudaStreamPerThread "
        "too), and fills batch 0 at once behind 120 ms of the caller's work on job->stream, and batch 1 beside 500 ms "
        "another thread queues there after copy 0 (the legacy stream 0 too); batches intact", 15)
{
    const size_t bytes = 1u << 20;
    void *host = kit_pinned_alloc(bytes), *dev = kit_dev_alloc(3 * bytes + 16);
    send_ctx c;
    lab_send_job j = send_setup(&c, kit_stream(), host, dev, 3 * bytes + 16, bytes, 3, 1000000);
    send_call(&j); /* warm-up */
    j = send_setup(&c, j.stream, host, dev, 3 * bytes + 16, bytes, 3, 1000000);
    double ms = kit_ms_beside_busy(send_call, &j, KIT_OTHER_NS);
    send_expect(&j, 1);
    xl_timed_check(ms, XL_AT_MOST(KIT_NARROW_MS), "lab_send's time beside an unrelated kernel (ms)",
              "lab_send took %.0f ms while an unrelated 300 ms kernel ran on another stream (its own work takes "
              "about 4 ms): wait on an event recorded after each copy, not on the whole device",
              ms);
    xl_note("lab_send took %.1f ms beside the 300 ms kernel", ms);
    /* job->stream cudaStreamPerThread, beside the kernel on a blocking stream: the waits cover the copies only */
    cudaStream_t ks = j.stream;
    j = send_setup(&c, cudaStreamPerThread, host, dev, 3 * bytes + 16, bytes, 3, 1000000);
    send_call(&j); /* warm-up */
    j = send_setup(&c, cudaStreamPerThread, host, dev, 3 * bytes + 16, bytes, 3, 1000000);
    double pms = ms_beside_blocking_busy(send_call, &j);
    send_expect(&j, 3);
    xl_timed_check(pms, XL_AT_MOST(KIT_NARROW_MS), "lab_send's time on cudaStreamPerThread beside an unrelated kernel "
                   "on a blocking stream (ms)",
                   "lab_send with job->stream cudaStreamPerThread took %.0f ms while an unrelated 300 ms kernel ran "
                   "on another (blocking) stream (its own work takes about 4 ms): it waited for more than its copies. "
                   "An event recorded on the legacy stream 0, or cudaMemcpy, waits for every blocking stream; record "
                   "the events on job->stream, whatever stream that is", pms);
    j.stream = ks;
    /* the caller's stream busy 120 ms: lab_send fills batch 0 meanwhile and enqueues behind that work */
    j = send_setup(&c, j.stream, host, dev, 3 * bytes + 16, bytes, 3, 1000000);
    xl_delay(j.stream, CALLER_BUSY_NS);
    double t0 = xl_now_ms();
    send_call(&j);
    send_expect(&j, 2);
    double start = c.fill0_at - t0;
    xl_timed_check(start, XL_AT_MOST(HOST_START_MS), "when lab_send filled batch 0 behind 120 ms of the caller's "
                   "work on job->stream (ms)",
                   "lab_send called fill for batch 0 %.0f ms after it was called, behind 120 ms of work the caller "
                   "had queued on job->stream: it waited on the host for the caller's work first (a stream "
                   "synchronize before the first fill?). lab.h: it waits for nothing but its copies; fill batch 0 "
                   "at once and enqueue behind the caller's work, on job->stream",
                   start);
    send_beside_queued(j.stream, host, dev, 3 * bytes + 16);
    send_beside_queued((cudaStream_t)0, host, dev, 3 * bytes + 16); /* the legacy stream, shared by every thread */
    XL_CHECK(cudaFreeHost(host));
    XL_CHECK(cudaFree(dev));
}
