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

#include "common/copylog.h"
#include "common/memlog.h"
#include "common/peerlog.h"
#include "common/pincount.h"
#include "common/rescount.h"
#include "common/stats.h"
#include "common/synclog.h"

/* kit_time_copy - the kit's timing of cudaMemcpy: warmup runs, then the median of reps, on stream 0 */
void kit_time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, int warmup, int reps,
                   xl_timing *out);

/* kit_tail_guarded - bytes of zeroed host memory that end where a page no one may touch begins, so that code reading
 * or writing past their end crashes at once (a loop that runs one piece too far); fails the test when it cannot be
 * made. kit_tail_guarded_free(p, bytes) gives it back. */
void *kit_tail_guarded(size_t bytes);
void kit_tail_guarded_free(void *p, size_t bytes);

/* kit_host_alloc - malloc'd host memory, filled with XL_POISON_BYTE (every page touched); fails the test on OOM */
void *kit_host_alloc(size_t bytes);

/* kit_pinned_alloc - cudaMallocHost'd memory filled with XL_POISON_BYTE; fails the test on error */
void *kit_pinned_alloc(size_t bytes);

/* kit_is_pinned - 1 when the CUDA runtime knows p as page-locked host memory, 0 when it is pageable */
int kit_is_pinned(const void *p);
/* kit_is_write_combined - 1 when p lies in pinned memory allocated write-combined (cudaHostAllocWriteCombined), whose
 * host reads bypass the caches; 0 otherwise (pageable memory too) */
int kit_is_write_combined(const void *p);

/* kit_is_mapped - 1 when host is mapped pinned memory: the runtime knows it as page-locked host memory, its
 * cudaHostGetFlags include cudaHostAllocMapped and cudaHostGetDevicePointer gives its device pointer (into *dev, when
 * dev is not NULL); else 0, *dev NULL and no CUDA error left. Registered memory (cudaHostRegister) has no flags to
 * read: 0 */
int kit_is_mapped(const void *host, void **dev);

/* kit_is_managed - 1 when the runtime knows p as managed memory (cudaMallocManaged); else 0, no CUDA error left */
int kit_is_managed(const void *p);

/* kit_stream - a new non-blocking stream (it does not wait for, or hold up, the legacy default stream) */
cudaStream_t kit_stream(void);

/* kit_dev_alloc - cudaMalloc'd memory filled with XL_POISON_BYTE, the fill done for every stream on return */
void *kit_dev_alloc(size_t bytes);

/* kit_expect_dev_bytes - fails the test unless dev[0..bytes) equals want and the guard bytes after it
 * still hold the poison; what names the operation in the message */
void kit_expect_dev_bytes(const void *dev, const void *want, size_t bytes, size_t guard, const char *what);

/* kit_expect_pinned_alloc - alloc of 1, 4097, 64 MiB + 3 bytes and a fresh odd size from 256 MiB to 1 GiB must give
 * writable page-locked memory that is not write-combined, released by release (which must also take NULL); name is
 * the student's function, why says what pageable memory would cost in this lab */
void kit_expect_pinned_alloc(void *(*alloc)(size_t bytes), void (*release)(void *p), const char *name,
                             const char *why);

/* kit_awkward_sizes - sizes that catch off-by-one, page and tail bugs: 1 byte to 64 MiB + 1 */
extern const size_t kit_awkward_sizes[];
extern const size_t kit_n_awkward;

/* kit_ms_beside_busy - runs call(ctx) while an unrelated busy_ns kernel runs on the legacy default stream
 * and returns how long call took in ms; then ends that kernel early (nothing is timed after the call) and waits for
 * the device. A call that waits for the whole
 * device, for the legacy default stream, or queues its work on a blocking stream (cudaStreamCreate's, which
 * waits for the legacy stream) takes at least busy_ns. */
double kit_ms_beside_busy(void (*call)(void *ctx), void *ctx, uint64_t busy_ns);

/* kit_ms_beside_busy_each - kit_ms_beside_busy for n calls in a row beside one unrelated busy_ns kernel on the
 * legacy default stream: call(ctx, k) for k = 0 .. n - 1, the time of each into ms[k]; returns the time of all n
 * (ms), then ends the kernel early and waits for the device. A call that waits for the whole device or the legacy stream, or waits
 * for work it queued on a blocking stream, returns only when the kernel has ended, so the total is then at least
 * busy_ns less the time from the kernel's launch to the first call; its own ms[k] shows which call it was. */
double kit_ms_beside_busy_each(void (*call)(void *ctx, int k), void *ctx, int n, uint64_t busy_ns, double *ms);

/* A narrow-wait test: the unrelated kernel kit_ms_beside_busy runs, and the time a call that waits for its own
 * work only (a few ms of it) stays under: half the kernel. */
#define KIT_OTHER_NS 300000000ull
#define KIT_NARROW_MS 150.0

/* kit_expect_host_bytes - the same for host memory */
void kit_expect_host_bytes(const void *host, const void *want, size_t bytes, size_t guard, const char *what);

/* ===== Contract coverage: the rules of docs/grading.md ("What every grader checks") ===== */

/* kit_rand_int - a fresh random integer in [lo, hi], both included: a contract parameter is varied over its whole
 * range, never passed one fixed value (state the values drawn in every failure message) */
long kit_rand_int(long lo, long hi);

/* kit_rand - kit_rand_int for sizes and other unsigned 64-bit values (lo when hi <= lo): splitmix64, seeded fresh in
 * each test's process, so that many draws are cheap */
uint64_t kit_rand(uint64_t lo, uint64_t hi);

/* kit_wrapping_count - a fresh count of elements of elem_bytes each (a power of two, 2 or more) whose bytes, count *
 * elem_bytes, wrap past 2^64 in a size_t to under 16 KiB: a create that multiplies without checking gets a tiny
 * buffer where it must fail as out of memory */
size_t kit_wrapping_count(size_t elem_bytes);

/* What a process holds that a student's code can create and forget. */
typedef struct {
    xl_pinned pinned;   /* pinned allocations and registrations (common/pincount) */
    xl_resources res;   /* device buffers, streams, events (common/rescount) */
    size_t heap;        /* host memory from malloc in use (mallinfo2: this thread's arena and large blocks) */
} kit_held;

/* A call may leave this much more host heap in use (the CUDA runtime's own lazy setup); a host buffer of a
 * test's size that was never freed is larger. */
#define KIT_HEAP_SLACK ((size_t)4 << 20)
/* A create and its destroy, repeated, may leave at most this many bytes a call on the host heap: the smallest
 * block malloc hands out is 32 bytes, so a struct or array that is never freed leaves more; the CUDA runtime's own
 * tables may grow a little as calls repeat (an earlier per-call check saw 17 to 27 bytes a cycle once; this check,
 * with 16, passed the references of labs 02, 04, 05 and 06 on an H100; 24 keeps a margin). */
#define KIT_HEAP_PER_CALL 24
#define KIT_HEAP_ROUNDS 3   /* rounds of that check: it fails when every round grew (lab 10's create, which starts
                             * threads, grew 816 then 2448 bytes over two rounds of 21 on an H100, a burst in each) */
#define KIT_REPEAT_MIN 8    /* repeats in each round of that check: at least, */
#define KIT_REPEAT_MAX 64   /* at most, */
#define KIT_REPEAT_MS 150.0 /* and about this long a round */
#define KIT_FAIL_PATH_MS 20.0 /* a create at most this long has its last failure path repeated in those rounds too
                               * (lab 10's, which starts threads and cuBLAS, takes longer: its first path only) */

/* kit_heap_now - host heap bytes in use (mallinfo2: every arena's chunks and the blocks malloc mapped on their own),
 * as kit_held counts it */
size_t kit_heap_now(void);

/* kit_expect_unchanged - fails unless the n items of size bytes at p equal copy, taken before a call that takes them
 * as a pointer to const (a job, points, pieces); what names the call and its arguments, item the items ("points") */
void kit_expect_unchanged(const void *p, const void *copy, int n, size_t size, const char *what, const char *item);

/* kit_held_now - the counts now (it first makes the kit's own pinned word that ends the narrow-wait tests' kernel
 * early, once a process, so that it never counts as a call's) */
kit_held kit_held_now(void);

/* kit_expect_released - fails unless nothing more is held now than at before: every pinned buffer,
 * registration, device buffer, stream and event made since was released, and the host heap grew by at most
 * KIT_HEAP_SLACK; what names the calls made since (e.g. "lab_pool_create, two lab_pool_get and lab_pool_destroy") */
void kit_expect_released(kit_held before, const char *what);

/* kit_expect_no_heap_leak - attempt (0 when it worked) again, in KIT_HEAP_ROUNDS rounds of KIT_REPEAT_MIN to
 * KIT_REPEAT_MAX calls: fails, naming what and saying hint, when the host heap grew by more than KIT_HEAP_PER_CALL a
 * call in every round (a round or two can be the CUDA runtime or the C library growing a table of their own; a leak
 * in every call grows every round, by at least the 32 bytes of malloc's smallest block a call). The first call's
 * stderr is shown; the rounds' is kept out of the output (a refusal's line, many times over). */
void kit_expect_no_heap_leak(int (*attempt)(void *ctx), void *ctx, const char *what, const char *hint);

/* kit_expect_create_failures - the failure paths of a create, every one: attempt(ctx) is called with its first
 * create (a device or pinned allocation, a stream, an event, an advice) failing as out of memory, then its second,
 * and so on, until it makes all its creates without a failure. attempt returns 1 when the call under test reported the
 * failure (NULL, -1), 0 when it succeeded (it then releases what it got). Each failed attempt must report the
 * failure, hold nothing afterwards and leave no CUDA error for the next check to find; the full attempt must
 * succeed, and repeated in KIT_HEAP_ROUNDS rounds it must not grow the host heap by more than KIT_HEAP_PER_CALL a
 * call in all of them (memory it mallocs that its destroy does not free: each call's is small, so the calls are
 * repeated); nor may the attempt whose first create fails, repeated so (a struct a failed create forgets), nor,
 * where the full attempt takes at most KIT_FAIL_PATH_MS, the one whose last create fails. what names the call.
 * Returns how many creates the full attempt made. */
long kit_expect_create_failures(int (*attempt)(void *ctx), void *ctx, const char *what);
/* Every attempt, failed or full, is also held to kit_expect_no_device_sync: a failure path that cleans up waits for
 * nothing but its own work (a wait on a stream it never made is one on the legacy stream 0). */

/* kit_expect_create_failures_said - kit_expect_create_failures of a create whose contract fails "with a message":
 * each failed attempt must also write exactly one line on stderr (kit_expect_one_line), whichever create failed.
 * attempt must not quiet stderr itself. */
long kit_expect_create_failures_said(int (*attempt)(void *ctx), void *ctx, const char *what);

/* kit_expect_failure_path_no_leak - kit_expect_no_heap_leak of attempt(ctx) with its create number fail_at + 1
 * failing as out of memory (kit_expect_create_failures checks the first and last paths so; a grader whose creates are
 * quick checks the ones between with this); what names the call */
void kit_expect_failure_path_no_leak(int (*attempt)(void *ctx), void *ctx, long fail_at, const char *what);

/* The arguments a create of shape create(size_t size, int count) is attempted with, by KIT_CREATE_ATTEMPT. */
typedef struct {
    size_t size;
    int count;
} kit_create_args;

/* KIT_CREATE_ATTEMPT - defines the attempt `name` for kit_expect_create_failures (ctx a kit_create_args):
 * create(size, count), then destroy of what it returned; 1 when it returned NULL, else 0 */
#define KIT_CREATE_ATTEMPT(name, create, destroy)                                                                   \
    static int name(void *ctx)                                                                                       \
    {                                                                                                                \
        const kit_create_args *args_ = (const kit_create_args *)ctx;                                                 \
        void *made_ = create(args_->size, args_->count);                                                             \
        if (!made_)                                                                                                  \
            return 1;                                                                                                \
        destroy(made_);                                                                                              \
        return 0;                                                                                                    \
    }

/* KIT_ALLOC_ATTEMPT - defines the attempt `name` for kit_expect_create_failures (ctx a size_t): alloc(bytes), then
 * release of what it returned; 1 when it returned NULL, else 0 */
#define KIT_ALLOC_ATTEMPT(name, alloc, release)                                                                     \
    static int name(void *ctx)                                                                                       \
    {                                                                                                                \
        void *made_ = alloc(*(const size_t *)ctx);                                                                   \
        if (!made_)                                                                                                  \
            return 1;                                                                                                \
        release(made_);                                                                                              \
        return 0;                                                                                                    \
    }

/* kit_expect_not_write_combined - fails when the page-locked p was allocated write-combined
 * (cudaHostAllocWriteCombined): the host reads such memory many times slower than ordinary memory; name is
 * the student's function, for the message */
void kit_expect_not_write_combined(const void *p, const char *name);

/* kit_expect_sources_written - fails when one of the nrec recorded copies (common/copylog.h) read host memory that
 * had never been written into the device: untouched pages read as zeros from one shared page, which makes a host
 * to device copy look faster than one of real data; call names the student's call, for the message */
void kit_expect_sources_written(const xl_copy_rec *recs, int nrec, const char *call);

/* kit_expect_copies_on - fails unless each of the nrec recorded copies (common/copylog.h; the caller keeps nrec
 * within its record) was a cudaMemcpyAsync on stream s: a copy on the legacy stream 0 or another stream ignores
 * the stream the caller handed over; call names the student's call, for the message */
void kit_expect_copies_on(const xl_copy_rec *recs, int nrec, cudaStream_t s, const char *call);

/* kit_expect_launches_on - fails unless the n records (common/memlog.h; the caller keeps n within its record) hold at
 * least one <<< >>> launch and every launch among them was on stream s: a kernel on the legacy stream 0 or another
 * stream ignores the stream the caller handed over; call names the student's call, for the message */
void kit_expect_launches_on(const xl_mem_rec *recs, int n, cudaStream_t s, const char *call);

/* kit_queue_busy_memset - queues on stream busy_ns of GPU work, then sets dev[0 .. bytes) to byte. A student's
 * operation that honours the stream runs after both; one queued on any other stream (the legacy stream
 * included, when stream is non-blocking) runs before the memset lands, and its result is overwritten */
void kit_queue_busy_memset(cudaStream_t stream, uint64_t busy_ns, void *dev, int byte, size_t bytes);

/* kit_queue_busy_copy - queues on stream busy_ns of GPU work, then copies bytes from the device buffer src to
 * the device buffer dst: what a student's operation on stream reads of dst is the copied data only if it
 * runs after the copy, that is, on stream */
void kit_queue_busy_copy(cudaStream_t stream, uint64_t busy_ns, void *dst, const void *src, size_t bytes);

/* kit_guarded - a copy of the bytes at src (bytes >= 1) in memory of its own that ends right where an unreadable page
 * begins: code that reads or writes past the end of an array it was handed crashes there, at once, instead of
 * reading whatever lies beyond. Aligned as the end allows (bytes a multiple of 8: 8-byte aligned). Fails the test when
 * it cannot be made. Release with kit_guarded_free. */
void *kit_guarded(const void *src, size_t bytes);
/* kit_guarded_free - releases what kit_guarded(p's source, bytes) gave; NULL does nothing */
void kit_guarded_free(void *p, size_t bytes);

/* kit_quiet_begin - sends this process's stderr to /dev/null until kit_quiet_end(returned value): around a call the
 * grader makes to fail on purpose (a bad path, too few points), so that the line the student's code rightly prints
 * there does not read as a problem in the grading's output. -1 when stderr could not be set aside (nothing then) */
int kit_quiet_begin(void);
/* kit_quiet_end - stderr back as it was before kit_quiet_begin returned saved */
void kit_quiet_end(int saved);

/* kit_guarded_call - runs call(ctx), a student call under watch: every CUDA create in it fails as out of memory
 * (common/faults.h), and a failed CUDA check in it leaves the call with its message in failure (len bytes) instead of
 * failing the test. Afterwards creates work again and a failed check fails the test. *created is 1 when the call
 * tried to create something (the error the kit planted cleared), *stopped 1 when a check failed in it. */
void kit_guarded_call(void (*call)(void *ctx), void *ctx, int *created, int *stopped, char *failure, size_t len);

/* ===== More than one GPU (lab 09) ===== */

/* kit_use_device - makes device d current (cudaSetDevice, checked) and notes that the test uses it (xl_gpu_used), so
 * that a speed check asks about other processes there too. Set the device before queueing on a stream of it: the
 * kit's kernels (xl_delay, kit_queue_busy_*), its fills and its event records run on the current device. */
void kit_use_device(int d);

/* kit_peer_enabled - 1 when peer access from device a to device b (a != b) is enabled in this process now, else 0;
 * the truth, asked of the runtime itself: with a current, an enable of b that finds it already enabled; one that
 * succeeds is undone at once. Past the peer record, the denials and the faults (common/peerlog.h); the current device
 * and the last error (none) are as they were. */
int kit_peer_enabled(int a, int b);

/* kit_peer_reset - every direction between this process's GPUs disabled (those not enabled are left so, their error
 * cleared), the current device kept: a fresh peer state for a test, whatever an earlier part of it left */
void kit_peer_reset(void);

/* One copy of device memory as a call asked for it, from the peer record and the copy record merged. */
typedef struct {
    const char *call;        /* "cudaMemcpyPeerAsync", "cudaMemcpyPeer", "cudaMemcpyAsync" or "cudaMemcpy" */
    void *dst;
    int dst_dev;             /* peer copies: as passed; the others: the device the pointer belongs to (-1: host) */
    const void *src;
    int src_dev;
    size_t bytes;
    cudaStream_t stream;     /* 0 for the blocking calls */
    int async;               /* 1: queued on stream; 0: cudaMemcpyPeer or cudaMemcpy (the legacy stream, blocking) */
    enum cudaMemcpyKind dir; /* the real direction (xl_copy_dir; peer copies DeviceToDevice) */
} kit_dev_copy;

/* kit_dev_copies - the n peer records and m copy records of one watched stretch merged in call order into out (up
 * to max, the caller's; peer records other than copies are left out): every copy, whatever call made it; returns
 * how many */
int kit_dev_copies(const xl_peer_rec *peer, int n, const xl_copy_rec *copies, int m, kit_dev_copy *out, int max);

/* kit_capture_begin - sends this process's stderr into a file of the kit's until kit_capture_end(returned value),
 * which gives back what was written there (the student's lines, to be counted). -1 when it could not be set aside
 * (nothing then; kit_capture_end(-1, ...) gives ""). */
int kit_capture_begin(void);
/* kit_capture_end - stderr back as it was before kit_capture_begin returned saved; what was written meanwhile into
 * text (len bytes, cut there, NUL-terminated; its last character is '\n' exactly when the output's was); the number
 * of lines it held (a last line without '\n' counts) */
int kit_capture_end(int saved, char *text, size_t len);
/* kit_expect_one_line - the rule of every contract that refuses or fails "with a message": fails unless a call that
 * returned returned ("NULL", "-1") wrote exactly one line on stderr, lines of them (kit_capture_end's), text (its
 * words, shown on one line in the message), ended by a newline; call names the
 * call, its arguments and why it returned that. Nothing is judged when saved (kit_capture_begin's answer) is -1:
 * stderr could not be captured. */
void kit_expect_one_line(int saved, int lines, const char *text, const char *call, const char *returned);

/* ===== Waits, streams and threads (lab 10) ===== */

/* kit_expect_no_device_sync - fails when one of the n recorded waits (common/synclog.h; the caller keeps n within its
 * record) waited for the whole device (cudaDeviceSynchronize) or touched the legacy stream 0 (a cudaStreamSynchronize,
 * an event record or a stream wait on it): a loop that waits for everything holds up, and is held up by, work that
 * is not its own; call names the student's call, for the message */
void kit_expect_no_device_sync(const xl_sync_rec *recs, int n, const char *call);

/* kit_expect_no_host_wait - fails when one of the n recorded calls (common/synclog.h; n within the caller's record)
 * waited on the host: a cudaDeviceSynchronize, cudaStreamSynchronize or cudaEventSynchronize (a stream wait or an
 * event record orders work on the GPU and is fine); call names the student's call, rule says what its contract asks
 * instead, for the message */
void kit_expect_no_host_wait(const xl_sync_rec *recs, int n, const char *call, const char *rule);

/* kit_same_stream - 1 when a and b are one stream (0 and cudaStreamLegacy both name the legacy stream) */
int kit_same_stream(cudaStream_t a, cudaStream_t b);

/* kit_expect_nonblocking_streams - fails unless each of the n recorded copies (common/copylog.h) was a
 * cudaMemcpyAsync on a stream other than 0 made with cudaStreamNonBlocking (cudaStreamGetFlags): a stream made by
 * cudaStreamCreate waits for the legacy stream, and anything there, every time; call names the student's call */
void kit_expect_nonblocking_streams(const xl_copy_rec *recs, int n, const char *call);

#endif
