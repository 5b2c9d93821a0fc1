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

/* kit_time_copy - the kit's timing of cudaMemcpy: warmup runs, then the median of reps, on stream 0 */
void kit_time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, int warmup, int reps,
                   xl_timing *out);

/* kit_host_alloc - malloc'd host memory, filled with XL_POISON_BYTE (every page touched); fails the test on OOM */
void *kit_host_alloc(size_t bytes);

/* kit_pinned_alloc - cudaMallocHost'd memory filled with XL_POISON_BYTE; fails the test on error */
void *kit_pinned_alloc(size_t bytes);

/* kit_is_pinned - 1 when the CUDA runtime knows p as page-locked host memory, 0 when it is pageable */
int kit_is_pinned(const void *p);

/* kit_stream - a new non-blocking stream (it does not wait for, or hold up, the legacy default stream) */
cudaStream_t kit_stream(void);

/* kit_dev_alloc - cudaMalloc'd memory filled with XL_POISON_BYTE */
void *kit_dev_alloc(size_t bytes);

/* kit_expect_dev_bytes - fails the test unless dev[0..bytes) equals want and the guard bytes after it
 * still hold the poison; what names the operation in the message */
void kit_expect_dev_bytes(const void *dev, const void *want, size_t bytes, size_t guard, const char *what);

/* kit_expect_pinned_alloc - alloc of 1, 4097 and 64 MiB + 3 bytes must give writable page-locked memory,
 * released by release (which must also take NULL); name is the student's function, why says what pageable
 * memory would cost in this lab */
void kit_expect_pinned_alloc(void *(*alloc)(size_t bytes), void (*release)(void *p), const char *name,
                             const char *why);

/* kit_awkward_sizes - sizes that catch off-by-one, page and tail bugs: 1 byte to 64 MiB + 1 */
extern const size_t kit_awkward_sizes[];
extern const size_t kit_n_awkward;

/* kit_ms_beside_busy - runs call(ctx) while an unrelated busy_ns kernel runs on another (blocking) stream
 * and returns how long call took in ms; waits for the device afterwards. A call that waits for the whole
 * device, or for the legacy default stream, takes at least busy_ns. */
double kit_ms_beside_busy(void (*call)(void *ctx), void *ctx, uint64_t busy_ns);

/* kit_expect_host_bytes - the same for host memory */
void kit_expect_host_bytes(const void *host, const void *want, size_t bytes, size_t guard, const char *what);

#endif
