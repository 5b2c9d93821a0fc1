/* threads.c - this process's threads and CPU time, and thread creation that fails on demand (see threads.h).
 *
 * Programs linked with the Makefile's WRAP call __wrap_pthread_create below instead of the C library's, from every
 * object linked in: the program's own, the kit's, and the CUDA runtime's (linked statically), whose threads start
 * the first time it needs them. So the fault is opt-in: unless xl_fault_threads(1), the wrapper only passes the
 * call on, and labs 01 to 09 are untouched.
 */
#define _GNU_SOURCE
#include "threads.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "faults.h"

int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg);
int __real_pthread_join(pthread_t thread, void **ret);
int __real_pthread_detach(pthread_t thread);

static long started, joined; /* threads started and joined (or detached) through the wrappers; __atomic */

static int fault_threads; /* 1: pthread_create asks xl_fault_due (read and written with __atomic: any thread) */

int xl_threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

long xl_tid(void)
{
    return (long)syscall(SYS_gettid); /* not cached: a forked child (each Criterion test) has its own */
}

double xl_cpu_ms_now(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0)
        return 0.0; /* cannot fail for RUSAGE_SELF with a valid pointer */
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

void xl_fault_threads(int on)
{
    __atomic_store_n(&fault_threads, on != 0, __ATOMIC_SEQ_CST);
}

/* __wrap_pthread_create - pthread_create; with xl_fault_threads on, first asks xl_fault_due (common/faults.h) and,
 * when this create is the one armed to fail, returns EAGAIN (as a process out of threads would) starting nothing */
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    if (__atomic_load_n(&fault_threads, __ATOMIC_SEQ_CST) && xl_fault_due())
        return EAGAIN;
    int rc = __real_pthread_create(thread, attr, start, arg);
    if (rc == 0)
        __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* __wrap_pthread_join - pthread_join, counted when it succeeds */
int __wrap_pthread_join(pthread_t thread, void **ret)
{
    int rc = __real_pthread_join(thread, ret);
    if (rc == 0)
        __atomic_add_fetch(&joined, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* __wrap_pthread_detach - pthread_detach, counted with the joins when it succeeds */
int __wrap_pthread_detach(pthread_t thread)
{
    int rc = __real_pthread_detach(thread);
    if (rc == 0)
        __atomic_add_fetch(&joined, 1, __ATOMIC_SEQ_CST);
    return rc;
}

long xl_threads_started(void)
{
    return __atomic_load_n(&started, __ATOMIC_SEQ_CST);
}

long xl_threads_joined(void)
{
    return __atomic_load_n(&joined, __ATOMIC_SEQ_CST);
}
