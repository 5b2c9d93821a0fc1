/* roundtrip-pageable.cu - planted wrong lab 02: the classic round trip that copies back into a malloc'd
 * buffer and then into the pinned one: correct, but two extra passes over host memory.
 * target: roundtrip.speed roundtrip.exact
 */
#include <stdlib.h>
#include <string.h>

#include "labs/02-pinned-copy/lab.h"
#define lab_round_trip reference_lab_round_trip
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_round_trip

extern "C" int lab_round_trip(void *host_out, const void *host_in, void *dev, size_t bytes, cudaStream_t stream)
{
    void *tmp = malloc(bytes);
    if (!tmp)
        return -1;
    XL_CHECK(cudaMemcpyAsync(dev, host_in, bytes, cudaMemcpyHostToDevice, stream));
    XL_CHECK(cudaStreamSynchronize(stream));
    XL_CHECK(cudaMemcpy(tmp, dev, bytes, cudaMemcpyDeviceToHost)); /* the mistake: back through pageable memory */
    memcpy(host_out, tmp, bytes);
    free(tmp);
    return 0;
}
