/* baseline.h - lab 08's kit helpers shared by the explorer and the grader: result hashes, the host's read of an
 * array, and the kit's measurement of the three ways that lab_choose is graded against.
 *
 * The kit's; do not edit, and not part of what you write (that is lab.h). Implemented in baseline.cu beside the
 * base_* ways, so that the explorer prints exactly what the grader checks.
 */
#ifndef LAB08_BASELINE_H
#define LAB08_BASELINE_H

#include "labs/08-zero-copy/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A way counts as "as fast" as the fastest at a sweep point when it takes at most this many times as long. */
#define BASE_DECIDE_MARGIN 1.5

/* base_out_hash - sum over k < count of (2k + 1) * out[k], mod 2^64, computed on the GPU after the work queued on s
 * (out is device memory); waits for it. Lets a timed round's result be checked without downloading it. Returns 0 and
 * sets *ok 0 on a CUDA error (ok may be NULL). */
uint64_t base_out_hash(const uint32_t *out, size_t count, cudaStream_t s, int *ok);

/* base_expect_hash - the same hash of what out must hold after reps passes of j over host_src (the host's copy of
 * the array j reads: element k is host_src[first + (k / run) * stride + k % run]), when every out[k] started as
 * init: sum of (2k + 1) * (init + reps * element k), wrapping as uint32_t per element. */
uint64_t base_expect_hash(const uint32_t *host_src, const lab_job *j, uint32_t init, int reps);

/* base_host_touch - the host reads one uint32_t of every host page of [p, p + bytes) and returns their sum (so that
 * the reads are not optimised away): "the host reads it again", which faults managed pages back when they are not
 * on the host. */
uint64_t base_host_touch(const void *p, size_t bytes);

/* base_fill_mix - p[i] = a word mixed from i and seed, for every i < n (device memory), queued on s: fresh data for
 * arrays too large to fill from the host. 0, or -1 on a CUDA error (cleared). */
int base_fill_mix(uint32_t *p, size_t n, uint32_t seed, cudaStream_t s);

/* base_count_wrong - after the work queued on s (waits for it): how many k < p->count have out[k] (device memory)
 * other than init + reps * the word base_fill_mix(.., seed, ..) put at element k's index, and the least such k in
 * *first_bad (SIZE_MAX when none). *ok 0 on a CUDA error (cleared). Checks results too large to download. */
uint64_t base_count_wrong(const uint32_t *out, const lab_pattern *p, uint32_t seed, uint32_t init, int reps,
                          size_t *first_bad, cudaStream_t s, int *ok);

/* The kit's measurement of one GPU for lab_choose: an array of n elements read in runs of LAB_LINE_ELEMS
 * (base_pattern) at each of LAB_FRACTIONS. Times in ms, medians. */
typedef struct {
    size_t n;                         /* elements of the array measured */
    double copy_ms;                   /* one cudaMemcpyAsync of the whole array, pinned host to device */
    double prefetch_ms;               /* base_read_managed with prefetch 1, dense, reps 1, on an array without
                                       * advice, with the host's read afterwards, minus one dense device pass */
    double dev_ms[LAB_N_FRACTIONS];   /* one base_gather pass from device memory */
    double map_ms[LAB_N_FRACTIONS];   /* one base_gather pass from the mapped array (zero-copy) */
    double spread;                    /* the largest max/min over the kept readings of any figure above */
} base_rates;

/* base_measure_rates - fills r for an array of n elements (n >= 2^20): mapped (host pointer of mapped pinned
 * memory), dev (device memory, n elements), managed (managed memory without advice, n elements) and out (device,
 * n elements) are the caller's; all are overwritten. Each figure is the median of reps (>= 3) timed runs after a
 * warm-up, on stream s. Returns 0, or -1 with why (one line) on a CUDA error. */
int base_measure_rates(base_rates *r, uint32_t *mapped, uint32_t *dev, uint32_t *managed, uint32_t *out, size_t n,
                       int reps, cudaStream_t s, char *why, size_t why_len);

/* base_way_ms - the model's time of a way at fraction index fi (into LAB_FRACTIONS) and reuse count:
 * copied = copy + reuse * dev pass; mapped = reuse * mapped pass; managed = prefetch + reuse * dev pass. */
double base_way_ms(const base_rates *r, int fi, int reuse, lab_way way);

/* base_accepted - 1 when way (LAB_COPIED, LAB_MAPPED or LAB_MANAGED) takes at most BASE_DECIDE_MARGIN times the
 * fastest way's time at (fi, reuse), else 0 (also for LAB_NONE and any other value) */
int base_accepted(const base_rates *r, int fi, int reuse, int way);

#ifdef __cplusplus
}
#endif

#endif
