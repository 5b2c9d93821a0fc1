/* labcalls.h - the CUDA calls a lab's own code must never make, counted: a wait for all of the device's work
 * (cudaDeviceSynchronize), a change of the device's settings (cudaSetDeviceFlags, cudaDeviceSetCacheConfig,
 * cudaDeviceSetLimit) and a reset (cudaDeviceReset). Other work shares the device: the grader's, other streams',
 * other programs'.
 *
 * Part of xferlab's common library. The Makefile renames these calls in a lab's object only (student, reference,
 * planted and generated mutants: RENAME_LAB_CALLS), so that a lab's call arrives here as xl_lab_NAME while the
 * kit's and the grader's own calls keep their names and are never counted. Each call is counted, on any thread,
 * then made as asked (a device-wide wait still reaches common/synclog.c). The code counted needs no change.
 */
#ifndef XL_LABCALLS_H
#define XL_LABCALLS_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XL_LAB_DEVICE_SYNC, /* cudaDeviceSynchronize */
    XL_LAB_SET_FLAGS,   /* cudaSetDeviceFlags */
    XL_LAB_RESET,       /* cudaDeviceReset */
    XL_LAB_CACHE_CONFIG, /* cudaDeviceSetCacheConfig */
    XL_LAB_SET_LIMIT,   /* cudaDeviceSetLimit */
    XL_LAB_CALLS        /* how many there are */
} xl_lab_call;

/* xl_labcalls_reset - every count back to 0 */
void xl_labcalls_reset(void);

/* xl_labcalls_count - how many times lab code made call c since the last reset (0 for a c out of range) */
int xl_labcalls_count(xl_lab_call c);

/* xl_labcalls_name - the CUDA name of call c ("cudaDeviceSynchronize"); "?" for a c out of range */
const char *xl_labcalls_name(xl_lab_call c);

/* The renamed calls: counted, then made; the runtime's result. */
cudaError_t xl_lab_cudaDeviceSynchronize(void);
cudaError_t xl_lab_cudaSetDeviceFlags(unsigned int flags);
cudaError_t xl_lab_cudaDeviceReset(void);
cudaError_t xl_lab_cudaDeviceSetCacheConfig(enum cudaFuncCache config);
cudaError_t xl_lab_cudaDeviceSetLimit(enum cudaLimit limit, size_t value);

#ifdef __cplusplus
}
#endif

#endif
