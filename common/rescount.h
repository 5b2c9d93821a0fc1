/* rescount.h - how many device buffers, streams and events this process holds, counted at the CUDA calls.
 *
 * Part of xferlab's common library, beside pincount.h (pinned host memory). Programs linked with the kit's
 * --wrap flags (every explorer, grader and unit test; see the Makefile's WRAP) pass every cudaMalloc,
 * cudaMallocManaged, cudaFree, cudaStreamCreate*, cudaStreamDestroy, cudaEventCreate* and cudaEventDestroy
 * through common/rescount.c, which counts what succeeded. Graders use it to find what a student's code
 * created and never released; the code counted needs no change. Each create first asks common/faults.h whether
 * it must fail (graders reach a create's failure paths that way).
 */
#ifndef XL_RESCOUNT_H
#define XL_RESCOUNT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What is held now. */
typedef struct {
    long dev_allocations; /* cudaMalloc / cudaMallocManaged, not yet freed */
    size_t dev_bytes;
    long streams;         /* created, not yet destroyed */
    long events;
} xl_resources;

/* xl_resources_now - the counts so far (all zero in a program not linked with the wrap flags) */
xl_resources xl_resources_now(void);

/* How a buffer still held was made. */
typedef enum { XL_ALLOC_UNKNOWN = 0, XL_ALLOC_DEVICE, XL_ALLOC_MANAGED } xl_alloc_kind;

/* xl_buffer_kind - XL_ALLOC_DEVICE when ptr is the start of a buffer cudaMalloc made and not yet freed,
 * XL_ALLOC_MANAGED for cudaMallocManaged's (then *flags, when flags is not NULL, is the flags it was given:
 * cudaMemAttachGlobal or cudaMemAttachHost), XL_ALLOC_UNKNOWN otherwise (a pointer inside a buffer too) */
xl_alloc_kind xl_buffer_kind(const void *ptr, unsigned int *flags);

#ifdef __cplusplus
}
#endif

#endif
