/* no-final-wait.cu - planted wrong lab 04: lab_pipe_run returns while the last batches are still on the
 * GPU, so the caller reads results that have not arrived.
 * target: results.exact
 */
#include "labs/04-double-buffering/lab.h"
#include "common/check.h"
#define cudaStreamSynchronize(stream) cudaSuccess /* the mistake */
#include "solutions/04-double-buffering/lab.cu"
