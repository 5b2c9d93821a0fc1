/* model.h - lab 10's model: a small fixed network on the GPU, FP32 GEMMs through cuBLAS, and what the kit needs to
 * watch it (a log of every run, slow modes, held runs, a CPU reference).
 *
 * The kit's; do not edit, and not part of what you write (that is lab.h, which declares the executor calls your loop
 * makes). Implemented in model.cu. The network, per frame: prep (uint8 HWC pixels normalized per channel, cut into
 * 196 patches of 16 x 16 x 3 = 768 values, and the frame's digest), GEMM 1 [196, 768] x [768, MDL_DIM] + bias + ReLU,
 * GEMM 2 [196, MDL_DIM] x [MDL_DIM, MDL_DIM] + bias + ReLU, the mean over the 196 patches, GEMM 3 (the head)
 * [1, MDL_DIM] x [MDL_DIM, LAB_CLASSES] + bias, then a scale and shift per class (calibrated at mdl_create so that
 * each class's score has mean 0 and spread 1 over random frames), into lab_result. Every cuBLAS handle is set to
 * CUBLAS_PEDANTIC_MATH (standard FP32 arithmetic whatever the environment says), unless mdl_set_tf32 asked for TF32.
 */
#ifndef LAB10_MODEL_H
#define LAB10_MODEL_H

#include <stdint.h>

#include "labs/10-inference-loop/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MDL_PATCH 16                                /* patch side, pixels */
#define MDL_PATCHES 196                             /* (224 / 16)^2 patches a frame */
#define MDL_PATCH_VALUES (MDL_PATCH * MDL_PATCH * 3) /* 768 values a patch */
/* The hidden width: the GEMMs of a frame at 64 a batch take 1.27x its copy in on an H100 (3.54 us against 2.79 us,
 * measured): compute comparable to transfer, as the lab needs. */
#define MDL_DIM 320
#define MDL_SEED 0x10c0ffeeULL /* the weights' seed: the model is the same in every process */
#define MDL_WORKSPACE_BYTES ((size_t)4 << 20) /* each executor's cuBLAS workspace (cublasSetWorkspace) */

/* mdl_create - the model on the current GPU: weights from MDL_SEED (the same every time), calibrated; NULL with a
 * one-line message on failure (nothing held) */
mdl_model *mdl_create(void);
/* mdl_destroy - releases the model (its executors must be destroyed first); NULL does nothing */
void mdl_destroy(mdl_model *m);

/* mdl_exec_bytes - MDL_EXEC_FIXED + batch * MDL_EXEC_PER_FRAME: what lab.h says an executor takes */
size_t mdl_exec_bytes(int batch);
/* mdl_exec_live - executors created and not destroyed in this process (the kit's pool of cuBLAS handles is not
 * counted: a destroyed executor gives its handle back to the pool and the next create takes it) */
int mdl_exec_live(void);
/* mdl_exec_stream_of - the stream e last ran on; 0 before its first run */
cudaStream_t mdl_exec_stream_of(const mdl_exec *e);

/* mdl_set_tf32 - 1: the executors created from now on use TF32 tensor cores (the explorer's --math tf32; results
 * then differ from the reference by more than the tolerance); 0: FP32, pedantic (the default) */
void mdl_set_tf32(int on);

/* ===== What the kit watches ===== */

/* One mdl_exec_run as asked for. */
typedef struct {
    const mdl_exec *exec;
    cudaStream_t stream;
    const uint8_t *pixels; /* dev_pixels as passed */
    lab_result *results;   /* dev_results as passed */
    int batch;
    long tid;      /* the thread that asked (xl_tid) */
    double at_ms;  /* when, host clock (xl_now_ms) */
    int result;    /* what mdl_exec_run returned */
} mdl_run_rec;

/* mdl_log_start - from now on appends every mdl_exec_run to recs (up to max; later ones are counted only), and
 * numbers runs from 0 again for mdl_hold_run; thread-safe */
void mdl_log_start(mdl_run_rec *recs, int max);
/* mdl_log_stop - closes the log; how many runs were asked for since the start */
int mdl_log_stop(void);
/* mdl_log_count - runs asked for since the start, the log still open (0 when closed) */
int mdl_log_count(void);

/* mdl_slow - from now on every run first spins before_ns on its stream (before prep reads the pixels: a pixel buffer
 * overwritten too early is then read after the overwrite), and between_ns between its steps (two runs sharing an
 * executor then mix their activations); 0, 0 ends it. The hazard tests make mistakes certain with it. */
void mdl_slow(uint64_t before_ns, uint64_t between_ns);

/* mdl_hold_run - the k-th run counted from the last mdl_log_start (0 first) holds its stream hold_ms after its head,
 * before anything queued after it there (a host function that sleeps): that batch then finishes after later ones on
 * other streams. k < 0 ends it. */
void mdl_hold_run(int k, double hold_ms);

/* mdl_reference_cpu - frame's result computed on the CPU in double precision from its pixels (LAB_IMAGE_BYTES): what
 * the GPU must give within LAB_SCORE_TOL, digest exact. Slow (about 0.1 s a frame): for a few frames. */
void mdl_reference_cpu(const mdl_model *m, const uint8_t *pixels, lab_result *out);

/* mdl_digest_cpu - the digest the model computes of a frame's pixels: sum over i of pixels[i] * (2i + 1), mod 2^32 */
uint32_t mdl_digest_cpu(const uint8_t *pixels);

/* A score may differ from the kit's reference by this much (absolute); scores spread about 1 across frames, so the
 * result of another frame, or of activations another stream overwrote, is off by far more. */
#define LAB_SCORE_TOL 1e-3

#ifdef __cplusplus
}
#endif

#endif
