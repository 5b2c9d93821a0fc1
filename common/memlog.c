/* memlog.c - records every prefetch, advice, memset and <<< >>> launch while a record is open (see memlog.h).
 *
 * Programs linked with the Makefile's WRAP call the __wrap_ functions below instead of the runtime's. Which calls
 * exist depends on the toolkit, so the wrappers are chosen by CUDART_VERSION: CUDA 13 has the location forms only
 * (and cudaMemPrefetchBatchAsync); CUDA 12 has the int-device forms, and from 12.2 on the location forms as _v2.
 * A --wrap of a name no object calls is ignored by the linker, so the one WRAP list serves both. The advice wrappers
 * also ask common/faults.h, so that a grader can make an advice fail as out of memory (advice counts as a create).
 */
#include "memlog.h"

#include <cuda_runtime_api.h>

#include "copylog.h"
#include "faults.h"
#include "reclog.h"

static xl_reclog calls = XL_RECLOG_INIT;

void xl_memlog_start(xl_mem_rec *recs, int max)
{
    xl_reclog_start(&calls, recs, sizeof *recs, max);
}

int xl_memlog_stop(void)
{
    return xl_reclog_stop(&calls);
}

int xl_memlog_count(void)
{
    return xl_reclog_count(&calls);
}

const char *xl_mem_kind_name(xl_mem_kind kind)
{
    switch (kind) {
    case XL_MEM_PREFETCH: return "prefetch";
    case XL_MEM_PREFETCH_BATCH: return "batch prefetch";
    case XL_MEM_ADVISE: return "advice";
    case XL_MEM_LAUNCH: return "launch";
    case XL_MEM_SET: return "memset";
    default: return "unknown";
    }
}

/* note - appends r to the open record, if any (counted beyond max, not kept); fills in copies_before */
static void note(xl_mem_rec r)
{
    r.copies_before = xl_copylog_count(); /* before our lock: the copy record has its own */
    xl_reclog_note(&calls, &r);
}

/* note_range - notes one prefetch or advice of [ptr, ptr + bytes) at location (type, id) */
static void note_range(xl_mem_kind kind, const void *ptr, size_t bytes, int loc_type, int loc_id, int advice,
                       unsigned long long flags, cudaStream_t stream, cudaError_t result)
{
    xl_mem_rec r = {.kind = kind, .ptr = ptr, .bytes = bytes, .loc_type = loc_type, .loc_id = loc_id,
                    .advice = advice, .flags = flags, .stream = stream, .result = result};
    note(r);
}

/* ===== Launches: every <<< >>> calls __cudaPushCallConfiguration (C linkage) in the caller's object ===== */

unsigned __real___cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream);

/* __wrap___cudaPushCallConfiguration - the launch's configuration, noted in the open record; same result */
unsigned __wrap___cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream)
{
    xl_mem_rec r = {.kind = XL_MEM_LAUNCH, .stream = stream, .grid = grid.x * grid.y * grid.z,
                    .block = block.x * block.y * block.z, .result = cudaSuccess};
    note(r);
    return __real___cudaPushCallConfiguration(grid, block, shmem, stream);
}

cudaError_t __real_cudaMemset(void *p, int value, size_t bytes);
cudaError_t __real_cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream);
cudaError_t __real_cudaMemset2D(void *p, size_t pitch, int value, size_t width, size_t height);
cudaError_t __real_cudaMemset2DAsync(void *p, size_t pitch, int value, size_t width, size_t height,
                                     cudaStream_t stream);

/* __wrap_cudaMemset - cudaMemset, noted in the open record; same result */
cudaError_t __wrap_cudaMemset(void *p, int value, size_t bytes)
{
    cudaError_t e = __real_cudaMemset(p, value, bytes);
    note_range(XL_MEM_SET, p, bytes, 0, 0, 0, 0, NULL, e);
    return e;
}

/* __wrap_cudaMemsetAsync - cudaMemsetAsync, noted in the open record; same result */
cudaError_t __wrap_cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream)
{
    cudaError_t e = __real_cudaMemsetAsync(p, value, bytes, stream);
    note_range(XL_MEM_SET, p, bytes, 0, 0, 0, 0, stream, e);
    return e;
}

/* __wrap_cudaMemset2D - cudaMemset2D, noted in the open record as pitch x height bytes; same result */
cudaError_t __wrap_cudaMemset2D(void *p, size_t pitch, int value, size_t width, size_t height)
{
    cudaError_t e = __real_cudaMemset2D(p, pitch, value, width, height);
    note_range(XL_MEM_SET, p, pitch * height, 0, 0, 0, 0, NULL, e);
    return e;
}

/* __wrap_cudaMemset2DAsync - cudaMemset2DAsync, noted in the open record as pitch x height bytes; same result */
cudaError_t __wrap_cudaMemset2DAsync(void *p, size_t pitch, int value, size_t width, size_t height,
                                     cudaStream_t stream)
{
    cudaError_t e = __real_cudaMemset2DAsync(p, pitch, value, width, height, stream);
    note_range(XL_MEM_SET, p, pitch * height, 0, 0, 0, 0, stream, e);
    return e;
}

/* advice_fault - 1 when the armed fault (faults.h) falls on this advice; *e is then the runtime's out of memory */
static int advice_fault(cudaError_t *e)
{
    if (!xl_fault_due())
        return 0;
    *e = xl_fault_error();
    return 1;
}

#if CUDART_VERSION >= 13000
/* ===== CUDA 13: the location forms, and the batch prefetch ===== */

cudaError_t __real_cudaMemPrefetchAsync(const void *p, size_t bytes, struct cudaMemLocation loc, unsigned int flags,
                                        cudaStream_t stream);
cudaError_t __real_cudaMemAdvise(const void *p, size_t bytes, enum cudaMemoryAdvise advice, struct cudaMemLocation loc);
cudaError_t __real_cudaMemPrefetchBatchAsync(void **ptrs, size_t *sizes, size_t count, struct cudaMemLocation *locs,
                                             size_t *loc_idxs, size_t nlocs, unsigned long long flags,
                                             cudaStream_t stream);

/* __wrap_cudaMemPrefetchAsync - cudaMemPrefetchAsync, noted in the open record; same result */
cudaError_t __wrap_cudaMemPrefetchAsync(const void *p, size_t bytes, struct cudaMemLocation loc, unsigned int flags,
                                        cudaStream_t stream)
{
    cudaError_t e = __real_cudaMemPrefetchAsync(p, bytes, loc, flags, stream);
    note_range(XL_MEM_PREFETCH, p, bytes, loc.type, loc.id, 0, flags, stream, e);
    return e;
}

/* __wrap_cudaMemAdvise - cudaMemAdvise, or the armed fault (faults.h) instead; noted in the open record; same
 * result */
cudaError_t __wrap_cudaMemAdvise(const void *p, size_t bytes, enum cudaMemoryAdvise advice, struct cudaMemLocation loc)
{
    cudaError_t e;
    if (!advice_fault(&e))
        e = __real_cudaMemAdvise(p, bytes, advice, loc);
    note_range(XL_MEM_ADVISE, p, bytes, loc.type, loc.id, advice, 0, NULL, e);
    return e;
}

/* __wrap_cudaMemPrefetchBatchAsync - cudaMemPrefetchBatchAsync, noted as one record (its first range, to its first
 * location) in the open record; same result */
cudaError_t __wrap_cudaMemPrefetchBatchAsync(void **ptrs, size_t *sizes, size_t count, struct cudaMemLocation *locs,
                                             size_t *loc_idxs, size_t nlocs, unsigned long long flags,
                                             cudaStream_t stream)
{
    cudaError_t e = __real_cudaMemPrefetchBatchAsync(ptrs, sizes, count, locs, loc_idxs, nlocs, flags, stream);
    int first = count > 0 && ptrs && sizes, located = nlocs > 0 && locs;
    note_range(XL_MEM_PREFETCH_BATCH, first ? ptrs[0] : NULL, first ? sizes[0] : 0, located ? (int)locs[0].type : 0,
               located ? locs[0].id : 0, 0, flags, stream, e);
    return e;
}

#else
/* ===== CUDA 12: the int-device forms (a device ordinal, or cudaCpuDeviceId), and from 12.2 the _v2 forms ===== */

/* cudaMemLocationTypeHost is 2 from 12.2 on; before that the enum has no name for it, the record the same value */
#define LOC_HOST 2

/* loc_of - CUDA 12's int device as a location: cudaCpuDeviceId the host, an ordinal a device, anything else
 * (cudaInvalidDeviceId) invalid with the number kept */
static void loc_of(int device, int *type, int *id)
{
    *type = device == cudaCpuDeviceId ? LOC_HOST : device >= 0 ? (int)cudaMemLocationTypeDevice : 0;
    *id = device == cudaCpuDeviceId ? 0 : device;
}

cudaError_t __real_cudaMemPrefetchAsync(const void *p, size_t bytes, int device, cudaStream_t stream);
cudaError_t __real_cudaMemAdvise(const void *p, size_t bytes, enum cudaMemoryAdvise advice, int device);

/* __wrap_cudaMemPrefetchAsync - cudaMemPrefetchAsync, noted in the open record; same result */
cudaError_t __wrap_cudaMemPrefetchAsync(const void *p, size_t bytes, int device, cudaStream_t stream)
{
    int type, id;
    cudaError_t e = __real_cudaMemPrefetchAsync(p, bytes, device, stream);
    loc_of(device, &type, &id);
    note_range(XL_MEM_PREFETCH, p, bytes, type, id, 0, 0, stream, e);
    return e;
}

/* __wrap_cudaMemAdvise - cudaMemAdvise, or the armed fault (faults.h) instead; noted in the open record; same
 * result */
cudaError_t __wrap_cudaMemAdvise(const void *p, size_t bytes, enum cudaMemoryAdvise advice, int device)
{
    int type, id;
    cudaError_t e;
    if (!advice_fault(&e))
        e = __real_cudaMemAdvise(p, bytes, advice, device);
    loc_of(device, &type, &id);
    note_range(XL_MEM_ADVISE, p, bytes, type, id, advice, 0, NULL, e);
    return e;
}

#if CUDART_VERSION >= 12020
cudaError_t __real_cudaMemPrefetchAsync_v2(const void *p, size_t bytes, struct cudaMemLocation loc, unsigned int flags,
                                           cudaStream_t stream);
cudaError_t __real_cudaMemAdvise_v2(const void *p, size_t bytes, enum cudaMemoryAdvise advice,
                                    struct cudaMemLocation loc);

/* __wrap_cudaMemPrefetchAsync_v2 - cudaMemPrefetchAsync_v2, noted in the open record as a prefetch; same result */
cudaError_t __wrap_cudaMemPrefetchAsync_v2(const void *p, size_t bytes, struct cudaMemLocation loc, unsigned int flags,
                                           cudaStream_t stream)
{
    cudaError_t e = __real_cudaMemPrefetchAsync_v2(p, bytes, loc, flags, stream);
    note_range(XL_MEM_PREFETCH, p, bytes, loc.type, loc.id, 0, flags, stream, e);
    return e;
}

/* __wrap_cudaMemAdvise_v2 - cudaMemAdvise_v2, or the armed fault (faults.h) instead; noted in the open record as an
 * advice; same result */
cudaError_t __wrap_cudaMemAdvise_v2(const void *p, size_t bytes, enum cudaMemoryAdvise advice,
                                    struct cudaMemLocation loc)
{
    cudaError_t e;
    if (!advice_fault(&e))
        e = __real_cudaMemAdvise_v2(p, bytes, advice, loc);
    note_range(XL_MEM_ADVISE, p, bytes, loc.type, loc.id, advice, 0, NULL, e);
    return e;
}
#endif
#endif
