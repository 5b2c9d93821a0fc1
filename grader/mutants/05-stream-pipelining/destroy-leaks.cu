/* destroy-leaks.cu - planted wrong lab 05: lab_pipeline_destroy releases the streams and the buffers in, but forgets
 * the device buffers out.
 * target: pipeline.arguments
 */
#define lab_pipeline_destroy reference_lab_pipeline_destroy /* before lab.h: the reference's create calls it */
#include "labs/05-stream-pipelining/lab.h"
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_pipeline_destroy

extern "C" void lab_pipeline_destroy(lab_pipeline *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->streams; i++) {
        if (p->s[i]) {
            XL_CHECK(cudaStreamSynchronize(p->s[i]));
            XL_CHECK(cudaStreamDestroy(p->s[i]));
        }
        XL_CHECK(cudaFree(p->din[i])); /* the mistake: dout[i] is never freed */
    }
    free(p);
}
