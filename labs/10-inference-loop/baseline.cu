/* baseline.cu - lab 10's kit loops and stage measurements (baseline.h).
 *
 * The kit's; do not edit. The explorer and the grader measure your loops against these in the same run, so read
 * them as the plain way to keep lab.h's rules. Three parts:
 *   - the kit's loops: blocking (decode, copy in, wait, model, copy out, wait, deliver, batch after batch) and
 *     pipelined (worker threads spread every batch's frames over a ring of pinned slots; the calling thread issues
 *     each full slot's copy in, model and copy out on stream i mod S and delivers in order);
 *   - the three stages of the ideal, each measured alone: the workers decoding into pinned slots with no GPU, the
 *     link (a fresh copy in and a copy out, timed together), and the model on frames already on the GPU;
 *   - base_balance, which measures what sets the CPU step's cost.
 * Every CUDA call is checked: a failure prints one line naming the call and returns -1 (or NULL), having released
 * what the function made. Threads sleep on condition variables between runs; nothing here spins but decode itself.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/stats.h"
#include "common/timing.h"
#include "common/trace.h"
#include "labs/10-inference-loop/baseline.h"

/* ===== Sizes, and why ===== */

#define STAGE_SLOTS LAB_SLOTS_NAMED /* slots of batch frames the CPU stage writes in rotation: the named loop's ring,
                                     * so the workers write as much memory as in a loop (no cache-warm shortcut) */
#define LINK_ALONE 5                /* batches whose copy in is also timed alone (h2d_us) */
#define BAL_MAKE_FRAMES 32          /* frames made one at a time for make_us (after one warm-up frame) */
#define BAL_WARMUP 10               /* untimed model runs queued at once, again until BAL_WARM_MS have passed */
#define BAL_WARM_MS 100.0           /* the GPU kept busy this long before the model is timed: its clocks up (timed
                                     * sooner, one process read 15 us a frame and another 29) */
#define BAL_REPS 7                  /* timed model runs a stream (together) and fresh copies (median) */
#define BAL_STREAMS LAB_STREAMS_NAMED /* the model's pace is its throughput over the named loop's streams */

/* ===== Small helpers ===== */

/* FAILED - checks one CUDA call, naming the function fn in scope: 1 (with the line printed) when it failed, else 0 */
#define FAILED(call) xl_cuda_failed((call), fn, #call)

/* frames_in - the frames of batch b of a job of frames frames in batches of batch (the last one holds what is left) */
static int frames_in(int frames, int batch, int b)
{
    int left = frames - b * batch;
    return left < batch ? left : batch;
}

/* batches_of - how many batches frames frames make in batches of batch (>= 1) */
static int batches_of(int frames, int batch)
{
    return frames / batch + (frames % batch != 0);
}

/* elapsed_ms - the time between two timed events already recorded, waiting for the later; -1 on a CUDA error */
static double elapsed_ms(const char *fn, cudaEvent_t start, cudaEvent_t stop)
{
    float ms = 0;
    if (FAILED(cudaEventSynchronize(stop)) || FAILED(cudaEventElapsedTime(&ms, start, stop)))
        return -1;
    return ms;
}

/* ===== The kit's loops: the state ===== */

/* One worker thread of a loop. */
typedef struct {
    base_loop *L;
    int index; /* 0 .. workers - 1: its first frame in a run is this one, so that every worker decodes */
    pthread_t thread;
} loop_worker;

struct base_loop {
    const mdl_model *m;
    int max_batch, streams, workers, slots;
    /* the blocking loop's pageable buffers (malloc), max_batch frames and results */
    uint8_t *host_px;
    lab_result *host_res;
    /* the ring: per slot, pinned pixels (max_batch frames) and pinned results, and its events */
    uint8_t *slot_px[LAB_SLOTS_MAX];
    lab_result *slot_res[LAB_SLOTS_MAX];
    cudaEvent_t copied[LAB_SLOTS_MAX];  /* recorded after the slot's latest copy in */
    cudaEvent_t arrived[LAB_SLOTS_MAX]; /* recorded after the copy out into its result slot */
    /* per stream: the stream, its device buffers and its executor */
    cudaStream_t stream[LAB_STREAMS_MAX];
    uint8_t *dev_px[LAB_STREAMS_MAX];
    lab_result *dev_res[LAB_STREAMS_MAX];
    mdl_exec *exec[LAB_STREAMS_MAX];
    /* the workers; everything below mu is shared with them and read or written under it */
    loop_worker worker[LAB_WORKERS_MAX];
    int started;        /* threads started (joined by destroy) */
    int sync_made;      /* 1 once mu and the condition variables exist */
    pthread_mutex_t mu;
    pthread_cond_t work_cv;  /* workers sleep here between runs */
    pthread_cond_t free_cv;  /* workers wait here for a slot's previous batch to be delivered */
    pthread_cond_t ready_cv; /* the loop's thread waits here for a full slot, or for the workers to stop */
    unsigned long run_gen;   /* bumped when a run starts */
    int quit;                /* destroy: the workers return */
    const lab_job *job;      /* the run's job */
    int cursor;              /* the next frame no worker has claimed (after each worker's first) */
    int stop;                /* 1: claim nothing more (a failure) */
    int fail_frame;          /* the first frame whose decode failed, -1 when none */
    int active;              /* workers still inside the run */
    int delivered;           /* batches delivered so far (written by the loop's thread only) */
    int done[LAB_SLOTS_MAX];  /* frames of the batch being made in the slot that are made */
    int ready[LAB_SLOTS_MAX]; /* the batch the slot holds whole, -1 when none yet */
    int issued;               /* batches issued (the loop's thread only) */
};

/* ===== The kit's loops: create and destroy ===== */

static void *loop_worker_main(void *arg);

/* loop_stop_workers - asks the started workers to return and joins them */
static void loop_stop_workers(base_loop *L)
{
    if (!L->sync_made)
        return;
    pthread_mutex_lock(&L->mu);
    L->quit = 1;
    pthread_cond_broadcast(&L->work_cv);
    pthread_cond_broadcast(&L->free_cv);
    pthread_mutex_unlock(&L->mu);
    for (int w = 0; w < L->started; w++)
        pthread_join(L->worker[w].thread, NULL);
    L->started = 0;
}

extern "C" void base_loop_destroy(base_loop *L)
{
    static const char fn[] = "base_loop_destroy";
    if (L == NULL)
        return;
    loop_stop_workers(L);
    for (int s = 0; s < L->streams; s++) {
        mdl_exec_destroy(L->exec[s]); /* waits for its work */
        if (L->dev_px[s] != NULL)
            FAILED(cudaFree(L->dev_px[s]));
        if (L->dev_res[s] != NULL)
            FAILED(cudaFree(L->dev_res[s]));
        if (L->stream[s] != NULL)
            FAILED(cudaStreamDestroy(L->stream[s]));
    }
    for (int k = 0; k < L->slots; k++) {
        if (L->copied[k] != NULL)
            FAILED(cudaEventDestroy(L->copied[k]));
        if (L->arrived[k] != NULL)
            FAILED(cudaEventDestroy(L->arrived[k]));
        if (L->slot_px[k] != NULL)
            FAILED(cudaFreeHost(L->slot_px[k]));
        if (L->slot_res[k] != NULL)
            FAILED(cudaFreeHost(L->slot_res[k]));
    }
    free(L->host_px);
    free(L->host_res);
    if (L->sync_made) {
        pthread_mutex_destroy(&L->mu);
        pthread_cond_destroy(&L->work_cv);
        pthread_cond_destroy(&L->free_cv);
        pthread_cond_destroy(&L->ready_cv);
    }
    free(L);
}

/* loop_args_refused - lab_loop_create's argument rules, naming fn: -1 with a line when one is broken, else 0 */
static int loop_args_refused(const char *fn, const mdl_model *m, int max_batch, int streams, int workers, int slots)
{
    if (m == NULL)
        return xl_refuse(fn, "m is NULL: make the model with mdl_create first");
    if (max_batch < 1 || max_batch > LAB_BATCH_MAX)
        return xl_refuse(fn, "max_batch is %d: it must be 1 to %d", max_batch, LAB_BATCH_MAX);
    if (streams < 1 || streams > LAB_STREAMS_MAX)
        return xl_refuse(fn, "streams is %d: it must be 1 to %d", streams, LAB_STREAMS_MAX);
    if (workers < 1 || workers > LAB_WORKERS_MAX)
        return xl_refuse(fn, "workers is %d: it must be 1 to %d", workers, LAB_WORKERS_MAX);
    if (slots < 2 || slots > LAB_SLOTS_MAX)
        return xl_refuse(fn, "slots is %d: it must be 2 to %d", slots, LAB_SLOTS_MAX);
    return 0;
}

/* loop_make_buffers - L's host buffers, slots, events, streams, device buffers and executors (its sizes set); 0, or
 * -1 with a line (what was made stays in L for base_loop_destroy) */
static int loop_make_buffers(const char *fn, base_loop *L)
{
    size_t px = (size_t)L->max_batch * LAB_IMAGE_BYTES, res = (size_t)L->max_batch * sizeof(lab_result);
    L->host_px = (uint8_t *)malloc(px);
    L->host_res = (lab_result *)malloc(res);
    if (L->host_px == NULL || L->host_res == NULL)
        return xl_refuse(fn, "no host memory for the blocking loop's buffers (%zu bytes)", px + res);
    for (int k = 0; k < L->slots; k++) {
        if (FAILED(cudaMallocHost((void **)&L->slot_px[k], px)) ||
            FAILED(cudaMallocHost((void **)&L->slot_res[k], res)) ||
            FAILED(cudaEventCreateWithFlags(&L->copied[k], cudaEventDisableTiming)) ||
            FAILED(cudaEventCreateWithFlags(&L->arrived[k], cudaEventDisableTiming)))
            return -1;
    }
    for (int s = 0; s < L->streams; s++) {
        if (FAILED(cudaStreamCreateWithFlags(&L->stream[s], cudaStreamNonBlocking)) ||
            FAILED(cudaMalloc((void **)&L->dev_px[s], px)) || FAILED(cudaMalloc((void **)&L->dev_res[s], res)))
            return -1;
        L->exec[s] = mdl_exec_create(L->m, L->max_batch);
        if (L->exec[s] == NULL)
            return xl_refuse(fn, "stream %d's executor could not be made", s);
    }
    return 0;
}

/* loop_start_workers - L's mutex, condition variables and worker threads; 0, or -1 with a line (the threads started
 * are counted in L->started, for base_loop_destroy) */
static int loop_start_workers(const char *fn, base_loop *L)
{
    if (pthread_mutex_init(&L->mu, NULL) != 0 || pthread_cond_init(&L->work_cv, NULL) != 0 ||
        pthread_cond_init(&L->free_cv, NULL) != 0 || pthread_cond_init(&L->ready_cv, NULL) != 0)
        return xl_refuse(fn, "could not make the workers' mutex and condition variables");
    L->sync_made = 1;
    for (int w = 0; w < L->workers; w++) {
        L->worker[w].L = L;
        L->worker[w].index = w;
        int err = pthread_create(&L->worker[w].thread, NULL, loop_worker_main, &L->worker[w]);
        if (err != 0)
            return xl_refuse(fn, "worker %d of %d did not start: %s", w + 1, L->workers, strerror(err));
        L->started++;
    }
    return 0;
}

extern "C" base_loop *base_loop_create(const mdl_model *m, int max_batch, int streams, int workers, int slots)
{
    static const char fn[] = "base_loop_create";
    if (loop_args_refused(fn, m, max_batch, streams, workers, slots) != 0)
        return NULL;
    base_loop *L = (base_loop *)calloc(1, sizeof(base_loop));
    if (L == NULL) {
        xl_refuse(fn, "no host memory for the loop");
        return NULL;
    }
    L->m = m;
    L->max_batch = max_batch;
    L->streams = streams;
    L->workers = workers;
    L->slots = slots;
    if (loop_make_buffers(fn, L) != 0 || loop_start_workers(fn, L) != 0) {
        base_loop_destroy(L);
        return NULL;
    }
    return L;
}

/* ===== The kit's loops: runs ===== */

/* job_refused - lab.h's rules for a run's job, naming fn: -1 with a line when one is broken, else 0 */
static int job_refused(const char *fn, const base_loop *L, const lab_job *job)
{
    if (L == NULL)
        return xl_refuse(fn, "L is NULL");
    if (job == NULL)
        return xl_refuse(fn, "job is NULL");
    if (job->decode == NULL || job->deliver == NULL)
        return xl_refuse(fn, "job->%s is NULL", job->decode == NULL ? "decode" : "deliver");
    if (job->frames < 0)
        return xl_refuse(fn, "job->frames is %d: it must be 0 or more", job->frames);
    if (job->batch < 1 || job->batch > L->max_batch)
        return xl_refuse(fn, "job->batch is %d: it must be 1 to %d (the loop's max_batch)", job->batch, L->max_batch);
    return 0;
}

/* settle - waits for every stream of L (a failed run's queued work); failures are printed and otherwise ignored */
static void settle(const char *fn, base_loop *L)
{
    for (int s = 0; s < L->streams; s++)
        FAILED(cudaStreamSynchronize(L->stream[s]));
}

/* blocking_batch - batch b of job through the blocking loop: decode on this thread into the pageable buffer, copy
 * in on stream 0 and wait, the model, copy out and wait, deliver. 0, or -1 with a line (nothing left queued). */
static int blocking_batch(const char *fn, base_loop *L, const lab_job *job, int b)
{
    int first = b * job->batch, n = frames_in(job->frames, job->batch, b);
    cudaStream_t st = L->stream[0];
    XL_RANGE_PUSH("decode");
    for (int k = 0; k < n; k++) {
        if (job->decode(first + k, L->host_px + (size_t)k * LAB_IMAGE_BYTES, job->ctx) != 0) {
            XL_RANGE_POP();
            return xl_refuse(fn, "decode failed for frame %d (batch %d): stopped", first + k, b);
        }
    }
    XL_RANGE_POP();
    if (FAILED(cudaMemcpyAsync(L->dev_px[0], L->host_px, (size_t)n * LAB_IMAGE_BYTES, cudaMemcpyHostToDevice, st)) ||
        FAILED(cudaStreamSynchronize(st)) || mdl_exec_run(L->exec[0], L->dev_px[0], L->dev_res[0], n, st) != 0 ||
        FAILED(cudaMemcpyAsync(L->host_res, L->dev_res[0], (size_t)n * sizeof(lab_result), cudaMemcpyDeviceToHost,
                               st)) ||
        FAILED(cudaStreamSynchronize(st))) {
        settle(fn, L);
        return -1;
    }
    job->deliver(first, n, L->host_res, job->ctx);
    return 0;
}

extern "C" int base_run_blocking(base_loop *L, const lab_job *job)
{
    static const char fn[] = "base_run_blocking";
    if (job_refused(fn, L, job) != 0)
        return -1;
    XL_RANGE_PUSH("base_run_blocking");
    int rc = 0;
    for (int b = 0; b < batches_of(job->frames, job->batch) && rc == 0; b++)
        rc = blocking_batch(fn, L, job, b);
    XL_RANGE_POP();
    return rc;
}

/* ----- The pipelined loop: the workers ----- */

/* worker_claim - the next frame for worker w to make, or -1 when there is none (all claimed, or the run stopped);
 * *first says whether w has had its own first frame (frame w). Called with L->mu held. */
static int worker_claim(base_loop *L, int w, int *first)
{
    if (L->stop)
        return -1;
    if (*first) {
        *first = 0;
        if (w < L->job->frames)
            return w;
    }
    return L->cursor < L->job->frames ? L->cursor++ : -1;
}

/* worker_fail - records that worker's frame f failed (decode -1, or a CUDA error: cuda 1) and stops the run; called
 * with L->mu held */
static void worker_fail(base_loop *L, int f, int cuda)
{
    if (!cuda && (L->fail_frame < 0 || f < L->fail_frame))
        L->fail_frame = f;
    L->stop = 1;
    pthread_cond_broadcast(&L->free_cv);
    pthread_cond_signal(&L->ready_cv);
}

/* worker_run - worker w's part of the run: makes claimed frames into their slots until none is left or the run stops.
 * Before writing into a slot it waits for the slot's previous batch to be delivered (so its result slot is free too)
 * and, outside the lock, for that batch's copy in (event copied). Called and returns with L->mu held. */
static void worker_run(base_loop *L, int w)
{
    static const char fn[] = "base_run_pipelined (a worker)";
    const lab_job *job = L->job;
    int first = 1, synced = -1; /* synced: the batch whose slot this worker last waited for */
    for (int f; (f = worker_claim(L, w, &first)) >= 0;) {
        int b = f / job->batch, slot = b % L->slots;
        while (!L->stop && L->delivered <= b - L->slots)
            pthread_cond_wait(&L->free_cv, &L->mu);
        if (L->stop)
            return;
        pthread_mutex_unlock(&L->mu);
        int cuda_bad = 0, decode_bad = 0;
        if (b != synced) {
            cuda_bad = FAILED(cudaEventSynchronize(L->copied[slot]));
            synced = b;
        }
        if (!cuda_bad) {
            XL_RANGE_PUSH("decode");
            uint8_t *dst = L->slot_px[slot] + (size_t)(f - b * job->batch) * LAB_IMAGE_BYTES;
            decode_bad = job->decode(f, dst, job->ctx) != 0;
            XL_RANGE_POP();
        }
        pthread_mutex_lock(&L->mu);
        if (cuda_bad || decode_bad) {
            worker_fail(L, f, cuda_bad);
            return;
        }
        if (++L->done[slot] == frames_in(job->frames, job->batch, b)) {
            L->ready[slot] = b;
            pthread_cond_signal(&L->ready_cv);
        }
    }
}

/* loop_worker_main - a worker's thread: sleeps until a run starts (or destroy), does its part, sleeps again */
static void *loop_worker_main(void *arg)
{
    loop_worker *me = (loop_worker *)arg;
    base_loop *L = me->L;
    unsigned long seen = 0;
    pthread_mutex_lock(&L->mu);
    for (;;) {
        while (!L->quit && L->run_gen == seen)
            pthread_cond_wait(&L->work_cv, &L->mu);
        if (L->quit)
            break;
        seen = L->run_gen;
        worker_run(L, me->index);
        if (--L->active == 0)
            pthread_cond_signal(&L->ready_cv);
    }
    pthread_mutex_unlock(&L->mu);
    return NULL;
}

/* ----- The pipelined loop: the calling thread ----- */

/* run_begin - resets the ring for job and wakes the workers */
static void run_begin(base_loop *L, const lab_job *job)
{
    pthread_mutex_lock(&L->mu);
    L->job = job;
    L->cursor = job->frames < L->workers ? job->frames : L->workers; /* frames 0 .. W - 1 are the workers' firsts */
    L->stop = 0;
    L->fail_frame = -1;
    L->delivered = 0;
    L->issued = 0;
    for (int k = 0; k < L->slots; k++) {
        L->done[k] = 0;
        L->ready[k] = -1;
    }
    L->active = L->workers;
    L->run_gen++;
    pthread_cond_broadcast(&L->work_cv);
    pthread_mutex_unlock(&L->mu);
}

/* run_end - stops the workers' claiming (when stop) and waits until every worker has left the run: no decode after */
static void run_end(base_loop *L, int stop)
{
    pthread_mutex_lock(&L->mu);
    if (stop) {
        L->stop = 1;
        pthread_cond_broadcast(&L->free_cv);
    }
    while (L->active > 0)
        pthread_cond_wait(&L->ready_cv, &L->mu);
    pthread_mutex_unlock(&L->mu);
}

/* deliver_next - waits for the oldest undelivered batch's copy out (its arrived event), delivers it, and frees its
 * slot for the workers; 0, or -1 with a line */
static int deliver_next(const char *fn, base_loop *L, const lab_job *job)
{
    int j = L->delivered, slot = j % L->slots;
    if (FAILED(cudaEventSynchronize(L->arrived[slot])))
        return -1;
    XL_RANGE_PUSH("deliver");
    job->deliver(j * job->batch, frames_in(job->frames, job->batch, j), L->slot_res[slot], job->ctx);
    XL_RANGE_POP();
    pthread_mutex_lock(&L->mu);
    L->delivered++;
    pthread_cond_broadcast(&L->free_cv);
    pthread_mutex_unlock(&L->mu);
    return 0;
}

/* deliver_arrived - delivers, in order, the issued batches whose results are already back (nothing waited for);
 * 0, or -1 with a line */
static int deliver_arrived(const char *fn, base_loop *L, const lab_job *job)
{
    while (L->delivered < L->issued) {
        cudaError_t err = cudaEventQuery(L->arrived[L->delivered % L->slots]);
        if (err == cudaErrorNotReady) {
            (void)cudaGetLastError(); /* not an error: not back yet */
            return 0;
        }
        if (FAILED(err) || deliver_next(fn, L, job) != 0)
            return -1;
    }
    return 0;
}

/* wait_ready - waits until batch i's slot holds it whole; 0, or -1 when the run stopped (a worker failed) */
static int wait_ready(base_loop *L, int i)
{
    int slot = i % L->slots, rc;
    pthread_mutex_lock(&L->mu);
    while (!L->stop && L->ready[slot] != i)
        pthread_cond_wait(&L->ready_cv, &L->mu);
    rc = L->stop ? -1 : 0;
    L->done[slot] = 0; /* for batch i + slots, which no worker starts before batch i is delivered */
    pthread_mutex_unlock(&L->mu);
    return rc;
}

/* issue - queues batch i (its slot full) on stream i mod S: copy in to the stream's device buffer, record copied,
 * the model with the stream's executor, copy out into the slot's result slot, record arrived; 0, or -1 with a line */
static int issue(const char *fn, base_loop *L, const lab_job *job, int i)
{
    int s = i % L->streams, slot = i % L->slots, n = frames_in(job->frames, job->batch, i);
    cudaStream_t st = L->stream[s];
    XL_RANGE_PUSH("issue");
    int bad = FAILED(cudaMemcpyAsync(L->dev_px[s], L->slot_px[slot], (size_t)n * LAB_IMAGE_BYTES,
                                     cudaMemcpyHostToDevice, st)) ||
              FAILED(cudaEventRecord(L->copied[slot], st)) ||
              mdl_exec_run(L->exec[s], L->dev_px[s], L->dev_res[s], n, st) != 0 ||
              FAILED(cudaMemcpyAsync(L->slot_res[slot], L->dev_res[s], (size_t)n * sizeof(lab_result),
                                     cudaMemcpyDeviceToHost, st)) ||
              FAILED(cudaEventRecord(L->arrived[slot], st));
    XL_RANGE_POP();
    if (bad)
        return -1;
    L->issued = i + 1;
    return 0;
}

/* pipeline - the calling thread's part of a run: per batch, in order, delivers what must be (the slot's previous
 * batch, so that the workers can fill it) and what is back, waits for the slot, issues it; at the end delivers the
 * rest. 0, or -1 (a worker's failure, or a line printed here) with nothing more delivered. */
static int pipeline(const char *fn, base_loop *L, const lab_job *job)
{
    int nb = batches_of(job->frames, job->batch);
    for (int i = 0; i < nb; i++) {
        while (L->delivered <= i - L->slots)
            if (deliver_next(fn, L, job) != 0)
                return -1;
        if (deliver_arrived(fn, L, job) != 0 || wait_ready(L, i) != 0 || issue(fn, L, job, i) != 0)
            return -1;
    }
    while (L->delivered < nb)
        if (deliver_next(fn, L, job) != 0)
            return -1;
    return 0;
}

extern "C" int base_run_pipelined(base_loop *L, const lab_job *job)
{
    static const char fn[] = "base_run_pipelined";
    if (job_refused(fn, L, job) != 0)
        return -1;
    if (job->frames == 0)
        return 0;
    XL_RANGE_PUSH("base_run_pipelined");
    run_begin(L, job);
    int rc = pipeline(fn, L, job);
    if (rc != 0)
        settle(fn, L); /* what was issued is waited for, and not delivered */
    run_end(L, rc != 0);
    if (L->fail_frame >= 0)
        xl_refuse(fn, "decode failed for frame %d (batch %d): stopped", L->fail_frame, L->fail_frame / job->batch);
    XL_RANGE_POP();
    return rc;
}

/* ===== The stages: the state ===== */

typedef enum { TASK_MAKE, TASK_FILL } team_task;

struct base_stage_bufs {
    const mdl_model *m;
    const fr_source *src;
    int max_batch, workers, streams;
    int nstreams; /* streams made: streams, and at least 2 (the link's pair) */
    uint8_t *ring;              /* pinned, ring_frames frames: the CPU stage's ring; its first max_batch frames are
                                 * the link's source */
    int ring_frames;            /* max_batch, and at least STAGE_SLOTS x LAB_BATCH_NAMED (the named loop's ring) */
    lab_result *res_host;        /* pinned, max_batch results: the link's copy out lands here */
    cudaStream_t stream[LAB_STREAMS_MAX];
    uint8_t *dev_px[LAB_STREAMS_MAX];     /* per executor, max_batch frames */
    lab_result *dev_res[LAB_STREAMS_MAX]; /* per executor, max_batch results */
    mdl_exec *exec[LAB_STREAMS_MAX];
    cudaEvent_t start, stop;              /* timed */
    cudaEvent_t mark[LAB_STREAMS_MAX];    /* untimed: a stream's end, waited for on another */
    /* the team: workers threads; everything below mu is shared with them and read or written under it */
    pthread_t thread[LAB_WORKERS_MAX];
    int started;
    int sync_made;
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* the team sleeps here between tasks */
    pthread_cond_t idle_cv; /* the caller waits here for the task's end */
    unsigned long gen;      /* bumped when a task starts */
    int quit;
    int active;             /* threads still in the task */
    team_task task;
    int items, cursor;      /* the task's items 0 .. items - 1 and the next unclaimed */
    int batch;              /* TASK_MAKE: frames a slot */
    int fill;               /* TASK_FILL: the byte written */
};

/* ===== The stages: the team ===== */

/* ring_place - where frame k goes in the ring with batches of batch: slot k / batch mod STAGE_SLOTS, place k mod
 * batch in it, as in a loop's ring; the slots wrap sooner where STAGE_SLOTS of them do not fit (large batches, whose
 * ring is far larger than any cache anyway) */
static size_t ring_place(const base_stage_bufs *b, int k, int batch)
{
    int span = STAGE_SLOTS * batch, fit = b->ring_frames / batch * batch;
    return (size_t)(k % (span < fit ? span : fit));
}

/* team_item - item k of the team's task: TASK_MAKE makes frame k (with the spin) into its place in the ring
 * (ring_place); TASK_FILL rewrites the ring's frame k (the link's source) with the byte fill */
static void team_item(base_stage_bufs *b, team_task task, int k, int batch, int fill)
{
    if (task == TASK_MAKE)
        fr_make(b->src, k, b->ring + ring_place(b, k, batch) * LAB_IMAGE_BYTES, 1);
    else
        memset(b->ring + (size_t)k * LAB_IMAGE_BYTES, fill, LAB_IMAGE_BYTES);
}

/* team_main - a team thread: sleeps until a task starts (or destroy), claims items until none is left, sleeps */
static void *team_main(void *arg)
{
    base_stage_bufs *b = (base_stage_bufs *)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->quit && b->gen == seen)
            pthread_cond_wait(&b->work_cv, &b->mu);
        if (b->quit)
            break;
        seen = b->gen;
        while (b->cursor < b->items) {
            int k = b->cursor++;
            team_task task = b->task;
            int batch = b->batch, fill = b->fill;
            pthread_mutex_unlock(&b->mu);
            team_item(b, task, k, batch, fill);
            pthread_mutex_lock(&b->mu);
        }
        if (--b->active == 0)
            pthread_cond_signal(&b->idle_cv);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* team_run - the team does items items of task (batch and fill as team_item takes them); returns when all are done */
static void team_run(base_stage_bufs *b, team_task task, int items, int batch, int fill)
{
    pthread_mutex_lock(&b->mu);
    b->task = task;
    b->items = items;
    b->cursor = 0;
    b->batch = batch;
    b->fill = fill;
    b->active = b->workers;
    b->gen++;
    pthread_cond_broadcast(&b->work_cv);
    while (b->active > 0)
        pthread_cond_wait(&b->idle_cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

/* ===== The stages: create and destroy ===== */

extern "C" void base_stages_destroy(base_stage_bufs *b)
{
    static const char fn[] = "base_stages_destroy";
    if (b == NULL)
        return;
    if (b->sync_made) {
        pthread_mutex_lock(&b->mu);
        b->quit = 1;
        pthread_cond_broadcast(&b->work_cv);
        pthread_mutex_unlock(&b->mu);
        for (int w = 0; w < b->started; w++)
            pthread_join(b->thread[w], NULL);
        pthread_mutex_destroy(&b->mu);
        pthread_cond_destroy(&b->work_cv);
        pthread_cond_destroy(&b->idle_cv);
    }
    for (int s = 0; s < b->nstreams; s++) {
        mdl_exec_destroy(b->exec[s]); /* NULL past streams */
        if (b->dev_px[s] != NULL)
            FAILED(cudaFree(b->dev_px[s]));
        if (b->dev_res[s] != NULL)
            FAILED(cudaFree(b->dev_res[s]));
        if (b->mark[s] != NULL)
            FAILED(cudaEventDestroy(b->mark[s]));
        if (b->stream[s] != NULL)
            FAILED(cudaStreamDestroy(b->stream[s]));
    }
    if (b->start != NULL)
        FAILED(cudaEventDestroy(b->start));
    if (b->stop != NULL)
        FAILED(cudaEventDestroy(b->stop));
    if (b->ring != NULL)
        FAILED(cudaFreeHost(b->ring));
    if (b->res_host != NULL)
        FAILED(cudaFreeHost(b->res_host));
    free(b);
}

/* stages_make_buffers - b's pinned slots, streams, events, device buffers and executors (its sizes set); 0, or -1
 * with a line (what was made stays in b for base_stages_destroy) */
static int stages_make_buffers(const char *fn, base_stage_bufs *b)
{
    size_t px = (size_t)b->max_batch * LAB_IMAGE_BYTES, res = (size_t)b->max_batch * sizeof(lab_result);
    if (FAILED(cudaMallocHost((void **)&b->ring, (size_t)b->ring_frames * LAB_IMAGE_BYTES)) ||
        FAILED(cudaMallocHost((void **)&b->res_host, res)) || FAILED(cudaEventCreate(&b->start)) ||
        FAILED(cudaEventCreate(&b->stop)))
        return -1;
    for (int s = 0; s < b->nstreams; s++) {
        if (FAILED(cudaStreamCreateWithFlags(&b->stream[s], cudaStreamNonBlocking)) ||
            FAILED(cudaEventCreateWithFlags(&b->mark[s], cudaEventDisableTiming)) ||
            FAILED(cudaMalloc((void **)&b->dev_px[s], px)) || FAILED(cudaMalloc((void **)&b->dev_res[s], res)))
            return -1;
        if (s < b->streams && (b->exec[s] = mdl_exec_create(b->m, b->max_batch)) == NULL)
            return xl_refuse(fn, "stream %d's executor could not be made", s);
    }
    return 0;
}

/* stages_start_team - b's mutex, condition variables and team threads; 0, or -1 with a line */
static int stages_start_team(const char *fn, base_stage_bufs *b)
{
    if (pthread_mutex_init(&b->mu, NULL) != 0 || pthread_cond_init(&b->work_cv, NULL) != 0 ||
        pthread_cond_init(&b->idle_cv, NULL) != 0)
        return xl_refuse(fn, "could not make the team's mutex and condition variables");
    b->sync_made = 1;
    for (int w = 0; w < b->workers; w++) {
        int err = pthread_create(&b->thread[w], NULL, team_main, b);
        if (err != 0)
            return xl_refuse(fn, "worker %d of %d did not start: %s", w + 1, b->workers, strerror(err));
        b->started++;
    }
    return 0;
}

extern "C" base_stage_bufs *base_stages_create(const mdl_model *m, const fr_source *s, int max_batch, int workers,
                                               int streams)
{
    static const char fn[] = "base_stages_create";
    if (m == NULL || s == NULL) {
        xl_refuse(fn, "%s is NULL", m == NULL ? "m" : "s");
        return NULL;
    }
    if (max_batch < 1 || max_batch > LAB_BATCH_MAX || workers < 1 || workers > LAB_WORKERS_MAX || streams < 1 ||
        streams > LAB_STREAMS_MAX) {
        xl_refuse(fn, "max_batch %d, workers %d, streams %d: they must be 1 to %d, %d and %d", max_batch, workers,
               streams, LAB_BATCH_MAX, LAB_WORKERS_MAX, LAB_STREAMS_MAX);
        return NULL;
    }
    base_stage_bufs *b = (base_stage_bufs *)calloc(1, sizeof(base_stage_bufs));
    if (b == NULL) {
        xl_refuse(fn, "no host memory for the stage buffers");
        return NULL;
    }
    b->m = m;
    b->src = s;
    b->max_batch = max_batch;
    b->workers = workers;
    b->streams = streams;
    b->nstreams = streams < 2 ? 2 : streams;
    b->ring_frames = max_batch > STAGE_SLOTS * LAB_BATCH_NAMED ? max_batch : STAGE_SLOTS * LAB_BATCH_NAMED;
    if (stages_make_buffers(fn, b) != 0 || stages_start_team(fn, b) != 0) {
        base_stages_destroy(b);
        return NULL;
    }
    return b;
}

/* ===== The stages: measurements ===== */

/* stage_cpu - the CPU stage: the team makes frames 0 .. frames - 1 (with the spin) into the ring, frames / wall time
 * into out->cpu_fps; then one thread (this one) over frames / 8 of them (at least 1) into out->cpu_fps_one */
static void stage_cpu(base_stage_bufs *b, int frames, int batch, base_stages *out)
{
    XL_RANGE_PUSH("stage cpu");
    double t0 = xl_now_ms();
    team_run(b, TASK_MAKE, frames, batch, 0);
    double ms = xl_now_ms() - t0;
    out->cpu_fps = ms > 0 ? frames / (ms * 1e-3) : 0;
    int one = frames / 8 > 0 ? frames / 8 : 1;
    t0 = xl_now_ms();
    for (int k = 0; k < one; k++)
        team_item(b, TASK_MAKE, k, batch, 0);
    ms = xl_now_ms() - t0;
    out->cpu_fps_one = ms > 0 ? one / (ms * 1e-3) : 0;
    XL_RANGE_POP();
}

/* link_pair_ms - one batch of n frames over the link: a copy in of the ring's first n frames on stream A and a copy
 * out of n results on stream B, started together (B waits for A's start) and timed to the later end (B waits for
 * A's end); the time in ms, -1 with a line on a CUDA error. The frames are not rewritten: what the link carries at
 * best (a copy of pinned memory the CPU has just written runs 1.7x to 5x slower, by an amount the host decides) */
static double link_pair_ms(const char *fn, base_stage_bufs *b, int n)
{
    cudaStream_t a = b->stream[0], o = b->stream[1];
    if (FAILED(cudaEventRecord(b->start, a)) || FAILED(cudaStreamWaitEvent(o, b->start, 0)) ||
        FAILED(cudaMemcpyAsync(b->dev_px[0], b->ring, (size_t)n * LAB_IMAGE_BYTES, cudaMemcpyHostToDevice, a)) ||
        FAILED(cudaMemcpyAsync(b->res_host, b->dev_res[0], (size_t)n * sizeof(lab_result), cudaMemcpyDeviceToHost,
                               o)) ||
        FAILED(cudaEventRecord(b->mark[0], a)) || FAILED(cudaStreamWaitEvent(o, b->mark[0], 0)) ||
        FAILED(cudaEventRecord(b->stop, o)))
        return -1;
    return elapsed_ms(fn, b->start, b->stop);
}

/* link_alone_ms - a fresh copy in of n frames alone on stream A (the ring's first n frames rewritten first, untimed):
 * ms, or -1 */
static double link_alone_ms(const char *fn, base_stage_bufs *b, int n, int fill)
{
    cudaStream_t a = b->stream[0];
    team_run(b, TASK_FILL, n, 0, fill);
    if (FAILED(cudaEventRecord(b->start, a)) ||
        FAILED(cudaMemcpyAsync(b->dev_px[0], b->ring, (size_t)n * LAB_IMAGE_BYTES, cudaMemcpyHostToDevice, a)) ||
        FAILED(cudaEventRecord(b->stop, a)))
        return -1;
    return elapsed_ms(fn, b->start, b->stop);
}

/* stage_link - the link: every batch's pair timed alone (after one untimed), link_fps = frames / the sum, pair_us the
 * median per frame; a fresh copy in alone on the first LINK_ALONE batches, h2d_us its median per frame. 0, or -1
 * with a line. */
static int stage_link(const char *fn, base_stage_bufs *b, int frames, int batch, base_stages *out)
{
    int nb = batches_of(frames, batch), alone = nb < LINK_ALONE ? nb : LINK_ALONE;
    double *us = (double *)malloc((size_t)nb * sizeof(double)), sum_ms = 0;
    if (us == NULL)
        return xl_refuse(fn, "no host memory for %d batches' times", nb);
    XL_RANGE_PUSH("stage link");
    int rc = link_pair_ms(fn, b, frames_in(frames, batch, 0)) < 0 ? -1 : 0; /* untimed: the ring's frames read once */
    for (int i = 0; i < nb && rc == 0; i++) {
        int n = frames_in(frames, batch, i);
        double ms = link_pair_ms(fn, b, n);
        rc = ms < 0 ? -1 : 0;
        sum_ms += ms;
        us[i] = ms * 1e3 / n;
    }
    if (rc == 0) {
        out->link_fps = sum_ms > 0 ? frames / (sum_ms * 1e-3) : 0;
        out->pair_us = xl_median(us, nb);
    }
    for (int i = 0; i < alone && rc == 0; i++) {
        int n = frames_in(frames, batch, i);
        double ms = link_alone_ms(fn, b, n, (i * 53 + 2) & 0xff);
        rc = ms < 0 ? -1 : 0;
        us[i] = ms * 1e3 / n;
    }
    if (rc == 0)
        out->h2d_us = xl_median(us, alone);
    XL_RANGE_POP();
    free(us);
    return rc;
}

/* compute_prepare - batch s of frames made on the GPU into the device slot of stream s, for each used stream (a
 * slot is only ever run at its own batch's size or less: a short batch's slot serves no other), and one untimed run
 * of each executor on it, all waited for; 0, or -1 with a line */
static int compute_prepare(const char *fn, base_stage_bufs *b, int frames, int batch, int used)
{
    for (int s = 0; s < used; s++) {
        int n = frames_in(frames, batch, s);
        if (fr_make_gpu(b->src, s * batch, n, b->dev_px[s], b->stream[s]) != 0 ||
            mdl_exec_run(b->exec[s], b->dev_px[s], b->dev_res[s], n, b->stream[s]) != 0)
            return -1;
    }
    for (int s = 0; s < used; s++)
        if (FAILED(cudaStreamSynchronize(b->stream[s])))
            return -1;
    return 0;
}

/* stage_compute - the model alone: every batch of frames run by the executor of stream i mod S on frames already on
 * the GPU (the used streams' slots in turn), timed from a start event on stream 0 (the others wait for it) to stream
 * 0's end after waiting for the others' ends; compute_fps and model_us into out. 0, or -1 with a line. */
static int stage_compute(const char *fn, base_stage_bufs *b, int frames, int batch, base_stages *out)
{
    int nb = batches_of(frames, batch), used = nb < b->streams ? nb : b->streams;
    if (compute_prepare(fn, b, frames, batch, used) != 0)
        return -1;
    XL_RANGE_PUSH("stage compute");
    int bad = FAILED(cudaEventRecord(b->start, b->stream[0]));
    for (int s = 1; s < used && !bad; s++)
        bad = FAILED(cudaStreamWaitEvent(b->stream[s], b->start, 0));
    for (int i = 0; i < nb && !bad; i++) {
        int s = i % used;
        bad = mdl_exec_run(b->exec[s], b->dev_px[s], b->dev_res[s], frames_in(frames, batch, i), b->stream[s]) != 0;
    }
    for (int s = 1; s < used && !bad; s++)
        bad = FAILED(cudaEventRecord(b->mark[s], b->stream[s])) ||
              FAILED(cudaStreamWaitEvent(b->stream[0], b->mark[s], 0));
    bad = bad || FAILED(cudaEventRecord(b->stop, b->stream[0]));
    double ms = bad ? -1 : elapsed_ms(fn, b->start, b->stop);
    XL_RANGE_POP();
    if (ms < 0)
        return -1;
    out->compute_fps = ms > 0 ? frames / (ms * 1e-3) : 0;
    out->model_us = out->compute_fps > 0 ? 1e6 / out->compute_fps : 0;
    return 0;
}

extern "C" int base_stages_run(base_stage_bufs *b, int frames, int batch, base_stages *out)
{
    static const char fn[] = "base_stages_run";
    if (b == NULL || out == NULL)
        return xl_refuse(fn, "%s is NULL", b == NULL ? "b" : "out");
    if (frames < 1)
        return xl_refuse(fn, "frames is %d: it must be 1 or more", frames);
    if (batch < 1 || batch > b->max_batch)
        return xl_refuse(fn, "batch is %d: it must be 1 to %d (the stage buffers' max_batch)", batch, b->max_batch);
    memset(out, 0, sizeof *out);
    stage_cpu(b, frames, batch, out);
    if (stage_link(fn, b, frames, batch, out) != 0 || stage_compute(fn, b, frames, batch, out) != 0) {
        for (int s = 0; s < b->nstreams; s++)
            FAILED(cudaStreamSynchronize(b->stream[s])); /* nothing of a failed measurement left queued */
        return -1;
    }
    out->ideal_fps = out->cpu_fps;
    out->bound = "cpu";
    if (out->link_fps < out->ideal_fps) {
        out->ideal_fps = out->link_fps;
        out->bound = "link";
    }
    if (out->compute_fps < out->ideal_fps) {
        out->ideal_fps = out->compute_fps;
        out->bound = "model";
    }
    return 0;
}

/* ===== The balance ===== */

/* bal_make_us - making a frame alone (no spin), one thread: the median over BAL_MAKE_FRAMES frames each into its own
 * place, after one warm-up frame; -1 with a line when there is no memory */
static double bal_make_us(const char *fn, const fr_source *s)
{
    uint8_t *buf = (uint8_t *)malloc((size_t)BAL_MAKE_FRAMES * LAB_IMAGE_BYTES);
    if (buf == NULL)
        return xl_refuse(fn, "no host memory for %d frames", BAL_MAKE_FRAMES);
    memset(buf, 0, (size_t)BAL_MAKE_FRAMES * LAB_IMAGE_BYTES); /* first touch: its pages are not what is timed */
    double us[BAL_MAKE_FRAMES];
    fr_make(s, 0, buf, 0);
    for (int k = 0; k < BAL_MAKE_FRAMES; k++) {
        double t0 = xl_now_ms();
        fr_make(s, k + 1, buf + (size_t)k * LAB_IMAGE_BYTES, 0);
        us[k] = (xl_now_ms() - t0) * 1e3;
    }
    free(buf);
    return xl_median(us, BAL_MAKE_FRAMES);
}

/* What base_balance's GPU measurements make; everything NULL at first. */
typedef struct {
    cudaStream_t stream[BAL_STREAMS];
    cudaEvent_t start, stop, mark[BAL_STREAMS];
    uint8_t *dev_px[BAL_STREAMS], *host_px; /* batch frames a stream: device; one batch pinned */
    lab_result *dev_res[BAL_STREAMS];
    mdl_exec *exec[BAL_STREAMS];
} bal_gpu;

/* bal_free - releases what bal_make made (any part of it) */
static void bal_free(const char *fn, bal_gpu *g)
{
    for (int s = 0; s < BAL_STREAMS; s++) {
        mdl_exec_destroy(g->exec[s]);
        if (g->dev_px[s] != NULL)
            FAILED(cudaFree(g->dev_px[s]));
        if (g->dev_res[s] != NULL)
            FAILED(cudaFree(g->dev_res[s]));
        if (g->mark[s] != NULL)
            FAILED(cudaEventDestroy(g->mark[s]));
        if (g->stream[s] != NULL)
            FAILED(cudaStreamDestroy(g->stream[s]));
    }
    if (g->host_px != NULL)
        FAILED(cudaFreeHost(g->host_px));
    if (g->start != NULL)
        FAILED(cudaEventDestroy(g->start));
    if (g->stop != NULL)
        FAILED(cudaEventDestroy(g->stop));
}

/* bal_make - g's streams, each with buffers for batch frames and an executor, timed events and one pinned batch;
 * 0, or -1 with a line (bal_free releases what was made) */
static int bal_make(const char *fn, const mdl_model *m, int batch, bal_gpu *g)
{
    size_t px = (size_t)batch * LAB_IMAGE_BYTES;
    if (FAILED(cudaEventCreate(&g->start)) || FAILED(cudaEventCreate(&g->stop)) ||
        FAILED(cudaMallocHost((void **)&g->host_px, px)))
        return -1;
    for (int s = 0; s < BAL_STREAMS; s++) {
        if (FAILED(cudaStreamCreateWithFlags(&g->stream[s], cudaStreamNonBlocking)) ||
            FAILED(cudaEventCreateWithFlags(&g->mark[s], cudaEventDisableTiming)) ||
            FAILED(cudaMalloc((void **)&g->dev_px[s], px)) ||
            FAILED(cudaMalloc((void **)&g->dev_res[s], (size_t)batch * sizeof(lab_result))))
            return -1;
        if ((g->exec[s] = mdl_exec_create(m, batch)) == NULL)
            return xl_refuse(fn, "the executor could not be made");
    }
    return 0;
}

/* bal_runs - reps runs of the model at batch on each of g's streams in turn, queued; 0, or -1 with a line */
static int bal_runs(bal_gpu *g, int batch, int reps)
{
    for (int r = 0; r < reps * BAL_STREAMS; r++) {
        int s = r % BAL_STREAMS;
        if (mdl_exec_run(g->exec[s], g->dev_px[s], g->dev_res[s], batch, g->stream[s]) != 0)
            return -1;
    }
    return 0;
}

/* bal_model_us - the model's throughput at batch, per frame, as a loop runs it: BAL_REPS runs on each of the
 * BAL_STREAMS streams in turn, queued back to back on frames made on the GPU and timed together by events (a start
 * every stream waits for, an end after every stream's), after BAL_WARM_MS of untimed ones (the GPU's clocks up, the
 * kernels loaded). -1 with a line on a failure */
static double bal_model_us(const char *fn, const fr_source *src, bal_gpu *g, int batch)
{
    for (int s = 0; s < BAL_STREAMS; s++)
        if (fr_make_gpu(src, s * batch, batch, g->dev_px[s], g->stream[s]) != 0)
            return -1;
    double until = xl_now_ms() + BAL_WARM_MS;
    do {
        if (bal_runs(g, batch, BAL_WARMUP) != 0)
            return -1;
        for (int s = 0; s < BAL_STREAMS; s++)
            if (FAILED(cudaStreamSynchronize(g->stream[s])))
                return -1;
    } while (xl_now_ms() < until);
    if (FAILED(cudaEventRecord(g->start, g->stream[0])))
        return -1;
    for (int s = 1; s < BAL_STREAMS; s++)
        if (FAILED(cudaStreamWaitEvent(g->stream[s], g->start, 0)))
            return -1;
    if (bal_runs(g, batch, BAL_REPS) != 0)
        return -1;
    for (int s = 1; s < BAL_STREAMS; s++)
        if (FAILED(cudaEventRecord(g->mark[s], g->stream[s])) || FAILED(cudaStreamWaitEvent(g->stream[0], g->mark[s], 0)))
            return -1;
    double ms;
    if (FAILED(cudaEventRecord(g->stop, g->stream[0])) || (ms = elapsed_ms(fn, g->start, g->stop)) < 0)
        return -1;
    return ms * 1e3 / ((double)BAL_REPS * BAL_STREAMS * batch);
}

/* bal_h2d_us - a fresh copy in of batch frames: the pinned buffer rewritten on this thread (untimed), then its copy
 * to the device timed by events; the median of BAL_REPS after one warm-up, per frame; -1 with a line on a failure */
static double bal_h2d_us(const char *fn, bal_gpu *g, int batch)
{
    double ms[BAL_REPS + 1];
    size_t px = (size_t)batch * LAB_IMAGE_BYTES;
    for (int r = 0; r <= BAL_REPS; r++) {
        memset(g->host_px, r + 1, px);
        if (FAILED(cudaEventRecord(g->start, g->stream[0])) ||
            FAILED(cudaMemcpyAsync(g->dev_px[0], g->host_px, px, cudaMemcpyHostToDevice, g->stream[0])) ||
            FAILED(cudaEventRecord(g->stop, g->stream[0])) || (ms[r] = elapsed_ms(fn, g->start, g->stop)) < 0)
            return -1;
    }
    return xl_median(ms + 1, BAL_REPS) * 1e3 / batch; /* ms[0]: the warm-up */
}

extern "C" int base_balance(const mdl_model *m, const fr_source *s, int workers, int batch, double *cpu_us,
                            double *make_us, double *model_us, double *h2d_us)
{
    static const char fn[] = "base_balance";
    if (m == NULL || s == NULL)
        return xl_refuse(fn, "%s is NULL", m == NULL ? "m" : "s");
    if (workers < 1 || workers > LAB_WORKERS_MAX)
        return xl_refuse(fn, "workers is %d: it must be 1 to %d", workers, LAB_WORKERS_MAX);
    if (batch < 1 || batch > LAB_BATCH_MAX)
        return xl_refuse(fn, "batch is %d: it must be 1 to %d", batch, LAB_BATCH_MAX);
    XL_RANGE_PUSH("base_balance");
    double make = bal_make_us(fn, s), model = -1, h2d = -1;
    bal_gpu g;
    memset(&g, 0, sizeof g);
    if (make >= 0 && bal_make(fn, m, batch, &g) == 0) {
        model = bal_model_us(fn, s, &g, batch);
        if (model >= 0)
            h2d = bal_h2d_us(fn, &g, batch);
    }
    for (int k = 0; k < BAL_STREAMS && (model < 0 || h2d < 0); k++)
        if (g.stream[k] != NULL)
            FAILED(cudaStreamSynchronize(g.stream[k])); /* a failure may leave work queued: wait before freeing */
    bal_free(fn, &g);
    XL_RANGE_POP();
    if (make < 0 || model < 0 || h2d < 0)
        return -1;
    double paced = workers * model * BASE_CPU_PACE;
    if (cpu_us != NULL)
        *cpu_us = make > paced ? make : paced;
    if (make_us != NULL)
        *make_us = make;
    if (model_us != NULL)
        *model_us = model;
    if (h2d_us != NULL)
        *h2d_us = h2d;
    return 0;
}
