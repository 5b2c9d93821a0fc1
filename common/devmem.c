/* devmem.c - device memory prepared before the call returns (see devmem.h). */
#include "devmem.h"

#include <cuda_runtime_api.h>

#include "check.h"

void xl_dev_fill(void *dev, int byte, size_t bytes)
{
    XL_CHECK(cudaMemset(dev, byte, bytes));
    XL_CHECK(cudaDeviceSynchronize()); /* a non-blocking stream would not wait for the memset */
}

void xl_dev_upload(void *dev, const void *host, size_t bytes)
{
    XL_CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    XL_CHECK(cudaDeviceSynchronize()); /* from pageable memory cudaMemcpy returns before the copy lands */
}
