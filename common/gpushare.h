/* gpushare.h - is another process using this GPU? Asked of the driver (NVML), where it tells.
 *
 * Part of xferlab's common library. A speed figure measured beside another
 * process's work says nothing about the code under test: graders ask this
 * before they call a low figure a failure, and class grading before it grades.
 * NVML (libnvidia-ml.so.1) ships with the driver and is loaded at run time, so
 * nothing is needed to build, and a machine without it just cannot tell.
 */
#ifndef XL_GPUSHARE_H
#define XL_GPUSHARE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xl_gpu_others - how many processes other than this one run compute or graphics work on the CUDA device
 * `device` (this process must have a CUDA context on it), with "pid NAME, ..." of them in who; -1 when the
 * driver cannot tell, with why in who. Inside a container whose process ids the driver does not show, one
 * process of the list is taken to be this one. */
int xl_gpu_others(int device, char *who, size_t len);

#ifdef __cplusplus
}
#endif

#endif
