/* copylog.c - records every cudaMemcpy and cudaMemcpyAsync while a record is open, and counts the
 * cudaMemcpyBatchAsync calls (see copylog.h). cudaMemcpy and the symbol copies (cudaMemcpyToSymbol,
 * cudaMemcpyFromSymbol and their Async forms) are wrapped here; the wrappers of cudaMemcpyAsync and
 * cudaMemcpyBatchAsync are in tracecopy.c and call xl_copylog_note and xl_copylog_note_batch. */
#include "copylog.h"
#include "memacct.h"

#include <pthread.h>
#include <stdint.h>

cudaError_t __real_cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);
cudaError_t __real_cudaMemcpyToSymbol(const void *symbol, const void *src, size_t bytes, size_t offset,
                                      enum cudaMemcpyKind kind);
cudaError_t __real_cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t bytes, size_t offset,
                                           enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t __real_cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t bytes, size_t offset,
                                        enum cudaMemcpyKind kind);
cudaError_t __real_cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t bytes, size_t offset,
                                             enum cudaMemcpyKind kind, cudaStream_t stream);

static xl_copy_rec *log_recs; /* NULL: no record open */
static int log_max, log_n;
static xl_batch_log log_batches; /* since the last start; kept after its stop */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int hold_n = -1, hold_seen; /* xl_copylog_hold: the copy to hold (-1: none), host-to-device copies counted */
static uint64_t hold_ns;

void xl_copylog_start(xl_copy_rec *recs, int max)
{
    pthread_mutex_lock(&lock);
    log_recs = recs, log_max = max, log_n = 0;
    xl_batch_log none = {0, 0, 0, 0, 0, 0};
    log_batches = none;
    pthread_mutex_unlock(&lock);
}

int xl_copylog_stop(void)
{
    pthread_mutex_lock(&lock);
    int n = log_n;
    log_recs = NULL, log_max = 0, log_n = 0;
    pthread_mutex_unlock(&lock);
    return n;
}

int xl_copylog_count(void)
{
    pthread_mutex_lock(&lock);
    int n = log_recs ? log_n : 0;
    pthread_mutex_unlock(&lock);
    return n;
}

/* untouched_pages - how many pages of host memory [p, p + bytes) are not resident (never touched, or swapped out);
 * 0 when mincore cannot tell (xl_pages_resident: no allocation inside the copy wrappers) */
static size_t untouched_pages(const void *p, size_t bytes)
{
    size_t resident, pages;
    return xl_pages_resident(p, bytes, 0, &resident, &pages) == 0 ? pages - resident : 0;
}

void xl_copylog_note(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream,
                     int async)
{
    pthread_mutex_lock(&lock);
    if (log_recs) {
        if (log_n < log_max) {
            xl_copy_rec r = {dst, src, bytes, kind, stream, async, 0};
            if (xl_copy_dir(&r) == cudaMemcpyHostToDevice)
                r.src_untouched = untouched_pages(src, bytes);
            log_recs[log_n] = r;
        }
        log_n++;
    }
    pthread_mutex_unlock(&lock);
}

void xl_copylog_note_batch(const size_t *sizes, size_t count, cudaStream_t stream, int unordered)
{
    size_t bytes = 0;
    for (size_t k = 0; sizes && k < count; k++)
        bytes += sizes[k];
    pthread_mutex_lock(&lock);
    if (log_recs) {
        if (log_batches.calls == 0)
            log_batches.stream = stream;
        else if (stream != log_batches.stream)
            log_batches.other_streams++;
        log_batches.calls++;
        log_batches.unordered += unordered != 0;
        log_batches.copies += count;
        log_batches.bytes += bytes;
    }
    pthread_mutex_unlock(&lock);
}

xl_batch_log xl_copylog_batches(void)
{
    pthread_mutex_lock(&lock);
    xl_batch_log b = log_batches;
    pthread_mutex_unlock(&lock);
    return b;
}

/* on_device - 1 when p is device (or managed) memory, as the runtime knows it */
static int on_device(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

enum cudaMemcpyKind xl_copy_dir(const xl_copy_rec *r)
{
    if (r->kind != cudaMemcpyDefault)
        return r->kind;
    int d = on_device(r->dst), s = on_device(r->src);
    return d && s ? cudaMemcpyDeviceToDevice : d ? cudaMemcpyHostToDevice : s ? cudaMemcpyDeviceToHost
                                                                              : cudaMemcpyHostToHost;
}

void xl_copylog_hold(int n, uint64_t ns)
{
    pthread_mutex_lock(&lock);
    hold_n = n < 0 ? -1 : n, hold_seen = 0, hold_ns = ns;
    pthread_mutex_unlock(&lock);
}

uint64_t xl_copylog_hold_due(void *dst, const void *src, enum cudaMemcpyKind kind)
{
    xl_copy_rec r = {dst, src, 0, kind, 0, 1, 0};
    uint64_t ns = 0;
    pthread_mutex_lock(&lock);
    if (hold_n >= 0 && xl_copy_dir(&r) == cudaMemcpyHostToDevice && hold_seen++ == hold_n)
        ns = hold_ns;
    pthread_mutex_unlock(&lock);
    return ns;
}

/* __wrap_cudaMemcpy - cudaMemcpy, noted in the open record; same result */
cudaError_t __wrap_cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    xl_copylog_note(dst, src, bytes, kind, 0, 0);
    return __real_cudaMemcpy(dst, src, bytes, kind);
}

/* symbol_at - the device address of symbol plus offset (NULL when the runtime does not know the symbol; the copy
 * then fails on its own) */
static void *symbol_at(const void *symbol, size_t offset)
{
    void *at = NULL;
    if (cudaGetSymbolAddress(&at, symbol) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return (char *)at + offset;
}

/* __wrap_cudaMemcpyToSymbol - cudaMemcpyToSymbol, noted in the open record as a copy into the symbol's device
 * address; same result */
cudaError_t __wrap_cudaMemcpyToSymbol(const void *symbol, const void *src, size_t bytes, size_t offset,
                                      enum cudaMemcpyKind kind)
{
    xl_copylog_note(symbol_at(symbol, offset), src, bytes, kind, 0, 0);
    return __real_cudaMemcpyToSymbol(symbol, src, bytes, offset, kind);
}

/* __wrap_cudaMemcpyToSymbolAsync - cudaMemcpyToSymbolAsync, noted as an async copy on stream; same result */
cudaError_t __wrap_cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t bytes, size_t offset,
                                           enum cudaMemcpyKind kind, cudaStream_t stream)
{
    xl_copylog_note(symbol_at(symbol, offset), src, bytes, kind, stream, 1);
    return __real_cudaMemcpyToSymbolAsync(symbol, src, bytes, offset, kind, stream);
}

/* __wrap_cudaMemcpyFromSymbol - cudaMemcpyFromSymbol, noted as a copy out of the symbol's device address; same
 * result */
cudaError_t __wrap_cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t bytes, size_t offset,
                                        enum cudaMemcpyKind kind)
{
    xl_copylog_note(dst, symbol_at(symbol, offset), bytes, kind, 0, 0);
    return __real_cudaMemcpyFromSymbol(dst, symbol, bytes, offset, kind);
}

/* __wrap_cudaMemcpyFromSymbolAsync - cudaMemcpyFromSymbolAsync, noted as an async copy on stream; same result */
cudaError_t __wrap_cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t bytes, size_t offset,
                                             enum cudaMemcpyKind kind, cudaStream_t stream)
{
    xl_copylog_note(dst, symbol_at(symbol, offset), bytes, kind, stream, 1);
    return __real_cudaMemcpyFromSymbolAsync(dst, symbol, bytes, offset, kind, stream);
}
