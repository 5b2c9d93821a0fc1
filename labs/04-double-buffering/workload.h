/* workload.h - lab 04's batches: what the host produces, what the GPU computes, and the right answers.
 *
 * The kit's; do not edit. The explorer and the grader build their lab_job from this. A batch is items
 * random 32-bit words (fresh for every workload). produce writes batch i with a few threads, as a
 * DataLoader's workers would, and can be made to take a set time; compute's kernel occupies the whole
 * GPU (one block per multiprocessor) for a set time before it reads the batch, like a real kernel that
 * fills the GPU, so two of them never run at once. The grader can also hold one batch's stream up after
 * its kernel (wl_slow_batch), so that batches finish out of order, as they do when a real kernel's time
 * depends on its data.
 */
#ifndef LAB04_WORKLOAD_H
#define LAB04_WORKLOAD_H

#include "labs/04-double-buffering/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wl_workers wl_workers;
typedef struct wl_stage_bufs wl_stage_bufs;
typedef struct xl_timeline xl_timeline;

/* A workload: its data and how long its stages take. */
typedef struct {
    size_t items;        /* items per batch */
    uint32_t *pool;      /* 2 * items random words; batch i is a window of it, keyed by i */
    double produce_ms;   /* produce spins until it has taken at least this long (0: just the writing) */
    uint64_t kernel_ns;  /* the kernel's work before it reads the batch */
    lab_result *start;   /* device, one per batch: the batch as compute found it (NULL: not taken) */
    int max_batches;     /* how many start slots there are */
    const uint32_t *seen_host[64]; /* distinct host buffers produce was given (first 64) */
    int n_seen_host;
    int produced;        /* produce calls so far */
    int out_of_order;    /* produce calls whose i was not the next batch */
    int computed;        /* compute calls for a job's batches (i >= 0) so far */
    int compute_out_of_order; /* compute calls whose i was not the next batch */
    int slow_batch;      /* this batch's stream is held up slow_ms after its kernel (-1: none) */
    double slow_ms;
    xl_timeline *tl;     /* records produce and compute spans when not NULL */
    const char *run;     /* their run name on the timeline */
    wl_workers *workers;
    wl_stage_bufs *stage_bufs; /* wl_stages' buffers, stream and events, made once, freed by wl_destroy */
} wl_ctx;

/* wl_create - a workload of batches of items words with fresh random data and the given stage times;
 * start_slots > 0 also records, per batch, what compute found in its buffer. Fails through xl_fail. */
void wl_create(wl_ctx *w, size_t items, double produce_ms, uint64_t kernel_ns, int start_slots);

/* wl_destroy - frees what wl_create allocated */
void wl_destroy(wl_ctx *w);

/* wl_job - a lab_job of batches over w, results into results (pinned, batches long); resets the counts
 * (produced, computed and their out-of-order counts, the host buffers seen) */
lab_job wl_job(wl_ctx *w, int batches, lab_result *results);

/* wl_produce - lab_job.produce: writes batch i (items words) into host */
void wl_produce(uint32_t *host, size_t items, int i, void *ctx);

/* wl_compute - lab_job.compute: enqueues the kernel on stream (and, with start slots, a first pass that
 * records the batch as found); for the slow batch, after the kernel, a host function that holds the stream up */
void wl_compute(const uint32_t *dev, size_t items, lab_result *dev_result, int i, cudaStream_t stream, void *ctx);

/* wl_slow_batch - from now on batch i's stream is held up slow_ms after its kernel, by a host function that
 * sleeps (cudaLaunchHostFunc): what the pipe queues after compute on that stream (the copy of the result
 * back) waits, while the GPU stays free for the other streams, so later batches on other streams finish
 * first (and their kernels write their results) before batch i's result is copied. i = -1: none (the
 * default) */
void wl_slow_batch(wl_ctx *w, int i, double slow_ms);

/* wl_expected - the right result of batch i, computed on the CPU */
lab_result wl_expected(const wl_ctx *w, int i);

/* wl_expected_all - the right results of batches 0 to n - 1 into out, computed on the CPU by a few threads
 * (the same as wl_expected, faster for big batches) */
void wl_expected_all(const wl_ctx *w, int n, lab_result *out);

/* wl_start_results - copies the first n recorded start results into out (host); fails through xl_fail */
void wl_start_results(const wl_ctx *w, lab_result *out, int n);

/* wl_stages - the stage times of one batch, each stage run alone after the one before, reps times; ms.
 * Its buffers, stream and events are made at the first call and kept until wl_destroy (each call still
 * warms up once before it measures).
 * produce: host clock, the median. The rest: events, the fastest run, so that the ideal built from them is
 * a time no pipeline can beat. Two copy-in times: h2d_ms, the batch copied again right after a first copy
 * (the link's own rate), and h2d_fresh_ms, the first copy, right after produce wrote the buffer, which takes
 * longer (the handout quotes by how much, per size and GPU). */
typedef struct {
    double produce_ms, h2d_ms, h2d_fresh_ms, kernel_ms, d2h_ms;
} wl_stage_ms;
void wl_stages(wl_ctx *w, int reps, wl_stage_ms *out);

/* wl_ideal_ms - the shortest a pipeline of batches can take: its busiest stage's total, plus one batch
 * through the other stages (the fill and drain) */
double wl_ideal_ms(const wl_stage_ms *s, int batches);

/* wl_balance - sets produce's and the kernel's times from this machine's figures so that the stages are
 * nearly balanced: t = max(produce alone, copy in of a just-produced batch) / slack, produce takes slack * t
 * and the kernel t, the busiest stage (slack 0.8: two buffers have a little room, one has none); fills *out
 * with the stages as set, measured again (out NULL: not measured again, for a caller that measures the
 * stages itself) */
void wl_balance(wl_ctx *w, double slack, wl_stage_ms *out);

/* wl_produce_alone_ms - the median time of produce alone, writing the whole batch, without the set time */
double wl_produce_alone_ms(wl_ctx *w, int reps);

#ifdef __cplusplus
}
#endif

#endif
