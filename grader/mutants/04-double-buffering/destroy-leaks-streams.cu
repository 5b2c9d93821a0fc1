/* destroy-leaks-streams.cu - planted wrong lab 04: lab_pipe_destroy frees the buffers but forgets the streams and
 * events, so every pipe created and destroyed leaves depth of each behind. The old grader counted nothing.
 * target: pipe.buffers pipe.arguments
 */
#include "labs/04-double-buffering/lab.h"
extern "C" void reference_lab_pipe_destroy(lab_pipe *p); /* the reference's create calls it on failure */
#define lab_pipe_destroy reference_lab_pipe_destroy
#include "solutions/04-double-buffering/lab.cu"
#undef lab_pipe_destroy

extern "C" void lab_pipe_destroy(lab_pipe *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->depth; k++) {
        if (p->stream[k])
            XL_CHECK(cudaStreamSynchronize(p->stream[k]));
        XL_CHECK(cudaFree(p->dev[k]));
        XL_CHECK(cudaFree(p->dev_result[k]));
        XL_CHECK(cudaFreeHost(p->host[k]));
    } /* the mistake: no cudaEventDestroy, no cudaStreamDestroy */
    free(p);
}
