/* pool.c - a fixed team of host threads (see pool.h).
 *
 * How a job starts and ends: the caller writes the job (fn, ctx), sets done to 0 and adds 1 to gen, the job
 * number; each thread, waiting for gen to change, runs the job and adds 1 to done; the caller runs its own share
 * and spins until done counts every other thread. A thread that waited longer than SPIN_NS sleeps on gen (a
 * futex) and says so in sleepers, so that the caller makes the wake-up system call only when someone sleeps.
 * Linux only (futex, sched_getaffinity), as is the rest of the kit.
 */
#define _GNU_SOURCE
#include "common/pool.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/streamcopy.h"

/* How long a thread spins for the next job before it sleeps. A wake-up from sleep took over 100 us on the H100
 * host (a virtual machine: each sleeping core must be woken by an interrupt), most of the cost of a call that
 * moves a few MiB. 1 ms covers the gap between the calls of a loop that sends and then waits for its copies (lab
 * 07: 64 MiB packed sends took 4 to 6% less time spinning 3 ms than 100 us), and the spinning costs little: the cores
 * spin with the pause hint and give way to any other thread (SPINS_PER_YIELD). */
#define SPIN_NS 1000000L

/* A spinning thread yields its core after this many pauses (some tens of microseconds), so that spinning cannot
 * starve the thread it waits for where there are more threads than cores. */
#define SPINS_PER_YIELD 1024

/* xl_pool_memcpy copies below this alone (see pool.h) */
#define MEMCPY_SPLIT_MIN_BYTES ((size_t)256 << 10)

struct worker {
    struct xl_pool *pool;
    int thread; /* 1 .. threads - 1 */
};

struct xl_pool {
    int threads;
    int started;                   /* threads running, the caller's included (create may stop short) */
    pthread_t tid[XL_POOL_MAX];
    struct worker worker[XL_POOL_MAX];
    xl_pool_fn fn;                 /* the current job, written before gen changes */
    void *ctx;
    int stop;                      /* 1: the threads return when gen next changes */
    unsigned gen __attribute__((aligned(64))); /* the job number; the futex word the threads sleep on */
    int sleepers;                  /* threads asleep on gen, or about to be */
    long done __attribute__((aligned(64)));    /* threads other than the caller that finished this job */
};

/* ===== Spinning and sleeping ===== */

/* cpu_relax - the processor's hint that this is a spin loop (it saves power and the sibling hyperthread's time) */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* spin_once - one turn of a spin loop: a pause, and a yield of the core every SPINS_PER_YIELD turns */
static inline void spin_once(unsigned *turns)
{
    cpu_relax();
    if (++*turns % SPINS_PER_YIELD == 0)
        sched_yield();
}

/* now_ns - the monotonic clock in ns */
static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* futex_wait, futex_wake_all - sleep while *word == seen; wake every thread asleep on *word */
static void futex_wait(unsigned *word, unsigned seen)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0); /* EAGAIN, EINTR: the caller looks again */
}
static void futex_wake_all(unsigned *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* next_job - waits until p->gen is no longer seen and returns it: spins for SPIN_NS, then sleeps */
static unsigned next_job(struct xl_pool *p, unsigned seen)
{
    long long start = now_ns();
    unsigned g, turns = 0;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if ((g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE)) != seen)
                return g;
            spin_once(&turns);
        }
        if (now_ns() - start > SPIN_NS)
            break;
    }
    for (;;) {
        /* Say we sleep, then look: the caller adds to gen, then looks at sleepers (both sequentially
         * consistent), so either it sees us and wakes us, or we see its new gen (here or in the kernel). */
        __atomic_fetch_add(&p->sleepers, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&p->gen, __ATOMIC_SEQ_CST) == seen)
            futex_wait(&p->gen, seen);
        __atomic_fetch_sub(&p->sleepers, 1, __ATOMIC_SEQ_CST);
        if ((g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE)) != seen)
            return g;
    }
}

/* start_job - publishes what was written to p (the job or stop) by a new gen, and wakes whoever sleeps */
static void start_job(struct xl_pool *p)
{
    __atomic_fetch_add(&p->gen, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST) > 0)
        futex_wake_all(&p->gen);
}

/* worker_main - a pool thread: runs each job it is given until told to stop */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct xl_pool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        seen = next_job(p, seen);
        if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) /* ordered by next_job's acquire */
            return NULL;
        p->fn(w->thread, p->threads, p->ctx);
        __atomic_fetch_add(&p->done, 1, __ATOMIC_RELEASE);
    }
}

/* stop_threads - stops and joins every thread started so far (between jobs) */
static void stop_threads(struct xl_pool *p)
{
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
    start_job(p);
    for (int t = 1; t < p->started; t++)
        pthread_join(p->tid[t], NULL);
    p->started = 1;
}

/* ===== The pool ===== */

int xl_pool_default_threads(void)
{
    cpu_set_t set;
    long cores;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cores = CPU_COUNT(&set);
    else /* a mask wider than cpu_set_t (over 1024 CPUs): the online count */
        cores = sysconf(_SC_NPROCESSORS_ONLN);
    long n = cores - XL_POOL_SPARE;
    return n < 1 ? 1 : n > XL_POOL_MAX ? XL_POOL_MAX : (int)n;
}

xl_pool *xl_pool_create(int threads)
{
    if (threads < 1 || threads > XL_POOL_MAX) {
        fprintf(stderr, "xl_pool_create: a pool has 1 to %d threads, not %d\n", XL_POOL_MAX, threads);
        return NULL;
    }
    struct xl_pool *p = NULL;
    if (posix_memalign((void **)&p, 64, sizeof *p) != 0) {
        fprintf(stderr, "xl_pool_create: out of memory\n");
        return NULL;
    }
    memset(p, 0, sizeof *p);
    p->threads = threads;
    p->started = 1; /* the caller */
    for (int t = 1; t < threads; t++) {
        p->worker[t].pool = p;
        p->worker[t].thread = t;
        int err = pthread_create(&p->tid[t], NULL, worker_main, &p->worker[t]);
        if (err != 0) {
            fprintf(stderr, "xl_pool_create: cannot start thread %d of %d: %s\n", t, threads, strerror(err));
            stop_threads(p);
            free(p);
            return NULL;
        }
        p->started = t + 1;
    }
    return p;
}

void xl_pool_run(xl_pool *p, xl_pool_fn fn, void *ctx)
{
    if (p->threads == 1) {
        fn(0, 1, ctx);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    __atomic_store_n(&p->done, 0, __ATOMIC_RELAXED); /* published with the job by start_job */
    start_job(p);
    fn(0, p->threads, ctx);
    unsigned turns = 0;
    while (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE) < p->threads - 1)
        spin_once(&turns);
}

int xl_pool_threads(const xl_pool *p)
{
    return p->threads;
}

void xl_pool_destroy(xl_pool *p)
{
    if (!p)
        return;
    stop_threads(p);
    free(p);
}

/* ===== Progress counters ===== */

void xl_pool_post(xl_pool_count *c)
{
    __atomic_fetch_add(&c->n, 1, __ATOMIC_RELEASE);
}

void xl_pool_wait(const xl_pool_count *c, long target)
{
    unsigned turns = 0;
    while (__atomic_load_n(&c->n, __ATOMIC_ACQUIRE) < target)
        spin_once(&turns);
}

/* ===== A copy on every thread ===== */

struct memcpy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
};

/* slice_start - where thread t's slice of a copy to dst begins: t / threads of the way, moved up to a 64-byte
 * line of dst so that no line is written by two threads (threads: the end) */
static size_t slice_start(const struct memcpy_job *j, int t, int threads)
{
    if (t >= threads)
        return j->bytes;
    uintptr_t at = (uintptr_t)j->dst + (size_t)t * (j->bytes / (size_t)threads);
    size_t off = ((at + 63) & ~(uintptr_t)63) - (uintptr_t)j->dst;
    return t == 0 ? 0 : off < j->bytes ? off : j->bytes;
}

/* memcpy_slice - xl_pool_fn: copies thread t's slice */
static void memcpy_slice(int t, int threads, void *ctx)
{
    const struct memcpy_job *j = ctx;
    size_t a = slice_start(j, t, threads), b = slice_start(j, t + 1, threads);
    if (b > a)
        xl_stream_copy(j->dst + a, j->src + a, b - a);
}

void xl_pool_memcpy(xl_pool *p, void *dst, const void *src, size_t bytes)
{
    if (bytes < MEMCPY_SPLIT_MIN_BYTES || p->threads == 1) {
        xl_stream_copy(dst, src, bytes);
        return;
    }
    struct memcpy_job j = {dst, src, bytes};
    xl_pool_run(p, memcpy_slice, &j);
}
