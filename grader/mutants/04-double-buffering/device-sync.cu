/* device-sync.cu - planted wrong lab 04: correct, but the wait before each produce is for the whole device
 * (cudaDeviceSynchronize), so nothing overlaps and unrelated streams hold it up.
 * target: pipe.narrow_wait speed.double_4mib speed.double_16mib speed.double_64mib speed.triple_16mib
 */
#include "labs/04-double-buffering/lab.h"
#include "common/check.h"
#define cudaEventSynchronize(event) cudaDeviceSynchronize() /* the mistake */
#include "solutions/04-double-buffering/lab.cu"
