/* no-host-wait.cu - planted wrong lab 04: the host refills a pinned buffer without waiting for the event
 * that says its copy in has read it.
 * target: hazard.host_reuse
 */
#include "labs/04-double-buffering/lab.h"
#include "common/check.h"
#define cudaEventSynchronize(event) cudaSuccess /* the mistake: the wait is left out */
#include "solutions/04-double-buffering/lab.cu"
