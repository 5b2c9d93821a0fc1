/* gpu.h - is there a usable CUDA GPU here, and what is it?
 *
 * Part of xferlab's common library. Explorers and graders call xl_gpu_probe()
 * first: with no GPU (a laptop, a CI machine) they say so in one line and
 * either stop (explorers) or skip the GPU tests (graders). XL_NO_GPU=1 in the
 * environment makes the probe answer "no GPU" on purpose, to test that path.
 */
#ifndef XL_GPU_H
#define XL_GPU_H

#include <stddef.h>

#include "csv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int device;              /* CUDA device index in use */
    char name[256];          /* e.g. "NVIDIA H100 80GB HBM3" */
    int cc_major, cc_minor;  /* compute capability */
    int copy_engines;        /* asyncEngineCount */
    size_t total_mem_bytes;  /* device memory */
    int driver_version;      /* CUDA version the driver supports, e.g. 13000 */
    int runtime_version;     /* CUDA runtime this kit was built with */
} xl_gpu_info;

/* xl_gpu_probe - 0 when a usable CUDA GPU is present (info filled, context created);
 * otherwise -1 and why holds one line a person can act on. info may be NULL. */
int xl_gpu_probe(xl_gpu_info *info, char *why, size_t why_len);

/* xl_gpu_count - how many CUDA GPUs this process sees (cudaGetDeviceCount, which makes no context: cheap enough to ask
 * before deciding whether a test can run at all); 0 with none usable, on any error (cleared), or under XL_NO_GPU */
int xl_gpu_count(void);

/* xl_gpu_require - probes; without a GPU prints "<prog>: <why>" to stderr and exits 3 */
void xl_gpu_require(const char *prog, xl_gpu_info *info);

/* xl_driver_release - the NVIDIA kernel driver's release ("580.159.04") into buf; "unknown" when unreadable */
const char *xl_driver_release(char *buf, size_t len);

/* xl_write_run_info - writes into c the comment lines that say where and when it was measured: the GPU, driver
 * and toolkit, the PCIe link, the date, the program and its repetitions */
void xl_write_run_info(xl_csv *c, const xl_gpu_info *g, const char *prog, int reps);

/* xl_append_run_info - the same lines appended to a CSV that a student's code wrote and closed (lab 01's
 * lab_write_csv); 0, or -1 if it cannot write */
int xl_append_run_info(const char *path, const xl_gpu_info *g, const char *prog, int reps);

/* xl_pcie_link - the GPU's PCIe link at its best (generation, lanes) as nvidia-smi reports it, and the
 * line rate per direction in GB/s after encoding; 0, or -1 when nvidia-smi cannot tell */
int xl_pcie_link(int *gen, int *width, double *line_gbps);

/* xl_version_string - "13.0" for 13000, into buf */
const char *xl_version_string(int v, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
