/* synclog.c - tests of common/synclog: every device, stream and event synchronize, stream wait and event record
 * noted while a record is open, with its stream, event, thread and place among the copies and launches, from
 * several threads at once. Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>

#include "common/copylog.h"
#include "common/delay.h"
#include "common/gpu.h"
#include "common/memlog.h"
#include "common/synclog.h"
#include "common/threads.h"

/* need_gpu - skips the test where there is no GPU */
static void need_gpu(void)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
}

/* expect_rec - r is a noted kind call on stream s with event e, by thread tid, that succeeded */
static void expect_rec(const xl_sync_rec *r, int k, xl_sync_kind kind, cudaStream_t s, cudaEvent_t e, long tid)
{
    cr_assert(r->kind == kind, "record %d: %s, got %s", k, xl_sync_name(kind), xl_sync_name(r->kind));
    cr_assert(r->stream == s && r->event == e, "record %d (%s): stream %p event %p, got stream %p event %p", k,
              xl_sync_name(kind), (void *)s, (void *)e, (void *)r->stream, (void *)r->event);
    cr_assert(r->tid == tid && r->result == cudaSuccess, "record %d (%s): thread %ld, success; got thread %ld, %s", k,
              xl_sync_name(kind), tid, r->tid, cudaGetErrorString(r->result));
}

Test(synclog, records_each_kind_with_its_stream_and_event)
{
    need_gpu();
    cudaStream_t s, s2;
    cudaEvent_t e, e2;
    xl_sync_rec r[7];
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
              cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) == cudaSuccess);
    cr_assert(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess &&
              cudaEventCreateWithFlags(&e2, cudaEventDisableTiming) == cudaSuccess);
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess); /* before: not recorded */
    xl_synclog_start(r, 6);
    cr_assert(cudaDeviceSynchronize() == cudaSuccess);
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(cudaEventRecord(e, s) == cudaSuccess);
    cr_assert(cudaEventRecordWithFlags(e2, s2, cudaEventRecordDefault) == cudaSuccess);
    cr_assert(cudaStreamWaitEvent(s2, e, 0) == cudaSuccess);
    cr_assert(xl_synclog_count() == 5, "5 calls so far, counted %d", xl_synclog_count());
    cr_assert(cudaEventSynchronize(e2) == cudaSuccess);
    cr_assert(cudaEventRecord(e, 0) == cudaSuccess); /* counted, not kept */
    int n = xl_synclog_stop();
    cr_assert(cudaDeviceSynchronize() == cudaSuccess); /* after: not recorded */
    cr_assert(n == 7, "7 calls while open, counted %d", n);
    cr_assert(xl_synclog_count() == 0, "closed: the count is 0");
    long me = xl_tid();
    expect_rec(&r[0], 0, XL_SYNC_DEVICE, 0, NULL, me);
    expect_rec(&r[1], 1, XL_SYNC_STREAM, s, NULL, me);
    expect_rec(&r[2], 2, XL_SYNC_RECORD, s, e, me);
    expect_rec(&r[3], 3, XL_SYNC_RECORD, s2, e2, me);
    expect_rec(&r[4], 4, XL_SYNC_WAIT_EVENT, s2, e, me);
    expect_rec(&r[5], 5, XL_SYNC_EVENT, 0, e2, me);
    cr_assert(cudaEventDestroy(e) == cudaSuccess && cudaEventDestroy(e2) == cudaSuccess);
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaStreamDestroy(s2) == cudaSuccess);
}

Test(synclog, records_the_result_of_a_call_that_failed)
{
    need_gpu();
    xl_sync_rec r[1];
    cudaStream_t s;
    cudaEvent_t e;
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    cr_assert(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
    xl_synclog_start(r, 1);
    cudaError_t got = cudaStreamWaitEvent(s, e, 0x80); /* no such flag: cudaErrorInvalidValue from the runtime */
    cr_assert(xl_synclog_stop() == 1);
    cudaGetLastError();
    cr_assert(got != cudaSuccess && r[0].result == got, "the record keeps the call's result: %s, noted %s",
              cudaGetErrorString(got), cudaGetErrorString(r[0].result));
    cr_assert(r[0].kind == XL_SYNC_WAIT_EVENT && r[0].stream == s && r[0].event == e, "and the call as asked");
    cr_assert(cudaEventDestroy(e) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess);
}

Test(synclog, places_each_call_among_copies_and_launches)
{
    need_gpu();
    cudaStream_t s;
    cudaEvent_t e;
    void *dev;
    char host[64] = {0};
    xl_sync_rec r[3];
    xl_copy_rec c[4];
    xl_mem_rec m[4];
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    cr_assert(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
    cr_assert(cudaMalloc(&dev, sizeof host) == cudaSuccess);
    xl_copylog_start(c, 4);
    xl_memlog_start(m, 4);
    xl_synclog_start(r, 3);
    cr_assert(cudaEventRecord(e, s) == cudaSuccess);                                        /* 0 copies, 0 launches */
    cr_assert(cudaMemcpyAsync(dev, host, sizeof host, cudaMemcpyHostToDevice, s) == cudaSuccess);
    xl_delay(s, 1000);
    cr_assert(cudaMemcpyAsync(host, dev, sizeof host, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    cr_assert(cudaEventRecord(e, s) == cudaSuccess);                                        /* 2 copies, 1 launch */
    xl_delay(s, 1000);
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);                                     /* 2 copies, 2 launches */
    int n = xl_synclog_stop();
    xl_memlog_stop();
    xl_copylog_stop();
    cr_assert(n == 3, "3 calls, counted %d", n);
    int want[3][2] = {{0, 0}, {2, 1}, {2, 2}};
    for (int k = 0; k < 3; k++)
        cr_assert(r[k].copies_before == want[k][0] && r[k].launches_before == want[k][1],
                  "call %d (%s): after %d copies and %d launches, noted %d and %d", k, xl_sync_name(r[k].kind),
                  want[k][0], want[k][1], r[k].copies_before, r[k].launches_before);
    cr_assert(cudaFree(dev) == cudaSuccess && cudaEventDestroy(e) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess);
}

/* ===== From several threads ===== */

#define PER_THREAD 200 /* calls each thread makes: a record, a stream wait, a synchronize, in turn */

struct asker {
    cudaStream_t stream;
    cudaEvent_t event;
    long tid;
    int failed; /* a call that did not succeed */
};

static void *asker_main(void *arg)
{
    struct asker *a = arg;
    a->tid = xl_tid();
    for (int i = 0; i < PER_THREAD; i++) {
        cudaError_t e = i % 3 == 0 ? cudaEventRecord(a->event, a->stream)
                        : i % 3 == 1 ? cudaStreamWaitEvent(a->stream, a->event, 0)
                                     : cudaStreamSynchronize(a->stream);
        a->failed += e != cudaSuccess;
    }
    return NULL;
}

Test(synclog, records_every_call_of_two_threads_with_its_thread)
{
    need_gpu();
    struct asker a[2] = {{0}};
    pthread_t t[2];
    xl_sync_rec *r = calloc(2 * PER_THREAD, sizeof *r);
    cr_assert(r);
    for (int k = 0; k < 2; k++)
        cr_assert(cudaStreamCreateWithFlags(&a[k].stream, cudaStreamNonBlocking) == cudaSuccess &&
                  cudaEventCreateWithFlags(&a[k].event, cudaEventDisableTiming) == cudaSuccess);
    xl_synclog_start(r, 2 * PER_THREAD);
    for (int k = 0; k < 2; k++)
        cr_assert(pthread_create(&t[k], NULL, asker_main, &a[k]) == 0);
    for (int k = 0; k < 2; k++)
        cr_assert(pthread_join(t[k], NULL) == 0);
    int n = xl_synclog_stop();
    cr_assert(a[0].failed == 0 && a[1].failed == 0, "every call succeeded (%d and %d failed)", a[0].failed,
              a[1].failed);
    cr_assert(n == 2 * PER_THREAD, "%d calls from two threads, counted %d", 2 * PER_THREAD, n);
    cr_assert(a[0].tid != a[1].tid, "two threads, two ids");
    int seen[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        int k = r[i].tid == a[0].tid ? 0 : r[i].tid == a[1].tid ? 1 : -1;
        cr_assert(k >= 0, "record %d: thread %ld is neither asker (%ld, %ld)", i, r[i].tid, a[0].tid, a[1].tid);
        int j = seen[k]++; /* this thread's j-th call, in its own order */
        xl_sync_kind want = j % 3 == 0 ? XL_SYNC_RECORD : j % 3 == 1 ? XL_SYNC_WAIT_EVENT : XL_SYNC_STREAM;
        expect_rec(&r[i], i, want, a[k].stream, want == XL_SYNC_STREAM ? NULL : a[k].event, a[k].tid);
    }
    cr_assert(seen[0] == PER_THREAD && seen[1] == PER_THREAD, "each thread's calls all noted: %d and %d", seen[0],
              seen[1]);
    for (int k = 0; k < 2; k++)
        cr_assert(cudaEventDestroy(a[k].event) == cudaSuccess && cudaStreamDestroy(a[k].stream) == cudaSuccess);
    free(r);
}
