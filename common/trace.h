/* trace.h - NVTX ranges, so the kit's phases read well in Nsight Systems.
 *
 * Part of xferlab's common library. Header-only NVTX 3 from the CUDA Toolkit;
 * without a profiler attached each range costs a few nanoseconds.
 */
#ifndef XL_TRACE_H
#define XL_TRACE_H

#include <nvtx3/nvToolsExt.h>

/* XL_RANGE_PUSH - opens a named range on this thread; close it with XL_RANGE_POP */
#define XL_RANGE_PUSH(name) nvtxRangePushA(name)
/* XL_RANGE_POP - closes the innermost open range */
#define XL_RANGE_POP() nvtxRangePop()

#endif
