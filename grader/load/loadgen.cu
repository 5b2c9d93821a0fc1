/* loadgen.cu - another process's load on the GPU, of one kind, to grade beside. Course staff tool.
 *
 * Graders must never fail correct code because the GPU is shared (a desktop's display, a notebook, a
 * course node). make test runs the references beside this load for a moment, and make stability
 * LOAD=KIND for as long as it grades:
 *   copy    - both copy engines busy: pinned copies in and out without pause, on two streams
 *   compute - every multiprocessor busy: arithmetic kernels back to back, as matrix multiplications are
 *   memory  - device memory bandwidth busy: device-to-device copies of 1 GiB back to back
 * It runs until --seconds have passed (0: until stopped) or SIGINT/SIGTERM, frees what it made and exits 0.
 */
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/check.h"
#include "common/cli.h"
#include "common/gpu.h"
#include "common/timing.h"

#define COPY_BYTES ((size_t)256 << 20)  /* each way, for the copy load */
#define MEMORY_BYTES ((size_t)1 << 30)  /* each side, for the memory load */
#define SPIN_ITERS 4096                 /* multiply-adds per thread per compute launch: ~1-2 ms on a Hopper */

static volatile sig_atomic_t stop; /* set by SIGINT or SIGTERM */

/* on_signal - asks the load loop to end */
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* spin - multiply-adds that keep a multiprocessor's arithmetic units busy; writes one value per thread so that
 * the compiler keeps the work */
__global__ void spin(float *out, int iters)
{
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
    for (int i = 0; i < iters; i++) {
        a = fmaf(a, b, c);
        c = fmaf(c, b, a) * 0.5f;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + c;
}

/* run_copy - copies in and out of pinned memory on two streams until done() */
static void run_copy(int (*done)(void))
{
    void *h_in, *h_out, *d_in, *d_out;
    cudaStream_t s[2];
    XL_CHECK(cudaMallocHost(&h_in, COPY_BYTES));
    XL_CHECK(cudaMallocHost(&h_out, COPY_BYTES));
    XL_CHECK(cudaMalloc(&d_in, COPY_BYTES));
    XL_CHECK(cudaMalloc(&d_out, COPY_BYTES));
    for (int i = 0; i < 2; i++)
        XL_CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    while (!done()) {
        XL_CHECK(cudaMemcpyAsync(d_in, h_in, COPY_BYTES, cudaMemcpyHostToDevice, s[0]));
        XL_CHECK(cudaMemcpyAsync(h_out, d_out, COPY_BYTES, cudaMemcpyDeviceToHost, s[1]));
        XL_CHECK(cudaStreamSynchronize(s[0]));
        XL_CHECK(cudaStreamSynchronize(s[1]));
    }
    for (int i = 0; i < 2; i++)
        XL_CHECK(cudaStreamDestroy(s[i]));
    XL_CHECK(cudaFree(d_in));
    XL_CHECK(cudaFree(d_out));
    XL_CHECK(cudaFreeHost(h_in));
    XL_CHECK(cudaFreeHost(h_out));
}

/* run_compute - arithmetic kernels filling every multiprocessor, a few queued at a time, until done() */
static void run_compute(int (*done)(void), int sms)
{
    int blocks = sms * 8, threads = 256;
    float *out;
    cudaStream_t s;
    XL_CHECK(cudaMalloc(&out, (size_t)blocks * threads * sizeof(float)));
    XL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    while (!done()) {
        for (int k = 0; k < 4; k++) {
            spin<<<blocks, threads, 0, s>>>(out, SPIN_ITERS);
            XL_CHECK_LAUNCH();
        }
        XL_CHECK(cudaStreamSynchronize(s));
    }
    XL_CHECK(cudaStreamDestroy(s));
    XL_CHECK(cudaFree(out));
}

/* run_memory - device-to-device copies of 1 GiB until done() */
static void run_memory(int (*done)(void))
{
    void *a, *b;
    cudaStream_t s;
    XL_CHECK(cudaMalloc(&a, MEMORY_BYTES));
    XL_CHECK(cudaMalloc(&b, MEMORY_BYTES));
    XL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    while (!done()) {
        XL_CHECK(cudaMemcpyAsync(b, a, MEMORY_BYTES, cudaMemcpyDeviceToDevice, s));
        XL_CHECK(cudaMemcpyAsync(a, b, MEMORY_BYTES, cudaMemcpyDeviceToDevice, s));
        XL_CHECK(cudaStreamSynchronize(s));
    }
    XL_CHECK(cudaStreamDestroy(s));
    XL_CHECK(cudaFree(a));
    XL_CHECK(cudaFree(b));
}

static double until_ms; /* when the load ends, on xl_now_ms's clock; 0: only on a signal */

/* done - whether the load should end: a signal came, or its time is up */
static int done(void)
{
    return stop || (until_ms > 0 && xl_now_ms() >= until_ms);
}

int main(int argc, char **argv)
{
    const char *kind = NULL;
    int seconds = 0;
    const xl_opt opts[] = {
        {"kind", XL_OPT_TEXT, &kind, 0, 0, "copy, compute or memory (required)"},
        {"seconds", XL_OPT_INT, &seconds, 0, 86400, "how long, 0 to 86400 (default 0: until SIGINT or SIGTERM)"},
    };
    xl_cli_or_exit("loadgen", "loadgen: keeps the GPU busy with one kind of load, as another process would",
                   opts, sizeof opts / sizeof opts[0], argc, argv);
    if (!kind || (strcmp(kind, "copy") && strcmp(kind, "compute") && strcmp(kind, "memory")))
        xl_cli_die("loadgen", "--kind must be copy, compute or memory");
    xl_gpu_info g;
    xl_gpu_require("loadgen", &g);
    int sms = 0;
    XL_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g.device));
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    until_ms = seconds ? xl_now_ms() + 1e3 * seconds : 0;
    printf("loadgen: %s load on %s (pid %d), %s\n", kind, g.name, (int)getpid(),
           seconds ? "for the seconds asked" : "until stopped");
    if (!strcmp(kind, "copy"))
        run_copy(done);
    else if (!strcmp(kind, "compute"))
        run_compute(done, sms);
    else
        run_memory(done);
    printf("loadgen: %s load stopped\n", kind);
    return 0;
}
