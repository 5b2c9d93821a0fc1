/* roundtrip-own-stream.cu - planted wrong lab 02: the round trip runs on a non-blocking stream of its own, waited for
 * and destroyed. host_out gets host_in's bytes, but host_in is read before work the caller queued on its stream (the
 * work that fills it, say) has run.
 * target: roundtrip.exact
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_round_trip reference_lab_round_trip
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_round_trip

extern "C" int lab_round_trip(void *host_out, const void *host_in, void *dev, size_t bytes, cudaStream_t stream)
{
    cudaStream_t mine;
    (void)stream; /* the mistake */
    XL_CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
    int rc = reference_lab_round_trip(host_out, host_in, dev, bytes, mine);
    XL_CHECK(cudaStreamDestroy(mine));
    return rc;
}
