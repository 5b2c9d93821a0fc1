/* kit.h - the kit's own measurements and checks that graders compare students against.
 *
 * Course staff only. Everything here runs inside a test's process and fails the
 * test (through XL_CHECK or Criterion) on error. Speed is always judged against
 * these figures measured in the same run, never against a fixed time.
 */
#ifndef XL_KIT_H
#define XL_KIT_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "common/stats.h"

/* One cudaMemcpy, as a work function for xl_time_gpu. */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    enum cudaMemcpyKind kind;
} kit_copy;

/* kit_copy_work - xl_work_fn doing one cudaMemcpy of *(kit_copy *)ctx (legacy default stream) */
void kit_copy_work(cudaStream_t stream, void *ctx);

/* kit_time_copy - the kit's timing of cudaMemcpy: warmup runs, then the median of reps, on stream 0 */
void kit_time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, int warmup, int reps,
                   xl_timing *out);

/* kit_host_alloc - malloc'd host memory, filled with XL_POISON_BYTE (every page touched); fails the test on OOM */
void *kit_host_alloc(size_t bytes);

/* kit_dev_alloc - cudaMalloc'd memory filled with XL_POISON_BYTE */
void *kit_dev_alloc(size_t bytes);

/* kit_expect_dev_bytes - fails the test unless dev[0..bytes) equals want and the guard bytes after it
 * still hold the poison; what names the operation in the message */
void kit_expect_dev_bytes(const void *dev, const void *want, size_t bytes, size_t guard, const char *what);

/* kit_expect_host_bytes - the same for host memory */
void kit_expect_host_bytes(const void *host, const void *want, size_t bytes, size_t guard, const char *what);

#endif
