/* 06-pinning.c - the grader of lab 06 (pin at allocation, pin later, pin in place). Course staff only.
 *
 * Peak memory is VmHWM, reset just before each method runs in its test's own process, as a multiple of the
 * buffer. Pinned memory is counted at the CUDA calls themselves (common/pincount.c: this grader is linked
 * with the kit's wrap flags), so a buffer that is never released is found for certain. Copy rates are
 * ratios against the kit's own pinned buffer in the same run.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buffers.h"
#include "common/check.h"
#include "common/memacct.h"
#include "common/pincount.h"
#include "common/stats.h"
#include "common/timing.h"
#include "grader/grade.h"
#include "grader/kit.h"
#include "labs/06-pinning/lab.h"

XL_LAB("06", "pinning");

#define MIB ((size_t)1 << 20)
#define PEAK_BYTES (256 * MIB)
#define ONE_MIN 0.9   /* (a) and (c): the peak rise over the buffer, at least */
#define ONE_MAX 1.25  /* and at most */
#define TWO_MIN 1.8   /* (b): both buffers at once */
#define TWO_MAX 2.3
#define RATE_NEED 0.90 /* your buffer's copy rate against the kit's pinned buffer */
#define CYCLES 10
/* Seen (2026-11-22), the reference, 3 gradings in make test and 2 with figures on each of an H100 and an H200:
 * full points every time; peak 1.00x, 2.00x, 1.00x the 256 MiB buffer; each buffer 99% to 112% of the kit's
 * pinned rate; the leak test clean. Each mutant lost its target (pageable first: peak 2x; aliasing: not pinned,
 * peak 1x; no unregister and a leaked buffer: the leak test; an unchecked registration: bad input). */

/* The three methods and registration, by name. */
typedef int (*pin_fn)(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out);

/* fill_seeded - lab_fill_fn: random bytes from the seed in ctx; counts calls */
typedef struct {
    uint64_t seed;
    int calls;
} fill_ctx;
static void fill_seeded(void *buf, size_t bytes, void *ctx)
{
    fill_ctx *f = ctx;
    f->calls++;
    xl_fill_random(buf, bytes, f->seed);
}

/* ===== Part A: the cost model (no GPU needed) ===== */

XL_TEST(cost, breakeven, 10, XL_CPU, "lab_breakeven: transfers until pinning pays for itself, and its edge cases", 5)
{
    /* 1 GB at 50 GB/s pinned (20 ms) against 10 GB/s pageable (100 ms) saves 80 ms a transfer; 64 MB at 55 against
     * 7 GB/s saves 7.98 ms, so 500 ms takes 62.7, that is 63 transfers */
    static const struct {
        double pin_ms;
        size_t bytes;
        double pinned, pageable;
        long want;
    } cases[] = {{150, 1000000000, 50, 10, 2}, {170, 1000000000, 50, 10, 3}, {60, 1000000000, 50, 10, 1},
                 {500, 64000000, 55, 7, 63},   {0, 1000000000, 50, 10, 0},    {100, 1000000000, 10, 50, -1},
                 {100, 1000000000, 10, 10, -1}, {100, 0, 50, 10, -1},          {100, 1000000000, 50, 0, -1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long got = lab_breakeven(cases[i].pin_ms, cases[i].bytes, cases[i].pinned, cases[i].pageable);
        cr_assert(got == cases[i].want,
                  "lab_breakeven(pin %.0f ms, %zu bytes, pinned %.0f GB/s, pageable %.0f GB/s) = %ld, expected %ld",
                  cases[i].pin_ms, cases[i].bytes, cases[i].pinned, cases[i].pageable, got, cases[i].want);
    }
}

/* ===== Part B: each method gives pinned, intact data that copies at the pinned rate ===== */

/* What a copy-rate measurement compares. */
typedef struct {
    void *yours, *kits, *dev;
    size_t bytes;
} rate_ctx;

/* measure_rate - xl_measure_fn: your buffer's H2D rate over the kit's pinned buffer's, interleaved */
static void measure_rate(void *ctx, double *ratio, char *figures, size_t len)
{
    rate_ctx *c = ctx;
    xl_copy_job kit = {c->dev, c->kits, c->bytes, cudaMemcpyHostToDevice};
    xl_copy_job you = {c->dev, c->yours, c->bytes, cudaMemcpyHostToDevice};
    xl_timing tk, ty;
    xl_time_interleaved(xl_memcpy_work, &kit, xl_memcpy_work, &you, 0, 5, &tk, &ty);
    *ratio = tk.median_ms / ty.median_ms;
    snprintf(figures, len, "your buffer %.1f GB/s, the kit's pinned buffer %.1f GB/s: %.0f%%",
             xl_gbps(c->bytes, ty.median_ms), xl_gbps(c->bytes, tk.median_ms), 100 * *ratio);
}

/* expect_good_buffer - b holds the data fill made from seed, is pinned end to end, and copies at >= 90% of
 * the kit's pinned rate */
static void expect_good_buffer(const lab_pinned *b, size_t bytes, uint64_t seed, const char *fn)
{
    cr_assert(b->data != NULL && b->bytes == bytes, "%s gave data %p of %zu bytes, asked %zu", fn, b->data, b->bytes,
              bytes);
    unsigned char *want = kit_host_alloc(bytes);
    xl_fill_random(want, bytes, seed);
    kit_expect_host_bytes(b->data, want, bytes, 0, fn);
    free(want);
    cr_assert(kit_is_pinned(b->data) && kit_is_pinned((const char *)b->data + bytes - 1),
              "%s: the data is not page-locked from its first to its last byte", fn);
    rate_ctx c = {b->data, kit_pinned_alloc(bytes), kit_dev_alloc(bytes), bytes};
    char what[96];
    snprintf(what, sizeof what, "%s: copy rate from your buffer (need >= %.0f%% of pinned)", fn, 100 * RATE_NEED);
    xl_ratio_check(measure_rate, &c, RATE_NEED, 1, what);
    XL_CHECK(cudaFreeHost(c.kits));
    XL_CHECK(cudaFree(c.dev));
}

/* check_method - one method on 64 MiB + 5 bytes of fresh data, fill called once; released at the end */
static void check_method(pin_fn pin, const char *fn)
{
    size_t bytes = 64 * MIB + 5;
    fill_ctx f = {xl_fresh_seed(), 0};
    lab_pinned b;
    xl_expect_ok(pin(bytes, fill_seeded, &f, &b), fn);
    cr_assert(f.calls == 1, "%s called fill %d times; call it once", fn, f.calls);
    expect_good_buffer(&b, bytes, f.seed, fn);
    lab_unpin(&b);
    cr_assert(b.data == NULL && b.base == NULL, "lab_unpin must zero the lab_pinned it released");
}

XL_TEST(pin, at_alloc, 5, XL_GPU, "(a) lab_pin_at_alloc: the data intact, pinned, copied at the pinned rate", 30)
{
    check_method(lab_pin_at_alloc, "lab_pin_at_alloc");
}

XL_TEST(pin, by_copy, 5, XL_GPU, "(b) lab_pin_by_copy: the data intact, pinned, copied at the pinned rate", 30)
{
    check_method(lab_pin_by_copy, "lab_pin_by_copy");
}

XL_TEST(pin, in_place, 5, XL_GPU, "(c) lab_pin_in_place: the data intact, pinned, copied at the pinned rate", 30)
{
    check_method(lab_pin_in_place, "lab_pin_in_place");
}

XL_TEST(pin, register_unaligned, 5, XL_GPU,
        "lab_register pins a caller's buffer that starts and ends mid-page; lab_unpin leaves it pageable", 30)
{
    size_t bytes = 64 * MIB + 5;
    unsigned char *mem = kit_host_alloc(bytes + 8192), *data = mem + 4096 + 13;
    uint64_t seed = xl_fresh_seed();
    xl_fill_random(data, bytes, seed);
    lab_pinned b;
    xl_expect_ok(lab_register(data, bytes, &b), "lab_register");
    expect_good_buffer(&b, bytes, seed, "lab_register");
    lab_unpin(&b);
    cr_assert(0 == kit_is_pinned(data), "after lab_unpin the caller's memory is still registered as pinned");
    free(mem);
}

/* ===== Part C: peak memory ===== */

/* expect_peak - runs pin on PEAK_BYTES in this fresh process: the rise of VmHWM over the resident memory
 * before it, as a multiple of the buffer, must lie in [lo, hi]; why says what the method needs. Notes the time. */
static void expect_peak(pin_fn pin, const char *fn, double lo, double hi, const char *why)
{
    fill_ctx f = {xl_fresh_seed(), 0};
    lab_pinned b;
    xl_mem before, after;
    XL_CHECK(cudaFree(0)); /* the CUDA context exists before the measurement */
    cr_assert(xl_mem_reset_peak() == 0, "cannot reset the peak (/proc/self/clear_refs)");
    cr_assert(xl_mem_read(&before) == 0, "cannot read /proc/self/status");
    double t0 = xl_now_ms();
    xl_expect_ok(pin(PEAK_BYTES, fill_seeded, &f, &b), fn);
    double ms = xl_now_ms() - t0;
    cr_assert(xl_mem_read(&after) == 0, "cannot read /proc/self/status");
    double m = (after.hwm_kib - before.rss_kib) * 1024.0 / PEAK_BYTES;
    xl_note("%s of 256 MiB (fill included): %.1f ms; peak resident memory rose by %.2fx the buffer", fn, ms, m);
    lab_unpin(&b);
    cr_assert(m >= lo && m <= hi, "%s raised the peak by %.2fx the buffer; %s: %.2f to %.2fx", fn, m, why, lo, hi);
}

XL_TEST(peak, at_alloc, 10, XL_GPU, "(a) pinned from the start: peak resident memory about 1x the buffer (0.9 to 1.25)",
        30)
{
    expect_peak(lab_pin_at_alloc, "lab_pin_at_alloc", ONE_MIN, ONE_MAX,
                "pinned from the start needs one buffer (was the data made somewhere else first?)");
}

XL_TEST(peak, by_copy, 10, XL_GPU, "(b) pinned by copy: peak about 2x the buffer (1.8 to 2.3), both at once", 30)
{
    expect_peak(lab_pin_by_copy, "lab_pin_by_copy", TWO_MIN, TWO_MAX,
                "a copy into a new pinned buffer holds both for a moment");
}

XL_TEST(peak, in_place, 10, XL_GPU, "(c) pinned in place: peak about 1x the buffer (0.9 to 1.25), no second buffer",
        30)
{
    expect_peak(lab_pin_in_place, "lab_pin_in_place", ONE_MIN, ONE_MAX, "pinning in place needs no second buffer");
}

/* ===== Part D: releases and bad input ===== */

XL_TEST(leaks, cycles, 10, XL_GPU,
        "10 pin/unpin cycles of each way (after 2 warm-ups) leave pinned and resident memory where they started", 60)
{
    static const pin_fn pins[] = {lab_pin_at_alloc, lab_pin_by_copy, lab_pin_in_place};
    static const char *names[] = {"lab_pin_at_alloc", "lab_pin_by_copy", "lab_pin_in_place"};
    size_t bytes = 16 * MIB + 3;
    XL_CHECK(cudaFree(0));
    for (int m = 0; m < 3; m++) {
        xl_pinned p0 = xl_pinned_now();
        xl_mem r0, r1;
        for (int c = -2; c < CYCLES; c++) { /* two warm-up cycles: malloc keeps freed memory for reuse */
            if (c == 0)
                cr_assert(xl_mem_read(&r0) == 0, "cannot read /proc/self/status");
            fill_ctx f = {xl_fresh_seed(), 0};
            lab_pinned b;
            cr_assert(pins[m](bytes, fill_seeded, &f, &b) == 0, "%s failed in cycle %d of %d (see its message above)",
                      names[m], c + 3, CYCLES + 2);
            lab_unpin(&b);
        }
        xl_pinned p1 = xl_pinned_now();
        cr_assert(xl_mem_read(&r1) == 0, "cannot read /proc/self/status");
        cr_assert(p1.allocations == p0.allocations && p1.registrations == p0.registrations,
                  "after %d cycles of %s and lab_unpin, %ld pinned allocations (%zu bytes) and %ld registrations "
                  "(%zu bytes) more are held: lab_unpin did not release what the method pinned",
                  CYCLES, names[m], p1.allocations - p0.allocations, p1.alloc_bytes - p0.alloc_bytes,
                  p1.registrations - p0.registrations, p1.reg_bytes - p0.reg_bytes);
        double grew = (r1.rss_kib - r0.rss_kib) * 1024.0;
        cr_assert(grew < 0.5 * bytes,
                  "after %d cycles of %s, resident memory grew by %ld KiB: something of each buffer is not freed",
                  CYCLES, names[m], r1.rss_kib - r0.rss_kib);
    }
}

XL_TEST(bad, input, 10, XL_GPU,
        "0 bytes, NULL, 1 PiB, and pages pinned twice give -1 with a message, nothing held, no CUDA error", 30)
{
    static const pin_fn pins[] = {lab_pin_at_alloc, lab_pin_by_copy, lab_pin_in_place};
    static const char *names[] = {"lab_pin_at_alloc", "lab_pin_by_copy", "lab_pin_in_place"};
    fill_ctx f = {1, 0};
    lab_pinned b;
    XL_CHECK(cudaFree(0));
    xl_pinned p0 = xl_pinned_now();
    for (int m = 0; m < 3; m++) {
        cr_assert(pins[m](0, fill_seeded, &f, &b) == -1, "%s(0 bytes) must return -1", names[m]);
        cr_assert(pins[m](4096, NULL, &f, &b) == -1, "%s with fill == NULL must return -1", names[m]);
        cr_assert(pins[m](4096, fill_seeded, &f, NULL) == -1, "%s with out == NULL must return -1", names[m]);
        cr_assert(pins[m]((size_t)1 << 50, fill_seeded, &f, &b) == -1, "%s(1 PiB) must return -1", names[m]);
        cr_assert(b.data == NULL, "%s(1 PiB) failed but left data in *out", names[m]);
        cr_assert(cudaGetLastError() == cudaSuccess, "%s(1 PiB) left a CUDA error pending", names[m]);
    }
    cr_assert(lab_register(NULL, 4096, &b) == -1, "lab_register(NULL, ...) must return -1");
    unsigned char *mem = kit_host_alloc(3 * 4096);
    lab_pinned first, second;
    xl_expect_ok(lab_register(mem + 4096, 100, &first), "lab_register");
    cr_assert(lab_register(mem + 4096 + 10, 50, &second) == -1,
              "registering pages that are already pinned must return -1 (CUDA says "
              "cudaErrorHostMemoryAlreadyRegistered: check what cudaHostRegister returns)");
    cr_assert(cudaGetLastError() == cudaSuccess, "the refused registration left a CUDA error pending");
    cr_assert(kit_is_pinned(mem + 4096), "the refused second registration undid the first");
    lab_unpin(&first);
    lab_unpin(&first); /* zeroed: does nothing */
    lab_unpin(NULL);
    free(mem);
    xl_pinned p1 = xl_pinned_now();
    cr_assert(p1.allocations == p0.allocations && p1.registrations == p0.registrations,
              "bad input left %ld pinned allocations and %ld registrations held", p1.allocations - p0.allocations,
              p1.registrations - p0.registrations);
    cr_assert(f.calls == 0, "fill was called %d times on bad input; check the arguments and the allocation first",
              f.calls);
}
