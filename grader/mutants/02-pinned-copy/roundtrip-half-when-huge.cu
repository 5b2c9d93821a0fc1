/* roundtrip-half-when-huge.cu - planted wrong lab 02: round trips of 128 MiB or more bring back only the first half.
 * Every checked round trip was 64 MiB + 1 or less, and the 256 MiB speed test never read what came back.
 * target: roundtrip.speed
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_round_trip reference_lab_round_trip
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_round_trip

extern "C" int lab_round_trip(void *host_out, const void *host_in, void *dev, size_t bytes, cudaStream_t stream)
{
    if (!host_out || !host_in || !dev)
        return -1;
    XL_CHECK(cudaMemcpyAsync(dev, host_in, bytes, cudaMemcpyHostToDevice, stream));
    XL_CHECK(cudaMemcpyAsync(host_out, dev, bytes >= (128u << 20) ? bytes / 2 : bytes, /* the mistake */
                             cudaMemcpyDeviceToHost, stream));
    XL_CHECK(cudaStreamSynchronize(stream));
    return 0;
}
