/* streams-capped.cu - planted wrong lab 05: at most 8 streams are made, whatever was asked, so chunk c goes on stream
 * c mod 8 when more streams were asked for (the grader used to ask for 4 at most).
 * target: results.depth_first results.breadth_first
 */
#include "labs/05-stream-pipelining/lab.h"
#define lab_pipeline_create reference_lab_pipeline_create
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_pipeline_create

extern "C" lab_pipeline *lab_pipeline_create(size_t chunk_items, int streams)
{
    if (streams < 1 || streams > MAX_STREAMS)
        return NULL;
    return reference_lab_pipeline_create(chunk_items, streams < 8 ? streams : 8); /* the mistake */
}
