/* memlog.c - tests of common/memlog: every prefetch, advice, memset and <<< >>> launch recorded in order while a record is
 * open, and an advice failing on demand (common/faults). Needs a GPU (skipped without); the prefetch tests need one
 * that can prefetch managed memory (cudaDevAttrConcurrentManagedAccess). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "common/copylog.h"
#include "common/delay.h"
#include "common/faults.h"
#include "common/gpu.h"
#include "common/memlog.h"

#define BYTES ((size_t)3 << 20) /* a managed range of several 2 MiB blocks */

/* device - the current device, after skipping the test where there is no GPU (or, when prefetch, none that can
 * prefetch managed memory) */
static int device(int prefetch)
{
    char why[512];
    int dev = 0, concurrent = 0;
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    cr_assert(cudaGetDevice(&dev) == cudaSuccess);
    cr_assert(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev) == cudaSuccess);
    if (prefetch && !concurrent)
        cr_skip_test("this GPU cannot prefetch managed memory (cudaDevAttrConcurrentManagedAccess 0)");
    return dev;
}

/* prefetch - cudaMemPrefetchAsync of p to the device dev, or to the host when dev is cudaCpuDeviceId, in the
 * toolkit's own form */
static cudaError_t prefetch(const void *p, size_t bytes, int dev, cudaStream_t s)
{
#if CUDART_VERSION >= 13000
    struct cudaMemLocation to = {cudaMemLocationTypeDevice, dev}, home = {cudaMemLocationTypeHost, 0};
    return cudaMemPrefetchAsync(p, bytes, dev == cudaCpuDeviceId ? home : to, 0, s);
#else
    return cudaMemPrefetchAsync(p, bytes, dev, s);
#endif
}

/* advise - cudaMemAdvise of p for the device dev, or the host when dev is cudaCpuDeviceId, in the toolkit's own form */
static cudaError_t advise(const void *p, size_t bytes, enum cudaMemoryAdvise advice, int dev)
{
#if CUDART_VERSION >= 13000
    struct cudaMemLocation to = {cudaMemLocationTypeDevice, dev}, home = {cudaMemLocationTypeHost, 0};
    return cudaMemAdvise(p, bytes, advice, dev == cudaCpuDeviceId ? home : to);
#else
    return cudaMemAdvise(p, bytes, advice, dev);
#endif
}

#define LOC_HOST 2 /* cudaMemLocationTypeHost (named from CUDA 12.2 on) */

Test(memlog, records_a_prefetch_there_and_back_on_its_stream)
{
    int dev = device(1);
    char *m;
    cudaStream_t s;
    xl_mem_rec r[2];
    cr_assert(cudaMallocManaged((void **)&m, BYTES, cudaMemAttachGlobal) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    memset(m, 1, BYTES);
    xl_memlog_start(r, 2);
    cr_assert(prefetch(m + 100, BYTES - 200, dev, s) == cudaSuccess);
    cr_assert(prefetch(m, BYTES, cudaCpuDeviceId, s) == cudaSuccess);
    int n = xl_memlog_stop();
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(n == 2, "2 prefetches, counted %d", n);
    cr_assert(r[0].kind == XL_MEM_PREFETCH && r[0].ptr == m + 100 && r[0].bytes == BYTES - 200,
              "the range as asked, not rounded to pages (got %zu bytes)", r[0].bytes);
    cr_assert(r[0].loc_type == cudaMemLocationTypeDevice && r[0].loc_id == dev && r[0].stream == s &&
                  r[0].flags == 0 && r[0].result == cudaSuccess,
              "to this GPU on s (got type %d id %d)", r[0].loc_type, r[0].loc_id);
    cr_assert(r[1].kind == XL_MEM_PREFETCH && r[1].loc_type == LOC_HOST && r[1].loc_id == 0 && r[1].stream == s,
              "back to the host on s (got type %d id %d)", r[1].loc_type, r[1].loc_id);
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaFree(m) == cudaSuccess);
}

Test(memlog, records_each_advice_with_its_location)
{
    int dev = device(0);
    char *m;
    xl_mem_rec r[3];
    cr_assert(cudaMallocManaged((void **)&m, BYTES, cudaMemAttachGlobal) == cudaSuccess);
    xl_memlog_start(r, 3);
    cr_assert(advise(m, BYTES, cudaMemAdviseSetReadMostly, dev) == cudaSuccess);
    cr_assert(advise(m, BYTES, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId) == cudaSuccess);
    cr_assert(advise(m + 4096, BYTES - 4096, cudaMemAdviseSetAccessedBy, dev) == cudaSuccess);
    int n = xl_memlog_stop();
    cr_assert(n == 3, "3 advices, counted %d", n);
    for (int k = 0; k < 3; k++)
        cr_assert(r[k].kind == XL_MEM_ADVISE && r[k].result == cudaSuccess, "record %d: an advice that succeeded", k);
    cr_assert(r[0].advice == cudaMemAdviseSetReadMostly && r[0].ptr == m && r[0].bytes == BYTES, "read-mostly first");
    cr_assert(r[1].advice == cudaMemAdviseSetPreferredLocation && r[1].loc_type == LOC_HOST && r[1].loc_id == 0,
              "preferred location the host (got type %d id %d)", r[1].loc_type, r[1].loc_id);
    cr_assert(r[2].advice == cudaMemAdviseSetAccessedBy && r[2].loc_type == cudaMemLocationTypeDevice &&
                  r[2].loc_id == dev && r[2].ptr == m + 4096 && r[2].bytes == BYTES - 4096,
              "accessed by this GPU, the range as asked (got type %d id %d)", r[2].loc_type, r[2].loc_id);
    cr_assert(cudaFree(m) == cudaSuccess);
}

Test(memlog, records_a_launch_with_its_shape_and_stream)
{
    device(0);
    cudaStream_t s;
    xl_mem_rec r[1];
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    xl_memlog_start(r, 1);
    xl_delay(s, 1000); /* a <<<1, 1, 0, s>>> launch */
    int n = xl_memlog_stop();
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(n == 1, "1 launch, counted %d", n);
    cr_assert(r[0].kind == XL_MEM_LAUNCH && r[0].stream == s && r[0].grid == 1 && r[0].block == 1 &&
                  r[0].result == cudaSuccess,
              "a launch of 1 block of 1 thread on s (got %s, %u blocks of %u)", xl_mem_kind_name(r[0].kind),
              r[0].grid, r[0].block);
    cr_assert(cudaStreamDestroy(s) == cudaSuccess);
}

Test(memlog, orders_calls_among_the_copies_of_an_open_copy_record)
{
    int dev = device(1);
    char *m, *d, host[256];
    cudaStream_t s;
    xl_mem_rec r[3];
    xl_copy_rec c[2];
    cr_assert(cudaMallocManaged((void **)&m, BYTES, cudaMemAttachGlobal) == cudaSuccess);
    cr_assert(cudaMalloc((void **)&d, sizeof host) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    memset(host, 3, sizeof host);
    xl_copylog_start(c, 2);
    xl_memlog_start(r, 3);
    cr_assert(prefetch(m, BYTES, dev, s) == cudaSuccess);
    cr_assert(cudaMemcpyAsync(d, host, sizeof host, cudaMemcpyHostToDevice, s) == cudaSuccess);
    xl_delay(s, 1000);
    cr_assert(cudaMemcpyAsync(host, d, sizeof host, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    cr_assert(prefetch(m, BYTES, cudaCpuDeviceId, s) == cudaSuccess);
    int n = xl_memlog_stop(), copies = xl_copylog_stop();
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(n == 3 && copies == 2, "3 calls and 2 copies (got %d and %d)", n, copies);
    cr_assert(r[0].kind == XL_MEM_PREFETCH && r[1].kind == XL_MEM_LAUNCH && r[2].kind == XL_MEM_PREFETCH,
              "prefetch, launch, prefetch in the order asked (got %s, %s, %s)", xl_mem_kind_name(r[0].kind),
              xl_mem_kind_name(r[1].kind), xl_mem_kind_name(r[2].kind));
    cr_assert(r[0].copies_before == 0 && r[1].copies_before == 1 && r[2].copies_before == 2,
              "before any copy, after the first, after both (got %d, %d, %d)", r[0].copies_before,
              r[1].copies_before, r[2].copies_before);
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaFree(d) == cudaSuccess && cudaFree(m) == cudaSuccess);
}

Test(memlog, counts_calls_past_max_and_records_nothing_while_closed)
{
    int dev = device(0);
    char *m;
    xl_mem_rec r[2], blank;
    memset(r, 0xab, sizeof r);
    memset(&blank, 0xab, sizeof blank);
    cr_assert(cudaMallocManaged((void **)&m, BYTES, cudaMemAttachGlobal) == cudaSuccess);
    cr_assert(advise(m, BYTES, cudaMemAdviseSetReadMostly, dev) == cudaSuccess); /* before: not recorded */
    xl_delay(0, 1000);
    xl_memlog_start(r, 1);
    cr_assert(xl_memlog_count() == 0, "a new record is empty");
    cr_assert(advise(m, BYTES, cudaMemAdviseUnsetReadMostly, dev) == cudaSuccess);
    xl_delay(0, 1000); /* counted, not kept */
    cr_assert(advise(m, BYTES, cudaMemAdviseSetAccessedBy, dev) == cudaSuccess); /* counted, not kept */
    cr_assert(xl_memlog_count() == 3, "3 calls so far, counted %d", xl_memlog_count());
    int n = xl_memlog_stop();
    cr_assert(advise(m, BYTES, cudaMemAdviseUnsetAccessedBy, dev) == cudaSuccess); /* after: not recorded */
    xl_delay(0, 1000);
    cr_assert(cudaDeviceSynchronize() == cudaSuccess);
    cr_assert(n == 3, "3 calls while open, counted %d", n);
    cr_assert(xl_memlog_count() == 0, "closed: the count is 0");
    cr_assert(r[0].kind == XL_MEM_ADVISE && r[0].advice == cudaMemAdviseUnsetReadMostly, "the first call kept");
    cr_assert(memcmp(&r[1], &blank, sizeof blank) == 0, "nothing written past max, nor while closed");
    cr_assert(cudaFree(m) == cudaSuccess);
}

Test(memlog, an_armed_fault_fails_the_advice_as_out_of_memory)
{
    int dev = device(0);
    char *m;
    int mostly = -1;
    xl_mem_rec r[2];
    cr_assert(cudaMallocManaged((void **)&m, BYTES, cudaMemAttachGlobal) == cudaSuccess);
    xl_memlog_start(r, 2);
    xl_fail_create_after(0); /* the next create, this advice, fails */
    cudaError_t e = advise(m, BYTES, cudaMemAdviseSetReadMostly, dev);
    int fired = xl_fault_fired();
    cr_assert(e == cudaErrorMemoryAllocation, "the advice fails as out of memory (got %s)", cudaGetErrorName(e));
    cr_assert(fired, "the failure is reported as fired");
    cr_assert(cudaGetLastError() == cudaErrorMemoryAllocation && cudaGetLastError() == cudaSuccess,
              "the runtime's last error is the shortage, not sticky");
    cr_assert(cudaMemRangeGetAttribute(&mostly, sizeof mostly, cudaMemRangeAttributeReadMostly, m, BYTES) ==
                  cudaSuccess && mostly == 0,
              "the advice was not given (read-mostly %d)", mostly);
    cr_assert(advise(m, BYTES, cudaMemAdviseSetReadMostly, dev) == cudaSuccess, "it fails once: the next succeeds");
    int n = xl_memlog_stop();
    cr_assert(n == 2 && r[0].kind == XL_MEM_ADVISE && r[0].result == cudaErrorMemoryAllocation &&
                  r[1].result == cudaSuccess,
              "both recorded, the failed one with its error (got %d calls, %s)", n, cudaGetErrorName(r[0].result));
    cr_assert(cudaFree(m) == cudaSuccess);
}

Test(memlog, records_memsets_with_range_and_stream)
{
    device(0);
    char *d;
    size_t pitch = 0;
    cudaStream_t s;
    xl_mem_rec r[4];
    cr_assert(cudaMallocPitch((void **)&d, &pitch, 1000, 8) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    cr_assert(cudaMemset(d, 1, 16) == cudaSuccess); /* before: not recorded */
    xl_memlog_start(r, 4);
    cr_assert(cudaMemset(d + 3, 0, 100) == cudaSuccess);
    cr_assert(cudaMemsetAsync(d, 7, 200, s) == cudaSuccess);
    cr_assert(cudaMemset2D(d, pitch, 0, 1000, 8) == cudaSuccess);
    cr_assert(cudaMemset2DAsync(d, pitch, 0, 999, 7, s) == cudaSuccess);
    int n = xl_memlog_stop();
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(n == 4, "4 memsets while open, counted %d", n);
    for (int k = 0; k < 4; k++)
        cr_assert(r[k].kind == XL_MEM_SET && r[k].result == cudaSuccess, "record %d is a memset that worked", k);
    cr_assert(r[0].ptr == d + 3 && r[0].bytes == 100 && r[0].stream == NULL, "cudaMemset's range, no stream");
    cr_assert(r[1].ptr == d && r[1].bytes == 200 && r[1].stream == s, "cudaMemsetAsync's range and stream");
    cr_assert(r[2].bytes == pitch * 8 && r[3].bytes == pitch * 7 && r[3].stream == s, "2D: pitch x height bytes");
    cr_assert(strcmp(xl_mem_kind_name(XL_MEM_SET), "memset") == 0);
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaFree(d) == cudaSuccess);
}

#if CUDART_VERSION >= 12020 && CUDART_VERSION < 13000
Test(memlog, records_the_int_and_v2_forms_alike)
{
    int dev = device(1);
    char *m;
    cudaStream_t s;
    xl_mem_rec r[4];
    struct cudaMemLocation to = {cudaMemLocationTypeDevice, dev}, home = {cudaMemLocationTypeHost, 0};
    cr_assert(cudaMallocManaged((void **)&m, BYTES, cudaMemAttachGlobal) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    xl_memlog_start(r, 4);
    cr_assert(cudaMemAdvise(m, BYTES, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId) == cudaSuccess);
    cr_assert(cudaMemAdvise_v2(m, BYTES, cudaMemAdviseSetPreferredLocation, home) == cudaSuccess);
    cr_assert(cudaMemPrefetchAsync(m, BYTES, dev, s) == cudaSuccess);
    cr_assert(cudaMemPrefetchAsync_v2(m, BYTES, to, 0, s) == cudaSuccess);
    int n = xl_memlog_stop();
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(n == 4, "4 calls, counted %d", n);
    for (int k = 0; k < 4; k += 2)
        cr_assert(r[k].kind == r[k + 1].kind && r[k].loc_type == r[k + 1].loc_type &&
                      r[k].loc_id == r[k + 1].loc_id && r[k].stream == r[k + 1].stream,
                  "record %d (int form) and %d (_v2) alike (types %d and %d, ids %d and %d)", k, k + 1,
                  r[k].loc_type, r[k + 1].loc_type, r[k].loc_id, r[k + 1].loc_id);
    cr_assert(r[0].loc_type == LOC_HOST && r[2].loc_type == cudaMemLocationTypeDevice && r[2].loc_id == dev);
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaFree(m) == cudaSuccess);
}
#endif
