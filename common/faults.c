/* faults.c - the n-th create fails as if out of memory (see faults.h). */
/* Besides the wrappers faults.h names, pthread_create asks too (common/threads.c) while xl_fault_threads is on:
 * a thread counts as a create, and the one due fails with EAGAIN instead (no CUDA error then). */
#include "faults.h"

#include <pthread.h>
#include <stdint.h>

static long left = -1; /* creates that still succeed; -1: disarmed */
static int fired;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void xl_fail_create_after(long n)
{
    pthread_mutex_lock(&lock);
    left = n < 0 ? -1 : n;
    fired = 0;
    pthread_mutex_unlock(&lock);
}

int xl_fault_fired(void)
{
    pthread_mutex_lock(&lock);
    int f = fired;
    pthread_mutex_unlock(&lock);
    return f;
}

int xl_fault_due(void)
{
    int due = 0;
    pthread_mutex_lock(&lock);
    if (left == 0)
        due = 1, fired = 1, left = -1;
    else if (left > 0)
        left--;
    pthread_mutex_unlock(&lock);
    return due;
}

cudaError_t xl_fault_error(void)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, SIZE_MAX / 4); /* no GPU has this much: the runtime's own out-of-memory */
    if (e == cudaSuccess) {                       /* cannot happen; never hand out what was not asked for */
        cudaFree(p);
        e = cudaErrorMemoryAllocation;
    }
    return e;
}
