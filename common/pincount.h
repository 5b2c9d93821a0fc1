/* pincount.h - how much pinned host memory this process holds, counted at the CUDA calls themselves.
 *
 * Part of xferlab's common library. Programs linked with the kit's --wrap flags (the explorers, graders
 * and unit tests; see the Makefile's WRAP) pass every cudaMallocHost, cudaHostAlloc, cudaFreeHost,
 * cudaHostRegister and cudaHostUnregister through common/pincount.c, which counts what succeeded. The code
 * counted needs no change. Graders use it to find pinned memory that was never released.
 */
#ifndef XL_PINCOUNT_H
#define XL_PINCOUNT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What is pinned now. */
typedef struct {
    long allocations;  /* from cudaMallocHost or cudaHostAlloc, not yet freed */
    size_t alloc_bytes;
    long registrations; /* from cudaHostRegister, not yet unregistered */
    size_t reg_bytes;
} xl_pinned;

/* xl_pinned_flags - the flags asked for the pinned memory held that holds p: cudaHostAlloc's (cudaMallocHost's are
 * cudaHostAllocDefault) or cudaHostRegister's; ~0u when no held allocation or registration holds p */
unsigned int xl_pinned_flags(const void *p);

/* xl_pinned_now - the counts so far (all zero in a program not linked with the wrap flags) */
xl_pinned xl_pinned_now(void);

#ifdef __cplusplus
}
#endif

#endif
