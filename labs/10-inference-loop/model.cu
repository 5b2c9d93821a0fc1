/* model.cu - lab 10's model (model.h) and the executor calls lab.h declares: a small fixed network, FP32 GEMMs
 * through cuBLAS, and what the kit needs to watch it.
 *
 * The kit's; do not edit. Per frame: prep (pixels normalized and cut into 196 patches of 768 values, and the frame's
 * digest), GEMM 1 + bias + ReLU, GEMM 2 + bias + ReLU, the mean over the patches, the head GEMM + bias, then a scale
 * and shift per class, set once at mdl_create on frames of a private generator so that every class's score has mean
 * 0 and spread 1. An executor holds one forward pass's state for up to max_batch frames in one device allocation
 * (workspace, activations, pooled features, head output, digests) and a cuBLAS handle taken from a per-process pool.
 * The kit records every run (mdl_log_*), can slow runs down (mdl_slow) or hold one (mdl_hold_run), and computes the
 * same network on the CPU in double precision (mdl_reference_cpu) to check the GPU's.
 */
#include <cublas_v2.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <new>

#include "common/check.h"
#include "common/delay.h"
#include "common/faults.h"
#include "common/threads.h"
#include "common/timing.h"
#include "common/trace.h"
#include "labs/10-inference-loop/model.h"

#define THREADS 256                 /* threads a block */
#define GRID_CAP 4096               /* blocks of a grid-stride kernel, at most */
#define MAX_BATCH 65535             /* an executor's largest max_batch: prep's grid has a block row per frame */
#define POOL_MAX 64                 /* cuBLAS handles the pool keeps; more are destroyed when given back */
#define CAL_FRAMES 256              /* frames the calibration runs */
#define CAL_BATCH 64                /* at this batch */
#define CAL_SEED 0x5ca1ab1ec0ffeeULL /* the calibration frames' generator: private to the model */
#define NORM_MEAN 127.5f            /* a uint8's mean, per channel */
#define NORM_STD 73.9f              /* and its spread: uniform bytes normalize to mean 0, spread 1 */

#define PATCHES_X (LAB_IMAGE_W / MDL_PATCH)            /* 14 patches a row */
#define ROW_BYTES (LAB_IMAGE_W * LAB_IMAGE_C)          /* 672 bytes a pixel row */
#define PATCH_ROW_BYTES (MDL_PATCH * LAB_IMAGE_C)      /* 48 bytes of a patch's row */
#define ACT_A_FLOATS ((size_t)MDL_PATCHES * MDL_PATCH_VALUES) /* activation A, a frame: the patches, then layer 2 */
#define ACT_B_FLOATS ((size_t)MDL_PATCHES * MDL_DIM)          /* activation B, a frame: layer 1 */

static_assert(LAB_IMAGE_W % MDL_PATCH == 0 && PATCHES_X * PATCHES_X == MDL_PATCHES, "patches tile the frame");
static_assert((ACT_A_FLOATS + ACT_B_FLOATS + MDL_DIM) * sizeof(float) == MDL_EXEC_PER_FRAME,
              "lab.h's MDL_EXEC_PER_FRAME is the activations and pooled features of a frame");
static_assert(sizeof(lab_result) == 72, "lab_result is 72 bytes");
static_assert(LAB_IMAGE_BYTES % 4 == 0, "a frame is whole 32-bit words");

/* ===== The model and the executor ===== */

/* The parameters, in this order, in one array of floats (host and device alike). */
#define W1_AT 0
#define B1_AT (W1_AT + MDL_PATCH_VALUES * MDL_DIM)
#define W2_AT (B1_AT + MDL_DIM)
#define B2_AT (W2_AT + MDL_DIM * MDL_DIM)
#define W3_AT (B2_AT + MDL_DIM)
#define B3_AT (W3_AT + MDL_DIM * LAB_CLASSES)
#define SCALE_AT (B3_AT + LAB_CLASSES)
#define SHIFT_AT (SCALE_AT + LAB_CLASSES)
#define PARAMS (SHIFT_AT + LAB_CLASSES)

struct mdl_model {
    float *host; /* PARAMS floats: weights row-major [in, out], biases, calibration scale and shift */
    float *dev;  /* the same on the GPU */
};

struct mdl_exec {
    const mdl_model *m;
    int max_batch;
    cublasHandle_t handle;
    void *mem;          /* the one device allocation: every buffer below lies in it */
    void *workspace;    /* MDL_WORKSPACE_BYTES, cuBLAS's */
    float *act_a;       /* [196 max_batch, 768]: the patches, then layer 2's output [196 max_batch, MDL_DIM] */
    float *act_b;       /* [196 max_batch, MDL_DIM]: layer 1's output */
    float *pooled;      /* [max_batch, MDL_DIM] */
    float *head;        /* [max_batch, LAB_CLASSES] */
    uint32_t *digest;   /* [max_batch] */
    cudaEvent_t done;   /* recorded at the end of each run: destroy waits for it */
    std::atomic<cudaStream_t> stream; /* the stream of the last run; 0 before the first */
};

/* exec_device_bytes - what an executor of max_batch frames allocates on the device itself (its handle aside) */
static size_t exec_device_bytes(int max_batch)
{
    size_t per_frame = MDL_EXEC_PER_FRAME + LAB_CLASSES * sizeof(float) + sizeof(uint32_t);
    return MDL_WORKSPACE_BYTES + (size_t)max_batch * per_frame;
}

/* Per-channel normalization, as prep's argument. */
typedef struct {
    float mean[LAB_IMAGE_C], inv_std[LAB_IMAGE_C];
} norm_consts;

/* norm - the model's normalization constants */
static norm_consts norm(void)
{
    norm_consts n;
    for (int c = 0; c < LAB_IMAGE_C; c++) {
        n.mean[c] = NORM_MEAN;
        n.inv_std[c] = 1.0f / NORM_STD;
    }
    return n;
}

/* ===== Settings and the run log (shared by every thread) ===== */

static std::atomic<int> tf32_next{0}; /* mdl_set_tf32 */
static std::atomic<int> live{0};      /* executors created and not destroyed */

static struct {
    pthread_mutex_t lock;
    mdl_run_rec *recs; /* the open log, NULL when closed */
    int max;
    int open;
    unsigned gen;      /* changes at every start and stop, so a run that straddles one writes nothing */
    int runs;          /* runs asked for since the last start (the hold's numbering) */
    uint64_t before_ns, between_ns;
    int hold_k;        /* -1: none */
    double hold_ms;
} watch = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, 0, 0, 0, -1, 0.0};

/* What one run was told at its entry. */
typedef struct {
    int slot;          /* its record in the log; -1: none */
    unsigned gen;
    uint64_t before_ns, between_ns;
    double hold_ms;    /* 0: not held */
} run_ticket;

/* log_enter - numbers and records a run at its entry; what the slow and hold modes ask of it */
static run_ticket log_enter(const mdl_exec *e, cudaStream_t stream, const uint8_t *pixels, lab_result *results,
                            int batch)
{
    mdl_run_rec r = {e, stream, pixels, results, batch, xl_tid(), xl_now_ms(), 0};
    run_ticket t;
    pthread_mutex_lock(&watch.lock);
    int k = watch.runs++;
    t.slot = watch.open && k < watch.max ? k : -1;
    if (t.slot >= 0)
        watch.recs[t.slot] = r;
    t.gen = watch.gen;
    t.before_ns = watch.before_ns;
    t.between_ns = watch.between_ns;
    t.hold_ms = k == watch.hold_k ? watch.hold_ms : 0.0;
    pthread_mutex_unlock(&watch.lock);
    return t;
}

/* log_leave - writes what the run returned into its record, when the log it entered is still open; returns result */
static int log_leave(const run_ticket *t, int result)
{
    if (t->slot < 0)
        return result;
    pthread_mutex_lock(&watch.lock);
    if (watch.open && watch.gen == t->gen)
        watch.recs[t->slot].result = result;
    pthread_mutex_unlock(&watch.lock);
    return result;
}

extern "C" void mdl_log_start(mdl_run_rec *recs, int max)
{
    pthread_mutex_lock(&watch.lock);
    watch.recs = recs;
    watch.max = recs && max > 0 ? max : 0;
    watch.open = 1;
    watch.gen++;
    watch.runs = 0;
    pthread_mutex_unlock(&watch.lock);
}

extern "C" int mdl_log_stop(void)
{
    pthread_mutex_lock(&watch.lock);
    int n = watch.open ? watch.runs : 0;
    watch.open = 0;
    watch.recs = NULL;
    watch.max = 0;
    watch.gen++;
    pthread_mutex_unlock(&watch.lock);
    return n;
}

extern "C" int mdl_log_count(void)
{
    pthread_mutex_lock(&watch.lock);
    int n = watch.open ? watch.runs : 0;
    pthread_mutex_unlock(&watch.lock);
    return n;
}

extern "C" void mdl_slow(uint64_t before_ns, uint64_t between_ns)
{
    pthread_mutex_lock(&watch.lock);
    watch.before_ns = before_ns;
    watch.between_ns = between_ns;
    pthread_mutex_unlock(&watch.lock);
}

extern "C" void mdl_hold_run(int k, double hold_ms)
{
    pthread_mutex_lock(&watch.lock);
    watch.hold_k = k < 0 || !(hold_ms > 0) ? -1 : k;
    watch.hold_ms = hold_ms;
    pthread_mutex_unlock(&watch.lock);
}

extern "C" void mdl_set_tf32(int on)
{
    tf32_next = on ? 1 : 0;
}

extern "C" int mdl_exec_live(void)
{
    return live;
}

extern "C" size_t mdl_exec_bytes(int batch)
{
    return MDL_EXEC_FIXED + (batch > 0 ? (size_t)batch * MDL_EXEC_PER_FRAME : 0);
}

extern "C" cudaStream_t mdl_exec_stream_of(const mdl_exec *e)
{
    return e ? e->stream.load() : (cudaStream_t)0;
}

/* ===== The handle pool ===== */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t pool[POOL_MAX];
static int pooled;

/* handle_take - a handle from the pool, or a new one; CUBLAS_STATUS_SUCCESS or cublasCreate's failure */
static cublasStatus_t handle_take(cublasHandle_t *h)
{
    pthread_mutex_lock(&pool_lock);
    int have = pooled > 0;
    if (have)
        *h = pool[--pooled];
    pthread_mutex_unlock(&pool_lock);
    return have ? CUBLAS_STATUS_SUCCESS : cublasCreate(h);
}

/* handle_give - h back to the pool, set back to the default stream and workspace (it must not keep a freed
 * workspace or a stream that may be destroyed); destroyed when the pool is full or the reset fails */
static void handle_give(cublasHandle_t h)
{
    if (cublasSetStream(h, 0) == CUBLAS_STATUS_SUCCESS) {
        pthread_mutex_lock(&pool_lock);
        if (pooled < POOL_MAX) {
            pool[pooled++] = h;
            h = NULL;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    if (h)
        cublasDestroy(h);
}

/* ===== Kernels ===== */

/* prep_kernel - block (p, f): patch p of frame f into patches (row f * 196 + p, 768 values ordered dy, dx, channel,
 * normalized), and the patch's share of the frame's digest added into digest[f] */
static __global__ void prep_kernel(const uint8_t *pixels, float *patches, uint32_t *digest, norm_consts nc)
{
    __shared__ uint32_t warp_sums[THREADS / 32];
    const int p = blockIdx.x, py = p / PATCHES_X, px = p % PATCHES_X;
    const size_t f = blockIdx.y;
    const uint8_t *frame = pixels + f * LAB_IMAGE_BYTES;
    float *out = patches + (f * MDL_PATCHES + p) * MDL_PATCH_VALUES;
    uint32_t sum = 0;
    for (int v = threadIdx.x; v < MDL_PATCH_VALUES; v += blockDim.x) {
        int dy = v / PATCH_ROW_BYTES, r = v % PATCH_ROW_BYTES, c = r % LAB_IMAGE_C;
        uint32_t i = (uint32_t)((py * MDL_PATCH + dy) * ROW_BYTES + px * PATCH_ROW_BYTES + r);
        uint32_t pix = frame[i];
        out[v] = ((float)pix - nc.mean[c]) * nc.inv_std[c];
        sum += pix * (2u * i + 1u); /* mod 2^32, exact in any order */
    }
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31) == 0)
        warp_sums[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t block = 0;
        for (int w = 0; w < (int)(blockDim.x + 31) / 32; w++)
            block += warp_sums[w];
        atomicAdd(&digest[f], block);
    }
}

/* bias_relu_kernel - x[r, c] = max(x[r, c] + bias[c], 0) over count values of rows of MDL_DIM, grid-stride */
static __global__ void bias_relu_kernel(float *x, const float *bias, size_t count)
{
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step)
        x[i] = fmaxf(x[i] + bias[i % MDL_DIM], 0.0f);
}

/* pool_kernel - block f: pooled[f, c] = the mean of x[f * 196 + p, c] over the frame's 196 patches */
static __global__ void pool_kernel(const float *x, float *pooled)
{
    const size_t f = blockIdx.x;
    for (int c = threadIdx.x; c < MDL_DIM; c += blockDim.x) {
        const float *col = x + f * MDL_PATCHES * MDL_DIM + c;
        float s = 0.0f;
        for (int p = 0; p < MDL_PATCHES; p++)
            s += col[(size_t)p * MDL_DIM];
        pooled[f * MDL_DIM + c] = s * (1.0f / MDL_PATCHES);
    }
}

/* finish_kernel - results[f]: score[k] = (head[f, k] + b3[k]) * scale[k] + shift[k], the digest, reserved 0 */
static __global__ void finish_kernel(const float *head, const float *b3, const float *scale, const float *shift,
                                     const uint32_t *digest, lab_result *results, int batch)
{
    size_t count = (size_t)batch * LAB_CLASSES, step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
        size_t f = i / LAB_CLASSES;
        int k = (int)(i % LAB_CLASSES);
        results[f].score[k] = (head[i] + b3[k]) * scale[k] + shift[k];
        if (k == 0) {
            results[f].digest = digest[f];
            results[f].reserved = 0;
        }
    }
}

/* calib_frames_kernel - n frames of the calibration's private generator into dst, 32 bits at a time */
static __global__ void calib_frames_kernel(uint32_t *dst, int first, int n)
{
    const size_t words = LAB_IMAGE_BYTES / 4, count = (size_t)n * words, step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
        uint64_t z = CAL_SEED ^ (((uint64_t)(first + i / words) << 32) | (i % words));
        z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
        z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
        dst[i] = (uint32_t)(z ^ (z >> 33));
    }
}

/* grid_of - blocks for a grid-stride loop over items (>= 1), capped at GRID_CAP */
static unsigned int grid_of(size_t items)
{
    size_t blocks = (items + THREADS - 1) / THREADS;
    return (unsigned int)(blocks < GRID_CAP ? blocks : GRID_CAP);
}

/* ===== One forward pass ===== */

/* launched - 0 when the kernel just launched (what) was accepted; else -1 with a message naming it */
static int launched(const char *what)
{
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        return 0;
    fprintf(stderr, "mdl_exec_run: %s: %s\n", what, cudaGetErrorString(err));
    return -1;
}

/* blas_ok - 0 for CUBLAS_STATUS_SUCCESS; else -1 with a message naming fn and the call */
static int blas_ok(cublasStatus_t st, const char *fn, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", fn, call, cublasGetStatusName(st));
    return -1;
}

/* gemm - queues y = x w (all row-major: x [rows, k], w [k, n], y [rows, n]): for column-major cuBLAS that is
 * y^T [n, rows] = w^T [n, k] x^T [k, rows], each matrix read as it lies */
static int gemm(cublasHandle_t h, int rows, int k, int n, const float *x, const float *w, float *y, const char *call)
{
    const float one = 1.0f, zero = 0.0f;
    return blas_ok(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, rows, k, &one, w, n, x, k, &zero, y, n),
                   "mdl_exec_run", call);
}

/* hold_stream - a host function in a stream: sleeps us microseconds (the pointer's value), holding up the stream */
static void CUDART_CB hold_stream(void *us)
{
    xl_sleep_ms((double)(uintptr_t)us * 1e-3);
}

/* pause_ns - the slow mode's spin on stream between two steps (none for 0) */
static void pause_ns(cudaStream_t stream, uint64_t ns)
{
    if (ns > 0)
        xl_delay(stream, ns);
}

/* forward - queues the network over batch (checked) frames on stream, as t asks (slowed, held); 0 or -1 with a
 * message */
static int forward(mdl_exec *e, const uint8_t *pixels, lab_result *results, int batch, cudaStream_t stream,
                   const run_ticket *t)
{
    const float *prm = e->m->dev;
    const int rows = MDL_PATCHES * batch;
    const size_t hidden = (size_t)rows * MDL_DIM;
    const uint64_t gap = t->between_ns;
    e->stream = stream;
    if (blas_ok(cublasSetStream(e->handle, stream), "mdl_exec_run", "cublasSetStream") ||
        blas_ok(cublasSetWorkspace(e->handle, e->workspace, MDL_WORKSPACE_BYTES), "mdl_exec_run",
                "cublasSetWorkspace"))
        return -1;
    pause_ns(stream, t->before_ns);
    cudaError_t err = cudaMemsetAsync(e->digest, 0, (size_t)batch * sizeof(uint32_t), stream);
    if (err != cudaSuccess) {
        fprintf(stderr, "mdl_exec_run: cudaMemsetAsync of the digests: %s\n", cudaGetErrorString(err));
        return -1;
    }
    prep_kernel<<<dim3(MDL_PATCHES, (unsigned)batch), THREADS, 0, stream>>>(pixels, e->act_a, e->digest, norm());
    if (launched("prep kernel"))
        return -1;
    pause_ns(stream, gap);
    if (gemm(e->handle, rows, MDL_PATCH_VALUES, MDL_DIM, e->act_a, prm + W1_AT, e->act_b, "cublasSgemm (layer 1)"))
        return -1;
    pause_ns(stream, gap);
    bias_relu_kernel<<<grid_of(hidden), THREADS, 0, stream>>>(e->act_b, prm + B1_AT, hidden);
    if (launched("bias and ReLU kernel (layer 1)"))
        return -1;
    pause_ns(stream, gap);
    if (gemm(e->handle, rows, MDL_DIM, MDL_DIM, e->act_b, prm + W2_AT, e->act_a, "cublasSgemm (layer 2)"))
        return -1;
    pause_ns(stream, gap);
    bias_relu_kernel<<<grid_of(hidden), THREADS, 0, stream>>>(e->act_a, prm + B2_AT, hidden);
    if (launched("bias and ReLU kernel (layer 2)"))
        return -1;
    pause_ns(stream, gap);
    pool_kernel<<<(unsigned)batch, MDL_DIM < 1024 ? MDL_DIM : 1024, 0, stream>>>(e->act_a, e->pooled);
    if (launched("pool kernel"))
        return -1;
    pause_ns(stream, gap);
    if (gemm(e->handle, batch, MDL_DIM, LAB_CLASSES, e->pooled, prm + W3_AT, e->head, "cublasSgemm (head)"))
        return -1;
    pause_ns(stream, gap);
    finish_kernel<<<grid_of((size_t)batch * LAB_CLASSES), THREADS, 0, stream>>>(
        e->head, prm + B3_AT, prm + SCALE_AT, prm + SHIFT_AT, e->digest, results, batch);
    if (launched("finish kernel (head bias, calibration)"))
        return -1;
    if (t->hold_ms > 0) {
        err = cudaLaunchHostFunc(stream, hold_stream, (void *)(uintptr_t)(t->hold_ms * 1e3));
        if (err != cudaSuccess) {
            fprintf(stderr, "mdl_exec_run: cudaLaunchHostFunc (the held run): %s\n", cudaGetErrorString(err));
            return -1;
        }
    }
    err = cudaEventRecord(e->done, stream);
    if (err != cudaSuccess) {
        fprintf(stderr, "mdl_exec_run: cudaEventRecord (the run's end): %s\n", cudaGetErrorString(err));
        return -1;
    }
    return 0;
}

/* ===== Executors ===== */

/* exec_free - releases what e holds (NULL members skipped), waiting first for its last run */
static void exec_free(mdl_exec *e)
{
    if (e->done) {
        XL_CHECK(cudaEventSynchronize(e->done));
        XL_CHECK(cudaEventDestroy(e->done));
    }
    if (e->mem)
        XL_CHECK(cudaFree(e->mem));
    if (e->handle)
        handle_give(e->handle);
    delete e;
}

/* exec_make - an executor for max_batch (checked) frames; ask_fault: ask xl_fault_due for its handle; NULL with a
 * message naming fn, nothing held, on failure (a CUDA error such as cudaErrorMemoryAllocation left as it was) */
static mdl_exec *exec_make(const mdl_model *m, int max_batch, int tf32, int ask_fault, const char *fn)
{
    mdl_exec *e = new (std::nothrow) mdl_exec();
    if (!e) {
        fprintf(stderr, "%s: out of host memory\n", fn);
        return NULL;
    }
    e->m = m;
    e->max_batch = max_batch;
    e->stream = (cudaStream_t)0;
    if (ask_fault && xl_fault_due()) {
        cudaError_t err = xl_fault_error();
        fprintf(stderr, "%s: no cuBLAS handle: %s\n", fn, cudaGetErrorString(err));
        exec_free(e);
        return NULL;
    }
    if (blas_ok(handle_take(&e->handle), fn, "cublasCreate")) {
        e->handle = NULL;
        exec_free(e);
        return NULL;
    }
    if (blas_ok(cublasSetMathMode(e->handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH), fn,
                "cublasSetMathMode")) {
        exec_free(e);
        return NULL;
    }
    size_t bytes = exec_device_bytes(max_batch);
    cudaError_t err = cudaMalloc(&e->mem, bytes);
    if (err != cudaSuccess) {
        fprintf(stderr, "%s: cudaMalloc of %zu bytes (batch %d): %s\n", fn, bytes, max_batch, cudaGetErrorString(err));
        e->mem = NULL;
        exec_free(e);
        return NULL;
    }
    err = cudaEventCreateWithFlags(&e->done, cudaEventDisableTiming);
    if (err != cudaSuccess) {
        fprintf(stderr, "%s: cudaEventCreateWithFlags: %s\n", fn, cudaGetErrorString(err));
        e->done = NULL;
        exec_free(e);
        return NULL;
    }
    /* the workspace first, at cudaMalloc's alignment (cuBLAS wants 256 bytes); then the floats (activations,
     * pooled features, head output: each a multiple of 256 bytes a frame but the head's) and the digests */
    char *at = (char *)e->mem;
    e->workspace = at;
    at += MDL_WORKSPACE_BYTES;
    e->act_a = (float *)at;
    at += (size_t)max_batch * ACT_A_FLOATS * sizeof(float);
    e->act_b = (float *)at;
    at += (size_t)max_batch * ACT_B_FLOATS * sizeof(float);
    e->pooled = (float *)at;
    at += (size_t)max_batch * MDL_DIM * sizeof(float);
    e->head = (float *)at;
    at += (size_t)max_batch * LAB_CLASSES * sizeof(float);
    e->digest = (uint32_t *)at;
    return e;
}

extern "C" mdl_exec *mdl_exec_create(const mdl_model *m, int max_batch)
{
    if (!m || max_batch < 1 || max_batch > MAX_BATCH) {
        if (!m)
            fprintf(stderr, "mdl_exec_create: no model (m is NULL)\n");
        else
            fprintf(stderr, "mdl_exec_create: max_batch %d outside 1 .. %d\n", max_batch, MAX_BATCH);
        return NULL;
    }
    mdl_exec *e = exec_make(m, max_batch, tf32_next, 1, "mdl_exec_create");
    if (e)
        live++;
    return e;
}

extern "C" void mdl_exec_destroy(mdl_exec *e)
{
    if (!e)
        return;
    exec_free(e);
    live--;
}

extern "C" int mdl_exec_run(mdl_exec *e, const uint8_t *dev_pixels, lab_result *dev_results, int batch,
                            cudaStream_t stream)
{
    run_ticket t = log_enter(e, stream, dev_pixels, dev_results, batch);
    int rc = -1;
    if (!e)
        fprintf(stderr, "mdl_exec_run: no executor (e is NULL)\n");
    else if (!dev_pixels || !dev_results)
        fprintf(stderr, "mdl_exec_run: %s is NULL\n", dev_pixels ? "dev_results" : "dev_pixels");
    else if (batch < 1 || batch > e->max_batch)
        fprintf(stderr, "mdl_exec_run: batch %d outside 1 .. %d (the executor's max_batch)\n", batch, e->max_batch);
    else {
        XL_RANGE_PUSH("model");
        rc = forward(e, dev_pixels, dev_results, batch, stream, &t);
        XL_RANGE_POP();
    }
    return log_leave(&t, rc);
}

/* ===== Making the model: weights, calibration ===== */

/* splitmix64 - the weights' generator: the next 64 random bits of *state */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* fill_uniform - n floats uniform in [-a, a) from *state */
static void fill_uniform(float *x, int n, double a, uint64_t *state)
{
    for (int i = 0; i < n; i++)
        x[i] = (float)((2.0 * (double)(splitmix64(state) >> 11) * 0x1.0p-53 - 1.0) * a);
}

/* make_weights - every parameter from MDL_SEED: ReLU layers scaled as He's uniform (activations stay about 1),
 * the head as Glorot's, small biases; scale 1 and shift 0 until calibrated */
static void make_weights(float *p)
{
    uint64_t state = MDL_SEED;
    fill_uniform(p + W1_AT, MDL_PATCH_VALUES * MDL_DIM, sqrt(6.0 / MDL_PATCH_VALUES), &state);
    fill_uniform(p + B1_AT, MDL_DIM, 0.1, &state);
    fill_uniform(p + W2_AT, MDL_DIM * MDL_DIM, sqrt(6.0 / MDL_DIM), &state);
    fill_uniform(p + B2_AT, MDL_DIM, 0.1, &state);
    fill_uniform(p + W3_AT, MDL_DIM * LAB_CLASSES, sqrt(6.0 / (MDL_DIM + LAB_CLASSES)), &state);
    fill_uniform(p + B3_AT, LAB_CLASSES, 0.1, &state);
    for (int k = 0; k < LAB_CLASSES; k++) {
        p[SCALE_AT + k] = 1.0f;
        p[SHIFT_AT + k] = 0.0f;
    }
}

/* calibrate - runs the (uncalibrated) model on CAL_FRAMES frames of the private generator and sets each class's
 * scale and shift, on the host and the GPU, so that its scores have mean 0 and spread 1 over them; 0, or -1 with a
 * message, nothing left held */
static int calibrate(mdl_model *m)
{
    static const char fn[] = "mdl_create";
    cudaStream_t stream = NULL;
    uint8_t *pixels = NULL;
    lab_result *dres = NULL, *res = NULL;
    mdl_exec *e = NULL;
    int rc = -1;
    size_t pixel_bytes = (size_t)CAL_BATCH * LAB_IMAGE_BYTES, res_bytes = CAL_FRAMES * sizeof(lab_result);
    cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err != cudaSuccess) {
        stream = NULL;
        fprintf(stderr, "%s: cudaStreamCreateWithFlags (calibration): %s\n", fn, cudaGetErrorString(err));
        goto out;
    }
    if ((err = cudaMalloc(&pixels, pixel_bytes + res_bytes)) != cudaSuccess) {
        pixels = NULL;
        fprintf(stderr, "%s: cudaMalloc (calibration frames): %s\n", fn, cudaGetErrorString(err));
        goto out;
    }
    dres = (lab_result *)(pixels + pixel_bytes);
    if (!(res = (lab_result *)malloc(res_bytes))) {
        fprintf(stderr, "%s: out of host memory\n", fn);
        goto out;
    }
    if (!(e = exec_make(m, CAL_BATCH, 0, 0, fn)))
        goto out;
    for (int f = 0; f < CAL_FRAMES; f += CAL_BATCH) {
        run_ticket plain = {-1, 0, 0, 0, 0.0};
        calib_frames_kernel<<<grid_of(pixel_bytes / 4), THREADS, 0, stream>>>((uint32_t *)pixels, f, CAL_BATCH);
        if ((err = cudaGetLastError()) != cudaSuccess) {
            fprintf(stderr, "%s: calibration frames kernel: %s\n", fn, cudaGetErrorString(err));
            goto out;
        }
        if (forward(e, pixels, dres + f, CAL_BATCH, stream, &plain))
            goto out;
    }
    if ((err = cudaMemcpyAsync(res, dres, res_bytes, cudaMemcpyDeviceToHost, stream)) != cudaSuccess ||
        (err = cudaStreamSynchronize(stream)) != cudaSuccess) {
        fprintf(stderr, "%s: calibration results: %s\n", fn, cudaGetErrorString(err));
        goto out;
    }
    for (int k = 0; k < LAB_CLASSES; k++) {
        double sum = 0, sq = 0;
        for (int f = 0; f < CAL_FRAMES; f++)
            sum += res[f].score[k];
        double mean = sum / CAL_FRAMES;
        for (int f = 0; f < CAL_FRAMES; f++)
            sq += (res[f].score[k] - mean) * (res[f].score[k] - mean);
        double sd = sqrt(sq / CAL_FRAMES);
        if (!(sd > 1e-12) || !isfinite(mean)) {
            fprintf(stderr, "%s: class %d's scores do not vary over the calibration frames (mean %g, spread %g)\n",
                    fn, k, mean, sd);
            goto out;
        }
        m->host[SCALE_AT + k] = (float)(1.0 / sd);
        m->host[SHIFT_AT + k] = (float)(-mean / sd);
    }
    if ((err = cudaMemcpyAsync(m->dev + SCALE_AT, m->host + SCALE_AT, 2 * LAB_CLASSES * sizeof(float),
                               cudaMemcpyHostToDevice, stream)) != cudaSuccess ||
        (err = cudaStreamSynchronize(stream)) != cudaSuccess) {
        fprintf(stderr, "%s: calibration upload: %s\n", fn, cudaGetErrorString(err));
        goto out;
    }
    rc = 0;
out:
    if (e)
        exec_free(e);
    if (stream)
        XL_CHECK(cudaStreamSynchronize(stream));
    free(res);
    if (pixels)
        XL_CHECK(cudaFree(pixels));
    if (stream)
        XL_CHECK(cudaStreamDestroy(stream));
    return rc;
}

extern "C" mdl_model *mdl_create(void)
{
    mdl_model *m = (mdl_model *)calloc(1, sizeof *m);
    if (m)
        m->host = (float *)malloc(PARAMS * sizeof(float));
    if (!m || !m->host) {
        fprintf(stderr, "mdl_create: out of host memory\n");
        if (m)
            free(m);
        return NULL;
    }
    make_weights(m->host);
    cudaError_t err = cudaMalloc(&m->dev, PARAMS * sizeof(float));
    if (err != cudaSuccess) {
        fprintf(stderr, "mdl_create: cudaMalloc of the weights (%zu bytes): %s\n", PARAMS * sizeof(float),
                cudaGetErrorString(err));
        m->dev = NULL;
        mdl_destroy(m);
        return NULL;
    }
    err = cudaMemcpy(m->dev, m->host, PARAMS * sizeof(float), cudaMemcpyHostToDevice);
    if (err != cudaSuccess) {
        fprintf(stderr, "mdl_create: cudaMemcpy of the weights: %s\n", cudaGetErrorString(err));
        mdl_destroy(m);
        return NULL;
    }
    if (calibrate(m) != 0) {
        mdl_destroy(m);
        return NULL;
    }
    return m;
}

extern "C" void mdl_destroy(mdl_model *m)
{
    if (!m)
        return;
    if (m->dev)
        XL_CHECK(cudaFree(m->dev));
    free(m->host);
    free(m);
}

/* ===== The CPU's side ===== */

extern "C" uint32_t mdl_digest_cpu(const uint8_t *pixels)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i < (uint32_t)LAB_IMAGE_BYTES; i++)
        sum += (uint32_t)pixels[i] * (2u * i + 1u);
    return sum;
}

extern "C" void mdl_reference_cpu(const mdl_model *m, const uint8_t *pixels, lab_result *out)
{
    if (!m || !pixels || !out) {
        fprintf(stderr, "mdl_reference_cpu: %s is NULL\n", !m ? "m" : !pixels ? "pixels" : "out");
        return;
    }
    const float *prm = m->host;
    const norm_consts nc = norm();
    double x[MDL_PATCH_VALUES], h1[MDL_DIM], h2[MDL_DIM], pooled[MDL_DIM];
    for (int j = 0; j < MDL_DIM; j++)
        pooled[j] = 0.0;
    for (int p = 0; p < MDL_PATCHES; p++) {
        int py = p / PATCHES_X, px = p % PATCHES_X;
        for (int v = 0; v < MDL_PATCH_VALUES; v++) { /* as prep_kernel: dy, then dx and channel */
            int dy = v / PATCH_ROW_BYTES, r = v % PATCH_ROW_BYTES, c = r % LAB_IMAGE_C;
            int i = (py * MDL_PATCH + dy) * ROW_BYTES + px * PATCH_ROW_BYTES + r;
            x[v] = ((double)pixels[i] - nc.mean[c]) * nc.inv_std[c];
        }
        for (int j = 0; j < MDL_DIM; j++)
            h1[j] = prm[B1_AT + j];
        for (int v = 0; v < MDL_PATCH_VALUES; v++)
            for (int j = 0; j < MDL_DIM; j++)
                h1[j] += x[v] * prm[W1_AT + v * MDL_DIM + j];
        for (int j = 0; j < MDL_DIM; j++) {
            h1[j] = h1[j] > 0 ? h1[j] : 0;
            h2[j] = prm[B2_AT + j];
        }
        for (int i = 0; i < MDL_DIM; i++)
            for (int j = 0; j < MDL_DIM; j++)
                h2[j] += h1[i] * prm[W2_AT + i * MDL_DIM + j];
        for (int j = 0; j < MDL_DIM; j++)
            pooled[j] += h2[j] > 0 ? h2[j] : 0;
    }
    for (int k = 0; k < LAB_CLASSES; k++) {
        double s = prm[B3_AT + k];
        for (int j = 0; j < MDL_DIM; j++)
            s += pooled[j] / MDL_PATCHES * prm[W3_AT + j * LAB_CLASSES + k];
        out->score[k] = (float)(s * prm[SCALE_AT + k] + prm[SHIFT_AT + k]);
    }
    out->digest = mdl_digest_cpu(pixels);
    out->reserved = 0;
}
