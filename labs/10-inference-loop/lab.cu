/* lab.cu - lab 10 (the capstone: an inference loop that keeps the GPU fed): YOUR CODE. This is the only file you edit.
 *
 * Read lab.h (the contract) and the handout (README.md). Write the loop's create and destroy, the three runs
 * (blocking; pinned, asynchronous and double-buffered; pipelined, with worker threads decoding ahead into a ring of
 * pinned slots while several streams copy and run the model), and the two rules that choose the batch size.
 * Check it with `make run LAB=10` (the three loops, then a sweep of batch sizes) and `make grade LAB=10`.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/trace.h"
#include "labs/10-inference-loop/lab.h"

/* not_yet - what every function says (once) until you write it; -1 */
static int not_yet(const char *fn, int *said)
{
    if (!*said)
        fprintf(stderr, "%s: not written yet (labs/10-inference-loop/lab.cu)\n", fn);
    *said = 1;
    return -1;
}

/* TODO: everything a loop keeps between runs, all of it made in lab_loop_create: the pageable batch and result
 * buffers (the blocking run's); the pinned slots and their pinned result slots, with the events that say when a slot
 * may be written again and when its results have arrived; per stream a device pixel buffer, a device result buffer
 * and an executor; the streams; the worker threads, and what they share (a mutex, condition variables, the open
 * run's job, the state of each slot). */
struct lab_loop {
    int max_batch, streams, workers, slots;
};

/* ===== Create and destroy ===== */

extern "C" lab_loop *lab_loop_create(const mdl_model *m, int max_batch, int streams, int workers, int slots)
{
    static int said;
    (void)m, (void)max_batch, (void)streams, (void)workers, (void)slots;
    /* TODO: check every argument first (lab.h gives the ranges). Then allocate everything the runs use, here and only
     * here (cudaMallocHost, malloc, cudaMalloc, cudaStreamCreateWithFlags with cudaStreamNonBlocking,
     * cudaEventCreateWithFlags with cudaEventDisableTiming, mdl_exec_create: one executor per stream), and start the
     * workers last (pthread_create). Any failure: undo what was made, join the threads already started, clear the
     * CUDA error (cudaGetLastError), print one line, return NULL. */
    not_yet("lab_loop_create", &said);
    return NULL;
}

extern "C" void lab_loop_destroy(lab_loop *L)
{
    /* TODO: NULL does nothing. Wake the workers and tell them to return (under the mutex, then
     * pthread_cond_broadcast), join them, then release everything lab_loop_create made (mdl_exec_destroy before
     * its stream's cudaStreamDestroy). A create that failed half way calls this too: skip what was never made. */
    (void)L;
}

/* ===== The three runs ===== */

extern "C" int lab_run_blocking(lab_loop *L, const lab_job *job)
{
    static int said;
    (void)L, (void)job;
    /* TODO: lab.h's refusals, before any work. Per batch: decode its frames into the pageable buffer; copy it in with
     * cudaMemcpyAsync on the loop's first stream and wait for that stream; run the model there (mdl_exec_run); copy
     * the results back, wait, deliver. Not cudaMemcpy: it copies on the legacy stream. The last batch is shorter. */
    return not_yet("lab_run_blocking", &said);
}

extern "C" int lab_run_async(lab_loop *L, const lab_job *job)
{
    static int said;
    (void)L, (void)job;
    /* TODO: two pinned slots in turn, this thread decoding. Queue batch i's copy in, model run and copy out (streams 0
     * and 1 in turn), then decode batch i + 1 into the other slot while the GPU works, then deliver. When may a slot
     * be written again, and when may its results be read? Record an event after each copy and wait on the right one
     * (cudaEventSynchronize), never on the whole device. If decode fails: start nothing new, wait for what you
     * queued, return -1. */
    return not_yet("lab_run_async", &said);
}

extern "C" int lab_run_pipelined(lab_loop *L, const lab_job *job)
{
    static int said;
    (void)L, (void)job;
    /* TODO: hand the job to the workers (they decode, never this thread; all of them when there are enough frames),
     * then issue each batch once its slot is full: copy in, model, copy out on stream i mod streams with that
     * stream's executor, delivering in order. A worker writes a slot again only once its last copy in has read it; a
     * result slot is reused only once its batch was delivered (at most slots batches in flight). Before returning,
     * make sure no worker is still decoding; between runs the workers sleep on a condition variable. */
    return not_yet("lab_run_pipelined", &said);
}

/* ===== Choosing the batch ===== */

extern "C" int lab_max_batch(size_t free_bytes, int streams)
{
    static int said;
    (void)free_bytes, (void)streams;
    /* TODO: the largest batch whose memory (lab.h's formula) fits in free_bytes, at most LAB_BATCH_MAX; 0 when none
     * does; -1 for a bad stream count. free_bytes can be anything up to SIZE_MAX: which subtraction can go below
     * zero, and which product can overflow? */
    return not_yet("lab_max_batch", &said);
}

extern "C" int lab_choose_batch(const lab_point *points, int n, double bound_ms, int max_batch)
{
    static int said;
    (void)points, (void)n, (void)bound_ms, (void)max_batch;
    /* TODO: the refusals (lab.h); skip the points lab.h skips; take each batch's runs together (its latency: the
     * largest latency_max_ms; its speed: the median fps); the fastest batch within LAB_LATENCY_MARGIN of the bound
     * and at most max_batch, the smaller on a tie; 0 when none is eligible. */
    return not_yet("lab_choose_batch", &said);
}
