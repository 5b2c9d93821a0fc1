/* breadth-reuse.cu - planted wrong lab 05: breadth-first over every chunk at once, though each stream has
 * one buffer: chunk c + S's copy in overwrites the buffer before chunk c's kernel has read it.
 * target: results.breadth_first
 */
#include "labs/05-stream-pipelining/lab.h"
#define lab_pipeline_run reference_lab_pipeline_run
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_pipeline_run

extern "C" int lab_pipeline_run(lab_pipeline *p, const uint32_t *in, uint32_t *out, size_t items, lab_order order,
                                const lab_kernel *k)
{
    if (order != LAB_BREADTH_FIRST)
        return reference_lab_pipeline_run(p, in, out, items, order, k);
    if (!p || !k)
        return -1;
    size_t chunks = (items + p->chunk_items - 1) / p->chunk_items;
    for (size_t c = 0; c < chunks; c++) /* the mistake: every copy in before any kernel */
        copy_in(p, in, items, c);
    for (size_t c = 0; c < chunks; c++)
        compute(p, items, c, k);
    for (size_t c = 0; c < chunks; c++)
        copy_out(p, out, items, c);
    for (int i = 0; i < p->streams; i++)
        XL_CHECK(cudaStreamSynchronize(p->s[i]));
    return 0;
}
