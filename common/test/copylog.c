/* copylog.c - tests of common/copylog: every cudaMemcpy and cudaMemcpyAsync recorded while a record is open.
 * Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/copylog.h"
#include "common/gpu.h"

Test(copylog, records_copies_in_order_while_open)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    char *host = malloc(1 << 16);
    void *dev;
    cudaStream_t s;
    xl_copy_rec r[2];
    cr_assert(host && cudaMalloc(&dev, 1 << 16) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    cr_assert(cudaMemcpy(dev, host, 16, cudaMemcpyHostToDevice) == cudaSuccess); /* before: not recorded */
    xl_copylog_start(r, 2);
    cr_assert(cudaMemcpy(dev, host, 100, cudaMemcpyHostToDevice) == cudaSuccess);
    cr_assert(cudaMemcpyAsync(host, dev, 200, cudaMemcpyDefault, s) == cudaSuccess);
    cr_assert(xl_copylog_count() == 2, "2 copies so far");
    cr_assert(cudaMemcpyAsync(host, dev, 300, cudaMemcpyDeviceToHost, s) == cudaSuccess); /* counted, not kept */
    int n = xl_copylog_stop();
    cr_assert(cudaMemcpy(dev, host, 16, cudaMemcpyHostToDevice) == cudaSuccess); /* after: not recorded */
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(n == 3, "3 copies while open, counted %d", n);
    cr_assert(r[0].bytes == 100 && r[0].async == 0 && r[0].stream == 0 && xl_copy_dir(&r[0]) == cudaMemcpyHostToDevice);
    cr_assert(r[1].bytes == 200 && r[1].async == 1 && r[1].stream == s && r[1].dst == host,
              "the second copy as asked: 200 bytes on the stream");
    cr_assert(xl_copy_dir(&r[1]) == cudaMemcpyDeviceToHost, "cudaMemcpyDefault resolved from the pointers");
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaFree(dev) == cudaSuccess);
    free(host);
}

Test(copylog, counts_source_pages_never_written)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = 256 * page, half = bytes / 2;
    char *host = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* fresh pages */
    void *dev;
    xl_copy_rec r[3];
    cr_assert(host != MAP_FAILED && cudaMalloc(&dev, bytes) == cudaSuccess);
    memset(host, 7, half); /* the first half written, the second never touched */
    xl_copylog_start(r, 3);
    cr_assert(cudaMemcpy(dev, host, half, cudaMemcpyHostToDevice) == cudaSuccess);
    cr_assert(cudaMemcpy(dev, host + 1, bytes - 1, cudaMemcpyDefault) == cudaSuccess);
    cr_assert(cudaMemcpy(host + half, dev, half, cudaMemcpyDeviceToHost) == cudaSuccess);
    cr_assert(xl_copylog_stop() == 3);
    cr_assert(r[0].src_untouched == 0, "the written half: %zu pages counted untouched", r[0].src_untouched);
    cr_assert(r[1].src_untouched == bytes / page - half / page, "an unaligned copy of all of it: %zu untouched pages, "
              "not %zu", r[1].src_untouched, bytes / page - half / page);
    cr_assert(r[2].src_untouched == 0, "a device-to-host copy: its source is not host memory");
    cr_assert(cudaFree(dev) == cudaSuccess && munmap(host, bytes) == 0);
}

#if defined(CUDART_VERSION) && CUDART_VERSION >= 12080
/* batch_in - one cudaMemcpyBatchAsync of count copies whose sources are read in the given order (13.0 dropped the
 * failIdx argument) */
static cudaError_t batch_in(void **dsts, void **srcs, size_t *sizes, size_t count, cudaStream_t s,
                            enum cudaMemcpySrcAccessOrder order)
{
    struct cudaMemcpyAttributes attr;
    size_t first = 0;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = order;
#if CUDART_VERSION >= 13000
    return cudaMemcpyBatchAsync((void *const *)dsts, (const void *const *)srcs, sizes, count, &attr, &first, 1, s);
#else
    size_t fail = 0;
    return cudaMemcpyBatchAsync((void *const *)dsts, (const void *const *)srcs, sizes, count, &attr, &first, 1, &fail,
                                s);
#endif
}

/* batch - batch_in in stream order */
static cudaError_t batch(void **dsts, void **srcs, size_t *sizes, size_t count, cudaStream_t s)
{
    return batch_in(dsts, srcs, sizes, count, s, cudaMemcpySrcAccessOrderStream);
}

Test(copylog, counts_batches_apart_from_copies)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    char *host = malloc(1 << 16), *back = malloc(1 << 16);
    char *dev;
    cudaStream_t s, t;
    xl_copy_rec r[4];
    cr_assert(host && back && cudaMalloc((void **)&dev, 1 << 16) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking) == cudaSuccess);
    for (int i = 0; i < 1 << 16; i++)
        host[i] = (char)(i * 7 + 1);
    void *d1[3] = {dev, dev + 1000, dev + 5000}, *s1[3] = {host, host + 1000, host + 5000};
    size_t z1[3] = {100, 300, 7};
    cr_assert(batch(d1, s1, z1, 3, s) == cudaSuccess); /* before: not counted */
    xl_copylog_start(r, 4);
    cr_assert(batch(d1, s1, z1, 3, s) == cudaSuccess);
    cr_assert(cudaMemcpyAsync(dev + 9000, host + 9000, 50, cudaMemcpyHostToDevice, s) == cudaSuccess);
    xl_batch_log mid = xl_copylog_batches();
    void *d2[2] = {back, back + 1000}, *s2[2] = {dev, dev + 1000};
    size_t z2[2] = {100, 300};
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(batch(d2, s2, z2, 2, t) == cudaSuccess);
    cr_assert(cudaStreamSynchronize(t) == cudaSuccess);
    cr_assert(batch_in(d1, s1, z1, 3, t, cudaMemcpySrcAccessOrderDuringApiCall) == cudaSuccess); /* host sources */
    int n = xl_copylog_stop();
    cr_assert(batch(d1, s1, z1, 3, s) == cudaSuccess); /* after: not counted */
    xl_batch_log b = xl_copylog_batches();
    cr_assert(cudaStreamSynchronize(t) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(n == 1 && r[0].bytes == 50, "a batch is not a copy record: 1 cudaMemcpyAsync recorded, got %d", n);
    cr_assert(mid.calls == 1 && mid.copies == 3 && mid.bytes == 407 && mid.stream == s,
              "while open: 1 batch of 3 copies, 407 bytes, on s (got %d calls, %zu copies, %zu bytes)", mid.calls,
              mid.copies, mid.bytes);
    cr_assert(mid.unordered == 0, "a batch in stream order is not counted as unordered");
    cr_assert(b.calls == 3 && b.copies == 8 && b.bytes == 1214 && b.stream == s && b.other_streams == 2,
              "kept after the stop: 3 batches, 8 copies, 1214 bytes, the first on s, two on another stream (got %d, "
              "%zu, %zu, %d)", b.calls, b.copies, b.bytes, b.other_streams);
    cr_assert(b.unordered == 1, "the batch that reads its sources during the call is counted (got %d)", b.unordered);
    cr_assert(memcmp(back, host, 100) == 0 && memcmp(back + 1000, host + 1000, 300) == 0,
              "the batches passed through the wrapper still copy");
    xl_copylog_start(r, 4);
    b = xl_copylog_batches();
    xl_copylog_stop();
    cr_assert(b.calls == 0 && b.copies == 0 && b.bytes == 0, "a new record starts with no batches");
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaStreamDestroy(t) == cudaSuccess);
    cr_assert(cudaFree(dev) == cudaSuccess);
    free(host);
    free(back);
}
#endif

/* copy_ms - one async copy of bytes on s, timed by events around it (the hold, when one applies, inside) */
static float copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t s)
{
    cudaEvent_t a, b;
    float ms = -1;
    cr_assert(cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess);
    cr_assert(cudaEventRecord(a, s) == cudaSuccess);
    cr_assert(cudaMemcpyAsync(dst, src, bytes, kind, s) == cudaSuccess);
    cr_assert(cudaEventRecord(b, s) == cudaSuccess && cudaEventSynchronize(b) == cudaSuccess);
    cr_assert(cudaEventElapsedTime(&ms, a, b) == cudaSuccess);
    cr_assert(cudaEventDestroy(a) == cudaSuccess && cudaEventDestroy(b) == cudaSuccess);
    return ms;
}

Test(copylog, holds_only_the_named_copy_in)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    size_t bytes = 1 << 16;
    char *host = malloc(bytes), *back = malloc(bytes), *dev;
    cudaStream_t s;
    cr_assert(host && back && cudaMalloc((void **)&dev, bytes) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    for (size_t i = 0; i < bytes; i++)
        host[i] = (char)(i * 13 + 5);
    copy_ms(dev, host, bytes, cudaMemcpyHostToDevice, s); /* warm: the first copy's setup is not timed */
    xl_copylog_hold(1, 50000000ull); /* the second copy in from now on waits 50 ms */
    float in0 = copy_ms(dev, host, bytes, cudaMemcpyHostToDevice, s);
    float out = copy_ms(back, dev, bytes, cudaMemcpyDeviceToHost, s); /* not a copy in: not counted */
    float in1 = copy_ms(dev, host, bytes, cudaMemcpyDefault, s);      /* host to device, found from the pointers */
    float in2 = copy_ms(dev, host, bytes, cudaMemcpyHostToDevice, s);
    xl_copylog_hold(-1, 0);
    cr_assert(in0 < 10 && out < 10, "copies before the named one are not held: %.2f and %.2f ms", in0, out);
    cr_assert(in1 >= 45, "the named copy in (the second, cudaMemcpyDefault) waited 50 ms: took %.2f ms", in1);
    cr_assert(in2 < 10, "only the named copy is held: the next took %.2f ms", in2);
    cr_assert(memcmp(back, host, bytes) == 0, "the copies passed through still copy");
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaFree(dev) == cudaSuccess);
    free(host);
    free(back);
}
