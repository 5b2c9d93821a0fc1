/* devlog.c - counts the cudaSetDevice calls of one thread (see devlog.h). */
#include "devlog.h"

#include "threads.h"

cudaError_t __real_cudaSetDevice(int d);

static long watched = -1; /* the thread counted (xl_tid), -1: none; __atomic, as the counts: any thread calls */
static int sets, last_device = -1;

void xl_devlog_watch(void)
{
    __atomic_store_n(&sets, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&last_device, -1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&watched, xl_tid(), __ATOMIC_SEQ_CST);
}

int xl_devlog_sets(int *last)
{
    if (last)
        *last = __atomic_load_n(&last_device, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&sets, __ATOMIC_SEQ_CST);
}

cudaError_t xl_set_device_unlogged(int d)
{
    return __real_cudaSetDevice(d);
}

/* __wrap_cudaSetDevice - cudaSetDevice, counted when made on the watched thread; same result */
cudaError_t __wrap_cudaSetDevice(int d)
{
    if (__atomic_load_n(&watched, __ATOMIC_SEQ_CST) == xl_tid()) {
        __atomic_add_fetch(&sets, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&last_device, d, __ATOMIC_SEQ_CST);
    }
    return __real_cudaSetDevice(d);
}
