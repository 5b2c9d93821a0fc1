/* frames.cu - lab 10's frame source (frames.h): the decode and deliver callbacks of a lab_job, what they record,
 * and the kit's right results for every frame.
 *
 * The kit's; do not edit. Frame f is a window of a random pool (2 frames long, drawn from the seed) at a 4-byte
 * aligned offset o(f), XORed with a 32-bit key of f, written 32 bits at a time; the same integer function runs on the
 * GPU (fr_make_gpu), so the kit's reference (fr_expected) needs no transfer of pixels. decode then spins on the host
 * clock until the call has taken cpu_us: CPU time that W threads on W cores do W times as fast. The callbacks record
 * under a mutex that is never held while a frame is made or a decode spins.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <new>

#include "common/check.h"
#include "common/threads.h"
#include "common/timing.h"
#include "labs/10-inference-loop/frames.h"

#define THREADS 256                      /* threads a block */
#define GRID_X_CAP 1024                  /* blocks of fr_make_gpu's grid along a frame */
#define GRID_Y_CAP 65535                 /* frames of a grid at once */
#define EXPECT_BATCH 64                  /* fr_expected's batch */
#define WORDS (LAB_IMAGE_BYTES / 4)      /* 32-bit words a frame */
#define POISON_DIGEST 0x0badf00du        /* the digest of a result never delivered */

/* ===== A frame: the same function on the host and the GPU ===== */

/* mix64 - a 64-bit finalizer (splitmix64's): every input bit moves every output bit */
static __host__ __device__ inline uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* frame_hash - 64 bits of (seed, f): the low 32 are f's key, the high 32 pick its offset */
static __host__ __device__ inline uint64_t frame_hash(uint64_t seed, int f)
{
    return mix64(seed ^ mix64((uint64_t)(int64_t)f));
}

/* frame_word0 - the pool's word where frame f's window starts: o(f) / 4, o(f) < LAB_IMAGE_BYTES */
static __host__ __device__ inline size_t frame_word0(uint64_t h)
{
    return (size_t)((h >> 32) % WORDS);
}

/* make_kernel - frames first .. first + n - 1 into dst (word-aligned): word j of frame k is pool[o / 4 + j] ^ key */
static __global__ void make_kernel(const uint32_t *pool, uint64_t seed, int first, int n, uint32_t *dst)
{
    for (int k = blockIdx.y; k < n; k += gridDim.y) {
        uint64_t h = frame_hash(seed, first + k);
        const uint32_t *src = pool + frame_word0(h);
        uint32_t key = (uint32_t)h, *out = dst + (size_t)k * WORDS;
        for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < WORDS; j += (size_t)gridDim.x * blockDim.x)
            out[j] = src[j] ^ key;
    }
}

/* ===== The source ===== */

struct fr_source {
    uint64_t seed;
    int max_frames;
    uint32_t *pool;         /* host: 2 * LAB_IMAGE_BYTES random bytes */
    uint32_t *dev_pool;     /* the same on the GPU */
    std::atomic<double> cpu_us;
    int fail_at;            /* for jobs opened from now on; -1: none */
    double fail_wait_ms;    /* how long its decode sleeps before it fails */
    pthread_mutex_t lock;   /* guards what follows; never held while a frame is made */
    std::atomic<int> open;  /* a job is open (fr_job to fr_close) */
    std::atomic<int> busy;  /* decode calls running now */
    int busy_at_close;      /* and when fr_close closed the job */
    int frames, batch, first; /* the job as given */
    int rec_frames;         /* frames recorded: frames clamped to 0 .. max_frames */
    int job_fail;           /* the job's failing frame; -1: none */
    fr_frame_rec *frame;    /* max_frames */
    fr_deliver_rec *deliver; /* deliver_cap */
    int deliver_cap, delivers;
    int bad_range, late, failed;
    lab_result *results;    /* max_frames, as delivered (poison where none was) */
};

/* make_into - frame f of s into dst (LAB_IMAGE_BYTES, any alignment): the pool's words XORed with f's key, two at a
 * time (a 64-bit word XORed with the key in both halves gives the same bytes). Word by word, gcc -O2 does not
 * vectorize the loop: a frame took 37 us instead of 6 on the machine the kit is built on, 45 us on the H100's host. */
static void make_into(const fr_source *s, int f, uint8_t *dst)
{
    uint64_t h = frame_hash(s->seed, f);
    const uint8_t *src = (const uint8_t *)(s->pool + frame_word0(h));
    uint64_t key = (uint32_t)h;
    key |= key << 32;
    for (size_t j = 0; j < LAB_IMAGE_BYTES / 8; j++) {
        uint64_t w;
        memcpy(&w, src + 8 * j, 8);
        w ^= key;
        memcpy(dst + 8 * j, &w, 8);
    }
}

/* spin_until - burns this core until the host clock reads end_ms (no system call: the clock is the vDSO's) */
static void spin_until(double end_ms)
{
    while (xl_now_ms() < end_ms) {
    }
}

extern "C" fr_source *fr_create(uint64_t seed, int max_frames)
{
    if (max_frames < 0) {
        fprintf(stderr, "fr_create: max_frames %d is negative\n", max_frames);
        return NULL;
    }
    fr_source *s = new (std::nothrow) fr_source();
    if (!s) {
        fprintf(stderr, "fr_create: out of host memory\n");
        return NULL;
    }
    size_t n = (size_t)max_frames;
    s->seed = seed;
    s->max_frames = max_frames;
    s->cpu_us = 0.0;
    s->fail_at = -1;
    s->job_fail = -1;
    s->deliver_cap = 2 * max_frames + 16;
    pthread_mutex_init(&s->lock, NULL);
    s->pool = (uint32_t *)malloc(2 * LAB_IMAGE_BYTES);
    s->frame = (fr_frame_rec *)calloc(n + 1, sizeof *s->frame);
    s->deliver = (fr_deliver_rec *)calloc((size_t)s->deliver_cap, sizeof *s->deliver);
    s->results = (lab_result *)calloc(n + 1, sizeof *s->results);
    if (!s->pool || !s->frame || !s->deliver || !s->results) {
        fprintf(stderr, "fr_create: out of host memory (%d frames)\n", max_frames);
        fr_destroy(s);
        return NULL;
    }
    uint64_t state = seed;
    for (size_t j = 0; j < 2 * WORDS; j += 2) {
        uint64_t z = mix64(state += 0x632BE59BD9B4E019ULL);
        s->pool[j] = (uint32_t)z;
        s->pool[j + 1] = (uint32_t)(z >> 32);
    }
    cudaError_t err = cudaMalloc(&s->dev_pool, 2 * LAB_IMAGE_BYTES);
    if (err != cudaSuccess) {
        s->dev_pool = NULL;
    } else {
        err = cudaMemcpy(s->dev_pool, s->pool, 2 * LAB_IMAGE_BYTES, cudaMemcpyHostToDevice);
    }
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        fprintf(stderr, "fr_create: the pool on the GPU: %s\n", cudaGetErrorString(err));
        fr_destroy(s);
        return NULL;
    }
    return s;
}

extern "C" void fr_destroy(fr_source *s)
{
    if (!s)
        return;
    if (s->dev_pool)
        XL_CHECK(cudaFree(s->dev_pool));
    free(s->pool);
    free(s->frame);
    free(s->deliver);
    free(s->results);
    pthread_mutex_destroy(&s->lock);
    delete s;
}

extern "C" void fr_set_cpu_us(fr_source *s, double cpu_us)
{
    if (s)
        s->cpu_us = cpu_us > 0 ? cpu_us : 0.0;
}

extern "C" double fr_cpu_us(const fr_source *s)
{
    return s ? s->cpu_us.load() : 0.0;
}

extern "C" void fr_fail_at(fr_source *s, int k, double wait_ms)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->fail_at = k < 0 ? -1 : k;
    s->fail_wait_ms = k < 0 || !(wait_ms > 0) ? 0.0 : wait_ms;
    pthread_mutex_unlock(&s->lock);
}

extern "C" void fr_make(const fr_source *s, int f, uint8_t *dst, int spin)
{
    double t0 = xl_now_ms();
    if (!s || !dst)
        return;
    make_into(s, f, dst);
    if (spin)
        spin_until(t0 + s->cpu_us.load() * 1e-3);
}

/* ===== The job's callbacks ===== */

/* decode_frame - the work of fr_decode: the job's frame k (the source's first + k) into dst, spun to cpu_us;
 * records it */
static int decode_frame(int k, uint8_t *dst, void *ctx)
{
    fr_source *s = (fr_source *)ctx;
    double t0 = xl_now_ms();
    long tid = xl_tid();
    int open = s->open.load();
    pthread_mutex_lock(&s->lock);
    int in_range = k >= 0 && k < s->rec_frames, fails = open && in_range && k == s->job_fail;
    int source_frame = s->first + k;
    if (!open)
        s->late++;
    if (!in_range)
        s->bad_range++;
    if (fails) {
        s->failed++;
        fr_frame_rec *r = &s->frame[k];
        *r = fr_frame_rec{r->decodes + 1, tid, dst, t0, xl_now_ms(), r->delivered, r->deliver_ms};
    }
    double wait_ms = s->fail_wait_ms;
    pthread_mutex_unlock(&s->lock);
    if (fails) {
        xl_sleep_ms(wait_ms);
        return -1;
    }
    if (!dst) {
        fprintf(stderr, "decode: frame %d: dst is NULL\n", k);
        return -1;
    }
    make_into(s, source_frame, dst);
    if (!open || !in_range) /* a late or stray call: the pixels, no spin, no frame record */
        return 0;
    spin_until(t0 + s->cpu_us.load() * 1e-3);
    double t1 = xl_now_ms();
    pthread_mutex_lock(&s->lock);
    if (k < s->rec_frames) { /* still this job's */
        fr_frame_rec *r = &s->frame[k];
        *r = fr_frame_rec{r->decodes + 1, tid, dst, t0, t1, r->delivered, r->deliver_ms};
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* fr_decode - lab_job.decode: decode_frame, counted in the source's busy while it runs */
static int fr_decode(int k, uint8_t *dst, void *ctx)
{
    fr_source *s = (fr_source *)ctx;
    s->busy++;
    int rc = decode_frame(k, dst, ctx);
    s->busy--;
    return rc;
}

/* fr_deliver - lab_job.deliver: records the call and copies each result into the job's results at its index */
static void fr_deliver(int first, int n, const lab_result *results, void *ctx)
{
    fr_source *s = (fr_source *)ctx;
    double at = xl_now_ms();
    long tid = xl_tid();
    pthread_mutex_lock(&s->lock);
    if (s->delivers < s->deliver_cap)
        s->deliver[s->delivers] = fr_deliver_rec{first, n, tid, at};
    s->delivers++;
    if (first < 0 || n < 0 || first > s->rec_frames - n || (n > 0 && !results))
        s->bad_range++;
    if (results && n > 0) {
        long lo = first < 0 ? 0 : first, hi = (long)first + n;
        if (hi > s->rec_frames)
            hi = s->rec_frames;
        for (long k = lo; k < hi; k++) {
            s->frame[k].delivered++;
            s->frame[k].deliver_ms = at;
            s->results[k] = results[k - first];
        }
    }
    pthread_mutex_unlock(&s->lock);
}

extern "C" lab_job fr_job(fr_source *s, int frames, int batch, int first)
{
    lab_job job = {frames, batch, fr_decode, fr_deliver, s};
    if (!s)
        return job;
    int rec = frames < 0 ? 0 : frames;
    if (rec > s->max_frames) {
        fprintf(stderr, "fr_job: %d frames, more than the source's %d: only the first %d are recorded\n", frames,
                s->max_frames, s->max_frames);
        rec = s->max_frames;
    }
    pthread_mutex_lock(&s->lock);
    s->frames = frames;
    s->batch = batch;
    s->first = first;
    s->rec_frames = rec;
    s->job_fail = s->fail_at;
    memset(s->frame, 0, (size_t)rec * sizeof *s->frame);
    s->delivers = 0;
    s->bad_range = s->late = s->failed = 0;
    for (int k = 0; k < rec; k++) {
        for (int c = 0; c < LAB_CLASSES; c++)
            s->results[k].score[c] = NAN;
        s->results[k].digest = POISON_DIGEST;
        s->results[k].reserved = 0;
    }
    s->open = 1;
    pthread_mutex_unlock(&s->lock);
    return job;
}

extern "C" void fr_close(fr_source *s)
{
    if (!s)
        return;
    s->open = 0;
    s->busy_at_close = s->busy.load();
}

extern "C" fr_log fr_log_get(const fr_source *s)
{
    fr_log log;
    memset(&log, 0, sizeof log);
    if (!s)
        return log;
    fr_source *w = (fr_source *)s; /* the lock only */
    pthread_mutex_lock(&w->lock);
    log.frames = s->rec_frames;
    log.batch = s->batch;
    log.first = s->first;
    log.frame = s->frame;
    log.deliver = s->deliver;
    log.delivers = s->delivers < s->deliver_cap ? s->delivers : s->deliver_cap;
    log.bad_range = s->bad_range;
    log.late = s->late;
    log.failed = s->failed;
    log.busy_at_close = s->busy_at_close;
    log.results = s->results;
    pthread_mutex_unlock(&w->lock);
    return log;
}

/* ===== The right results ===== */

extern "C" int fr_make_gpu(const fr_source *s, int first, int n, uint8_t *dev, cudaStream_t stream)
{
    if (!s || !dev || n < 0 || ((uintptr_t)dev & 3) != 0) {
        fprintf(stderr, "fr_make_gpu: %s\n", !s ? "s is NULL" : !dev ? "dev is NULL" : n < 0 ? "n is negative"
                                                                                      : "dev is not 4-byte aligned");
        return -1;
    }
    if (n == 0)
        return 0;
    unsigned gx = (WORDS + THREADS - 1) / THREADS, gy = n < GRID_Y_CAP ? (unsigned)n : GRID_Y_CAP;
    make_kernel<<<dim3(gx < GRID_X_CAP ? gx : GRID_X_CAP, gy), THREADS, 0, stream>>>(s->dev_pool, s->seed, first, n,
                                                                                     (uint32_t *)dev);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        fprintf(stderr, "fr_make_gpu: the frame kernel: %s\n", cudaGetErrorString(err));
        return -1;
    }
    return 0;
}

extern "C" int fr_expected(const fr_source *s, const mdl_model *m, int first, int n, lab_result *out)
{
    static const char fn[] = "fr_expected";
    if (!s || !m || n < 0 || (n > 0 && !out)) {
        fprintf(stderr, "%s: %s\n", fn, !s ? "s is NULL" : !m ? "m is NULL" : n < 0 ? "n is negative" : "out is NULL");
        return -1;
    }
    if (n == 0)
        return 0;
    cudaStream_t stream = NULL;
    uint8_t *pixels = NULL;
    lab_result *dres = NULL;
    mdl_exec *e = NULL;
    int rc = -1;
    size_t pixel_bytes = (size_t)EXPECT_BATCH * LAB_IMAGE_BYTES;
    cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err != cudaSuccess) {
        stream = NULL;
        fprintf(stderr, "%s: cudaStreamCreateWithFlags: %s\n", fn, cudaGetErrorString(err));
        goto out;
    }
    if ((err = cudaMalloc(&pixels, pixel_bytes + EXPECT_BATCH * sizeof(lab_result))) != cudaSuccess) {
        pixels = NULL;
        fprintf(stderr, "%s: cudaMalloc: %s\n", fn, cudaGetErrorString(err));
        goto out;
    }
    dres = (lab_result *)(pixels + pixel_bytes);
    if (!(e = mdl_exec_create(m, EXPECT_BATCH)))
        goto out;
    for (int i = 0; i < n; i += EXPECT_BATCH) {
        int b = n - i < EXPECT_BATCH ? n - i : EXPECT_BATCH;
        if (fr_make_gpu(s, first + i, b, pixels, stream) || mdl_exec_run(e, pixels, dres, b, stream))
            goto out;
        if ((err = cudaMemcpyAsync(out + i, dres, (size_t)b * sizeof(lab_result), cudaMemcpyDeviceToHost,
                                   stream)) != cudaSuccess) {
            fprintf(stderr, "%s: cudaMemcpyAsync of the results: %s\n", fn, cudaGetErrorString(err));
            goto out;
        }
    }
    if ((err = cudaStreamSynchronize(stream)) != cudaSuccess) {
        fprintf(stderr, "%s: cudaStreamSynchronize: %s\n", fn, cudaGetErrorString(err));
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        (void)cudaGetLastError();
    mdl_exec_destroy(e);
    if (stream)
        XL_CHECK(cudaStreamSynchronize(stream));
    if (pixels)
        XL_CHECK(cudaFree(pixels));
    if (stream)
        XL_CHECK(cudaStreamDestroy(stream));
    return rc;
}

/* ===== Checking a job ===== */

/* say - formats into why (len bytes) after what is there already */
static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...)
{
    if (!why || len == 0)
        return;
    size_t used = strnlen(why, len - 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + used, len - used, fmt, ap);
    va_end(ap);
}

/* What was wrong with the deliver call that held a frame (fr_check). */
typedef struct {
    int call;     /* its index in the log; -1: none flagged */
    int order;    /* 1: out of order, after call `after`; 0: its size or start was wrong */
    int after;
} call_flag;

/* want_n - how many frames the job's batch starting at first holds */
static int want_n(const fr_source *s, int first)
{
    int left = s->rec_frames - first;
    return left < s->batch ? left : s->batch;
}

/* flag_calls - marks, per frame, the first deliver call that held it out of order (its first is not where the
 * frames delivered so far end) or in a batch of the wrong size or start */
static void flag_calls(const fr_source *s, call_flag *flag)
{
    int n = s->delivers < s->deliver_cap ? s->delivers : s->deliver_cap, end = 0, last = -1;
    for (int c = 0; c < n; c++) {
        const fr_deliver_rec *d = &s->deliver[c];
        if (d->n <= 0 || d->first < 0 || d->first >= s->rec_frames)
            continue;
        int order = d->first != end;
        int size = s->batch < 1 || d->first % s->batch != 0 || d->n != want_n(s, d->first);
        if (order || size) {
            int hi = d->first + (d->n < s->rec_frames - d->first ? d->n : s->rec_frames - d->first);
            for (int k = d->first; k < hi; k++)
                if (flag[k].call < 0)
                    flag[k] = call_flag{c, order && !size ? 1 : 0, last};
        }
        if (d->first + d->n > end)
            end = d->first + d->n;
        last = c;
    }
}

/* score_off - the largest |got - want| over the scores (infinite for a NaN), its class in *at */
static double score_off(const lab_result *got, const lab_result *want, int *at)
{
    double worst = 0;
    *at = 0;
    for (int c = 0; c < LAB_CLASSES; c++) {
        double d = fabs((double)got->score[c] - (double)want->score[c]);
        if (!(d <= worst)) {
            worst = isnan(d) ? INFINITY : d;
            *at = c;
        }
    }
    return worst;
}

/* frame_wrong - 1 when frame k fails one of fr_check's rules */
static int frame_wrong(const fr_source *s, const lab_result *want, const call_flag *flag, int k)
{
    int at;
    const lab_result *got = &s->results[k];
    return s->frame[k].delivered != 1 || got->digest != want[k].digest || flag[k].call >= 0 ||
           !(score_off(got, &want[k], &at) <= LAB_SCORE_TOL);
}

/* explain - why frame k is wrong, the first reason that holds, into why */
static void explain(const fr_source *s, const lab_result *want, int upto, const call_flag *flag, int k, char *why,
                    size_t len)
{
    const lab_result *got = &s->results[k];
    int batch = s->batch > 0 ? s->batch : 1, at;
    say(why, len, "frame %d (batch %d of %d): ", k, k / batch, s->batch);
    if (s->frame[k].delivered == 0) {
        say(why, len, "never delivered");
        return;
    }
    if (s->frame[k].delivered > 1) {
        say(why, len, "delivered %d times", s->frame[k].delivered);
        return;
    }
    if (got->digest != want[k].digest) {
        for (int j = 0; j < upto; j++)
            if (j != k && want[j].digest == got->digest) {
                say(why, len, "digest 0x%08x is frame %d's: delivered out of order?", got->digest, j);
                return;
            }
        say(why, len, "digest 0x%08x, want 0x%08x: not this frame's pixels (a buffer refilled or overwritten "
                      "before the model read it?)", got->digest, want[k].digest);
        return;
    }
    if (flag[k].call >= 0) {
        const fr_deliver_rec *d = &s->deliver[flag[k].call];
        if (!flag[k].order && s->batch >= 1 && d->first % s->batch != 0)
            say(why, len, "in a batch that starts at frame %d where the job's batches start at multiples of %d",
                d->first, s->batch);
        else if (!flag[k].order)
            say(why, len, "in a batch of %d where the job's %s %d", d->n,
                want_n(s, d->first) < s->batch ? "last batch holds" : "batches are",
                want_n(s, d->first) < s->batch ? want_n(s, d->first) : s->batch);
        else if (flag[k].after >= 0)
            say(why, len, "delivered out of order: deliver(first %d, n %d) came after deliver(first %d, n %d)",
                d->first, d->n, s->deliver[flag[k].after].first, s->deliver[flag[k].after].n);
        else
            say(why, len, "delivered out of order: the first deliver call held frames from %d", d->first);
        return;
    }
    double off = score_off(got, &want[k], &at);
    say(why, len, "score[%d] is %.6g, want %.6g: off by %.3g (tolerance %g)", at, got->score[at], want[k].score[at],
        off, LAB_SCORE_TOL);
}

extern "C" int fr_check(const fr_source *s, const lab_result *want, int upto, char *why, size_t len)
{
    if (why && len > 0)
        why[0] = '\0';
    if (!s || (upto > 0 && !want) || upto < 0 || (s && upto > s->rec_frames)) {
        say(why, len, "fr_check: %s", !s ? "s is NULL" : upto < 0 ? "upto is negative"
                                         : upto > 0 && !want ? "want is NULL"
                                                             : "upto is past the job's frames");
        return -1;
    }
    fr_source *w = (fr_source *)s; /* the lock only */
    call_flag *flag = (call_flag *)malloc(((size_t)s->rec_frames + 1) * sizeof *flag);
    if (!flag) {
        say(why, len, "fr_check: out of host memory");
        return -1;
    }
    pthread_mutex_lock(&w->lock);
    for (int k = 0; k < s->rec_frames; k++)
        flag[k].call = -1;
    flag_calls(s, flag);
    int wrong = 0, first_wrong = -1;
    for (int k = 0; k < upto; k++)
        if (frame_wrong(s, want, flag, k)) {
            if (first_wrong < 0)
                first_wrong = k;
            wrong++;
        }
    if (first_wrong >= 0) {
        explain(s, want, upto, flag, first_wrong, why, len);
        if (wrong > 1)
            say(why, len, "; %d of %d frames wrong", wrong, upto);
    }
    pthread_mutex_unlock(&w->lock);
    free(flag);
    return wrong;
}

/* ===== Figures ===== */

/* by_value - qsort's order for doubles, and for longs */
static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static int by_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* distinct - how many distinct values the n longs hold (sorted here) */
static int distinct(long *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_long);
    int d = 0;
    for (int i = 0; i < n; i++)
        d += i == 0 || v[i] != v[i - 1];
    return d;
}

extern "C" int fr_point(const fr_source *s, lab_point *out)
{
    if (!s || !out || s->rec_frames < 1)
        return -1;
    int n = s->rec_frames;
    double *lat = (double *)malloc((size_t)n * sizeof *lat);
    if (!lat)
        return -1;
    fr_source *w = (fr_source *)s; /* the lock only */
    double start = INFINITY, end = -INFINITY;
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    for (int k = 0; k < n && rc == 0; k++) {
        const fr_frame_rec *r = &s->frame[k];
        if (r->decodes < 1 || r->delivered < 1) {
            rc = -1;
            break;
        }
        lat[k] = r->deliver_ms - r->start_ms;
        start = r->start_ms < start ? r->start_ms : start;
        end = r->deliver_ms > end ? r->deliver_ms : end;
    }
    pthread_mutex_unlock(&w->lock);
    if (rc == 0 && end > start) {
        qsort(lat, (size_t)n, sizeof *lat, by_value);
        int p99 = (int)ceil(0.99 * n) - 1;
        out->batch = s->batch;
        out->fps = n / ((end - start) * 1e-3);
        out->latency_p50_ms = n % 2 ? lat[n / 2] : 0.5 * (lat[n / 2 - 1] + lat[n / 2]);
        out->latency_p99_ms = lat[p99 < 0 ? 0 : p99];
        out->latency_max_ms = lat[n - 1];
    } else {
        rc = -1;
    }
    free(lat);
    return rc;
}

/* decoded_values - per decoded frame of the job, tid (what 0) or batch buffer (what 1), into v; how many */
static int decoded_values(const fr_source *s, long *v, int what)
{
    int m = 0, batch = s->batch > 0 ? s->batch : 1;
    for (int k = 0; k < s->rec_frames; k++) {
        const fr_frame_rec *r = &s->frame[k];
        if (r->decodes < 1)
            continue;
        v[m++] = what == 0 ? r->tid : (long)((uintptr_t)r->dst - (uintptr_t)(k % batch) * LAB_IMAGE_BYTES);
    }
    return m;
}

/* count_distinct - fr_distinct_threads (what 0) and fr_distinct_dst (what 1) */
static int count_distinct(const fr_source *s, int what)
{
    if (!s)
        return 0;
    long *v = (long *)malloc(((size_t)s->rec_frames + 1) * sizeof *v);
    if (!v)
        return -1;
    fr_source *w = (fr_source *)s; /* the lock only */
    pthread_mutex_lock(&w->lock);
    int m = decoded_values(s, v, what);
    pthread_mutex_unlock(&w->lock);
    int d = distinct(v, m);
    free(v);
    return d;
}

extern "C" int fr_distinct_threads(const fr_source *s)
{
    return count_distinct(s, 0);
}

extern "C" int fr_distinct_dst(const fr_source *s)
{
    return count_distinct(s, 1);
}
