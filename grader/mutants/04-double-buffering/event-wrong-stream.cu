/* event-wrong-stream.cu - planted wrong lab 04: the "host buffer free" event is recorded on a stream that
 * the copy is not on (a side stream with nothing queued), so it completes at once and guards nothing.
 * target: hazard.host_reuse
 */
#include <cuda_runtime_api.h>

/* side_stream - a stream with nothing on it */
static cudaStream_t side_stream(void)
{
    static cudaStream_t s;
    if (!s)
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
}

#include "labs/04-double-buffering/lab.h"
#include "common/check.h"
#define cudaEventRecord(event, stream) cudaEventRecord(event, side_stream()) /* the mistake */
#include "solutions/04-double-buffering/lab.cu"
