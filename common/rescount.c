/* rescount.c - counts device buffers, streams and events at the CUDA calls (see rescount.h). */
#include "rescount.h"

#include <cuda_runtime_api.h>
#include "faults.h"
#include <pthread.h>

#define SLOTS 8192

cudaError_t __real_cudaMalloc(void **ptr, size_t bytes);
cudaError_t __real_cudaMallocManaged(void **ptr, size_t bytes, unsigned int flags);
cudaError_t __real_cudaFree(void *ptr);
cudaError_t __real_cudaStreamCreate(cudaStream_t *s);
cudaError_t __real_cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags);
cudaError_t __real_cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority);
cudaError_t __real_cudaStreamDestroy(cudaStream_t s);
cudaError_t __real_cudaEventCreate(cudaEvent_t *e);
cudaError_t __real_cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags);
cudaError_t __real_cudaEventDestroy(cudaEvent_t e);

/* Device buffers held: pointer, size and how it was made, one slot each (ptr NULL: a free slot). */
static struct {
    void *ptr;
    size_t bytes;
    int managed;        /* 1: cudaMallocManaged */
    unsigned int flags; /* cudaMallocManaged's flags */
} bufs[SLOTS];
static xl_resources now;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* note_buffer - remembers a device buffer: managed 1 for cudaMallocManaged's, with its flags */
static void note_buffer(void *ptr, size_t bytes, int managed, unsigned int flags)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SLOTS; i++)
        if (!bufs[i].ptr) {
            bufs[i].ptr = ptr, bufs[i].bytes = bytes, bufs[i].managed = managed, bufs[i].flags = flags;
            break;
        }
    now.dev_allocations++, now.dev_bytes += bytes;
    pthread_mutex_unlock(&lock);
}

/* forget_buffer - drops a freed device buffer */
static void forget_buffer(void *ptr)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SLOTS; i++)
        if (bufs[i].ptr == ptr) {
            now.dev_allocations--, now.dev_bytes -= bufs[i].bytes;
            bufs[i].ptr = NULL, bufs[i].bytes = 0, bufs[i].managed = 0, bufs[i].flags = 0;
            break;
        }
    pthread_mutex_unlock(&lock);
}

/* count - adds d to *what under the lock */
static void count(long *what, long d)
{
    pthread_mutex_lock(&lock);
    *what += d;
    pthread_mutex_unlock(&lock);
}

xl_alloc_kind xl_buffer_kind(const void *ptr, unsigned int *flags)
{
    xl_alloc_kind kind = XL_ALLOC_UNKNOWN;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SLOTS && kind == XL_ALLOC_UNKNOWN; i++)
        if (bufs[i].ptr == ptr) {
            kind = bufs[i].managed ? XL_ALLOC_MANAGED : XL_ALLOC_DEVICE;
            if (flags)
                *flags = bufs[i].flags;
        }
    pthread_mutex_unlock(&lock);
    return kind;
}

xl_resources xl_resources_now(void)
{
    pthread_mutex_lock(&lock);
    xl_resources r = now;
    pthread_mutex_unlock(&lock);
    return r;
}

/* ===== The wrapped calls: the runtime's, then the count when it succeeded ===== */

cudaError_t __wrap_cudaMalloc(void **ptr, size_t bytes)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaMalloc(ptr, bytes);
    if (e == cudaSuccess && ptr && *ptr)
        note_buffer(*ptr, bytes, 0, 0);
    return e;
}

cudaError_t __wrap_cudaMallocManaged(void **ptr, size_t bytes, unsigned int flags)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaMallocManaged(ptr, bytes, flags);
    if (e == cudaSuccess && ptr && *ptr)
        note_buffer(*ptr, bytes, 1, flags);
    return e;
}

cudaError_t __wrap_cudaFree(void *ptr)
{
    cudaError_t e = __real_cudaFree(ptr);
    if (e == cudaSuccess && ptr)
        forget_buffer(ptr);
    return e;
}

cudaError_t __wrap_cudaStreamCreate(cudaStream_t *s)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaStreamCreate(s);
    if (e == cudaSuccess)
        count(&now.streams, 1);
    return e;
}

cudaError_t __wrap_cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaStreamCreateWithFlags(s, flags);
    if (e == cudaSuccess)
        count(&now.streams, 1);
    return e;
}

cudaError_t __wrap_cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaStreamCreateWithPriority(s, flags, priority);
    if (e == cudaSuccess)
        count(&now.streams, 1);
    return e;
}

cudaError_t __wrap_cudaStreamDestroy(cudaStream_t s)
{
    cudaError_t e = __real_cudaStreamDestroy(s);
    if (e == cudaSuccess && s)
        count(&now.streams, -1);
    return e;
}

cudaError_t __wrap_cudaEventCreate(cudaEvent_t *ev)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaEventCreate(ev);
    if (e == cudaSuccess)
        count(&now.events, 1);
    return e;
}

cudaError_t __wrap_cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned int flags)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaEventCreateWithFlags(ev, flags);
    if (e == cudaSuccess)
        count(&now.events, 1);
    return e;
}

cudaError_t __wrap_cudaEventDestroy(cudaEvent_t ev)
{
    cudaError_t e = __real_cudaEventDestroy(ev);
    if (e == cudaSuccess && ev)
        count(&now.events, -1);
    return e;
}
