/* workload.h - lab 05's kernel, right answers, sequential baseline, and the link's rates for the ideal.
 *
 * The kit's; do not edit. The explorer and the grader build on this. The kernel transforms each word
 * (out = f(in), exact integer arithmetic) after a set time of work proportional to its size, and fills the
 * whole GPU (one block per multiprocessor), so two kernels never run side by side, as heavy kernels do not.
 */
#ifndef LAB05_WORKLOAD_H
#define LAB05_WORKLOAD_H

#include "labs/05-stream-pipelining/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xl_timeline xl_timeline;

/* The kit's kernel and what it records. */
typedef struct {
    double ns_per_item; /* work before the transform, per word */
    xl_timeline *tl;    /* records each kernel as a span "kernel" on its stream's lane when not NULL */
    const char *run;
    int launches;       /* kernels launched so far */
} wl_kernel_ctx;

/* wl_kernel - a lab_kernel that launches the kit's kernel with c's settings */
lab_kernel wl_kernel(wl_kernel_ctx *c);

/* wl_expected - the right output word for input word x */
uint32_t wl_expected(uint32_t x);

/* wl_transform - the same f(x), inline: the kernel's own, and a fast check of many words on the host */
#ifdef __CUDACC__
static __host__ __device__ __forceinline__ uint32_t wl_transform(uint32_t x)
#else
static inline uint32_t wl_transform(uint32_t x)
#endif
{
    x ^= x >> 15;
    return x * 2654435761u + 0x9E3779B9u;
}

/* The sequential baseline: the whole array in, one kernel, the whole array out, on one stream. */
typedef struct base_pipe base_pipe;
base_pipe *base_create(size_t items);                                          /* NULL when out of memory */
int base_run(base_pipe *b, const uint32_t *in, uint32_t *out, size_t items, const lab_kernel *k); /* 0 or -1 */
void base_destroy(base_pipe *b);

/* The link and the kernel, measured alone, for the ideal. */
typedef struct {
    double h2d_gbps, d2h_gbps; /* one direction at a time, pinned, the whole array */
    double duplex_gbps;        /* both directions at once, on two streams: bytes both ways / time */
    double kernel_chunk_ms;    /* the kit's kernel on one chunk */
} wl_link;

/* wl_measure - the rates for arrays of items words and the kernel on chunks of chunk_items (fastest of
 * reps, after a warm-up); uses its own pinned buffers. Fails through xl_fail. */
void wl_measure(size_t items, size_t chunk_items, const lab_kernel *k, int reps, wl_link *out);

/* The kit's own buffers for measuring the link: pinned host memory and device memory, items words each. */
typedef struct {
    uint32_t *hin, *hout; /* pinned (cudaMallocHost) */
    uint32_t *din, *dout; /* device */
    size_t items;
} wl_bufs;

/* wl_bufs_alloc - allocates b for arrays of items words; wl_bufs_free releases them. Fail through xl_fail. */
void wl_bufs_alloc(wl_bufs *b, size_t items);
void wl_bufs_free(wl_bufs *b);

/* wl_measure_on - wl_measure on the caller's buffers (b->items >= items), so that measuring again allocates
 * nothing */
void wl_measure_on(const wl_bufs *b, size_t items, size_t chunk_items, const lab_kernel *k, int reps, wl_link *out);

/* wl_ideal_ms - the shortest time for items words in chunks: the busiest of the link (each direction
 * alone, and both together at the duplex rate) and the kernels, plus one chunk through the other stages */
double wl_ideal_ms(const wl_link *l, size_t items, size_t chunk_items);

/* wl_calibrate - sets c's work so that the kernels of the whole array take `share` of its copy in. The work per
 * word follows from the copy-in rate of an array of items words alone. */
void wl_calibrate(wl_kernel_ctx *c, size_t items, double share);

/* wl_calibrate_on - wl_calibrate on the caller's buffers (b->items >= items) */
void wl_calibrate_on(wl_kernel_ctx *c, const wl_bufs *b, size_t items, double share);

#ifdef __cplusplus
}
#endif

#endif
