/* pool.c - unit tests of common/pool (a fixed team of host threads). CPU only.
 *
 * Every pool size from 1 to XL_POOL_MAX runs many jobs in a row, some after a pause long enough that its threads
 * sleep: each thread index must run exactly once per job and the call must return only when all have. Progress
 * counters hand data from thread to thread within a job; xl_pool_memcpy must be exact with guard bytes either
 * side. This machine may have fewer cores than a pool has threads: the tests hold then too, only slower.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/pool.h"

/* ===== Helpers ===== */

/* threads_now - the threads of this process (entries of /proc/self/task) */
static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    cr_assert(d, "cannot read /proc/self/task");
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* threads_settle - threads_now once it equals want, or after a second: a joined thread may leave the task list a
 * moment after pthread_join returns (the kernel wakes the joiner before it reaps the thread) */
static int threads_settle(int want)
{
    int n = threads_now();
    for (int i = 0; i < 1000 && n != want; i++, n = threads_now())
        usleep(1000);
    return n;
}

/* ms_now - a monotonic clock in ms */
static double ms_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* ===== Each thread once per job ===== */

struct tally {
    int hits[XL_POOL_MAX + 1]; /* runs per thread index in this job; one past the end catches a stray index */
    int threads_seen[XL_POOL_MAX + 1];
    int bad_index;             /* a thread index outside 0 .. threads - 1 */
    long job;                  /* the job number, read by every thread */
    long job_seen[XL_POOL_MAX + 1];
};

/* tally_fn - xl_pool_fn: counts its run under its thread index */
static void tally_fn(int t, int threads, void *ctx)
{
    struct tally *y = ctx;
    if (t < 0 || t >= threads || t >= XL_POOL_MAX) {
        __atomic_store_n(&y->bad_index, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_fetch_add(&y->hits[t], 1, __ATOMIC_RELAXED);
    y->threads_seen[t] = threads;
    y->job_seen[t] = y->job;
}

/* A pause after which a pool's threads have gone to sleep: longer than their spin (1 ms, pool.c) */
#define SLEEP_US 3000

/* run_jobs - runs jobs jobs on a pool of threads threads and checks each; every pause_every-th job comes after a
 * pause of SLEEP_US, long enough for the threads to go to sleep */
static void run_jobs(int threads, int jobs, int pause_every)
{
    xl_pool *p = xl_pool_create(threads);
    cr_assert(p, "xl_pool_create(%d) failed", threads);
    cr_assert(xl_pool_threads(p) == threads, "xl_pool_threads says %d, want %d", xl_pool_threads(p), threads);
    struct tally y;
    for (int j = 0; j < jobs; j++) {
        memset(&y, 0, sizeof y);
        y.job = j + 1;
        if (pause_every && j % pause_every == pause_every - 1)
            usleep(SLEEP_US);
        xl_pool_run(p, tally_fn, &y);
        cr_assert(!y.bad_index, "%d threads, job %d: a thread index outside 0..%d", threads, j, threads - 1);
        for (int t = 0; t <= XL_POOL_MAX; t++) {
            int want = t < threads;
            cr_assert(y.hits[t] == want, "%d threads, job %d: thread %d ran %d times (want %d)", threads, j, t,
                      y.hits[t], want);
            if (want) {
                cr_assert(y.threads_seen[t] == threads, "%d threads, job %d: thread %d was told %d threads", threads,
                          j, t, y.threads_seen[t]);
                cr_assert(y.job_seen[t] == j + 1, "%d threads, job %d: thread %d saw job %ld", threads, j, t,
                          y.job_seen[t]);
            }
        }
    }
    xl_pool_destroy(p);
}

Test(pool, every_thread_index_runs_once_per_job_for_every_size, .timeout = 120)
{
    for (int threads = 1; threads <= XL_POOL_MAX; threads++)
        run_jobs(threads, 300, 25);
}

Test(pool, many_jobs_in_a_row, .timeout = 120)
{
    run_jobs(2, 20000, 0);
    run_jobs(3, 5000, 0);
    run_jobs(XL_POOL_MAX, 2000, 500);
    run_jobs(xl_pool_default_threads(), 5000, 1000);
}

/* ===== A job ends when every thread has ===== */

struct slow_last {
    int threads;
    int finished; /* set by the last thread after its sleep */
};

/* slow_last_fn - xl_pool_fn: the last thread sleeps 30 ms, then says it finished */
static void slow_last_fn(int t, int threads, void *ctx)
{
    struct slow_last *s = ctx;
    if (t == threads - 1) {
        usleep(30000);
        __atomic_store_n(&s->finished, 1, __ATOMIC_RELEASE);
    }
}

Test(pool, run_returns_only_when_every_thread_has_returned, .timeout = 30)
{
    const int sizes[] = {1, 2, 5, XL_POOL_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        xl_pool *p = xl_pool_create(sizes[i]);
        cr_assert(p);
        struct slow_last s = {sizes[i], 0};
        double t0 = ms_now();
        xl_pool_run(p, slow_last_fn, &s);
        double ms = ms_now() - t0;
        cr_assert(s.finished, "%d threads: xl_pool_run returned before the last thread finished", sizes[i]);
        cr_assert(ms >= 29.0, "%d threads: returned after %.1f ms, the last thread sleeps 30", sizes[i], ms);
        xl_pool_destroy(p);
    }
}

/* ===== Creating and destroying ===== */

Test(pool, bad_thread_counts_give_null)
{
    const int bad[] = {0, -1, XL_POOL_MAX + 1, INT_MIN, INT_MAX};
    int before = threads_now();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert(xl_pool_create(bad[i]) == NULL, "xl_pool_create(%d) must fail", bad[i]);
    cr_assert(threads_settle(before) == before, "a failed create left threads running");
}

Test(pool, destroy_joins_every_thread_and_null_does_nothing, .timeout = 60)
{
    int before = threads_now();
    for (int round = 0; round < 50; round++) {
        int threads = 1 + round % XL_POOL_MAX;
        xl_pool *p = xl_pool_create(threads);
        cr_assert(p);
        cr_assert(threads_now() == before + threads - 1, "a pool of %d threads starts %d", threads,
                  threads - 1);
        if (round % 2) { /* half are destroyed right after a job, half while their threads sleep */
            struct tally y = {0};
            xl_pool_run(p, tally_fn, &y);
        } else
            usleep(SLEEP_US);
        xl_pool_destroy(p);
        int left = threads_settle(before) - before;
        cr_assert(left == 0, "round %d: destroy left %d threads", round, left);
    }
    xl_pool_destroy(NULL);
}

Test(pool, default_threads_follow_the_affinity_mask)
{
    cpu_set_t set;
    cr_assert(sched_getaffinity(0, sizeof set, &set) == 0);
    int want = CPU_COUNT(&set) - XL_POOL_SPARE;
    want = want < 1 ? 1 : want > XL_POOL_MAX ? XL_POOL_MAX : want;
    int got = xl_pool_default_threads();
    cr_assert(got >= 1 && got <= XL_POOL_MAX, "%d threads, not within 1..%d", got, XL_POOL_MAX);
    cr_assert(got == want, "%d cores in the mask: want %d threads, got %d", CPU_COUNT(&set), want, got);
    cpu_set_t one; /* one core: still 1 thread */
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            CPU_SET(c, &one);
            break;
        }
    cr_assert(sched_setaffinity(0, sizeof one, &one) == 0);
    cr_assert(xl_pool_default_threads() == 1, "one core in the mask");
    cr_assert(sched_setaffinity(0, sizeof set, &set) == 0);
}

/* ===== Progress counters ===== */

#define STAGES 64

struct relay {
    xl_pool_count posted[STAGES];
    long data[STAGES][XL_POOL_MAX];
    int wrong_stage; /* the first stage thread 0 found wrong, plus 1; 0 for none */
};

/* relay_fn - xl_pool_fn: threads 1.. write their entry of each stage and post it; thread 0 waits for each stage
 * and checks every entry */
static void relay_fn(int t, int threads, void *ctx)
{
    struct relay *r = ctx;
    for (int k = 0; k < STAGES; k++) {
        if (t != 0) {
            r->data[k][t] = 1000L * k + t; /* a plain store: the post's release must publish it */
            xl_pool_post(&r->posted[k]);
            continue;
        }
        xl_pool_wait(&r->posted[k], threads - 1);
        for (int u = 1; u < threads; u++)
            if (r->data[k][u] != 1000L * k + u && !r->wrong_stage)
                r->wrong_stage = k + 1;
    }
}

Test(pool, counters_hand_data_to_the_waiting_thread, .timeout = 60)
{
    for (int threads = 1; threads <= XL_POOL_MAX; threads++) {
        xl_pool *p = xl_pool_create(threads);
        cr_assert(p);
        for (int round = 0; round < 20; round++) {
            struct relay *r = calloc(1, sizeof *r);
            cr_assert(r);
            xl_pool_run(p, relay_fn, r);
            cr_assert(!r->wrong_stage, "%d threads: stage %d's data was not there when its count was reached",
                      threads, r->wrong_stage - 1);
            for (int k = 0; k < STAGES; k++)
                cr_assert(r->posted[k].n == threads - 1, "%d threads: stage %d counted %ld posts", threads, k,
                          r->posted[k].n);
            free(r);
        }
        xl_pool_destroy(p);
    }
}

Test(pool, wait_returns_at_once_when_the_count_is_reached)
{
    xl_pool_count c = {0};
    xl_pool_wait(&c, 0);
    xl_pool_wait(&c, -5);
    xl_pool_post(&c);
    xl_pool_post(&c);
    xl_pool_wait(&c, 2);
    cr_assert(c.n == 2, "two posts counted %ld", c.n);
}

/* ===== xl_pool_memcpy ===== */

#define GUARD 256

Test(pool, memcpy_is_exact_with_guards_for_every_size_and_split, .timeout = 120)
{
    const size_t sizes[] = {0, 1, 63, 4097, ((size_t)256 << 10) - 1, (size_t)256 << 10, ((size_t)256 << 10) + 1,
                            ((size_t)1 << 20) + 13, ((size_t)7 << 20) + 61};
    const size_t dst_offs[] = {0, 1, 63}, src_offs[] = {0, 5};
    const int thread_counts[] = {1, 2, 3, 5, XL_POOL_MAX};
    size_t most = ((size_t)7 << 20) + 61 + 64 + 2 * GUARD, bad = 0;
    unsigned char *src = aligned_alloc(64, most + 64 - most % 64), *dst = aligned_alloc(64, most + 64 - most % 64);
    cr_assert(src && dst);
    for (size_t ti = 0; ti < sizeof thread_counts / sizeof thread_counts[0]; ti++) {
        xl_pool *p = xl_pool_create(thread_counts[ti]);
        cr_assert(p);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t di = 0; di < 3; di++)
                for (size_t oi = 0; oi < 2; oi++) {
                    size_t bytes = sizes[si], d = dst_offs[di], s = src_offs[oi];
                    xl_fill_random(src, bytes + s + GUARD, xl_fresh_seed());
                    xl_poison(dst, GUARD + d + bytes + GUARD);
                    xl_pool_memcpy(p, dst + GUARD + d, src + GUARD + s, bytes);
                    cr_assert(xl_compare(dst + GUARD + d, src + GUARD + s, bytes, &bad) == 0,
                              "%d threads, %zu bytes, destination offset %zu, source offset %zu: byte %zu differs",
                              thread_counts[ti], bytes, d, s, bad);
                    cr_assert(xl_check_poison(dst, GUARD + d, &bad) == 0 &&
                                  xl_check_poison(dst + GUARD + d + bytes, GUARD, &bad) == 0,
                              "%d threads, %zu bytes, destination offset %zu: a guard byte changed",
                              thread_counts[ti], bytes, d);
                }
        xl_pool_destroy(p);
    }
    free(src);
    free(dst);
}
