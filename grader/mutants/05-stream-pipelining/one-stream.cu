/* one-stream.cu - planted wrong lab 05: correct, but every chunk on one stream, so nothing overlaps.
 * target: speed.depth_first speed.breadth_first overlap.copies_both_ways
 */
#include "labs/05-stream-pipelining/lab.h"
#define lab_pipeline_create reference_lab_pipeline_create
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_pipeline_create

extern "C" lab_pipeline *lab_pipeline_create(size_t chunk_items, int streams)
{
    if (streams < 1 || streams > 32)
        return NULL;
    return reference_lab_pipeline_create(chunk_items, 1); /* the mistake */
}
