/* lab.cu - lab 06 (pin at allocation, pin later, pin in place): the reference solution.
 *
 * For course staff: the grader must give this file full points. Students edit labs/06-pinning/lab.cu,
 * which has the same contract (lab.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/check.h"
#include "labs/06-pinning/lab.h"

/* failed - clears a CUDA error that is handled here, says what failed in one line, zeroes *out; -1 */
static int failed(lab_pinned *out, const char *fn, const char *what, cudaError_t err)
{
    if (err != cudaSuccess)
        cudaGetLastError();
    fprintf(stderr, "%s: %s%s%s\n", fn, what, err != cudaSuccess ? ": " : "",
            err != cudaSuccess ? cudaGetErrorString(err) : "");
    if (out)
        memset(out, 0, sizeof *out);
    return -1;
}

/* page_size - the host's page size in bytes (sysconf cannot fail for it on Linux) */
static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

extern "C" int lab_pin_at_alloc(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    void *p = NULL;
    if (!out || !fill || bytes == 0)
        return failed(out, "lab_pin_at_alloc", "need bytes > 0, a fill and an out", cudaSuccess);
    cudaError_t err = cudaMallocHost(&p, bytes); /* page-locked from the start: one buffer, ever */
    if (err != cudaSuccess)
        return failed(out, "lab_pin_at_alloc", "cannot allocate pinned memory", err);
    fill(p, bytes, ctx);
    *out = (lab_pinned){p, bytes, LAB_AT_ALLOC, p, bytes};
    return 0;
}

extern "C" int lab_pin_by_copy(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    void *p = NULL, *tmp;
    if (!out || !fill || bytes == 0)
        return failed(out, "lab_pin_by_copy", "need bytes > 0, a fill and an out", cudaSuccess);
    if (!(tmp = malloc(bytes)))
        return failed(out, "lab_pin_by_copy", "out of memory", cudaSuccess);
    fill(tmp, bytes, ctx);
    cudaError_t err = cudaMallocHost(&p, bytes); /* a second buffer: for a moment both exist */
    if (err != cudaSuccess) {
        free(tmp);
        return failed(out, "lab_pin_by_copy", "cannot allocate pinned memory", err);
    }
    memcpy(p, tmp, bytes);
    free(tmp);
    *out = (lab_pinned){p, bytes, LAB_BY_COPY, p, bytes};
    return 0;
}

extern "C" int lab_pin_in_place(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    size_t page = page_size();
    if (!out || !fill || bytes == 0 || bytes > SIZE_MAX - page)
        return failed(out, "lab_pin_in_place", "need bytes > 0, a fill and an out", cudaSuccess);
    size_t len = (bytes + page - 1) / page * page; /* whole pages: pinning works page by page */
    void *p = aligned_alloc(page, len);
    if (!p)
        return failed(out, "lab_pin_in_place", "out of memory", cudaSuccess);
    fill(p, bytes, ctx);
    cudaError_t err = cudaHostRegister(p, len, cudaHostRegisterDefault);
    if (err != cudaSuccess) {
        free(p);
        return failed(out, "lab_pin_in_place", "cannot pin the buffer", err);
    }
    *out = (lab_pinned){p, bytes, LAB_IN_PLACE, p, len};
    return 0;
}

extern "C" int lab_register(void *data, size_t bytes, lab_pinned *out)
{
    if (!out || !data || bytes == 0)
        return failed(out, "lab_register", "need data, bytes > 0 and an out", cudaSuccess);
    /* exactly the caller's bytes: CUDA counts registrations by byte range, so another range on the same page
     * stays free to register (the system locks whole pages either way) */
    cudaError_t err = cudaHostRegister(data, bytes, cudaHostRegisterDefault);
    if (err == cudaErrorHostMemoryAlreadyRegistered)
        return failed(out, "lab_register", "these bytes overlap a range already registered", err);
    if (err != cudaSuccess)
        return failed(out, "lab_register", "cannot pin the range", err);
    *out = (lab_pinned){data, bytes, LAB_REGISTERED, data, bytes};
    return 0;
}

extern "C" void lab_unpin(lab_pinned *b)
{
    if (!b || !b->base)
        return;
    switch (b->method) {
    case LAB_AT_ALLOC:
    case LAB_BY_COPY:
        XL_CHECK(cudaFreeHost(b->base));
        break;
    case LAB_IN_PLACE:
        XL_CHECK(cudaHostUnregister(b->base)); /* before free: the pages must not stay locked */
        free(b->base);
        break;
    case LAB_REGISTERED:
        XL_CHECK(cudaHostUnregister(b->base)); /* the caller frees its memory */
        break;
    }
    memset(b, 0, sizeof *b);
}

extern "C" long lab_breakeven(double pin_ms, size_t bytes, double pinned_gbps, double pageable_gbps)
{
    if (pin_ms <= 0)
        return 0;
    if (isnan(pin_ms) || bytes == 0 || !(pinned_gbps > 0) || !(pageable_gbps > 0)) /* !(x > 0): NaN too */
        return -1;
    double saved_ms = bytes * 1e-6 / pageable_gbps - bytes * 1e-6 / pinned_gbps; /* per transfer */
    if (!(saved_ms > 0))
        return -1;
    double n = ceil(pin_ms / saved_ms);
    return n < 0x1p63 ? (long)n : -1; /* 2^63 and more (infinity too) do not fit in a long */
}
