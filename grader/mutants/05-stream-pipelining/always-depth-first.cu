/* always-depth-first.cu - planted wrong lab 05: the order is ignored, every run is issued depth-first. Results and
 * speed are right on this GPU, but breadth-first is never issued.
 * target: results.breadth_first
 */
#include "labs/05-stream-pipelining/lab.h"
#define lab_pipeline_run reference_lab_pipeline_run
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_pipeline_run

extern "C" int lab_pipeline_run(lab_pipeline *p, const uint32_t *in, uint32_t *out, size_t items, lab_order order,
                                const lab_kernel *k)
{
    if (order != LAB_DEPTH_FIRST && order != LAB_BREADTH_FIRST)
        return -1;
    return reference_lab_pipeline_run(p, in, out, items, LAB_DEPTH_FIRST, k); /* the mistake */
}
