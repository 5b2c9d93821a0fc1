/* device-sync.cu - planted wrong lab 05: correct and overlapped, but the final wait is for the whole device.
 * target: pipeline.narrow_wait
 */
#include "labs/05-stream-pipelining/lab.h"
#include "common/check.h"
#define cudaStreamSynchronize(stream) cudaDeviceSynchronize() /* the mistake */
#include "solutions/05-stream-pipelining/lab.cu"
