/* threads.c - unit tests of common/threads: the process's thread count, thread ids, CPU time, and pthread_create
 * failing on demand (xl_fault_threads with common/faults). CPU only.
 *
 * This program is linked with the kit's --wrap flags, so its own pthread_create calls pass through
 * common/threads.c, as a lab's do.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "common/faults.h"
#include "common/threads.h"

/* ===== Helpers ===== */

/* A thread that notes its id, then waits until told to go. */
struct held {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int started, go;
    long tid;
};
#define HELD_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0}

static void *held_main(void *arg)
{
    struct held *h = arg;
    pthread_mutex_lock(&h->lock);
    h->tid = xl_tid();
    h->started = 1;
    pthread_cond_broadcast(&h->cond);
    while (!h->go)
        pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

/* held_wait_started - waits until h's thread has noted its id */
static void held_wait_started(struct held *h)
{
    pthread_mutex_lock(&h->lock);
    while (!h->started)
        pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

/* held_release - lets h's thread return */
static void held_release(struct held *h)
{
    pthread_mutex_lock(&h->lock);
    h->go = 1;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

/* threads_settle - xl_threads_now once it equals want, or after a second: a joined thread may leave the task list a
 * moment after pthread_join returns (the kernel wakes the joiner before it reaps the thread) */
static int threads_settle(int want)
{
    int n = xl_threads_now();
    for (int i = 0; i < 1000 && n != want; i++, n = xl_threads_now())
        usleep(1000);
    return n;
}

/* thread_cpu_ms - the calling thread's own CPU time in ms */
static double thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* spin_main - burns 100 ms of its own thread's CPU time */
static void *spin_main(void *arg)
{
    (void)arg;
    double t0 = thread_cpu_ms();
    while (thread_cpu_ms() - t0 < 100.0)
        ;
    return NULL;
}

static void *nothing_main(void *arg)
{
    *(int *)arg = 1;
    return NULL;
}

/* ===== Threads and ids ===== */

Test(threads, the_count_rises_while_a_thread_lives_and_falls_after_join)
{
    int n0 = xl_threads_now();
    cr_assert(n0 >= 1, "at least this thread: xl_threads_now gave %d", n0);
    struct held h = HELD_INIT;
    pthread_t t;
    cr_assert(pthread_create(&t, NULL, held_main, &h) == 0);
    held_wait_started(&h);
    int n1 = xl_threads_now();
    cr_assert(n1 == n0 + 1, "one thread started: %d before, %d while it lives", n0, n1);
    held_release(&h);
    cr_assert(pthread_join(t, NULL) == 0);
    int n2 = threads_settle(n0);
    cr_assert(n2 == n0, "the thread was joined: %d before, %d after", n0, n2);
}

Test(threads, each_thread_has_its_own_id)
{
    struct held a = HELD_INIT, b = HELD_INIT;
    pthread_t ta, tb;
    cr_assert(pthread_create(&ta, NULL, held_main, &a) == 0 && pthread_create(&tb, NULL, held_main, &b) == 0);
    held_wait_started(&a);
    held_wait_started(&b);
    long me = xl_tid();
    cr_assert(me > 0 && a.tid > 0 && b.tid > 0, "ids are positive: %ld, %ld, %ld", me, a.tid, b.tid);
    cr_assert(a.tid != b.tid && a.tid != me && b.tid != me, "three threads, three ids: %ld, %ld, %ld", me, a.tid,
              b.tid);
    cr_assert(xl_tid() == me, "the same thread, the same id");
    held_release(&a);
    held_release(&b);
    cr_assert(pthread_join(ta, NULL) == 0 && pthread_join(tb, NULL) == 0);
}

/* ===== CPU time ===== */

Test(threads, cpu_time_counts_every_thread_and_not_sleep)
{
    double c0 = xl_cpu_ms_now();
    pthread_t t;
    cr_assert(pthread_create(&t, NULL, spin_main, NULL) == 0);
    cr_assert(pthread_join(t, NULL) == 0);
    double c1 = xl_cpu_ms_now();
    cr_assert(c1 - c0 >= 95.0, "a thread spun for 100 ms of CPU: the process's CPU time grew by %.1f ms", c1 - c0);
    struct timespec nap = {0, 50 * 1000 * 1000};
    nanosleep(&nap, NULL);
    double c2 = xl_cpu_ms_now();
    cr_assert(c2 - c1 < 20.0, "50 ms of sleep cost %.1f ms of CPU: sleep should cost almost none", c2 - c1);
}

/* ===== pthread_create failing on demand ===== */

Test(threads, the_armed_create_fails_with_eagain_when_turned_on)
{
    int ran[3] = {0, 0, 0};
    pthread_t t[3];
    xl_fault_threads(1);
    xl_fail_create_after(1); /* the first succeeds, the second fails */
    int n0 = xl_threads_now();
    int e0 = pthread_create(&t[0], NULL, nothing_main, &ran[0]);
    cr_assert(e0 == 0 && !xl_fault_fired(), "the 1st create succeeds (got %d)", e0);
    int e1 = pthread_create(&t[1], NULL, nothing_main, &ran[1]);
    cr_assert(e1 == EAGAIN, "the 2nd create fails with EAGAIN (%d), got %d", EAGAIN, e1);
    cr_assert(xl_fault_fired(), "the failure is reported as fired");
    int e2 = pthread_create(&t[2], NULL, nothing_main, &ran[2]);
    cr_assert(e2 == 0, "it fails once: the 3rd create succeeds (got %d)", e2);
    xl_fault_threads(0);
    cr_assert(pthread_join(t[0], NULL) == 0 && pthread_join(t[2], NULL) == 0);
    cr_assert(ran[0] && !ran[1] && ran[2], "the 1st and 3rd threads ran, the 2nd never started (ran %d %d %d)",
              ran[0], ran[1], ran[2]);
    int n1 = threads_settle(n0);
    cr_assert(n1 == n0, "nothing left running: %d threads before, %d after", n0, n1);
}

Test(threads, nothing_fails_when_turned_off)
{
    int ran = 0;
    pthread_t t;
    xl_fault_threads(1);
    xl_fault_threads(0); /* on, then off: the default */
    xl_fail_create_after(0);
    cr_assert(pthread_create(&t, NULL, nothing_main, &ran) == 0, "off: the create succeeds with a fault armed");
    cr_assert(pthread_join(t, NULL) == 0 && ran, "and its thread ran");
    cr_assert(!xl_fault_fired(), "off: the fault did not fire");
    cr_assert(xl_fault_due(), "off: pthread_create did not even ask, so the armed fault is still due");
}

Test(threads, starts_and_joins_are_counted)
{
    long started = xl_threads_started(), joined = xl_threads_joined();
    pthread_t t[3];
    static int ran[3]; /* static: the detached thread may write after the test returns */
    for (int i = 0; i < 3; i++)
        cr_assert(pthread_create(&t[i], NULL, nothing_main, &ran[i]) == 0);
    cr_assert(xl_threads_started() - started == 3, "three threads started");
    cr_assert(xl_threads_joined() - joined == 0, "none joined yet");
    cr_assert(pthread_join(t[0], NULL) == 0);
    cr_assert(pthread_detach(t[1]) == 0);
    cr_assert(xl_threads_joined() - joined == 2, "a join and a detach count as two");
    cr_assert(pthread_join(t[2], NULL) == 0);
    cr_assert(xl_threads_joined() - joined == 3, "three joined or detached");
    cr_assert(ran[0] && ran[2], "the joined threads ran");
}
