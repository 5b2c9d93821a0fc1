/* streamcopy.h - a memcpy for large copies that writes whole cache lines with streaming stores.
 *
 * Part of xferlab's common library; pure CPU code with unit tests (common/test/streamcopy.c). Lab 07's packer
 * and xl_pool_memcpy (common/pool.h) copy with it. A plain store first reads the line it writes into the cache
 * (a read for ownership), so a large memcpy moves three bytes over the memory bus for every two it copies; a
 * streaming (non-temporal) store writes a whole 64-byte line straight to memory and skips that read, and it
 * leaves the cache to the data that is still wanted. On x86-64 it uses SSE2's _mm_stream_si128; elsewhere it is
 * memcpy.
 */
#ifndef XL_STREAMCOPY_H
#define XL_STREAMCOPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies shorter than this are a plain memcpy (the reason is in streamcopy.c). */
#define XL_STREAM_MIN_BYTES ((size_t)4096)

/* xl_stream_copy - copies bytes bytes from src to dst (they must not overlap; any alignment). From
 * XL_STREAM_MIN_BYTES on, the whole 64-byte lines of dst are written with streaming stores, the parts before the
 * first and after the last with memcpy, and a store fence follows: when it returns, every byte is visible to
 * other cores and to devices that read memory (a copy engine), like that of any store. */
void xl_stream_copy(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
