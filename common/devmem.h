/* devmem.h - preparing device memory so that every stream sees it ready.
 *
 * Part of xferlab's common library. cudaMemset and cudaMemcpy on device memory
 * may return before the GPU has done them, and they are ordered only with the
 * legacy default stream: work on a non-blocking stream (every stream the kit
 * and the labs create) can run before them. Graders and explorers prepare
 * memory through these helpers instead, which finish before they return.
 */
#ifndef XL_DEVMEM_H
#define XL_DEVMEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xl_dev_fill - sets bytes of device memory dev to byte; done, for every stream, when it returns. Checked. */
void xl_dev_fill(void *dev, int byte, size_t bytes);

/* xl_dev_upload - copies bytes from host (any kind of host memory) to device memory dev; done, for every
 * stream, when it returns. Checked. */
void xl_dev_upload(void *dev, const void *host, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
