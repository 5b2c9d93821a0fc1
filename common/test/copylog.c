/* copylog.c - tests of common/copylog: every cudaMemcpy and cudaMemcpyAsync recorded while a record is open.
 * Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>

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
