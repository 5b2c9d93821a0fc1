/* pincount.c - counts pinned host memory at the CUDA calls (see pincount.h). */
#include "pincount.h"

#include <cuda_runtime_api.h>
#include "faults.h"
#include <pthread.h>

#define SLOTS 4096

cudaError_t __real_cudaMallocHost(void **ptr, size_t bytes);
cudaError_t __real_cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags);
cudaError_t __real_cudaFreeHost(void *ptr);
cudaError_t __real_cudaHostRegister(void *ptr, size_t bytes, unsigned int flags);
cudaError_t __real_cudaHostUnregister(void *ptr);

/* What is held: pointer, size and the flags asked, one slot each; kind 1 allocated, 2 registered, 0 free. */
static struct {
    void *ptr;
    size_t bytes;
    int kind;
    unsigned int flags;
} held[SLOTS];
static xl_pinned now;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* note - remembers ptr as held (kind 1 or 2), made with flags */
static void note(void *ptr, size_t bytes, int kind, unsigned int flags)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SLOTS; i++)
        if (held[i].kind == 0) {
            held[i].ptr = ptr, held[i].bytes = bytes, held[i].kind = kind, held[i].flags = flags;
            break;
        }
    if (kind == 1)
        now.allocations++, now.alloc_bytes += bytes;
    else
        now.registrations++, now.reg_bytes += bytes;
    pthread_mutex_unlock(&lock);
}

/* forget - drops ptr of kind from what is held */
static void forget(void *ptr, int kind)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SLOTS; i++)
        if (held[i].kind == kind && held[i].ptr == ptr) {
            if (kind == 1)
                now.allocations--, now.alloc_bytes -= held[i].bytes;
            else
                now.registrations--, now.reg_bytes -= held[i].bytes;
            held[i].kind = 0;
            break;
        }
    pthread_mutex_unlock(&lock);
}

unsigned int xl_pinned_flags(const void *p)
{
    unsigned int flags = ~0u;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SLOTS; i++)
        if (held[i].kind != 0 && (const char *)p >= (const char *)held[i].ptr &&
            (const char *)p < (const char *)held[i].ptr + held[i].bytes) {
            flags = held[i].flags;
            break;
        }
    pthread_mutex_unlock(&lock);
    return flags;
}

xl_pinned xl_pinned_now(void)
{
    pthread_mutex_lock(&lock);
    xl_pinned p = now;
    pthread_mutex_unlock(&lock);
    return p;
}

/* The wrapped calls: the runtime's, then the count when it succeeded. */
cudaError_t __wrap_cudaMallocHost(void **ptr, size_t bytes)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaMallocHost(ptr, bytes);
    if (e == cudaSuccess && ptr && *ptr)
        note(*ptr, bytes, 1, cudaHostAllocDefault);
    return e;
}

cudaError_t __wrap_cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaHostAlloc(ptr, bytes, flags);
    if (e == cudaSuccess && ptr && *ptr)
        note(*ptr, bytes, 1, flags);
    return e;
}

cudaError_t __wrap_cudaFreeHost(void *ptr)
{
    cudaError_t e = __real_cudaFreeHost(ptr);
    if (e == cudaSuccess && ptr)
        forget(ptr, 1);
    return e;
}

cudaError_t __wrap_cudaHostRegister(void *ptr, size_t bytes, unsigned int flags)
{
    if (xl_fault_due())
        return xl_fault_error();
    cudaError_t e = __real_cudaHostRegister(ptr, bytes, flags);
    if (e == cudaSuccess)
        note(ptr, bytes, 2, flags);
    return e;
}

cudaError_t __wrap_cudaHostUnregister(void *ptr)
{
    cudaError_t e = __real_cudaHostUnregister(ptr);
    if (e == cudaSuccess)
        forget(ptr, 2);
    return e;
}
