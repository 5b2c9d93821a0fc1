/* wait-last-chunk.cu - planted wrong lab 05: waits only for the stream of the last chunk, as if the chunks finished
 * in the order they were issued; a chunk on another stream that finishes later is read before it lands.
 * target: results.depth_first results.breadth_first
 */
#include "labs/05-stream-pipelining/lab.h"
#define lab_pipeline_run reference_lab_pipeline_run
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_pipeline_run

extern "C" int lab_pipeline_run(lab_pipeline *p, const uint32_t *in, uint32_t *out, size_t items, lab_order order,
                                const lab_kernel *k)
{
    if (!p || !k || !k->launch || (items && (!in || !out)) || (order != LAB_DEPTH_FIRST && order != LAB_BREADTH_FIRST))
        return -1;
    size_t chunks = (items + p->chunk_items - 1) / p->chunk_items;
    for (size_t round = 0; round < chunks; round += order == LAB_DEPTH_FIRST ? 1 : (size_t)p->streams) {
        size_t end = order == LAB_DEPTH_FIRST ? round + 1
                                              : (round + (size_t)p->streams < chunks ? round + (size_t)p->streams : chunks);
        for (size_t c = round; c < end; c++)
            copy_in(p, in, items, c);
        for (size_t c = round; c < end; c++)
            compute(p, items, c, k);
        for (size_t c = round; c < end; c++)
            copy_out(p, out, items, c);
    }
    if (chunks) /* the mistake: only the stream of the last chunk issued */
        XL_CHECK(cudaStreamSynchronize(p->s[(chunks - 1) % (size_t)p->streams]));
    return 0;
}
