/* legacy-stream.cu - planted wrong lab 05: every "stream" is the legacy default stream (0), which runs one
 * operation at a time, in order, so nothing overlaps.
 * target: speed.depth_first overlap.copies_both_ways overlap.kernels_with_copies
 */
#include "labs/05-stream-pipelining/lab.h"
#include "common/check.h"
#define cudaStreamCreateWithFlags(stream, flags) ((*(stream) = 0), cudaSuccess) /* the mistake */
#include "solutions/05-stream-pipelining/lab.cu"
