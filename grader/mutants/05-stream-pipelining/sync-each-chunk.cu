/* sync-each-chunk.cu - planted wrong lab 05: waits for each chunk's copy out before issuing the next chunk.
 * target: speed.depth_first overlap.copies_both_ways
 */
#include <cuda_runtime_api.h>

/* then_wait - after a copy out, waits for its stream: the mistake */
static cudaError_t then_wait(cudaError_t err, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    if (err == cudaSuccess && kind == cudaMemcpyDeviceToHost)
        err = cudaStreamSynchronize(stream);
    return err;
}

#include "labs/05-stream-pipelining/lab.h"
#include "common/check.h"
#define cudaMemcpyAsync(dst, src, bytes, kind, stream) then_wait(cudaMemcpyAsync(dst, src, bytes, kind, stream), kind, stream)
#include "solutions/05-stream-pipelining/lab.cu"
