/* lab.cu - lab 10 (the capstone: an inference loop that keeps the GPU fed): the reference solution.
 *
 * For course staff, and for students once the lab is over: the grader must give this file full points. Students edit
 * labs/10-inference-loop/lab.cu, which has the same contract (lab.h).
 *
 * Design. lab_loop_create makes everything: per stream a device pixel buffer, a device result buffer and an
 * executor; per slot a pinned pixel slot and a pinned result slot, with two events, copied (recorded right after the
 * copy in that reads the pixel slot) and arrived (right after the copy out that fills the result slot); and the
 * workers, asleep on a condition variable. Batch i goes on stream i mod streams: copy in, model, copy out, all on that
 * stream, so the stream's own order keeps its device buffers safe (batch i + streams's copy in queues behind batch
 * i's model). Pinned memory is what no stream guards: the events do.
 *
 * The pipelined run is a ring of slots: batch i uses slot i mod slots, which goes FREE (may be written) -> READY
 * (every frame of its batch decoded) -> ISSUED (its copy in is queued) -> FREE (copied has fired) again. Worker w
 * decodes frames w, w + workers, ..., so every worker has a share of every batch: a batch is ready W times sooner
 * than if one worker made it whole, and all W workers decode in any run of at least W frames. Slot k takes batch k
 * first, then batch k + slots once batch k has been issued from it, and so on. The loop's thread issues batches in
 * order as they become READY, delivers them in order, and keeps at most slots batches issued and not yet delivered,
 * so a result slot is written again only after its batch was delivered. A failed decode stops the workers and the
 * issuing; what was issued is still delivered (it is right), and the run returns -1.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/check.h"
#include "common/trace.h"
#include "labs/10-inference-loop/lab.h"

/* ===== The loop ===== */

/* What a pinned slot is doing in a pipelined run. */
enum slot_state {
    SLOT_FREE,  /* no queued copy reads it: frames of its batch may be written */
    SLOT_READY, /* every frame of its batch is decoded: the loop's thread may issue it */
    SLOT_ISSUED /* its copy in is queued: wait for its copied event before writing it again */
};

/* What a worker thread is given. */
typedef struct {
    lab_loop *L;
    int index; /* 0 .. workers - 1: its first frame of each run */
} worker_arg;

struct lab_loop {
    int max_batch, streams, workers, slots;

    /* pinned, max_batch frames or results each: the pipelined run's batch i uses slot i % slots, the async's i % 2 */
    uint8_t *slot[LAB_SLOTS_MAX];
    lab_result *result[LAB_SLOTS_MAX];
    cudaEvent_t copied[LAB_SLOTS_MAX];  /* recorded after the copy in from slot[k]: slot[k] may be written again */
    cudaEvent_t arrived[LAB_SLOTS_MAX]; /* recorded after the copy out into result[k]: result[k] may be read */

    /* the blocking loop's pageable buffers: max_batch frames, max_batch results */
    uint8_t *page_pixels;
    lab_result *page_results;

    /* per stream: batch i uses stream i % streams, and its executor and device buffers */
    cudaStream_t stream[LAB_STREAMS_MAX];
    uint8_t *dev_pixels[LAB_STREAMS_MAX];
    lab_result *dev_results[LAB_STREAMS_MAX];
    mdl_exec *exec[LAB_STREAMS_MAX];

    /* the workers */
    pthread_t thread[LAB_WORKERS_MAX];
    worker_arg arg[LAB_WORKERS_MAX];
    int started;          /* threads started: lab_loop_destroy joins them */
    pthread_mutex_t lock; /* error-checking (a lock mistake is reported, not a silent race); guards what follows */
    pthread_cond_t work;  /* the workers wait here: for a run, for their slot, for quit */
    pthread_cond_t ready; /* the loop's thread waits here: for a slot READY, for a worker done with the run */

    /* the pipelined run, under lock */
    const lab_job *job; /* the open run's */
    int runs;   /* pipelined runs opened so far: each worker takes part in each one */
    int quit;   /* lab_loop_destroy: the workers return */
    int failed; /* a decode failed in this run: nothing more is decoded or issued */
    int idle;   /* workers done with this run */
    enum slot_state state[LAB_SLOTS_MAX];
    int takes[LAB_SLOTS_MAX];   /* the batch slot k takes now: only its frames may be decoded into it */
    int decoded[LAB_SLOTS_MAX]; /* frames of that batch decoded so far */
    int next;                   /* the run's next frame to claim (frames 0 .. workers - 1 are the workers' firsts) */
};

/* ===== Locking, checked ===== */

/* MUST - checks a pthread call as XL_CHECK checks a CUDA call: an error fails the program with one line. The loop's
 * mutex is an error-checking one, so a thread that unlocks it without holding it, or locks it twice, is told so here
 * at once, instead of racing or hanging. */
#define MUST(call)                                                                                                   \
    do {                                                                                                             \
        int must_err_ = (call);                                                                                      \
        if (must_err_ != 0)                                                                                          \
            xl_fail("%s:%d: %s: %s%s", __FILE__, __LINE__, #call, strerror(must_err_),                               \
                    must_err_ == EPERM     ? " (this thread does not hold the loop's lock)"                          \
                    : must_err_ == EDEADLK ? " (this thread holds the loop's lock already)"                          \
                                           : "");                                                                    \
    } while (0)

/* lock - takes the loop's lock; unlock - gives it back (both checked) */
static void lock(lab_loop *L)
{
    MUST(pthread_mutex_lock(&L->lock));
}

static void unlock(lab_loop *L)
{
    MUST(pthread_mutex_unlock(&L->lock));
}

/* sleep_on - releases the lock, sleeps until c is signalled, takes the lock again (the caller then checks again) */
static void sleep_on(pthread_cond_t *c, lab_loop *L)
{
    MUST(pthread_cond_wait(c, &L->lock));
}

/* ===== Batches ===== */

/* batch_count - how many batches the job's frames make, the last one short */
static int batch_count(const lab_job *job)
{
    return (int)(((long long)job->frames + job->batch - 1) / job->batch);
}

/* batch_frames - the frames of batch i: job->batch, fewer in the last batch */
static int batch_frames(const lab_job *job, int i)
{
    return std::min(job->batch, job->frames - i * job->batch);
}

/* check_run - lab.h's refusals for a run, naming fn: 0 when L may run job, else -1 with one line */
static int check_run(const char *fn, const lab_loop *L, const lab_job *job)
{
    const char *why = !L               ? "the loop is NULL"
                      : !job           ? "the job is NULL"
                      : !job->decode   ? "job->decode is NULL"
                      : !job->deliver  ? "job->deliver is NULL"
                                       : NULL;
    if (why) {
        fprintf(stderr, "%s: %s\n", fn, why);
        return -1;
    }
    if (job->frames < 0) {
        fprintf(stderr, "%s: %d frames: need 0 or more\n", fn, job->frames);
        return -1;
    }
    if (job->batch < 1 || job->batch > L->max_batch) {
        fprintf(stderr, "%s: batch %d: need 1 to the loop's max_batch, %d\n", fn, job->batch, L->max_batch);
        return -1;
    }
    return 0;
}

/* stopped - says that a frame could not be decoded, the run stopped with batches batches delivered; -1 (what the
 * run returns) */
static int stopped(const char *fn, int batches)
{
    fprintf(stderr, "%s: a frame could not be decoded: the run stopped, %d batch%s delivered\n", fn, batches,
            batches == 1 ? "" : "es");
    return -1;
}

/* decode_batch - decodes batch i's frames into dst on this thread, in order; 0, or -1 when one failed */
static int decode_batch(const lab_job *job, int i, uint8_t *dst)
{
    int first = i * job->batch, n = batch_frames(job, i);
    for (int f = 0; f < n; f++)
        if (job->decode(first + f, dst + (size_t)f * LAB_IMAGE_BYTES, job->ctx) != 0)
            return -1;
    return 0;
}

/* issue - queues a batch of n frames decoded into pinned slot k on stream s: the copy in, the model (stream s's
 * executor and device buffers), the copy out into result slot k. Then copied[k] says when slot k may be written
 * again, arrived[k] when result slot k holds the results. */
static void issue(lab_loop *L, int k, int s, int n)
{
    XL_RANGE_PUSH("issue");
    XL_CHECK(cudaMemcpyAsync(L->dev_pixels[s], L->slot[k], (size_t)n * LAB_IMAGE_BYTES, cudaMemcpyHostToDevice,
                             L->stream[s]));
    XL_CHECK(cudaEventRecord(L->copied[k], L->stream[s]));
    if (mdl_exec_run(L->exec[s], L->dev_pixels[s], L->dev_results[s], n, L->stream[s]) != 0)
        xl_fail("lab 10's loop: the kit's model could not run a batch (see its message above)");
    XL_CHECK(cudaMemcpyAsync(L->result[k], L->dev_results[s], (size_t)n * sizeof(lab_result), cudaMemcpyDeviceToHost,
                             L->stream[s]));
    XL_CHECK(cudaEventRecord(L->arrived[k], L->stream[s]));
    XL_RANGE_POP();
}

/* deliver_batch - waits until batch i's results are in result slot k, then hands them to the job's deliver */
static void deliver_batch(lab_loop *L, const lab_job *job, int i, int k)
{
    XL_RANGE_PUSH("wait");
    XL_CHECK(cudaEventSynchronize(L->arrived[k])); /* this batch's copy out, nothing else */
    XL_RANGE_POP();
    XL_RANGE_PUSH("deliver");
    job->deliver(i * job->batch, batch_frames(job, i), L->result[k], job->ctx);
    XL_RANGE_POP();
}

/* ===== The blocking run ===== */

extern "C" int lab_run_blocking(lab_loop *L, const lab_job *job)
{
    const char *fn = "lab_run_blocking";
    if (check_run(fn, L, job) != 0)
        return -1;
    int nb = batch_count(job);
    for (int i = 0; i < nb; i++) {
        int n = batch_frames(job, i);
        if (decode_batch(job, i, L->page_pixels) != 0)
            return stopped(fn, i);
        /* what .to('cuda') does from pageable memory: the copy on the current stream, and a wait for it */
        XL_CHECK(cudaMemcpyAsync(L->dev_pixels[0], L->page_pixels, (size_t)n * LAB_IMAGE_BYTES,
                                 cudaMemcpyHostToDevice, L->stream[0]));
        XL_CHECK(cudaStreamSynchronize(L->stream[0]));
        if (mdl_exec_run(L->exec[0], L->dev_pixels[0], L->dev_results[0], n, L->stream[0]) != 0)
            xl_fail("%s: the kit's model could not run a batch of %d (see its message above)", fn, n);
        XL_CHECK(cudaMemcpyAsync(L->page_results, L->dev_results[0], (size_t)n * sizeof(lab_result),
                                 cudaMemcpyDeviceToHost, L->stream[0]));
        XL_CHECK(cudaStreamSynchronize(L->stream[0]));
        job->deliver(i * job->batch, n, L->page_results, job->ctx);
    }
    return 0;
}

/* ===== The async run: two slots, this thread decodes ===== */

extern "C" int lab_run_async(lab_loop *L, const lab_job *job)
{
    const char *fn = "lab_run_async";
    if (check_run(fn, L, job) != 0)
        return -1;
    if (job->frames == 0)
        return 0;
    int nb = batch_count(job), lanes = std::min(L->streams, 2), failed = 0, i;
    if (decode_batch(job, 0, L->slot[0]) != 0)
        return stopped(fn, 0);
    /* Batch i goes from slot i % 2 on stream i % lanes. While it runs, this thread decodes batch i + 1 into the other
     * slot, then delivers batch i - 1: two batches are on the GPU while the host works. */
    for (i = 0; i < nb && !failed; i++) {
        issue(L, i % 2, i % lanes, batch_frames(job, i));
        if (i + 1 != nb) {
            /* the other slot last held batch i - 1, not delivered yet: its copy in must have read it */
            XL_CHECK(cudaEventSynchronize(L->copied[(i + 1) % 2]));
            failed = decode_batch(job, i + 1, L->slot[(i + 1) % 2]);
        }
        if (i > 0)
            deliver_batch(L, job, i - 1, (i - 1) % 2);
    }
    deliver_batch(L, job, i - 1, (i - 1) % 2); /* the last batch issued */
    return failed ? stopped(fn, i) : 0;
}

/* ===== The pipelined run: the workers ===== */

/* decode_share - worker w's part of the open run: its own frame w first (so that every worker decodes in a run of W
 * frames or more), then the oldest frame no worker has claimed, again and again (no worker runs batches ahead of the
 * others: a frame waits only for its own batch), each into its batch's slot once the slot is free for that batch;
 * returns when none is left, or at a failed decode, its own or another worker's. Called, and returns, holding the
 * lock. */
static void decode_share(lab_loop *L, int w)
{
    const lab_job *job = L->job;
    for (int f = w < job->frames ? w : L->next++; f < job->frames && !L->failed; f = L->next++) {
        int i = f / job->batch, k = i % L->slots;
        while (!L->failed && L->takes[k] != i) /* batch i - slots has slot k until it is issued */
            sleep_on(&L->work, L);
        if (L->failed)
            return;
        if (L->state[k] == SLOT_ISSUED) { /* its copy in may still be reading it */
            unlock(L);
            XL_CHECK(cudaEventSynchronize(L->copied[k]));
            lock(L);
            L->state[k] = SLOT_FREE;
        }
        unlock(L);
        int bad = job->decode(f, L->slot[k] + (size_t)(f - i * job->batch) * LAB_IMAGE_BYTES, job->ctx);
        lock(L);
        if (bad) {
            L->failed = 1;
            pthread_cond_broadcast(&L->work); /* the workers waiting for a slot stop too */
            return;
        }
        if (++L->decoded[k] == batch_frames(job, i)) {
            L->state[k] = SLOT_READY;
            pthread_cond_signal(&L->ready);
        }
    }
}

/* worker_main - a worker thread: asleep until a pipelined run opens or the loop is destroyed; decodes its share of
 * every run */
static void *worker_main(void *arg)
{
    const worker_arg *me = (const worker_arg *)arg;
    lab_loop *L = me->L;
    int runs = 0; /* the runs this worker has taken part in */
    lock(L);
    for (;;) {
        while (!L->quit && L->runs == runs)
            sleep_on(&L->work, L);
        if (L->quit)
            break;
        runs = L->runs;
        decode_share(L, me->index);
        L->idle++;
        pthread_cond_signal(&L->ready);
    }
    unlock(L);
    return NULL;
}

/* ===== The pipelined run: the loop's thread ===== */

/* open_run - hands job to the workers: every slot free, nothing issued */
static void open_run(lab_loop *L, const lab_job *job)
{
    lock(L);
    L->job = job;
    L->failed = 0;
    L->idle = 0;
    L->next = L->workers;
    std::fill(L->state, L->state + LAB_SLOTS_MAX, SLOT_FREE); /* a failed run may have left any of them part-made */
    std::iota(L->takes, L->takes + LAB_SLOTS_MAX, 0);         /* slot k takes batch k first */
    std::fill(L->decoded, L->decoded + LAB_SLOTS_MAX, 0);
    L->runs++;
    pthread_cond_broadcast(&L->work);
    unlock(L);
}

/* wait_ready - waits until batch i is READY in slot k, delivering the batches before it, in order, meanwhile
 * (*delivered: the next batch to deliver); 0, or -1 once a decode has failed */
static int wait_ready(lab_loop *L, const lab_job *job, int i, int k, int *delivered)
{
    lock(L);
    while (!L->failed && L->state[k] != SLOT_READY) {
        if (*delivered != i) { /* rather than sleep, hand over the oldest batch still out */
            unlock(L);
            deliver_batch(L, job, *delivered, *delivered % L->slots);
            ++*delivered;
            lock(L);
        } else {
            sleep_on(&L->ready, L);
        }
    }
    int failed = L->failed;
    unlock(L);
    return failed ? -1 : 0;
}

/* close_run - waits until every worker has left the run (no decode after this returns); 0, or -1 when a decode
 * failed */
static int close_run(lab_loop *L)
{
    lock(L);
    while (L->idle != L->workers)
        sleep_on(&L->ready, L);
    int failed = L->failed;
    unlock(L);
    return failed ? -1 : 0;
}

extern "C" int lab_run_pipelined(lab_loop *L, const lab_job *job)
{
    const char *fn = "lab_run_pipelined";
    if (check_run(fn, L, job) != 0)
        return -1;
    if (job->frames == 0)
        return 0;
    int nb = batch_count(job), delivered = 0, i;
    open_run(L, job);
    for (i = 0; i < nb; i++) {
        int k = i % L->slots;
        if (i - delivered == L->slots) { /* result slot k still holds batch i - slots */
            deliver_batch(L, job, delivered, k);
            delivered++;
        }
        if (wait_ready(L, job, i, k, &delivered) != 0)
            break;
        issue(L, k, i % L->streams, batch_frames(job, i));
        lock(L);
        L->state[k] = SLOT_ISSUED;
        L->takes[k] = i + L->slots;
        L->decoded[k] = 0;
        pthread_cond_broadcast(&L->work); /* batch i + slots may now be decoded into slot k */
        unlock(L);
    }
    int failed = close_run(L); /* after a failure, workers may still be decoding: wait for them first */
    for (; delivered < i; delivered++)
        deliver_batch(L, job, delivered, delivered % L->slots);
    return failed ? stopped(fn, delivered) : 0;
}

/* ===== Create and destroy ===== */

/* in_range - 1 when lo <= v <= hi; else 0 with one line naming the argument */
static int in_range(const char *name, int v, int lo, int hi)
{
    if (v >= lo && v <= hi)
        return 1;
    fprintf(stderr, "lab_loop_create: %s %d: need %d to %d\n", name, v, lo, hi);
    return 0;
}

/* made - 1 when err is cudaSuccess; else clears the error, says in one line what could not be made (the what
 * number index), 0 */
static int made(cudaError_t err, const char *what, int index)
{
    if (err == cudaSuccess)
        return 1;
    cudaGetLastError();
    fprintf(stderr, "lab_loop_create: could not make the %s %d: %s\n", what, index, cudaGetErrorString(err));
    return 0;
}

/* make_exec - stream s's executor; 1, or 0 with the error it left cleared and one line */
static int make_exec(lab_loop *L, const mdl_model *m, int s)
{
    L->exec[s] = mdl_exec_create(m, L->max_batch);
    if (L->exec[s])
        return 1;
    cudaGetLastError(); /* mdl_exec_create said why; leave no error behind */
    fprintf(stderr, "lab_loop_create: the executor of stream %d could not be made\n", s);
    return 0;
}

/* start_worker - starts worker w; 1, or 0 with one line */
static int start_worker(lab_loop *L, int w)
{
    L->arg[w] = worker_arg{L, w};
    int err = pthread_create(&L->thread[w], NULL, worker_main, &L->arg[w]);
    if (err != 0) {
        fprintf(stderr, "lab_loop_create: worker %d of %d could not be started: %s\n", w + 1, L->workers,
                strerror(err));
        return 0;
    }
    L->started++;
    return 1;
}

/* stop_workers - tells the workers to return and joins them */
static void stop_workers(lab_loop *L)
{
    lock(L);
    L->quit = 1;
    pthread_cond_broadcast(&L->work);
    unlock(L);
    for (int w = 0; w < L->started; w++)
        MUST(pthread_join(L->thread[w], NULL));
}

/* release - frees everything lab_loop_create made but the threads, in the reverse order (what a create that failed
 * part-way did not make is NULL), and L itself */
static void release(lab_loop *L)
{
    for (int s = L->streams - 1; s >= 0; s--) {
        mdl_exec_destroy(L->exec[s]); /* waits for its work; NULL does nothing */
        if (L->dev_results[s])
            XL_CHECK(cudaFree(L->dev_results[s]));
        if (L->dev_pixels[s])
            XL_CHECK(cudaFree(L->dev_pixels[s]));
        if (L->stream[s])
            XL_CHECK(cudaStreamDestroy(L->stream[s]));
    }
    for (int k = L->slots - 1; k >= 0; k--) {
        if (L->arrived[k])
            XL_CHECK(cudaEventDestroy(L->arrived[k]));
        if (L->copied[k])
            XL_CHECK(cudaEventDestroy(L->copied[k]));
        if (L->result[k])
            XL_CHECK(cudaFreeHost(L->result[k]));
        if (L->slot[k])
            XL_CHECK(cudaFreeHost(L->slot[k]));
    }
    free(L->page_results);
    free(L->page_pixels);
    pthread_cond_destroy(&L->ready);
    pthread_cond_destroy(&L->work);
    pthread_mutex_destroy(&L->lock);
    free(L);
}

extern "C" lab_loop *lab_loop_create(const mdl_model *m, int max_batch, int streams, int workers, int slots)
{
    if (!m) {
        fprintf(stderr, "lab_loop_create: the model is NULL\n");
        return NULL;
    }
    if (!in_range("max_batch", max_batch, 1, LAB_BATCH_MAX) || !in_range("streams", streams, 1, LAB_STREAMS_MAX) ||
        !in_range("workers", workers, 1, LAB_WORKERS_MAX) || !in_range("slots", slots, 2, LAB_SLOTS_MAX))
        return NULL;
    lab_loop *L = (lab_loop *)calloc(1, sizeof *L);
    if (!L) {
        fprintf(stderr, "lab_loop_create: out of host memory\n");
        return NULL;
    }
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&L->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_cond_init(&L->work, NULL);
    pthread_cond_init(&L->ready, NULL);
    L->max_batch = max_batch;
    L->streams = streams;
    L->workers = workers;
    L->slots = slots;

    size_t pixel_bytes = (size_t)max_batch * LAB_IMAGE_BYTES, result_bytes = (size_t)max_batch * sizeof(lab_result);
    L->page_pixels = (uint8_t *)malloc(pixel_bytes);
    L->page_results = (lab_result *)malloc(result_bytes);
    int ok = L->page_pixels && L->page_results;
    if (!ok)
        fprintf(stderr, "lab_loop_create: out of host memory for the blocking loop's buffers\n");
    for (int k = 0; ok && k < slots; k++)
        ok = made(cudaMallocHost((void **)&L->slot[k], pixel_bytes), "pinned slot", k) &&
             made(cudaMallocHost((void **)&L->result[k], result_bytes), "pinned result slot", k) &&
             made(cudaEventCreateWithFlags(&L->copied[k], cudaEventDisableTiming), "copied event of slot", k) &&
             made(cudaEventCreateWithFlags(&L->arrived[k], cudaEventDisableTiming), "arrived event of slot", k);
    for (int s = 0; ok && s < streams; s++)
        ok = made(cudaStreamCreateWithFlags(&L->stream[s], cudaStreamNonBlocking), "stream", s) &&
             made(cudaMalloc((void **)&L->dev_pixels[s], pixel_bytes), "device pixel buffer of stream", s) &&
             made(cudaMalloc((void **)&L->dev_results[s], result_bytes), "device result buffer of stream", s) &&
             make_exec(L, m, s);
    for (int w = 0; ok && w < workers; w++)
        ok = start_worker(L, w);
    if (!ok) {
        lab_loop_destroy(L); /* joins the workers started, releases what was made */
        return NULL;
    }
    return L;
}

extern "C" void lab_loop_destroy(lab_loop *L)
{
    if (!L)
        return;
    stop_workers(L);
    release(L);
}

/* ===== Choosing the batch ===== */

extern "C" int lab_max_batch(size_t free_bytes, int streams)
{
    if (streams < 1 || streams > LAB_STREAMS_MAX) {
        fprintf(stderr, "lab_max_batch: streams %d: need 1 to %d\n", streams, LAB_STREAMS_MAX);
        return -1;
    }
    /* streams x (fixed + b x per_frame) + reserve <= free  <=>  b x streams x per_frame <= free - (reserve + streams
     * x fixed): a subtraction checked first and one division, so nothing overflows whatever free_bytes is */
    const size_t per_frame = MDL_EXEC_PER_FRAME + LAB_IMAGE_BYTES + sizeof(lab_result);
    size_t fixed = LAB_MEM_RESERVE + (size_t)streams * MDL_EXEC_FIXED, frame = (size_t)streams * per_frame;
    if (free_bytes < fixed + frame) /* not even a batch of one */
        return 0;
    return (int)std::min((free_bytes - fixed) / frame, (size_t)LAB_BATCH_MAX);
}

/* usable - 1 for a figure a point may have (not NaN, not negative) */
static int usable(double x)
{
    return x >= 0;
}

static_assert(sizeof(lab_point) % sizeof(double) == 0, "lab_choose_batch keeps doubles after its points");

/* by_batch - qsort's order for points: by batch (both >= 1: the difference cannot overflow) */
static int by_batch(const void *a, const void *b)
{
    return ((const lab_point *)a)->batch - ((const lab_point *)b)->batch;
}

extern "C" int lab_choose_batch(const lab_point *points, int n, double bound_ms, int max_batch)
{
    const char *fn = "lab_choose_batch";
    if (n < 0 || (n != 0 && !points)) {
        fprintf(stderr, "%s: %d points at %p: need n >= 0, and points when n > 0\n", fn, n, (const void *)points);
        return -1;
    }
    if (!(bound_ms > 0) || std::isinf(bound_ms)) { /* NaN fails the first test */
        fprintf(stderr, "%s: bound_ms %g: need a finite bound above 0\n", fn, bound_ms);
        return -1;
    }
    if (max_batch < 1) {
        fprintf(stderr, "%s: max_batch %d: need 1 or more\n", fn, max_batch);
        return -1;
    }
    /* one block: the usable points grouped by batch (p), then each batch's speeds in order (v); n + 1 of each, so
     * never malloc(0) */
    lab_point *p = (lab_point *)malloc(((size_t)n + 1) * (sizeof(lab_point) + sizeof(double)));
    if (!p) {
        fprintf(stderr, "%s: out of host memory for %d points\n", fn, n);
        return -1;
    }
    double *v = (double *)(p + n + 1); /* aligned: a lab_point's size is a multiple of a double's */
    int m = 0;
    for (int a = 0; a < n; a++)
        if (points[a].batch >= 1 && usable(points[a].fps) && usable(points[a].latency_p50_ms) &&
            usable(points[a].latency_p99_ms) && usable(points[a].latency_max_ms))
            p[m++] = points[a];
    qsort(p, (size_t)m, sizeof *p, by_batch);

    int best = 0;
    double best_fps = -1;
    for (int a = 0, z; a < m; a = z) {
        double worst = 0; /* the batch's latency: the worst of its runs */
        for (z = a; z < m && p[z].batch == p[a].batch; z++) {
            worst = std::max(worst, p[z].latency_max_ms);
            v[z] = p[z].fps;
        }
        std::sort(v + a, v + z);
        int runs = z - a;
        double fps = (v[a + (runs - 1) / 2] + v[a + runs / 2]) / 2; /* the median; an odd count takes one run twice */
        /* batches come in increasing order: a later one must be strictly faster, so a tie keeps the smaller */
        if (p[a].batch <= max_batch && worst <= LAB_LATENCY_MARGIN * bound_ms && fps > best_fps) {
            best = p[a].batch;
            best_fps = fps;
        }
    }
    free(p);
    return best;
}
