/* libclang-cuda.h - what libclang's host-side parse of a lab.cu with kernels needs beyond cuda_runtime.h.
 * Course staff only; generate.py includes it before each lab.cu (-nocudainc leaves out clang's own CUDA
 * wrappers, which declare these): threadIdx and the other built-in variables, __launch_bounds__, and the
 * runtime entry a <<<...>>> launch turns into. */
#include <device_launch_parameters.h>
/* cuda_runtime.h gives these their meaning only under nvcc (__CUDACC__): clang's own attributes instead */
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __constant__
#undef __launch_bounds__
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0, void *stream = 0);
