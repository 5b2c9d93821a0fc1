/* faults.h - makes the n-th create from now fail as if the GPU or the host were out of memory.
 *
 * Part of xferlab's common library, beside rescount.h and pincount.h, whose wrapped calls (cudaMalloc,
 * cudaMallocManaged, cudaStreamCreate*, cudaEventCreate*, cudaMallocHost, cudaHostAlloc, cudaHostRegister) ask
 * xl_fault_due before each call. An advice (cudaMemAdvise and CUDA 12's cudaMemAdvise_v2, wrapped in memlog.c) counts
 * as a create too: it can fail as out of memory, which reaches "allocated, then the advice failed". Graders arm it
 * around a student's create to reach every failure path, one allocation after another, without filling a real GPU:
 * a create that fails half way must return NULL (or -1), hold nothing and leave no error behind. The failure is
 * the runtime's own: an allocation no GPU can give is made, so cudaGetLastError finds cudaErrorMemoryAllocation
 * afterwards, as after a real shortage.
 */
#ifndef XL_FAULTS_H
#define XL_FAULTS_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xl_fail_create_after - the next n creates succeed and the one after fails (once); n < 0 disarms */
void xl_fail_create_after(long n);

/* xl_fault_fired - 1 when the armed failure has happened since the last xl_fail_create_after */
int xl_fault_fired(void);

/* xl_fault_due - for the wrappers, before each create: 1 when this create must fail (it is then disarmed) */
int xl_fault_due(void);

/* xl_fault_error - for the wrappers: the runtime's cudaErrorMemoryAllocation, left as its last error */
cudaError_t xl_fault_error(void);

#ifdef __cplusplus
}
#endif

#endif
