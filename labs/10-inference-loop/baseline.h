/* baseline.h - lab 10's kit loops and stage measurements, shared by the explorer and the grader: the plain loops a
 * student's are measured against, the three stages of the ideal each measured alone, and the CPU step's balance.
 *
 * The kit's; do not edit, and not part of what you write (that is lab.h). Implemented in baseline.cu, so that the
 * explorer prints exactly what the grader checks.
 */
#ifndef LAB10_BASELINE_H
#define LAB10_BASELINE_H

#include "labs/10-inference-loop/frames.h"
#include "labs/10-inference-loop/lab.h"
#include "labs/10-inference-loop/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===== The kit's loops: lab.h's contract, written plainly (no async one: nothing is judged against it) ===== */

typedef struct base_loop base_loop;
base_loop *base_loop_create(const mdl_model *m, int max_batch, int streams, int workers, int slots);
void base_loop_destroy(base_loop *L);
int base_run_blocking(base_loop *L, const lab_job *job);
int base_run_pipelined(base_loop *L, const lab_job *job);

/* ===== The stages, each alone ===== */

/* The CPU step is set so that the workers' stage runs at 1 / BASE_CPU_PACE of the model's rate as base_balance
 * measures it (its throughput over the named loop's LAB_STREAMS_NAMED streams, after 100 ms of warm-up). On the H100
 * the model gives 3.9 us a frame there, so with 8 workers the CPU step is about 94 us a frame and the workers'
 * stage, about 85,000 frames/s, bounds the ideal: the link carries 300,000 and more, the model 250,000. The pace
 * leaves room for what the host's noise does to the copies in a loop (a copy of a slot the workers have just written
 * runs 1.7x to 5x slower than the link's best, run to run). Paced on the model's one-stream time, the CPU step came
 * out 64 to 116 us between processes (that time varied 2x), and at 64 the loop could not reach 85% of the ideal. */
#define BASE_CPU_PACE 3.0

/* base_balance - cpu_us for workers workers at batch: the larger of making a frame alone (measured here, one thread)
 * and workers * (the model's time a frame, measured here) * BASE_CPU_PACE; a fresh copy in (h2d_us) is measured and
 * reported, not used: right after the host wrote it, a copy is slower by an amount that varies run to run.
 * Fills the parts measured (us a frame) where not NULL. 0, or -1 with a message. */
int base_balance(const mdl_model *m, const fr_source *s, int workers, int batch, double *cpu_us, double *make_us,
                 double *model_us, double *h2d_us);

/* One measurement of the three stages over frames frames in batches of batch. */
typedef struct {
    double cpu_fps;     /* the kit's workers threads decoding every frame (with the spin) into pinned slots, no GPU */
    double cpu_fps_one; /* the same with one thread, over at most 1/8 of the frames */
    double link_fps;    /* per batch: a copy in of a pinned slot and a copy out of its results on another stream,
                         * timed together (the duplex limit in it); frames / the sum: what the link carries at best */
    double compute_fps; /* frames made on the GPU beforehand, streams executors on streams streams: the model alone */
    double ideal_fps;   /* the least of the three */
    const char *bound;  /* "cpu", "link" or "model": which one */
    double h2d_us;      /* a fresh copy in, per frame (median over batches) */
    double pair_us;     /* the copy pair, per frame (median over batches) */
    double model_us;    /* the model alone, per frame */
} base_stages;

typedef struct base_stage_bufs base_stage_bufs;

/* base_stages_create - what base_stages_run needs for batches of up to max_batch: worker threads (asleep between
 * runs), pinned slots, device buffers, streams streams each with an executor. NULL with a message on failure. */
base_stage_bufs *base_stages_create(const mdl_model *m, const fr_source *s, int max_batch, int workers, int streams);
/* base_stages_run - measures the three stages over frames frames in batches of batch (<= max_batch) into out;
 * 0, or -1 with a message */
int base_stages_run(base_stage_bufs *b, int frames, int batch, base_stages *out);
/* base_stages_destroy - joins the threads and releases everything; NULL does nothing */
void base_stages_destroy(base_stage_bufs *b);

#ifdef __cplusplus
}
#endif

#endif
