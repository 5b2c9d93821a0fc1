/* pool.h - a fixed team of host threads that runs one job at a time on all of them.
 *
 * Part of xferlab's common library; pure CPU code with unit tests (common/test/pool.c). Lab 07's packer packs and
 * unpacks pieces with it, and its explorer measures the host's copy rate with it (xl_pool_memcpy). The caller is
 * thread 0 of every job: xl_pool_run hands the job to the other threads, runs its own share and returns when all
 * have returned. Between jobs the other threads spin for a short while, 1 ms (a job that follows soon starts in
 * well under a microsecond), and then sleep on a futex (one that comes later pays a wake-up: tens to over a hundred
 * microseconds in a virtual machine).
 * Within a job, threads hand work to each other with progress counters (xl_pool_post, xl_pool_wait), which only
 * spin: nothing in a job sleeps or wakes. One caller at a time: a pool is not for jobs from several threads.
 */
#ifndef XL_POOL_H
#define XL_POOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XL_POOL_MAX 12  /* most threads in a pool, the caller's included: a host copy is bound by memory well before
                         * this (on the H100 host 8 threads copied 64 MiB at 81 to 91 GB/s, 12 at 68 to 70) */
#define XL_POOL_SPARE 2 /* cores xl_pool_default_threads leaves free, for the CUDA driver's threads and the OS */

typedef struct xl_pool xl_pool;

/* A job's function: runs once on every thread, thread = 0 .. threads - 1 (0 is the caller of xl_pool_run). */
typedef void (*xl_pool_fn)(int thread, int threads, void *ctx);

/* A progress counter for one job: set n to 0 before xl_pool_run, then post and wait on it only. A plain long
 * touched through atomic builtins, so that it is the same type in C and in CUDA C++. */
typedef struct {
    long n;
} xl_pool_count;

/* xl_pool_default_threads - the cores this process may run on (its affinity mask) less XL_POOL_SPARE, clamped to
 * 1..XL_POOL_MAX */
int xl_pool_default_threads(void);

/* xl_pool_create - a pool of threads threads in all, the caller counted as thread 0 (threads - 1 are started
 * here); NULL with a one-line message on stderr, and nothing left running, for threads < 1 or > XL_POOL_MAX or
 * when a thread or memory cannot be had. The caller frees it with xl_pool_destroy. */
xl_pool *xl_pool_create(int threads);

/* xl_pool_run - runs fn(t, threads, ctx) on every thread t of p (the caller runs t = 0) and returns when every
 * one has returned; what the threads wrote is then visible to the caller. A pool of 1 thread just calls
 * fn(0, 1, ctx). */
void xl_pool_run(xl_pool *p, xl_pool_fn fn, void *ctx);

/* xl_pool_threads - the number of threads of p, the caller's included */
int xl_pool_threads(const xl_pool *p);

/* xl_pool_destroy - stops and joins p's threads (between jobs) and frees p; NULL does nothing */
void xl_pool_destroy(xl_pool *p);

/* xl_pool_post - adds 1 to *c; what this thread wrote before is visible to a thread whose xl_pool_wait sees the
 * new count (release) */
void xl_pool_post(xl_pool_count *c);

/* xl_pool_wait - spins (with the processor's pause hint) until *c reaches target; then what the posting threads
 * wrote before their posts is visible (acquire) */
void xl_pool_wait(const xl_pool_count *c, long target);

/* xl_pool_memcpy - memcpy of bytes bytes from src to dst (no overlap) split into one contiguous slice per thread
 * of p, each copied with xl_stream_copy; the host's copy rate with the threads it uses. Small copies (under 256
 * KiB) are done by the caller alone: waking the threads would cost more than it saves. */
void xl_pool_memcpy(xl_pool *p, void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
