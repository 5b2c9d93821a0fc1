/* 06-pinning.c - the grader of lab 06 (pin at allocation, pin later, pin in place). Course staff only.
 *
 * Peak memory is VmHWM, reset just before each method runs in its test's own process, as a multiple of the
 * buffer. Pinned memory is counted at the CUDA calls themselves (common/pincount.c: this grader is linked
 * with the kit's wrap flags), so a buffer that is never released is found for certain. Copy rates are
 * ratios against the kit's own pinned buffer in the same run.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/devmem.h"
#include "common/faults.h"
#include "common/memacct.h"
#include "common/pincount.h"
#include "common/stats.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/hostwatch.h"
#include "grader/kit.h"
#include "grader/results.h"
#include "labs/06-pinning/lab.h"

XL_LAB("06", "pinning");

#define MIB ((size_t)1 << 20)
#define PEAK_BYTES (256 * MIB)
#define ONE_MIN 0.9   /* (a) and (c): the peak rise over the buffer, at least */
#define ONE_MAX 1.25  /* and at most */
#define TWO_MIN 1.8   /* (b): both buffers at once */
#define TWO_MAX 2.3
#define RATE_NEED 90 /* your buffer's copy rate against the kit's pinned buffer */
#define CYCLES 10
/* Each planted mutant loses its target: pageable first, the peak; aliasing, not pinned; no unregister and a
 * leaked buffer, the leak test; an unchecked or page-rounded registration, bad input. The reference's figures and
 * margins on the H100 and H200: refdata/stability/ (docs/instructors.md's table). */

/* page_bytes - the host's page size in bytes, as getpagesize(2) reports it (always positive) */
static size_t page_bytes(void)
{
    return (size_t)getpagesize();
}

/* ===== free, watched: memory freed while it is still page-locked =====
 * While unpin below runs lab_unpin, every block freed (grader/hostwatch.c's free, on any thread) is looked at: one
 * freed while a pinned allocation or registration (common/pincount) still holds it is noted, for that moment the
 * driver keeps locked pages that malloc may hand out again. */
static void *volatile freed_pinned; /* the first block freed while still page-locked, since the watch began */

/* note_freed_pinned - hostwatch_on_free's hook: notes p when it is the first block freed while page-locked */
static void note_freed_pinned(void *p)
{
    if (!freed_pinned && xl_pinned_flags(p) != ~0u)
        freed_pinned = p;
}

/* The three methods and registration, by name. */
typedef int (*pin_fn)(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out);

/* fill_seeded - lab_fill_fn: random bytes from the seed in ctx; counts calls and notes the size asked for, the
 * buffer it was handed and whether that was page-locked already */
typedef struct {
    uint64_t seed;
    int calls;
    size_t asked; /* bytes, at the last call */
    int pinned;   /* the buffer was page-locked (first and last byte), at the last call */
    void *buf;    /* the buffer, at the last call */
} fill_ctx;
/* The malloc block (hostwatch_block_of, under pin_watched or pin_attempt_once's watch) that held the buffer of the
 * last fill, when it was called: NULL when none did (the stack, a mapping of the call's own) */
static void *fill_buf_seen, *fill_block_seen;
static size_t fill_block_bytes;

/* fill_saw - notes one call of a fill on buf, bytes long, in f */
static void fill_saw(fill_ctx *f, void *buf, size_t bytes)
{
    fill_buf_seen = buf;
    fill_block_seen = hostwatch_block_of(buf, &fill_block_bytes);
    if (fill_block_seen && (const char *)buf + bytes > (const char *)fill_block_seen + fill_block_bytes)
        fill_block_seen = NULL; /* the data does not fit in the block */
    f->calls++;
    f->asked = bytes;
    f->buf = buf;
    f->pinned = kit_is_pinned(buf) && kit_is_pinned((const char *)buf + bytes - 1);
}
static void fill_seeded(void *buf, size_t bytes, void *ctx)
{
    fill_saw(ctx, buf, bytes);
    xl_fill_random(buf, bytes, ((fill_ctx *)ctx)->seed);
}

/* A sparse fill, for buffers too large to fill and compare in full in a second: one random 8-byte word in each
 * stretch of SPARSE_STRIDE bytes, at a random place in it (never its first or last 8 bytes), and the buffer's
 * first and last byte; the rest is left as it was. */
#define SPARSE_STRIDE 4096
/* sparse_mix - splitmix64's finaliser of seed and i: the word and place of stretch i */
static uint64_t sparse_mix(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* sparse_at - where stretch i's word lies in the buffer */
static size_t sparse_at(uint64_t seed, size_t i)
{
    return i * SPARSE_STRIDE + 8 + (size_t)(sparse_mix(seed ^ 0x5EED, i) % (SPARSE_STRIDE - 16));
}
/* sparse_end - the first (k = 0) and last (k = 1) byte fill_sparse writes */
static unsigned char sparse_end(uint64_t seed, int k)
{
    return (unsigned char)(sparse_mix(seed, (uint64_t)-1 - (uint64_t)k) >> 24);
}
static void fill_sparse(void *buf, size_t bytes, void *ctx)
{
    fill_ctx *f = ctx;
    unsigned char *b = buf;
    fill_saw(f, buf, bytes);
    for (size_t i = 0; i < bytes / SPARSE_STRIDE; i++) {
        uint64_t w = sparse_mix(f->seed, i);
        memcpy(b + sparse_at(f->seed, i), &w, 8);
    }
    b[0] = sparse_end(f->seed, 0);
    b[bytes - 1] = sparse_end(f->seed, 1);
}

/* expect_sparse - data, bytes long, holds what fill_sparse wrote from seed; what names it, for the message */
static void expect_sparse(const void *data, size_t bytes, uint64_t seed, const char *what)
{
    const unsigned char *d = data;
    for (size_t i = 0; i < bytes / SPARSE_STRIDE; i++) {
        uint64_t w = sparse_mix(seed, i), got;
        size_t at = sparse_at(seed, i);
        memcpy(&got, d + at, 8);
        cr_assert(got == w, "%s: the 8 bytes at offset %zu hold %016llx; fill wrote %016llx there", what, at,
                  (unsigned long long)got, (unsigned long long)w);
    }
    cr_assert(d[0] == sparse_end(seed, 0) && d[bytes - 1] == sparse_end(seed, 1),
              "%s: the first and last byte hold %02x and %02x; fill wrote %02x and %02x", what, d[0], d[bytes - 1],
              sparse_end(seed, 0), sparse_end(seed, 1));
}

/* fill_no_ctx - lab_fill_fn of a producer that keeps its state elsewhere (ctx NULL): counts its calls and notes
 * the ctx it got */
static int no_ctx_calls;
static void *no_ctx_seen;
static void fill_no_ctx(void *buf, size_t bytes, void *ctx)
{
    no_ctx_calls++;
    no_ctx_seen = ctx;
    memset(buf, 0xA5, bytes);
}

/* expect_one_fill - fn (of method) called fill once, for exactly the data's bytes, on the buffer its method names:
 * (a) fills the page-locked buffer that is the data, (b) ordinary memory that is not the data (a copy is made of
 * it) and is freed by the time fn returns (when it came from malloc and the like: fn ran under pin_watched), (c)
 * ordinary memory that is the data, pinned only afterwards; b is what fn gave */
static void expect_one_fill(const fill_ctx *f, size_t bytes, lab_method method, const char *fn, const lab_pinned *b)
{
    cr_assert(f->calls == 1, "%s on %zu bytes called fill %d times; call it once", fn, bytes, f->calls);
    cr_assert(f->asked == bytes,
              "%s on %zu bytes asked fill for %zu bytes: ask the producer for exactly the data's bytes (whatever "
              "the buffer around it holds)",
              fn, bytes, f->asked);
    int want_pinned = method == LAB_AT_ALLOC;
    cr_assert(f->pinned == want_pinned,
              "%s on %zu bytes called fill on memory that was %s: %s", fn, bytes,
              f->pinned ? "page-locked already" : "not page-locked",
              want_pinned ? "(a) allocates page-locked memory first, then fills it"
                          : "lab.h: the data is made in ordinary memory by fill, and only then pinned (by a copy "
                            "into a new pinned buffer, or in place)");
    size_t n = 0;
    if (method == LAB_BY_COPY) {
        cr_assert(f->buf != b->data,
                  "%s on %zu bytes gave as its data the very buffer fill wrote (%p): (b) copies the data into a new "
                  "page-locked buffer and frees the ordinary one; pinning the ordinary one in place is (c)",
                  fn, bytes, f->buf);
        cr_assert(fill_buf_seen == f->buf && fill_block_seen != NULL,
                  "%s on %zu bytes called fill on %p, memory that was no malloc block (the stack, or a mapping of "
                  "its own): lab.h (b): the data is made in ordinary (malloc) memory by fill, at every size", fn,
                  bytes, f->buf);
        cr_assert(hostwatch_block_of(f->buf, &n) == NULL,
                  "%s on %zu bytes returned with the ordinary buffer fill wrote (%p, %zu bytes allocated) still "
                  "allocated: (b) frees it once the data is copied (lab.h)", fn, bytes, f->buf, n);
    } else
        cr_assert(f->buf == b->data,
                  "%s on %zu bytes called fill on %p but gave data %p: %s", fn, bytes, f->buf, b->data,
                  method == LAB_AT_ALLOC ? "(a) fills the page-locked buffer it allocated, and that buffer is the data"
                                         : "(c) pins the very memory fill wrote, in place: no second buffer");
}

/* ===== what a lab call asks of CUDA, recorded: one pinning create, no copy, launch or wait =====
 * calls_begin opens the kit's copy, wait and launch records and arms the kit's create failure (common/faults.h) so
 * that a second create in the call fails: the one create lab.h allows (a pinned allocation for (a) and (b), a
 * cudaHostRegister for (c) and lab_register) passes, and a second one, even one undone before the call returns (a
 * source registered for the copy and unregistered again), is seen. calls_end closes them all and judges. */
#define CALLS_MAX 16
static xl_copy_rec calls_copies[CALLS_MAX];
static xl_sync_rec calls_syncs[CALLS_MAX];
static xl_mem_rec calls_mems[CALLS_MAX];

/* calls_begin - opens the records; creates: how many creates the call may make (1: a pin or register), or -1: not
 * counted (lab_unpin, which may run inside the kit's own create-failure rounds: their arming is left alone) */
static void calls_begin(long creates)
{
    xl_copylog_start(calls_copies, CALLS_MAX);
    xl_synclog_start(calls_syncs, CALLS_MAX);
    xl_memlog_start(calls_mems, CALLS_MAX);
    if (creates >= 0)
        xl_fail_create_after(creates);
}

/* calls_end - closes the records of the call named by what (its arguments in it): it made no more creates than
 * calls_begin allowed (that one failed then: the call's own -1 is not its fault), asked for no CUDA copy (cudaMemcpy,
 * cudaMemcpyAsync, a batch), no kernel launch and no wait or stream ordering; creates is calls_begin's */
static void calls_end(const char *what, long creates)
{
    int fired = creates >= 0 && xl_fault_fired();
    if (creates >= 0)
        xl_fail_create_after(-1);
    int copies = xl_copylog_stop(), syncs = xl_synclog_stop(), mems = xl_memlog_stop();
    xl_batch_log batches = xl_copylog_batches();
    if (fired)
        cudaGetLastError(); /* the grader's own failure: not the call's error to leave */
    cr_assert(fired == 0,
              "%s made more than %ld CUDA create%s (a pinned allocation, cudaHostRegister, a stream, an event or a "
              "device allocation); the grader made the extra one fail. lab.h: each method makes one (a pinned "
              "allocation for (a) and (b), one cudaHostRegister for (c)), lab_register one cudaHostRegister, "
              "lab_unpin none: no other, not even one undone before returning (a source registered for the copy)",
              what, creates, creates == 1 ? "" : "s");
    cr_assert(copies == 0 && batches.calls == 0,
              "%s asked CUDA for %d cop%s (first: %s of %zu bytes on stream %p): lab.h: no CUDA copy, launch or wait "
              "(other work shares the device, and a copy on a stream stands behind it); (b) copies on the CPU (memcpy)",
              what, copies + (int)batches.calls, copies + (int)batches.calls == 1 ? "y" : "ies",
              copies ? (calls_copies[0].async ? "cudaMemcpyAsync" : "cudaMemcpy") : "cudaMemcpyBatchAsync",
              copies ? calls_copies[0].bytes : batches.bytes, copies ? (void *)calls_copies[0].stream : NULL);
    cr_assert(syncs == 0,
              "%s asked for %d wait%s or stream ordering%s (first: %s): lab.h: no CUDA copy, launch or wait; other "
              "work shares the device, and a wait (on the legacy stream 0 above all) stands behind it",
              what, syncs, syncs == 1 ? "" : "s", syncs == 1 ? "" : "s", syncs ? xl_sync_name(calls_syncs[0].kind) : "");
    cr_assert(mems == 0, "%s made %d kernel launch%s, prefetch%s or advice: lab.h: no CUDA copy, launch or wait", what,
              mems, mems == 1 ? "" : "es", mems == 1 ? "" : "es");
}

/* pin_label - the name of a method's function, for messages */
static const char *pin_label(pin_fn pin)
{
    return pin == lab_pin_at_alloc ? "lab_pin_at_alloc" : pin == lab_pin_by_copy ? "lab_pin_by_copy" : "lab_pin_in_place";
}

/* pin_watched - pin(bytes, fill, ctx, out) with this thread's host allocations noted (hostwatch_block_of) and what it
 * asked of CUDA recorded (calls_end: one create, no copy, launch or wait) */
static int pin_watched(pin_fn pin, size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    char what[96];
    hostwatch_begin(0, 0);
    calls_begin(1);
    int rc = pin(bytes, fill, ctx, out);
    hostwatch_end();
    snprintf(what, sizeof what, "%s on %zu bytes", pin_label(pin), bytes);
    calls_end(what, 1);
    return rc;
}

/* register_watched - lab_register(data, bytes, out) with what it asked of CUDA recorded (calls_end: at most one
 * create, its cudaHostRegister; no copy, launch or wait), refused or not */
static int register_watched(void *data, size_t bytes, lab_pinned *out)
{
    char what[96];
    calls_begin(1);
    int rc = lab_register(data, bytes, out);
    snprintf(what, sizeof what, "lab_register on %zu bytes at page offset %zu", bytes,
             (size_t)((uintptr_t)data % page_bytes()));
    calls_end(what, 1);
    return rc;
}

/* expect_pinned_by - after fn (of method) gave b for bytes under pin_watched, the pinned memory held has grown
 * from before as the method says: (a) and (b) by one allocation from the CUDA runtime's pinned allocator
 * (cudaMallocHost or cudaHostAlloc) of at least the data's bytes, and no registration; (c) by one registration
 * (cudaHostRegister) and no pinned allocation, lying inside the block the call allocated for the data when it came
 * from malloc, aligned_alloc and the like (never memory past it: that is the heap's, not the method's) */
static void expect_pinned_by(xl_pinned before, const lab_pinned *b, size_t bytes, lab_method method, const char *fn)
{
    xl_pinned now = xl_pinned_now();
    long allocs = now.allocations - before.allocations, regs = now.registrations - before.registrations;
    size_t page = page_bytes(), whole = (bytes + page - 1) / page * page; /* bytes < SIZE_MAX - page here */
    if (method != LAB_IN_PLACE) {
        cr_assert(allocs == 1 && regs == 0,
                  "%s on %zu bytes made %ld pinned allocations and %ld registrations (cudaHostRegister): %s takes "
                  "its page-locked buffer from the pinned allocator, cudaMallocHost or cudaHostAlloc (one buffer), and "
                  "registers nothing (lab.h)",
                  fn, bytes, allocs, regs, method == LAB_AT_ALLOC ? "(a)" : "(b)");
        cr_assert(now.alloc_bytes - before.alloc_bytes >= bytes,
                  "%s on %zu bytes allocated %zu bytes of pinned memory: too few for the data", fn, bytes,
                  now.alloc_bytes - before.alloc_bytes);
        cr_assert(now.alloc_bytes - before.alloc_bytes <= whole,
                  "%s on %zu bytes allocated %zu bytes of pinned memory, more than the data's %zu bytes rounded up to "
                  "whole pages (%zu): lab.h: a page-locked buffer of the data's size (no power-of-two or cached "
                  "blocks: pinned memory is scarce)", fn, bytes, now.alloc_bytes - before.alloc_bytes, bytes, whole);
        return;
    }
    cr_assert(regs == 1 && allocs == 0,
              "%s on %zu bytes made %ld registrations (cudaHostRegister) and %ld pinned allocations: (c) pins the "
              "memory fill wrote in place, one cudaHostRegister, and allocates no pinned memory (lab.h)",
              fn, bytes, regs, allocs);
    size_t reg = now.reg_bytes - before.reg_bytes, n = 0;
    cr_assert(reg <= whole,
              "%s on %zu bytes registered %zu bytes with cudaHostRegister, more than the data's %zu bytes rounded up "
              "to whole pages (%zu): pin the data's pages, no more (lab.h)", fn, bytes, reg, bytes, whole);
    cr_assert(0 == (uintptr_t)b->data % page,
              "%s on %zu bytes gave data at %p, which is not at the start of a page (%zu bytes): lab.h: (c) makes the "
              "data at the start of a page, in whole pages of its own (aligned_alloc, posix_memalign), since the "
              "system locks whole pages and other heap blocks must not share them", fn, bytes, b->data, page);
    const char *block = hostwatch_block_of(b->data, &n);
    if (!block)
        return; /* not from the malloc family (mmap, say): the system refuses to register pages that are not mapped */
    cr_assert(block + n >= (const char *)b->data + whole,
              "%s on %zu bytes made the data in a block of %zu bytes at %p that ends before the data's last page does "
              "(%zu bytes from %p): lab.h: (c) makes the data in whole pages of its own, so that no other heap block "
              "shares a page it locks", fn, bytes, n, (const void *)block, whole, b->data);
    cr_assert(reg <= n && xl_pinned_flags(block + n) == ~0u && xl_pinned_flags(block - 1) == ~0u,
              "%s on %zu bytes registered %zu bytes with cudaHostRegister, beyond the block of %zu bytes it allocated "
              "for the data (at %p): the memory past that block is the heap's, other blocks malloc hands out; register "
              "only what the method allocated (allocate whole pages if you register whole pages)",
              fn, bytes, reg, n, (const void *)block);
}

/* ===== Part A: the cost model (no GPU needed) ===== */

/* One call of lab_breakeven and its answer. */
typedef struct {
    double pin_ms;
    size_t bytes;
    double pinned, pageable; /* GB/s */
    long want;
} breakeven_case;

/* expect_breakeven - lab_breakeven(c) must give c->want; why says what the case is about, for the message */
static void expect_breakeven(const breakeven_case *c, const char *why)
{
    long got = lab_breakeven(c->pin_ms, c->bytes, c->pinned, c->pageable);
    cr_assert(got == c->want,
              "lab_breakeven(pin %.10g ms, %zu bytes, pinned %.10g GB/s, pageable %.10g GB/s) = %ld, expected %ld: %s",
              c->pin_ms, c->bytes, c->pinned, c->pageable, got, c->want, why);
}

XL_TEST(cost, breakeven, 10, XL_CPU,
        "lab_breakeven: transfers until pinning pays for itself, at exact multiples of the saving, +-1e-6 ms and "
        "one double around them, random cases and the edge cases",
        5)
{
    /* Times that are exact in binary floating point, however the saving is computed: 1e9 bytes take 100 ms at
     * 10 GB/s and 20 ms at 50 GB/s (80 ms saved), 50 ms at 20 GB/s, 125 ms at 8 and 25 ms at 40 GB/s (100 ms
     * saved), 40 ms at 25 GB/s, 2000 ms at 0.5 and 4000 ms at 0.25 GB/s; 5e8 bytes save 40 ms at 50 against 10
     * GB/s. A pin_ms that is an exact multiple of the saving is paid back by exactly that many transfers (ceil, not
     * floor + 1); a hair more needs one more. */
    static const char exact[] = "pin_ms is an exact multiple of the saving per transfer, so that many transfers "
                                "pay it back exactly (n * saving >= pin_ms holds with equality: the ceiling, not "
                                "floor + 1)";
    static const char above[] = "pin_ms is a hair (1e-6 ms) above a multiple of the saving, so one more transfer is "
                                "needed (round up, never to the nearest)";
    static const char below[] = "pin_ms is a hair (1e-6 ms) below a multiple of the saving, so that multiple "
                                "is enough";
    static const struct {
        breakeven_case c;
        const char *why;
    } cases[] = {
        {{80, 1000000000, 50, 10, 1}, exact},          {{160, 1000000000, 50, 10, 2}, exact},
        {{240, 1000000000, 50, 10, 3}, exact},         {{300, 1000000000, 40, 8, 3}, exact},
        {{150, 1000000000, 20, 10, 3}, exact},         {{60, 1000000000, 50, 25, 3}, exact},
        {{4000, 500000000, 50, 10, 100}, exact},       {{480, 2000000000, 50, 10, 3}, exact},
        {{4000, 1000000000, 0.5, 0.25, 2}, exact},
        {{160 + 1e-6, 1000000000, 50, 10, 3}, above},  {{160 - 1e-6, 1000000000, 50, 10, 2}, below},
        {{80 + 1e-6, 1000000000, 50, 10, 2}, above},   {{80 - 1e-6, 1000000000, 50, 10, 1}, below},
        {{4000 + 1e-6, 500000000, 50, 10, 101}, above}, {{4000 - 1e-6, 500000000, 50, 10, 100}, below},
        /* 1 GB at 50 against 10 GB/s saves 80 ms a transfer; 64 MB at 55 against 7 GB/s saves 7.98 ms, so 500 ms
         * takes 62.7, that is 63 transfers */
        {{150, 1000000000, 50, 10, 2}, "150 / 80 = 1.875 transfers"},
        {{170, 1000000000, 50, 10, 3}, "170 / 80 = 2.125 transfers"},
        {{60, 1000000000, 50, 10, 1}, "60 / 80 = 0.75: one transfer is enough"},
        {{500, 64000000, 55, 7, 63}, "500 / 7.98 = 62.7 transfers"},
        {{3000, 1000000000, 0.5, 0.25, 2}, "rates under 1 GB/s are rates too: 3000 / 2000 = 1.5 transfers"},
        {{1e-9, 1000000000, 50, 10, 1}, "any cost above 0 needs at least one transfer"},
        {{1e-300, 1000000000, 50, 10, 1}, "any cost above 0, 1e-300 ms too, needs at least one transfer"},
        {{0, 1000000000, 50, 10, 0}, "pin_ms <= 0 is paid back at once: 0"},
        {{-5, 1000000000, 50, 10, 0}, "pin_ms <= 0 is paid back at once: 0"},
        {{-0.5, 1000000, 50, 10, 0}, "pin_ms <= 0 is paid back at once, a fraction of a ms below 0 too: 0"},
        /* pin_ms <= 0 with each case that is -1 otherwise: 0 comes first, whatever the other arguments */
        {{0, 1000000000, 10, 50, 0}, "pin_ms <= 0 is paid back at once, whatever the other arguments: 0"},
        {{-0.0, 1000000000, 10, 10, 0}, "pin_ms <= 0 (-0.0 too) is paid back at once, whatever the other arguments: 0"},
        {{-5, 0, 50, 10, 0}, "pin_ms <= 0 is paid back at once, whatever the other arguments: 0"},
        {{0, 1000000000, 50, 0, 0}, "pin_ms <= 0 is paid back at once, whatever the other arguments: 0"},
        {{-0.5, 1000000000, -50, 10, 0}, "pin_ms <= 0 is paid back at once, whatever the other arguments: 0"},
        {{100, 1000000000, 10, 50, -1}, "pinned slower than pageable never pays back: -1"},
        {{100, 1000000000, 10, 10, -1}, "pinned no faster than pageable never pays back: -1"},
        {{100, 1000000, 10, 50, -1}, "pinned slower than pageable never pays back, on a 1 MB transfer too (it loses "
                                     "0.08 ms each, under 1 ms): -1"},
        {{100, 1, 10, 50, -1}, "pinned slower than pageable never pays back, on 1 byte too: -1"},
        {{100, 0, 50, 10, -1}, "0 bytes is not a positive argument: -1"},
        {{100, 1000000000, 50, 0, -1}, "a pageable rate of 0 is not a positive argument: -1"},
        {{100, 1000000000, 0, 10, -1}, "a pinned rate of 0 is not a positive argument: -1"},
        {{100, 1000000000, 50, -10, -1}, "a negative rate is not a positive argument: -1"},
        {{100, 1000000000, -50, 10, -1}, "a negative rate is not a positive argument: -1"},
        {{100, 1000000000, -0.5, 10, -1}, "a negative rate is not a positive argument: -1"},
        {{100, 1000000000, 50, -0.5, -1}, "a negative rate is not a positive argument: -1"},
        {{100, 1000000000, -0.0, 10, -1}, "a pinned rate of -0.0 is not a positive argument: -1"},
        {{100, 1000000000, 50, -0.0, -1}, "a pageable rate of -0.0 is not a positive argument: -1"},
        /* not a number, each argument in turn (and pin_ms <= 0 still first); an n past a long's range, on and
         * either side of 2^63 (80 ms saved a transfer, exact in binary) */
        {{NAN, 1000000000, 50, 10, -1}, "a pin_ms that is not a number (NaN): -1"},
        {{100, 1000000000, NAN, 10, -1}, "a pinned rate that is not a number (NaN): -1"},
        {{100, 1000000000, 50, NAN, -1}, "a pageable rate that is not a number (NaN): -1"},
        {{-1, 1000000000, NAN, NAN, 0}, "pin_ms <= 0 is paid back at once, whatever the other arguments: 0"},
        {{80 * 0x1p62, 1000000000, 50, 10, 1L << 62}, "2^62 transfers: a long holds that"},
        {{80 * 0x1p63, 1000000000, 50, 10, -1}, "2^63 transfers do not fit in a long: -1"},
        {{INFINITY, 1000000000, 50, 10, -1}, "an infinite pin_ms is never paid back (no long holds it): -1"},
        /* infinities are numbers, and lab.h rejects only NaN: an infinite pinned rate moves the data in no time, so
         * each transfer saves the whole pageable time */
        {{100, 1000000000, INFINITY, 10, 1}, "an infinite pinned rate is a positive number (lab.h refuses only NaN): "
                                             "each transfer saves the whole 100 ms pageable time, so 1"},
        {{250, 1000000000, INFINITY, 10, 3}, "an infinite pinned rate is a positive number (lab.h refuses only NaN): "
                                             "each transfer saves the whole 100 ms pageable time: 2.5 transfers, 3"},
        {{100, 1000000000, 50, INFINITY, -1}, "an infinite pageable rate is faster than any pinned one: pinned is "
                                              "no faster, -1"},
        {{100, 1000000000, INFINITY, INFINITY, -1}, "both rates infinite: pinned is no faster, -1"},
        {{-INFINITY, 1000000000, 50, 10, 0}, "pin_ms = -infinity is <= 0: paid back at once, 0"},
        {{-INFINITY, 1000000000, NAN, 10, 0}, "pin_ms = -infinity is <= 0, whatever the other arguments: 0"},
        {{1e300, 1, 50, 10, -1}, "1e300 ms at 8e-8 ms saved a transfer: no long holds that count: -1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_breakeven(&cases[i].c, cases[i].why);
    /* Random cases, the answer n drawn first: pin_ms = saving * (n - 1 + f) with f in [0.05, 0.95], far from a
     * whole number of transfers, so any correct formula gives n */
    for (int i = 0; i < 8; i++) {
        breakeven_case c;
        c.bytes = (size_t)kit_rand_int(1, 1L << kit_rand_int(0, 36));
        c.pinned = kit_rand_int(1, 100000) / 100.0;                 /* 0.01 to 1000 GB/s */
        c.pageable = c.pinned * (double)kit_rand_int(10, 990) / 1000.0; /* 1% to 99% of it */
        double saved = c.bytes * 1e-6 / c.pageable - c.bytes * 1e-6 / c.pinned;
        c.want = kit_rand_int(1, 10000);
        c.pin_ms = saved * ((double)c.want - 1 + (double)kit_rand_int(5, 95) / 100.0);
        cr_assert(ceil(c.pin_ms / saved) == (double)c.want, "the grader's own random case is off; run it again");
        char why[160];
        snprintf(why, sizeof why, "drawn at random: each transfer saves %.10g ms, and %.10g / %.10g = %.4f transfers",
                 saved, c.pin_ms, saved, c.pin_ms / saved);
        expect_breakeven(&c, why);
    }
    /* Near boundaries, random: times of a transfer that binary floating point does not hold exactly (the saving a
     * small part of each), and pin_ms a billionth above k savings (k + 1) and a billionth below (k). Every formula in
     * doubles is within about 1e-15 of the saving, so it answers both; one that keeps a time in a float (about 6e-8
     * off) is off by far more than a billionth of the saving and misses one of the two */
    for (int i = 0; i < 8; i++) {
        breakeven_case c;
        double saved;
        do {
            c.bytes = (size_t)kit_rand_int(1000, 1L << kit_rand_int(10, 36));
            c.pinned = kit_rand_int(100, 100000) / 100.0;                       /* 1 to 1000 GB/s */
            c.pageable = c.pinned * (double)kit_rand_int(900, 999) / 1000.0;   /* 90% to 99.9% of it */
            saved = c.bytes * 1e-6 / c.pageable - c.bytes * 1e-6 / c.pinned;
        } while ((double)(float)(c.bytes * 1e-6 / c.pageable) == c.bytes * 1e-6 / c.pageable &&
                 (double)(float)(c.bytes * 1e-6 / c.pinned) == c.bytes * 1e-6 / c.pinned);
        long k = kit_rand_int(1, 100000);
        for (int j = 0; j < 2; j++) {
            char why[320];
            c.pin_ms = saved * (double)k * (j ? 1 - 1e-9 : 1 + 1e-9);
            c.want = j ? k : k + 1;
            cr_assert(ceil(c.pin_ms / saved) == (double)c.want, "the grader's own near-boundary case is off; run it "
                      "again");
            snprintf(why, sizeof why, "each transfer saves %.17g ms (%.17g ms pageable less %.17g ms pinned, in "
                     "doubles), and pin_ms is a billionth %s %ld savings: %s", saved, c.bytes * 1e-6 / c.pageable,
                     c.bytes * 1e-6 / c.pinned, j ? "below" : "above", k,
                     j ? "that many are enough" : "one more is needed (keep the times in doubles: a float is off by "
                                                  "far more than that)");
            expect_breakeven(&c, why);
        }
    }
    /* Exact boundaries, random: pin_ms an exact multiple k of a saving that every formula computes exactly, then the
     * next double above it (k transfers fall short by a hair: k + 1) and below it (k). k up to 4096 in most cases,
     * where a slack of 1e-12 transfers is larger than one unit in the last place; up to 2^40 in the others */
    static const breakeven_case exact_saving[] = {
        {0, 1000000000, 50, 10, 80},  {0, 1000000000, 40, 8, 100}, {0, 1000000000, 20, 10, 50},
        {0, 1000000000, 50, 25, 20},  {0, 500000000, 50, 10, 40},  {0, 2000000000, 50, 10, 160},
        {0, 1000000000, 0.5, 0.25, 2000},
    }; /* want holds the saving per transfer, in ms */
    for (int i = 0; i < 8; i++) {
        breakeven_case c = exact_saving[kit_rand_int(0, (long)(sizeof exact_saving / sizeof exact_saving[0]) - 1)];
        double saved = c.bytes * 1e-6 / c.pageable - c.bytes * 1e-6 / c.pinned;
        cr_assert(saved == (double)c.want, "the grader's own saving is off (%.17g ms); run it again", saved);
        long k = kit_rand_int(1, i < 6 ? 4096 : 1L << 40);
        double at = saved * (double)k;
        static const char *how[3] = {"an exact multiple of the saving: exactly that many transfers pay it back",
                                     "the next double above a multiple of the saving (one unit in the last place): "
                                     "that many transfers fall short by a hair, so one more is needed (the smallest n "
                                     "is exact: no slack, no epsilon)",
                                     "the next double below a multiple of the saving: that multiple is enough"};
        double pins[3] = {at, nextafter(at, INFINITY), nextafter(at, 0)};
        long wants[3] = {k, k + 1, k};
        for (int j = 0; j < 3; j++) {
            char why[320];
            c.pin_ms = pins[j];
            c.want = wants[j];
            cr_assert(ceil(c.pin_ms / saved) == (double)c.want, "the grader's own boundary case is off; run it again");
            snprintf(why, sizeof why, "each transfer saves %.10g ms and pin_ms %.17g is %s", saved, c.pin_ms, how[j]);
            expect_breakeven(&c, why);
        }
    }
}

/* ===== Part B: each method gives pinned, intact data that copies at the pinned rate ===== */

#define SMALL_MAX MIB /* the small sizes reach this */

/* method_name - the name of a lab_method, for messages */
static const char *method_name(lab_method m)
{
    switch (m) {
    case LAB_AT_ALLOC: return "LAB_AT_ALLOC";
    case LAB_BY_COPY: return "LAB_BY_COPY";
    case LAB_IN_PLACE: return "LAB_IN_PLACE";
    case LAB_REGISTERED: return "LAB_REGISTERED";
    }
    return "no method";
}

/* unpin - lab_unpin(b), watched: it must not free memory while that memory is still page-locked (lab.h) */
static void unpin(lab_pinned *b)
{
    lab_method method = b ? b->method : (lab_method)0;
    size_t bytes = b ? b->bytes : 0;
    char what[96];
    freed_pinned = NULL;
    hostwatch_on_free(note_freed_pinned);
    calls_begin(-1);
    lab_unpin(b);
    hostwatch_on_free(NULL);
    snprintf(what, sizeof what, "lab_unpin of a %s buffer of %zu bytes", method_name(method), bytes);
    calls_end(what, -1);
    cr_assert(freed_pinned == NULL,
              "lab_unpin of a %s buffer of %zu bytes called free(%p) while that memory was still page-locked: for "
              "that moment the driver holds pages that malloc may give out again. lab.h: unregister it first "
              "(cudaHostUnregister), then free it",
              method_name(method), bytes, freed_pinned);
}

/* unpin_made - unpin(b) right after pin_watched made b: the host block that call allocated for the data (when the
 * data lies in one: (c)'s, from malloc, aligned_alloc and the like) must be freed by lab_unpin, not kept for a later
 * call (lab.h: after it nothing that the method allocated is left) */
static void unpin_made(lab_pinned *b)
{
    size_t n = 0;
    lab_method method = b->method;
    size_t bytes = b->bytes;
    void *block = b->data ? hostwatch_block_of(b->data, &n) : NULL;
    if (!block) {
        unpin(b);
        return;
    }
    hostwatch_resume(); /* frees forget the blocks noted while b was made */
    unpin(b);
    hostwatch_end();
    size_t left = 0;
    cr_assert(hostwatch_block_of(block, &left) != block,
              "lab_unpin of a %s buffer of %zu bytes left the block of %zu bytes its method allocated for the data "
              "(%p) allocated: lab.h: after lab_unpin nothing that the method allocated is left (free it; do not keep "
              "it for a later call)", method_name(method), bytes, n, block);
}

/* expect_basics - b is what fn gave for bytes: data of that length, out->method naming the method, equal to
 * want, page-locked from its first byte to its last, and not write-combined (the caller reads it) */
static void expect_basics(const lab_pinned *b, size_t bytes, const void *want, lab_method method, const char *fn)
{
    char what[128];
    cr_assert(b->data != NULL && b->bytes == bytes, "%s on %zu bytes gave data %p of %zu bytes", fn, bytes, b->data,
              b->bytes);
    cr_assert(b->method == method,
              "%s on %zu bytes set out->method to %d (%s); it must name the method, %s (%d): lab_unpin chooses the "
              "release by it",
              fn, bytes, (int)b->method, method_name(b->method), method_name(method), (int)method);
    snprintf(what, sizeof what, "%s, %zu bytes: the data", fn, bytes);
    kit_expect_host_bytes(b->data, want, bytes, 0, what);
    cr_assert(kit_is_pinned(b->data) && kit_is_pinned((const char *)b->data + bytes - 1),
              "%s, %zu bytes: the data is not page-locked from its first to its last byte", fn, bytes);
    kit_expect_not_write_combined(b->data, fn);
}

/* expect_device_writes - a copy from the GPU (dev, holding src's bytes) into b's data succeeds and lands: the
 * caller gets ordinary pinned memory, which the GPU writes as well as reads */
static void expect_device_writes(const lab_pinned *b, const void *dev, const void *src, size_t bytes, const char *fn)
{
    char what[160];
    cudaError_t err = cudaMemcpy(b->data, dev, bytes, cudaMemcpyDeviceToHost);
    cr_assert(err == cudaSuccess,
              "%s, %zu bytes: a copy from the GPU into the buffer failed (%s): the caller gets ordinary pinned memory, "
              "which the GPU must be able to write (was it registered read-only?)",
              fn, bytes, cudaGetErrorString(err));
    snprintf(what, sizeof what, "%s, %zu bytes: a copy from the GPU into the buffer (is the GPU allowed to write it?)",
             fn, bytes);
    kit_expect_host_bytes(b->data, src, bytes, 0, what);
}

/* What a copy-rate measurement compares: each copy into its own device buffer. */
typedef struct {
    void *yours, *kits, *dev_yours, *dev_kits;
    size_t bytes;
} rate_ctx;

/* measure_rate - xl_measure_fn: your buffer's H2D rate over the kit's pinned buffer's, interleaved */
static void measure_rate(void *ctx, double *ratio, char *figures, size_t len)
{
    rate_ctx *c = ctx;
    xl_copy_job kit = {c->dev_kits, c->kits, c->bytes, cudaMemcpyHostToDevice};
    xl_copy_job you = {c->dev_yours, c->yours, c->bytes, cudaMemcpyHostToDevice};
    xl_timing tk, ty;
    xl_time_interleaved(xl_memcpy_work, &kit, xl_memcpy_work, &you, 0, 5, &tk, &ty);
    *ratio = tk.median_ms / ty.median_ms;
    xl_sound_timing(tk.min_ms, tk.max_ms, XL_SOUND_SPREAD, "the kit's own pinned copy time (ms)");
    xl_sound_within(*ratio, 0, XL_FASTER_MAX, "your buffer's copy speed against the kit's pinned buffer's");
    snprintf(figures, len, "your buffer %.1f GB/s, the kit's pinned buffer %.1f GB/s: %.0f%%",
             xl_gbps(c->bytes, ty.median_ms), xl_gbps(c->bytes, tk.median_ms), 100 * *ratio);
}

#define DEV_GUARD 64 /* poisoned bytes after the device copy of your buffer */

/* expect_good_buffer - b holds the bytes fill made from seed (method named, pinned end to end, not
 * write-combined) and copies at >= RATE_NEED% of the kit's pinned rate; the bytes your timed copies delivered are
 * checked afterwards by copying them back into your buffer, which also shows that the GPU can write it */
static void expect_good_buffer(const lab_pinned *b, size_t bytes, uint64_t seed, lab_method method, const char *fn)
{
    rate_ctx c = {b->data, kit_pinned_alloc(bytes), kit_dev_alloc(bytes + DEV_GUARD), kit_dev_alloc(bytes), bytes};
    xl_fill_random(c.kits, bytes, seed); /* the kit's buffer holds what yours must hold */
    expect_basics(b, bytes, c.kits, method, fn);
    char what[128];
    snprintf(what, sizeof what, "%s: copy rate from your buffer against the kit's pinned one", fn);
    xl_ratio_check(measure_rate, &c, XL_AT_LEAST_PCT(RATE_NEED), what);
    /* what the timed copies delivered, brought back into your (poisoned) buffer */
    xl_poison(b->data, bytes);
    cudaError_t err = cudaMemcpy(b->data, c.dev_yours, bytes, cudaMemcpyDeviceToHost);
    cr_assert(err == cudaSuccess,
              "%s, %zu bytes: a copy from the GPU into the buffer failed (%s): the caller gets ordinary pinned memory, "
              "which the GPU must be able to write (was it registered read-only?)",
              fn, bytes, cudaGetErrorString(err));
    snprintf(what, sizeof what, "%s, %zu bytes: the bytes your buffer sent in the timed copies, copied back into it",
             fn, bytes);
    kit_expect_host_bytes(b->data, c.kits, bytes, 0, what);
    unsigned char guard[DEV_GUARD];
    XL_CHECK(cudaMemcpy(guard, (char *)c.dev_yours + bytes, DEV_GUARD, cudaMemcpyDeviceToHost));
    cr_assert(xl_check_poison(guard, DEV_GUARD, NULL) == 0,
              "%s, %zu bytes: the timed copies from your buffer wrote past %zu bytes on the GPU", fn, bytes, bytes);
    XL_CHECK(cudaFreeHost(c.kits));
    XL_CHECK(cudaFree(c.dev_yours));
    XL_CHECK(cudaFree(c.dev_kits));
}

/* expect_unpinned_zero - *b is all zero bytes after lab_unpin (lab.h: it zeroes *b); what names the call */
static void expect_unpinned_zero(const lab_pinned *b, const char *what, size_t bytes)
{
    static const lab_pinned zero;
    cr_assert(memcmp(b, &zero, sizeof zero) == 0,
              "after lab_unpin (%s, %zu bytes) the lab_pinned holds data %p, bytes %zu, method %d, base %p, "
              "base_bytes %zu: lab_unpin must zero all of it",
              what, bytes, b->data, b->bytes, (int)b->method, b->base, b->base_bytes);
}

/* check_small - pin on 1 byte, one page, a page + 1, two pages and a random size up to 1 MiB, each on fresh
 * data with fill called once: expect_basics, a copy from the GPU into it lands, and lab_unpin zeroes it and
 * leaves nothing held */
static void check_small(pin_fn pin, const char *fn, lab_method method)
{
    size_t page = page_bytes();
    size_t sizes[] = {1, page, page + 1, 2 * page, (size_t)kit_rand_int(2, SMALL_MAX)};
    unsigned char *src = kit_host_alloc(SMALL_MAX), *want = kit_host_alloc(SMALL_MAX);
    void *dev = kit_dev_alloc(SMALL_MAX);
    xl_fill_random(src, SMALL_MAX, xl_fresh_seed());
    xl_dev_upload(dev, src, SMALL_MAX);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        fill_ctx f = {xl_fresh_seed(), 0, 0, 0, NULL};
        lab_pinned b;
        char what[128];
        kit_held before = kit_held_now();
        cr_assert(pin_watched(pin, n, fill_seeded, &f, &b) == 0, "%s on %zu bytes returned an error (see its message "
                  "above)", fn, n);
        expect_one_fill(&f, n, method, fn, &b);
        expect_pinned_by(before.pinned, &b, n, method, fn);
        xl_fill_random(want, n, f.seed);
        expect_basics(&b, n, want, method, fn);
        expect_device_writes(&b, dev, src, n, fn);
        unpin_made(&b);
        expect_unpinned_zero(&b, fn, n);
        snprintf(what, sizeof what, "%s on %zu bytes and lab_unpin", fn, n);
        kit_expect_released(before, what);
    }
    free(src);
    free(want);
    XL_CHECK(cudaFree(dev));
}

#define HUGE_BYTES ((size_t)1 << 30) /* the largest buffer pinned, and more: a method kept at every size */

/* check_huge - the method on 1 GiB + a random part of a page, filled sparsely (fill_sparse: a full fill and
 * compare would take seconds): still its own method (LAB_BY_COPY copies, whatever the size), fill called once on
 * the buffer the method names, the pinned memory held as the method says, the data where fill put it, pinned
 * from its first byte to its last, not write-combined; lab_unpin zeroes it and leaves nothing held */
static void check_huge(pin_fn pin, const char *fn, lab_method method)
{
    size_t bytes = HUGE_BYTES + (size_t)kit_rand_int(1, (long)page_bytes() - 1);
    fill_ctx f = {xl_fresh_seed(), 0, 0, 0, NULL};
    lab_pinned b;
    char what[128];
    kit_held before = kit_held_now();
    double t0 = xl_now_ms();
    cr_assert(pin_watched(pin, bytes, fill_sparse, &f, &b) == 0, "%s on %zu bytes (1 GiB and more) returned an error "
              "(see its message above)", fn, bytes);
    cr_assert(b.method == method,
              "%s on %zu bytes (1 GiB and more) set out->method to %d (%s); it must name its own method, %s (%d), at "
              "every size: a large buffer is no reason to pin it another way", fn, bytes, (int)b.method,
              method_name(b.method), method_name(method), (int)method);
    expect_one_fill(&f, bytes, method, fn, &b);
    expect_pinned_by(before.pinned, &b, bytes, method, fn);
    cr_assert(b.data != NULL && b.bytes == bytes, "%s on %zu bytes gave data %p of %zu bytes", fn, bytes, b.data,
              b.bytes);
    snprintf(what, sizeof what, "%s, %zu bytes: the data", fn, bytes);
    expect_sparse(b.data, bytes, f.seed, what);
    cr_assert(kit_is_pinned(b.data) && kit_is_pinned((const char *)b.data + bytes - 1),
              "%s, %zu bytes: the data is not page-locked from its first to its last byte", fn, bytes);
    kit_expect_not_write_combined(b.data, fn);
    unpin_made(&b);
    expect_unpinned_zero(&b, fn, bytes);
    snprintf(what, sizeof what, "%s on %zu bytes and lab_unpin", fn, bytes);
    kit_expect_released(before, what);
    xl_note("%s of %zu bytes (a sparse fill) and lab_unpin: %.0f ms", fn, bytes, xl_now_ms() - t0);
}

/* check_method - check_small, then the method on 64 MiB +- up to a page of fresh data (fill called once),
 * expect_good_buffer, released at the end; then check_huge */
static void check_method(pin_fn pin, const char *fn, lab_method method)
{
    check_small(pin, fn, method);
    size_t bytes = (size_t)((long)(64 * MIB) + kit_rand_int(-(long)page_bytes(), (long)page_bytes()));
    fill_ctx f = {xl_fresh_seed(), 0, 0, 0, NULL};
    lab_pinned b;
    xl_pinned before = xl_pinned_now();
    cr_assert(pin_watched(pin, bytes, fill_seeded, &f, &b) == 0, "%s on %zu bytes returned an error (see its message "
              "above)", fn, bytes);
    expect_one_fill(&f, bytes, method, fn, &b);
    expect_pinned_by(before, &b, bytes, method, fn);
    expect_good_buffer(&b, bytes, f.seed, method, fn);
    unpin_made(&b);
    expect_unpinned_zero(&b, fn, bytes);
    check_huge(pin, fn, method);
}

XL_TEST(pin, at_alloc, 5, XL_TIMED,
        "(a) lab_pin_at_alloc, 1 byte to 1 GiB: the data intact, pinned, not write-combined, the GPU can write it, "
        "LAB_AT_ALLOC, copied at " XL_STR(RATE_NEED) "% of the pinned rate",
        30)
{
    check_method(lab_pin_at_alloc, "lab_pin_at_alloc", LAB_AT_ALLOC);
}

XL_TEST(pin, by_copy, 5, XL_TIMED,
        "(b) lab_pin_by_copy, 1 byte to 1 GiB: the data intact, pinned, not write-combined, the GPU can write it, "
        "LAB_BY_COPY, copied at " XL_STR(RATE_NEED) "% of the pinned rate",
        30)
{
    check_method(lab_pin_by_copy, "lab_pin_by_copy", LAB_BY_COPY);
}

XL_TEST(pin, in_place, 5, XL_TIMED,
        "(c) lab_pin_in_place, 1 byte to 1 GiB: the data intact, pinned, the GPU can write it, LAB_IN_PLACE, copied "
        "at " XL_STR(RATE_NEED) "% of the pinned rate",
        30)
{
    check_method(lab_pin_in_place, "lab_pin_in_place", LAB_IN_PLACE);
}

/* register_one - lab_register on the caller's [data, data + bytes) (data already filled from seed; the pre bytes
 * before it and the post bytes after it the caller's too, poisoned here): the same pointer and length back,
 * LAB_REGISTERED, one registration of exactly those bytes and no pinned allocation, pinned end to end; then the
 * GPU writes into it (small) or the rate (large); lab_unpin leaves the memory pageable, holding what it held, the
 * bytes around it untouched, and nothing held */
#define REG_GUARD 64 /* poisoned bytes of the caller's on either side of a registered range, where there is room */
static void register_one(unsigned char *data, size_t bytes, uint64_t seed, const void *dev, const void *src,
                         size_t pre, size_t post)
{
    char what[160];
    lab_pinned b;
    size_t bad;
    xl_poison(data - pre, pre);
    xl_poison(data + bytes, post);
    kit_held before = kit_held_now();
    snprintf(what, sizeof what, "lab_register at page offset %zu", (size_t)((uintptr_t)data % page_bytes()));
    cr_assert(register_watched(data, bytes, &b) == 0, "%s on %zu bytes returned an error (see its message above)",
              what, bytes);
    xl_pinned now = xl_pinned_now();
    cr_assert(now.registrations - before.pinned.registrations == 1 &&
                  now.allocations == before.pinned.allocations,
              "%s on %zu bytes made %ld registrations (cudaHostRegister) and %ld pinned allocations: it page-locks the "
              "caller's memory in place, one registration, and allocates nothing", what, bytes,
              now.registrations - before.pinned.registrations, now.allocations - before.pinned.allocations);
    cr_assert(now.reg_bytes - before.pinned.reg_bytes == bytes,
              "%s on %zu bytes registered %zu bytes with cudaHostRegister: lab.h asks for exactly [data, data + "
              "bytes), not a byte more or less (the end pointer data + bytes is one past the last byte)",
              what, bytes, now.reg_bytes - before.pinned.reg_bytes);
    unsigned int flags = xl_pinned_flags(data);
    cr_assert(flags == ~0u || (flags & cudaHostRegisterReadOnly) == 0,
              "%s on %zu bytes registered the memory read-only (cudaHostRegisterReadOnly): lab.h promises memory the "
              "GPU may copy into", what, bytes);
    cr_assert(b.data == data, "%s on %zu bytes gave data %p, not the caller's %p: it pins the caller's memory in place",
              what, bytes, b.data, (void *)data);
    if (dev) {
        unsigned char *want = kit_host_alloc(bytes);
        xl_fill_random(want, bytes, seed);
        expect_basics(&b, bytes, want, LAB_REGISTERED, what);
        free(want);
        expect_device_writes(&b, dev, src, bytes, what);
    } else
        expect_good_buffer(&b, bytes, seed, LAB_REGISTERED, what);
    unsigned char *held = kit_host_alloc(bytes); /* what the caller's memory holds before lab_unpin */
    memcpy(held, data, bytes);
    unpin(&b);
    expect_unpinned_zero(&b, what, bytes);
    cr_assert(0 == kit_is_pinned(data), "after lab_unpin the caller's memory is still registered as pinned (%s, %zu "
              "bytes)", what, bytes);
    char after[288];
    snprintf(after, sizeof after, "%s on %zu bytes: the caller's memory after lab_unpin (it keeps what it held)",
             what, bytes);
    kit_expect_host_bytes(data, held, bytes, 0, after);
    free(held);
    cr_assert(xl_check_poison(data - pre, pre, &bad) == 0,
              "%s on %zu bytes: after lab_register and lab_unpin, the caller's byte %zu before the range changed: "
              "touch only [data, data + bytes)", what, bytes, pre - bad);
    cr_assert(xl_check_poison(data + bytes, post, &bad) == 0,
              "%s on %zu bytes: after lab_register and lab_unpin, the caller's byte %zu past the range's end changed: "
              "touch only [data, data + bytes)", what, bytes, bad);
    snprintf(what + strlen(what), sizeof what - strlen(what), " on %zu bytes and lab_unpin", bytes);
    kit_expect_released(before, what);
}

XL_TEST(pin, register_unaligned, 5, XL_TIMED,
        "lab_register pins exactly a caller's buffer, 1 byte to 64 MiB, starting and ending mid-page, on page edges "
        "or at the end of its mapping, not read-only; lab_unpin leaves it pageable, holding what it held, and the "
        "bytes around it untouched",
        30)
{
    size_t page = page_bytes();
    /* small: 1 byte mid-page, one page from a page edge, 2 bytes across a page edge, a page + 1, random */
    size_t offs[] = {13, 0, page - 1, 0, (size_t)kit_rand_int(0, (long)page - 1)};
    size_t lens[] = {1, page, 2, page + 1, (size_t)kit_rand_int(1, SMALL_MAX)};
    unsigned char *region = aligned_alloc(page, SMALL_MAX + 3 * page), *src = kit_host_alloc(SMALL_MAX);
    cr_assert(region != NULL, "the grader could not allocate host memory");
    void *dev = kit_dev_alloc(SMALL_MAX);
    xl_fill_random(src, SMALL_MAX, xl_fresh_seed());
    xl_dev_upload(dev, src, SMALL_MAX);
    for (int i = 0; i < 5; i++) {
        uint64_t seed = xl_fresh_seed();
        unsigned char *data = region + page + offs[i];
        xl_fill_random(data, lens[i], seed);
        register_one(data, lens[i], seed, dev, src, REG_GUARD, REG_GUARD);
    }
    free(region);
    /* ranges that end where their mapping ends (the next page is no one's): a random size, then whole pages */
    size_t tails[2] = {(size_t)kit_rand_int(1, SMALL_MAX), page * (size_t)kit_rand_int(1, 16)};
    for (int i = 0; i < 2; i++) {
        uint64_t seed = xl_fresh_seed();
        unsigned char *data = kit_tail_guarded(tails[i]);
        xl_fill_random(data, tails[i], seed);
        size_t before = (page - tails[i] % page) % page; /* of the mapping, before the range */
        register_one(data, tails[i], seed, dev, src, before < REG_GUARD ? before : REG_GUARD, 0);
        kit_tail_guarded_free(data, tails[i]);
    }
    free(src);
    XL_CHECK(cudaFree(dev));
    /* large: 64 MiB + a random part of a page, from a random offset inside a page, at the pinned rate */
    size_t bytes = 64 * MIB + kit_rand_int(1, (long)page - 1);
    size_t off = (size_t)kit_rand_int(1, (long)page - 1);
    if ((off + bytes) % page == 0)
        bytes++; /* end mid-page too */
    unsigned char *mem = aligned_alloc(page, (bytes + 4 * page) / page * page);
    cr_assert(mem != NULL, "the grader could not allocate %zu bytes of host memory", bytes + 4 * page);
    uint64_t seed = xl_fresh_seed();
    xl_fill_random(mem + page + off, bytes, seed);
    register_one(mem + page + off, bytes, seed, NULL, NULL, REG_GUARD, REG_GUARD);
    free(mem);
}

/* ===== Part C: peak memory ===== */

/* expect_peak - runs pin on PEAK_BYTES in this fresh process: the rise of VmHWM over the resident memory
 * before it, as a multiple of the buffer, must lie in [lo, hi]; why says what the method needs. Notes the time,
 * and gives the report page the peak as a row of data/peak.csv, method named as the reference data names it. */
static void expect_peak(pin_fn pin, const char *fn, lab_method how, const char *method, double lo, double hi,
                        const char *why)
{
    fill_ctx f = {xl_fresh_seed(), 0, 0, 0, NULL};
    lab_pinned b;
    xl_mem before, after;
    XL_CHECK(cudaFree(0)); /* the CUDA context exists before the measurement */
    xl_pinned held = xl_pinned_now();
    cr_assert(xl_mem_reset_peak() == 0, "cannot reset the peak (/proc/self/clear_refs)");
    cr_assert(xl_mem_read(&before) == 0, "cannot read /proc/self/status");
    double t0 = xl_now_ms();
    xl_expect_ok(pin_watched(pin, PEAK_BYTES, fill_seeded, &f, &b), fn);
    double ms = xl_now_ms() - t0;
    cr_assert(xl_mem_read(&after) == 0, "cannot read /proc/self/status");
    double m = (after.hwm_kib - before.rss_kib) * 1024.0 / PEAK_BYTES;
    xl_note("%s of 256 MiB (fill included): %.1f ms; peak resident memory rose by %.2fx the buffer", fn, ms, m);
    xl_results_row("peak", "method,bytes,peak_x", "%s,%zu,%.3f", method, (size_t)PEAK_BYTES, m);
    expect_one_fill(&f, PEAK_BYTES, how, fn, &b);
    expect_pinned_by(held, &b, PEAK_BYTES, how, fn);
    unpin_made(&b);
    cr_assert(m >= lo && m <= hi, "%s raised the peak by %.2fx the buffer; %s: %.2f to %.2fx", fn, m, why, lo, hi);
}

XL_TEST(peak, at_alloc, 10, XL_GPU, "(a) pinned from the start: peak resident memory about 1x the buffer (0.9 to 1.25)",
        30)
{
    expect_peak(lab_pin_at_alloc, "lab_pin_at_alloc", LAB_AT_ALLOC, "(a) at alloc", ONE_MIN, ONE_MAX,
                "pinned from the start needs one buffer (was the data made somewhere else first?)");
}

XL_TEST(peak, by_copy, 10, XL_GPU, "(b) pinned by copy: peak about 2x the buffer (1.8 to 2.3), both at once", 30)
{
    expect_peak(lab_pin_by_copy, "lab_pin_by_copy", LAB_BY_COPY, "(b) by copy", TWO_MIN, TWO_MAX,
                "a copy into a new pinned buffer holds both for a moment");
}

XL_TEST(peak, in_place, 10, XL_GPU, "(c) pinned in place: peak about 1x the buffer (0.9 to 1.25), no second buffer",
        30)
{
    expect_peak(lab_pin_in_place, "lab_pin_in_place", LAB_IN_PLACE, "(c) in place", ONE_MIN, ONE_MAX,
                "pinning in place needs no second buffer");
}

/* ===== Part D: releases and bad input ===== */

XL_TEST(leaks, cycles, 10, XL_GPU,
        "10 pin/unpin cycles of each way (after 2 warm-ups), each pinned as its method says, leave pinned memory, "
        "resident memory and device resources where they started",
        60)
{
    static const pin_fn pins[] = {lab_pin_at_alloc, lab_pin_by_copy, lab_pin_in_place};
    static const char *names[] = {"lab_pin_at_alloc", "lab_pin_by_copy", "lab_pin_in_place"};
    static const lab_method methods[] = {LAB_AT_ALLOC, LAB_BY_COPY, LAB_IN_PLACE};
    size_t bytes = 16 * MIB + (size_t)kit_rand_int(1, (long)page_bytes() - 1);
    XL_CHECK(cudaFree(0));
    for (int m = 0; m < 3; m++) {
        kit_held h0 = kit_held_now();
        xl_pinned p0 = h0.pinned;
        xl_mem r0, r1;
        for (int c = -2; c < CYCLES; c++) { /* two warm-up cycles: malloc keeps freed memory for reuse */
            if (c == 0)
                cr_assert(xl_mem_read(&r0) == 0, "cannot read /proc/self/status");
            fill_ctx f = {xl_fresh_seed(), 0, 0, 0, NULL};
            lab_pinned b;
            xl_pinned held = xl_pinned_now();
            cr_assert(pin_watched(pins[m], bytes, fill_seeded, &f, &b) == 0,
                      "%s on %zu bytes failed in cycle %d of %d (see its message above)", names[m], bytes, c + 3,
                      CYCLES + 2);
            expect_one_fill(&f, bytes, methods[m], names[m], &b);
            expect_pinned_by(held, &b, bytes, methods[m], names[m]);
            unpin_made(&b);
        }
        xl_pinned p1 = xl_pinned_now();
        cr_assert(xl_mem_read(&r1) == 0, "cannot read /proc/self/status");
        cr_assert(p1.allocations == p0.allocations && p1.registrations == p0.registrations,
                  "after %d cycles of %s on %zu bytes and lab_unpin, %ld pinned allocations (%zu bytes) and %ld "
                  "registrations (%zu bytes) more are held: lab_unpin did not release what the method pinned",
                  CYCLES + 2, names[m], bytes, p1.allocations - p0.allocations, p1.alloc_bytes - p0.alloc_bytes,
                  p1.registrations - p0.registrations, p1.reg_bytes - p0.reg_bytes);
        char what[128];
        snprintf(what, sizeof what, "%d cycles of %s on %zu bytes and lab_unpin", CYCLES + 2, names[m], bytes);
        kit_expect_released(h0, what);
        double grew = (r1.rss_kib - r0.rss_kib) * 1024.0;
        cr_assert(grew < 0.5 * bytes,
                  "after %d cycles of %s on %zu bytes, resident memory grew by %ld KiB: something of each buffer is "
                  "not freed",
                  CYCLES, names[m], bytes, r1.rss_kib - r0.rss_kib);
    }
}

/* expect_zeroed - *b is all zero bytes after a refused call (call names it) */
static void expect_zeroed(const lab_pinned *b, const char *call)
{
    static const lab_pinned zero;
    cr_assert(memcmp(b, &zero, sizeof zero) == 0,
              "%s returned -1 but left *out not zeroed (data %p, bytes %zu, method %d, base %p): zero it on every "
              "failure",
              call, b->data, b->bytes, (int)b->method, b->base);
}

/* said_passed - ends the capture of stderr begun as saved around a call that worked: what it wrote is shown again
 * on stderr, as without the capture */
static void said_passed(int saved)
{
    char said[1024];
    kit_capture_end(saved, said, sizeof said);
    fputs(said, stderr);
}

/* said_lines - ends the capture of stderr begun as saved (kit_capture_begin) around a call that returned -1 (call
 * names it): lab.h asks for exactly one line there; the line is shown again on stderr, as without the capture */
static void said_lines(int saved, const char *call)
{
    char said[1024];
    int lines = kit_capture_end(saved, said, sizeof said);
    fputs(said, stderr);
    kit_expect_one_line(saved, lines, said, call, "-1");
}

/* EXPECT_REFUSED - expr (a call of lab_pin_* or lab_register) must return -1 (else: call, then must) with exactly
 * one line on stderr */
#define EXPECT_REFUSED(expr, call, must)                                                                             \
    do {                                                                                                             \
        int saved_ = kit_capture_begin();                                                                            \
        int rc_ = (expr);                                                                                            \
        if (rc_ != -1)                                                                                               \
            said_passed(saved_);                                                                                     \
        cr_assert(rc_ == -1, "%s returned %d: %s", (call), rc_, (must));                                             \
        said_lines(saved_, (call));                                                                                  \
    } while (0)

/* One method and size for pin_attempt_once. */
typedef struct {
    pin_fn pin;
    size_t bytes;
    const char *name; /* the call, for messages */
} pin_attempt;

/* expect_unmapped - after call returned -1: the memory fill wrote at buf (bytes of seed's data), which came from no
 * malloc block (a mapping of the call's own), is no longer mapped holding that data (it was not left allocated) */
static void expect_unmapped(const void *buf, size_t bytes, uint64_t seed, const char *call)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    cr_assert(maps != NULL, "grader error: cannot read /proc/self/maps");
    char line[512], perms[8];
    unsigned long lo, hi, at = (unsigned long)(uintptr_t)buf;
    int readable = 0;
    while (fgets(line, sizeof line, maps))
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && at >= lo && at < hi) {
            readable = perms[0] == 'r';
            break;
        }
    fclose(maps);
    if (!readable)
        return;
    size_t n = bytes < 4096 ? bytes : 4096;
    unsigned char *want = malloc(bytes);
    cr_assert(want != NULL, "out of memory");
    xl_fill_random(want, bytes, seed); /* what fill wrote there */
    int same = memcmp(want, buf, n) == 0;
    free(want);
    cr_assert(same == 0, "%s returned -1 but left the memory it made for the data (%p, %zu bytes, not from malloc) "
              "mapped, still holding the data: lab.h: -1 leaves nothing allocated (unmap or free it on every failure "
              "path)", call, buf, bytes);
}

/* pin_attempt_once - kit_expect_create_failures' attempt: one pin of a->bytes, unpinned when it worked */
static int pin_attempt_once(void *ctx)
{
    pin_attempt *a = ctx;
    fill_ctx f = {xl_fresh_seed(), 0, 0, 0, NULL};
    lab_pinned b;
    memset(&b, 0x5A, sizeof b);
    int saved = kit_capture_begin();
    hostwatch_begin(0, 0); /* fill_saw notes whether fill's buffer came from malloc */
    fill_buf_seen = fill_block_seen = NULL;
    int rc = a->pin(a->bytes, fill_seeded, &f, &b);
    hostwatch_end();
    if (rc != 0) {
        said_lines(saved, a->name);
        expect_zeroed(&b, a->name);
        if (f.calls > 0 && fill_buf_seen == f.buf && !fill_block_seen)
            expect_unmapped(f.buf, a->bytes, f.seed, a->name);
        return 1;
    }
    said_passed(saved);
    unpin(&b);
    return 0;
}

/* A caller's range for register_attempt_once. */
typedef struct {
    unsigned char *data;
    size_t bytes;
} register_attempt;

/* register_attempt_once - kit_expect_create_failures' attempt: lab_register on the caller's range (its
 * cudaHostRegister can fail as out of memory, or past the locked-memory limit), unpinned when it worked; a failure
 * must zero *out and leave the caller's memory pageable */
static int register_attempt_once(void *ctx)
{
    register_attempt *a = ctx;
    lab_pinned b;
    char call[96];
    snprintf(call, sizeof call, "lab_register on %zu bytes of the caller's", a->bytes);
    memset(&b, 0x5A, sizeof b);
    int saved = kit_capture_begin();
    if (lab_register(a->data, a->bytes, &b) != 0) {
        said_lines(saved, call);
        expect_zeroed(&b, call);
        cr_assert(0 == kit_is_pinned(a->data), "%s returned -1 but left the memory pinned", call);
        return 1;
    }
    said_passed(saved);
    unpin(&b);
    return 0;
}

/* One refusal for refused_once: a method (or lab_register, pin NULL) and its arguments. */
typedef struct {
    pin_fn pin;       /* NULL: lab_register */
    size_t bytes;
    lab_fill_fn fill; /* the methods' */
    void *data;       /* lab_register's */
    int no_out;       /* out NULL */
} refusal;

/* refused_once - kit_expect_no_heap_leak's attempt: the call r names, refused (-1): 0; 1 when it was not (what
 * it gave then unpinned) */
static int refused_once(void *ctx)
{
    const refusal *r = ctx;
    fill_ctx f = {1, 0, 0, 0, NULL};
    lab_pinned b, *out = r->no_out ? NULL : &b;
    memset(&b, 0x5A, sizeof b);
    int rc = r->pin ? r->pin(r->bytes, r->fill, &f, out) : lab_register(r->data, r->bytes, out);
    if (rc == 0 && out)
        unpin(out);
    return rc == -1 ? 0 : 1;
}

/* expect_refusals_free - each refusal the reference makes before any CUDA call (0 bytes, no fill, no out, memory
 * malloc cannot give, a NULL data), repeated: the host heap does not grow with the calls (a buffer malloc'd before
 * the check that refuses, never freed, grows it by its size every time). The refusals that reach CUDA (1 PiB to
 * the pinned allocator, an overlap, read-only memory) are left out: the CUDA runtime may note each error it
 * returns, in memory of its own. */
static void expect_refusals_free(void)
{
    static const pin_fn pins[] = {lab_pin_at_alloc, lab_pin_by_copy, lab_pin_in_place};
    static const char *names[] = {"lab_pin_at_alloc", "lab_pin_by_copy", "lab_pin_in_place"};
    unsigned char word[8];
    refusal r[32];
    char what[32][128];
    int n = 0;
    for (int m = 0; m < 3; m++) {
        size_t any = (size_t)kit_rand_int(1, 256 << 10); /* under malloc's mmap threshold or over it */
        r[n] = (refusal){pins[m], 0, fill_seeded, NULL, 0};
        snprintf(what[n++], sizeof what[0], "%s(0 bytes), refused", names[m]);
        r[n] = (refusal){pins[m], any, NULL, NULL, 0};
        snprintf(what[n++], sizeof what[0], "%s(%zu bytes) with fill == NULL, refused", names[m], any);
        r[n] = (refusal){pins[m], any, fill_seeded, NULL, 1};
        snprintf(what[n++], sizeof what[0], "%s(%zu bytes) with out == NULL, refused", names[m], any);
        if (pins[m] == lab_pin_at_alloc)
            continue;
        r[n] = (refusal){pins[m], (size_t)1 << 50, fill_seeded, NULL, 0};
        snprintf(what[n++], sizeof what[0], "%s(1 PiB), refused", names[m]);
        size_t below = (size_t)kit_rand_int(0, (long)page_bytes() - 2);
        r[n] = (refusal){pins[m], SIZE_MAX - below, fill_seeded, NULL, 0};
        snprintf(what[n++], sizeof what[0], "%s(SIZE_MAX - %zu bytes), refused", names[m], below);
    }
    r[n] = (refusal){NULL, 4096, NULL, NULL, 0};
    snprintf(what[n++], sizeof what[0], "lab_register(NULL, 4096 bytes), refused");
    r[n] = (refusal){NULL, 0, NULL, word, 0};
    snprintf(what[n++], sizeof what[0], "lab_register(data, 0 bytes), refused");
    r[n] = (refusal){NULL, sizeof word, NULL, word, 1};
    snprintf(what[n++], sizeof what[0], "lab_register(data, 8 bytes, out NULL), refused");
    for (int i = 0; i < n; i++)
        kit_expect_no_heap_leak(refused_once, &r[i], what[i],
                                "a refusal must leave nothing allocated (lab.h): check the arguments before "
                                "allocating, or free what was allocated before returning -1");
}

/* One host allocation failing, for host_failing_once: the method, its size, and which of its host allocations
 * of at least the data's bytes fails (from 0). */
typedef struct {
    pin_fn pin;
    size_t bytes;
    long fail_at;
    const char *name; /* the method's name */
} host_failing;

/* host_failing_run - a->pin of a->bytes with its host allocation number a->fail_at (from 0) of at least the data's
 * bytes (malloc, aligned_alloc, ...) failing as out of memory. check: the result judged (else only returned): when
 * the failure happened and the call returned -1, one line, *out zeroed, nothing held, no CUDA error; when it
 * succeeded all the same, what it gave is unpinned. 0 when the failure happened and the call returned -1; 1 when it
 * succeeded (*fired says whether the failure happened) */
static int host_failing_run(host_failing *a, int check, int *fired)
{
    fill_ctx f = {xl_fresh_seed(), 0, 0, 0, NULL};
    lab_pinned b;
    char call[160];
    memset(&b, 0x5A, sizeof b);
    snprintf(call, sizeof call, "%s(%zu bytes) with its host allocation number %ld of the data's size (malloc or "
             "aligned_alloc) failing as out of memory", a->name, a->bytes, a->fail_at + 1);
    kit_held before = kit_held_now();
    int saved = check ? kit_capture_begin() : -1;
    hostwatch_begin(a->bytes, a->fail_at);
    int rc = a->pin(a->bytes, fill_seeded, &f, &b);
    *fired = hostwatch_fired();
    hostwatch_end();
    if (rc == 0) {
        if (check)
            said_passed(saved);
        unpin(&b);
        return 1;
    }
    if (!check)
        return *fired && rc == -1 ? 0 : 1;
    if (rc != -1)
        said_passed(saved);
    cr_assert(rc == -1, "%s returned %d: it must return 0 or -1", call, rc);
    said_lines(saved, call);
    cr_assert(0 != *fired, "%s returned -1, though no host allocation failed (see its message above)", call);
    expect_zeroed(&b, call);
    cudaError_t left = cudaGetLastError();
    cr_assert(left == cudaSuccess, "%s returned -1 and left %s pending for the next cudaGetLastError: clear an error "
              "you handle", call, cudaGetErrorName(left));
    kit_expect_released(before, call);
    return 0;
}
/* host_failing_once - kit_expect_no_heap_leak's attempt: host_failing_run, unjudged */
static int host_failing_once(void *ctx)
{
    int fired;
    return host_failing_run(ctx, 0, &fired);
}

/* expect_host_failures - each method on 1 to 8 MiB with its host allocations of the data's size failing in turn
 * (the first, then the second, ...; memory the system cannot give): -1 with one line, *out zeroed, nothing held
 * (a pinned buffer allocated before the failing malloc released too), no CUDA error, and that path repeated leaves
 * the host heap as it was; a method that allocates no such memory ((a)), or that works around the failure, succeeds */
static void expect_host_failures(void)
{
    static const pin_fn pins[] = {lab_pin_at_alloc, lab_pin_by_copy, lab_pin_in_place};
    static const char *names[] = {"lab_pin_at_alloc", "lab_pin_by_copy", "lab_pin_in_place"};
    for (int m = 0; m < 3; m++) {
        host_failing a = {pins[m], MIB + (size_t)kit_rand_int(1, 7 * (long)MIB), 0, names[m]};
        for (a.fail_at = 0; a.fail_at < 4; a.fail_at++) {
            int fired;
            if (host_failing_run(&a, 1, &fired) != 0)
                break; /* it succeeded: it made no more host allocations of that size, or worked around the failure */
            char what[160];
            snprintf(what, sizeof what, "%s(%zu bytes) with its host allocation number %ld of that size failing",
                     names[m], a.bytes, a.fail_at + 1);
            kit_expect_no_heap_leak(host_failing_once, &a, what,
                                    "where an allocation fails, free what the call allocated before it");
        }
    }
}

/* expect_ranges_share_page - two ranges that share no byte both register (CUDA counts registrations by byte range),
 * in either order of unpinning, and each unpin leaves the other pinned: on one page far apart, then one byte apart
 * inside one 8-byte word (so one cache line too), then touching (one ends where the other begins) on one page, and
 * touching across a page edge with the later range registered first, at random offsets and lengths */
static void expect_ranges_share_page(void)
{
    size_t page = page_bytes();
    unsigned char *pg = aligned_alloc(page, 2 * page);
    cr_assert(pg != NULL, "the grader could not allocate two pages");
    size_t gap = 8 * (size_t)kit_rand_int(1, 60) + (size_t)kit_rand_int(1, 6); /* gap - 1 and gap + 1: one word */
    size_t la = (size_t)kit_rand_int(1, (long)gap), lb = (size_t)kit_rand_int(1, 200);
    size_t ta = (size_t)kit_rand_int(1, 200), tb = (size_t)kit_rand_int(1, 200);
    size_t meet = (size_t)kit_rand_int((long)ta, (long)(page - tb)); /* [meet - ta, meet) and [meet, meet + tb) */
    size_t ea = (size_t)kit_rand_int(1, 200), eb = (size_t)kit_rand_int(1, 200);
    size_t at[4][2] = {{(size_t)kit_rand_int(0, 63), (size_t)kit_rand_int(128, (long)page - 64)},
                       {gap - la, gap + 1},
                       {meet - ta, meet},
                       {page, page - ea}};
    size_t len[4][2] = {{64, 64}, {la, lb}, {ta, tb}, {eb, ea}};
    static const char *how[4] = {"on the same page, sharing no byte,", "sharing no byte but a cache line,",
                                 "ending where it begins (sharing no byte),",
                                 "beginning where it ends, across a page edge (sharing no byte),"};
    lab_pinned first, second;
    for (int k = 0; k < 4; k++)
        for (int order = 0; order < 2; order++) {
            char what[320];
            snprintf(what, sizeof what, "lab_register of [%zu, %zu) of a 2-page buffer where [%zu, %zu), %s is "
                     "registered (CUDA counts registrations by byte range: register exactly [data, data + bytes), "
                     "not whole pages or cache lines, not a byte more)", at[k][1], at[k][1] + len[k][1], at[k][0],
                     at[k][0] + len[k][0], how[k]);
            xl_expect_ok(register_watched(pg + at[k][0], len[k][0], &first), "lab_register");
            xl_expect_ok(register_watched(pg + at[k][1], len[k][1], &second), what);
            unpin(order ? &first : &second);
            cr_assert(kit_is_pinned(pg + at[k][order ? 1 : 0]),
                      "unpinning one of two registered ranges that share no byte ([%zu, %zu) and [%zu, %zu)) undid "
                      "the other registration", at[k][0], at[k][0] + len[k][0], at[k][1], at[k][1] + len[k][1]);
            unpin(order ? &second : &first);
        }
    free(pg);
}

/* expect_same_start_refused - a range registered at a random offset, then a range that starts at the same byte
 * (as long, or shorter) refused: -1, *out zeroed, no CUDA error, and the first registration intact (the refusal must
 * not undo it: cudaHostUnregister(data) after a failed register unregisters the range already there); then the first
 * unpinned as usual */
static void expect_same_start_refused(void)
{
    size_t page = page_bytes();
    unsigned char *mem = aligned_alloc(page, 3 * page);
    cr_assert(mem != NULL, "the grader could not allocate three pages");
    size_t off = (size_t)kit_rand_int(0, (long)page - 1), len = (size_t)kit_rand_int(2, (long)page);
    size_t lens[2] = {len, (size_t)kit_rand_int(1, (long)len - 1)};
    static const char *how[2] = {"the very same range", "a shorter range from the same first byte"};
    unsigned char *data = mem + page + off;
    for (int k = 0; k < 2; k++) {
        lab_pinned first, again;
        char call[224];
        xl_expect_ok(register_watched(data, len, &first), "lab_register");
        xl_pinned held = xl_pinned_now();
        snprintf(call, sizeof call, "lab_register(data, %zu bytes) with [data, data + %zu) registered (%s, page "
                 "offset %zu)", lens[k], len, how[k], off);
        memset(&again, 0x5A, sizeof again);
        EXPECT_REFUSED(register_watched(data, lens[k], &again), call,
                       "registering bytes that are already pinned must return -1 (cudaErrorHostMemoryAlreadyRegistered)");
        expect_zeroed(&again, call);
        cr_assert(cudaGetLastError() == cudaSuccess, "%s left a CUDA error pending", call);
        xl_pinned now = xl_pinned_now();
        cr_assert(now.registrations == held.registrations && kit_is_pinned(data) && kit_is_pinned(data + len - 1),
                  "%s returned -1 but undid the registration already there (%ld registrations held, %ld before; data "
                  "page-locked: %d): a refusal leaves every earlier registration as it was (lab.h). Do not "
                  "cudaHostUnregister(data) after a failed cudaHostRegister: that range is the caller's earlier one",
                  call, now.registrations, held.registrations, kit_is_pinned(data));
        unpin(&first);
        cr_assert(0 == kit_is_pinned(data), "lab_unpin after %s left the memory pinned", call);
    }
    free(mem);
}

/* expect_many_ranges - 17 to 80 disjoint ranges of one buffer registered at once (lab.h sets no limit: a fixed table
 * of 16 is refused here), random lengths and gaps (0 too: touching), each pinned, the counts exact; then unpinned
 * in a random order, each unpin leaving the rest pinned */
#define MANY_MAX 80
static void expect_many_ranges(void)
{
    size_t page = page_bytes();
    int n = (int)kit_rand_int(17, MANY_MAX);
    size_t at[MANY_MAX], len[MANY_MAX], end = 0, sum = 0;
    int order[MANY_MAX];
    for (int i = 0; i < n; i++) {
        at[i] = end + (size_t)kit_rand_int(0, 3) * (size_t)kit_rand_int(0, 200);
        len[i] = (size_t)kit_rand_int(1, kit_rand_int(0, 1) ? 300 : 3 * (long)page);
        end = at[i] + len[i];
        sum += len[i];
        order[i] = i;
    }
    unsigned char *mem = aligned_alloc(page, (end + page - 1) / page * page);
    cr_assert(mem != NULL, "the grader could not allocate %zu bytes", end);
    lab_pinned b[MANY_MAX];
    xl_pinned p0 = xl_pinned_now();
    for (int i = 0; i < n; i++) {
        char what[160];
        snprintf(what, sizeof what, "lab_register of range %d of %d held at once ([%zu, %zu) of one buffer, the "
                 "ranges before it still registered: lab.h sets no limit)", i + 1, n, at[i], at[i] + len[i]);
        xl_expect_ok(register_watched(mem + at[i], len[i], &b[i]), what);
    }
    xl_pinned p1 = xl_pinned_now();
    cr_assert(p1.registrations - p0.registrations == n && p1.reg_bytes - p0.reg_bytes == sum,
              "%d lab_register calls on disjoint ranges of %zu bytes in all made %ld registrations of %zu bytes", n,
              sum, p1.registrations - p0.registrations, p1.reg_bytes - p0.reg_bytes);
    for (int i = n - 1; i > 0; i--) { /* a random order of unpinning */
        int j = (int)kit_rand_int(0, i), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int k = 0; k < n; k++) {
        unpin(&b[order[k]]);
        cr_assert(0 == kit_is_pinned(mem + at[order[k]]), "lab_unpin of range %d of %d ([%zu, %zu)) left it pinned",
                  order[k] + 1, n, at[order[k]], at[order[k]] + len[order[k]]);
        for (int r = k + 1; r < n; r++)
            cr_assert(kit_is_pinned(mem + at[order[r]]) && kit_is_pinned(mem + at[order[r]] + len[order[r]] - 1),
                      "lab_unpin of range %d of %d ([%zu, %zu)) undid the registration of range %d ([%zu, %zu)), "
                      "which shares no byte with it", order[k] + 1, n, at[order[k]], at[order[k]] + len[order[k]],
                      order[r] + 1, at[order[r]], at[order[r]] + len[order[r]]);
    }
    xl_pinned p2 = xl_pinned_now();
    cr_assert(p2.registrations == p0.registrations, "after lab_unpin of all %d ranges, %ld registrations are held", n,
              p2.registrations - p0.registrations);
    free(mem);
}

/* fill_nothing - lab_fill_fn for calls that must be refused: counts the call in ctx (a fill_ctx), writes nothing */
static void fill_nothing(void *buf, size_t bytes, void *ctx)
{
    (void)buf;
    (void)bytes;
    ((fill_ctx *)ctx)->calls++;
}

/* cuda_refuses_pinned - 1 when the CUDA runtime's cudaMallocHost refuses bytes (its error cleared); 0 when it gives
 * them (then freed at once), or gives nothing at all (NULL) */
static int cuda_refuses_pinned(size_t bytes)
{
    void *p = NULL;
    cudaError_t err = cudaMallocHost(&p, bytes);
    if (err == cudaSuccess) {
        if (p)
            XL_CHECK(cudaFreeHost(p));
        return 0;
    }
    cudaGetLastError();
    return 1;
}

XL_TEST(bad, input, 10, XL_GPU,
        "0 bytes, NULL, 1 PiB, sizes within a page of SIZE_MAX, bytes pinned twice, read-only memory, and pinning, "
        "registering or a malloc of the data that runs out of memory give -1 with a one-line message, out zeroed, "
        "nothing held (the malloc'd buffer of a method freed too, a pinned one too), no CUDA error, and repeated "
        "leave the heap as it was; ranges sharing a page, a cache line or an edge but no byte both register; ctx "
        "NULL is valid",
        30)
{
    static const pin_fn pins[] = {lab_pin_at_alloc, lab_pin_by_copy, lab_pin_in_place};
    static const char *names[] = {"lab_pin_at_alloc", "lab_pin_by_copy", "lab_pin_in_place"};
    fill_ctx f = {1, 0, 0, 0, NULL};
    lab_pinned b;
    char call[96];
    XL_CHECK(cudaFree(0));
    kit_held h0 = kit_held_now();
    xl_pinned p0 = h0.pinned;
    for (int m = 0; m < 3; m++) {
        memset(&b, 0x5A, sizeof b);
        snprintf(call, sizeof call, "%s(0 bytes)", names[m]);
        EXPECT_REFUSED(pins[m](0, fill_seeded, &f, &b), call, "it must return -1");
        expect_zeroed(&b, call);
        memset(&b, 0x5A, sizeof b);
        snprintf(call, sizeof call, "%s with fill == NULL", names[m]);
        EXPECT_REFUSED(pins[m](4096, NULL, &f, &b), call, "it must return -1");
        expect_zeroed(&b, call);
        snprintf(call, sizeof call, "%s with out == NULL", names[m]);
        EXPECT_REFUSED(pins[m](4096, fill_seeded, &f, NULL), call, "it must return -1");
        memset(&b, 0x5A, sizeof b);
        snprintf(call, sizeof call, "%s(1 PiB)", names[m]);
        EXPECT_REFUSED(pins[m]((size_t)1 << 50, fill_seeded, &f, &b), call, "it must return -1");
        expect_zeroed(&b, call);
        cr_assert(cudaGetLastError() == cudaSuccess, "%s(1 PiB) left a CUDA error pending", names[m]);
        /* sizes no system can give, within a page of SIZE_MAX: rounding them up to whole pages wraps past 0. Every
         * method; (a) where the CUDA runtime's own cudaMallocHost refuses that size (it is the system there). The
         * fill writes nothing: a call that goes on to fill is told so, not crashed */
        size_t huge[3] = {SIZE_MAX, SIZE_MAX - page_bytes() + 2,
                          SIZE_MAX - (size_t)kit_rand_int(0, (long)page_bytes() - 2)};
        for (int h = 0; h < 3; h++) {
            if (pins[m] == lab_pin_at_alloc && !cuda_refuses_pinned(huge[h]))
                continue;
            int calls = f.calls;
            memset(&b, 0x5A, sizeof b);
            snprintf(call, sizeof call, "%s(%zu bytes, SIZE_MAX - %zu)", names[m], huge[h], SIZE_MAX - huge[h]);
            EXPECT_REFUSED(pins[m](huge[h], fill_nothing, &f, &b), call,
                           "it must return -1: no system can give that memory (does rounding it up to whole pages "
                           "wrap past 0?)");
            cr_assert(f.calls == calls, "%s called fill, then returned -1: check the size and the allocation before "
                      "filling", call);
            expect_zeroed(&b, call);
            cr_assert(cudaGetLastError() == cudaSuccess, "%s left a CUDA error pending", call);
        }
    }
    unsigned char *mem = kit_host_alloc(3 * 4096);
    memset(&b, 0x5A, sizeof b);
    EXPECT_REFUSED(lab_register(NULL, 4096, &b), "lab_register(NULL, 4096 bytes, out)", "it must return -1");
    expect_zeroed(&b, "lab_register(NULL, ...)");
    memset(&b, 0x5A, sizeof b);
    EXPECT_REFUSED(lab_register(mem + 4096, 0, &b), "lab_register(data, 0 bytes, out)", "it must return -1");
    expect_zeroed(&b, "lab_register(data, 0 bytes, ...)");
    EXPECT_REFUSED(lab_register(mem + 4096, 100, NULL), "lab_register(data, 100 bytes, NULL)", "it must return -1");
    cr_assert(0 == kit_is_pinned(mem + 4096), "a refused lab_register left the caller's memory pinned");
    lab_pinned first, second;
    xl_expect_ok(register_watched(mem + 4096, 100, &first), "lab_register");
    memset(&second, 0x5A, sizeof second);
    EXPECT_REFUSED(register_watched(mem + 4096 + 10, 50, &second),
                   "lab_register(data + 10, 50 bytes) with [data, data + 100) registered",
                   "registering bytes that are already pinned must return -1 (CUDA says "
                   "cudaErrorHostMemoryAlreadyRegistered: check what cudaHostRegister returns)");
    expect_zeroed(&second, "lab_register of bytes that overlap a range already registered");
    cr_assert(cudaGetLastError() == cudaSuccess, "the refused registration left a CUDA error pending");
    cr_assert(kit_is_pinned(mem + 4096), "the refused second registration undid the first");
    unpin(&first);
    expect_same_start_refused();
    expect_ranges_share_page();
    expect_many_ranges();
    /* memory the GPU could not copy into, a read-only mapping, at a random offset: -1 (never registered read-only) */
    size_t page = page_bytes(), ro_off = (size_t)kit_rand_int(0, (long)page - 1);
    size_t ro_n = (size_t)kit_rand_int(1, 64 << 10), ro_len = (ro_off + ro_n + page - 1) / page * page;
    unsigned char *ro = mmap(NULL, ro_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(ro != MAP_FAILED, "the grader could not map %zu bytes of host memory", ro_len);
    xl_fill_random(ro + ro_off, ro_n, xl_fresh_seed());
    cr_assert(mprotect(ro, ro_len, PROT_READ) == 0, "the grader could not make its mapping read-only");
    memset(&b, 0x5A, sizeof b);
    snprintf(call, sizeof call, "lab_register(%zu bytes of a read-only mapping, PROT_READ)", ro_n);
    EXPECT_REFUSED(lab_register(ro + ro_off, ro_n, &b), call,
                   "it must return -1: the GPU could not copy into that memory, and lab.h promises pinned memory the "
                   "GPU may copy into (never register it read-only, cudaHostRegisterReadOnly)");
    expect_zeroed(&b, call);
    cr_assert(cudaGetLastError() == cudaSuccess, "%s left a CUDA error pending", call);
    cr_assert(0 == kit_is_pinned(ro + ro_off), "%s returned -1 but left the memory pinned", call);
    munmap(ro, ro_len);
    unpin(&first); /* zeroed: does nothing */
    unpin(NULL);
    free(mem);
    xl_pinned p1 = xl_pinned_now();
    cr_assert(p1.allocations == p0.allocations && p1.registrations == p0.registrations,
              "bad input left %ld pinned allocations and %ld registrations held", p1.allocations - p0.allocations,
              p1.registrations - p0.registrations);
    kit_expect_released(h0, "every refused call above");
    cr_assert(f.calls == 0, "fill was called %d times on bad input; check the arguments and the allocation first",
              f.calls);
    expect_refusals_free();
    for (int m = 0; m < 3; m++) { /* pinning that fails (out of memory): -1, and the malloc'd buffer freed too */
        pin_attempt a = {pins[m], 8 * MIB + (size_t)kit_rand_int(1, (long)MIB), call};
        snprintf(call, sizeof call, "%s(%zu bytes)", names[m], a.bytes);
        kit_expect_create_failures(pin_attempt_once, &a, call);
    }
    expect_host_failures();
    static const lab_method methods[] = {LAB_AT_ALLOC, LAB_BY_COPY, LAB_IN_PLACE};
    for (int m = 0; m < 3; m++) { /* ctx is the caller's, only handed to fill: NULL is valid */
        size_t n = (size_t)kit_rand_int(1, 8192);
        no_ctx_calls = 0;
        no_ctx_seen = &b;
        kit_held before = kit_held_now();
        int rc = pin_watched(pins[m], n, fill_no_ctx, NULL, &b);
        cr_assert(rc == 0 && no_ctx_calls == 1 && no_ctx_seen == NULL,
                  "%s(%zu bytes, a fill, ctx NULL) returned %d after %d fill calls (ctx %p): ctx is the caller's, only "
                  "handed to fill unchanged, and NULL is valid", names[m], n, rc, no_ctx_calls, no_ctx_seen);
        expect_pinned_by(before.pinned, &b, n, methods[m], names[m]);
        unpin_made(&b);
        snprintf(call, sizeof call, "%s(%zu bytes, a fill, ctx NULL) and lab_unpin", names[m], n);
        kit_expect_released(before, call);
    }
    /* registering that fails (out of memory, the locked-memory limit): -1, *out zeroed, the memory pageable */
    size_t off = (size_t)kit_rand_int(1, (long)page_bytes() - 1);
    register_attempt ra = {NULL, (size_t)kit_rand_int(1, 64 << 10)}; /* small: its rounds repeat it */
    unsigned char *region = kit_host_alloc(off + ra.bytes);
    ra.data = region + off;
    xl_fill_random(ra.data, ra.bytes, xl_fresh_seed());
    snprintf(call, sizeof call, "lab_register(%zu bytes)", ra.bytes);
    kit_expect_create_failures(register_attempt_once, &ra, call);
    free(region);
}
