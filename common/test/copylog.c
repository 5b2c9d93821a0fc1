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
