/* loadgen.cu - another process's load on the GPU (or the CPU), of one kind, to grade beside. Course staff tool.
 *
 * Graders must never fail correct code because the machine is shared (a desktop's display, a notebook, a
 * course node, make class building the next submissions). make test runs the references beside this load for a
 * moment, and make stability LOAD=KIND for as long as it grades:
 *   copy    - both copy engines busy: pinned copies in and out without pause, on two streams
 *   compute - every multiprocessor busy: arithmetic kernels back to back, as matrix multiplications are
 *   memory  - device memory bandwidth busy: device-to-device copies of 1 GiB back to back
 *   cpu     - half the cores this process may run on busy: threads that spin, as compilers beside a grading are
 *             (the GPU is not touched)
 * It runs until --seconds have passed (0: until stopped) or SIGINT/SIGTERM, frees what it made and exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>
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

/* spin_cpu - a thread of the cpu load: arithmetic without pause until done() */
static void *spin_cpu(void *arg)
{
    volatile double x = 1.0;
    (void)arg;
    while (!done())
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
    return NULL;
}

/* cpu_threads - how many threads the cpu load spins: half the cores of this process's affinity mask, at least 1 */
static int cpu_threads(void)
{
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 2;
    return cores / 2 > 1 ? cores / 2 : 1;
}

/* run_cpu - threads threads that spin until done(), joined; 0, or -1 with a message when one cannot start */
static int run_cpu(int threads)
{
    pthread_t t[CPU_SETSIZE];
    int started = 0, rc = 0;
    for (; started < threads; started++)
        if ((rc = pthread_create(&t[started], NULL, spin_cpu, NULL)) != 0) {
            fprintf(stderr, "loadgen: cannot start thread %d of %d: %s\n", started + 1, threads, strerror(rc));
            stop = 1;
            break;
        }
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *kind = NULL;
    int seconds = 0;
    const xl_opt opts[] = {
        {"kind", XL_OPT_TEXT, &kind, 0, 0, "copy, compute, memory or cpu (required)"},
        {"seconds", XL_OPT_INT, &seconds, 0, 86400, "how long, 0 to 86400 (default 0: until SIGINT or SIGTERM)"},
    };
    xl_cli_or_exit("loadgen", "loadgen: keeps the GPU (or the CPU) busy with one kind of load, as another process would",
                   opts, sizeof opts / sizeof opts[0], argc, argv);
    if (!kind || (strcmp(kind, "copy") && strcmp(kind, "compute") && strcmp(kind, "memory") && strcmp(kind, "cpu")))
        xl_cli_die("loadgen", "--kind must be copy, compute, memory or cpu");
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    until_ms = seconds ? xl_now_ms() + 1e3 * seconds : 0;
    if (!strcmp(kind, "cpu")) {
        int threads = cpu_threads();
        printf("loadgen: cpu load on %d thread%s (pid %d), %s\n", threads, threads > 1 ? "s" : "", (int)getpid(),
               seconds ? "for the seconds asked" : "until stopped");
        fflush(stdout);
        int rc = run_cpu(threads);
        printf("loadgen: cpu load stopped\n");
        return rc ? 1 : 0;
    }
    xl_gpu_info g;
    xl_gpu_require("loadgen", &g);
    int sms = 0;
    XL_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g.device));
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
