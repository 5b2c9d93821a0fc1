/* create-fail-leaks.cu - planted wrong lab 05: when a device buffer cannot be allocated, lab_pipeline_create returns
 * NULL but keeps the streams and buffers it already made.
 * target: pipeline.arguments
 */
#include "labs/05-stream-pipelining/lab.h"
#define lab_pipeline_create reference_lab_pipeline_create
#include "solutions/05-stream-pipelining/lab.cu"
#undef lab_pipeline_create

extern "C" lab_pipeline *lab_pipeline_create(size_t chunk_items, int streams)
{
    if (chunk_items == 0 || streams < 1 || streams > MAX_STREAMS)
        return NULL;
    lab_pipeline *p = (lab_pipeline *)calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->streams = streams;
    p->chunk_items = chunk_items;
    for (int i = 0; i < streams; i++)
        if (cudaStreamCreateWithFlags(&p->s[i], cudaStreamNonBlocking) != cudaSuccess ||
            cudaMalloc(&p->din[i], chunk_items * sizeof(uint32_t)) != cudaSuccess ||
            cudaMalloc(&p->dout[i], chunk_items * sizeof(uint32_t)) != cudaSuccess) {
            cudaGetLastError();
            free(p); /* the mistake: what was made before the failure is never released */
            return NULL;
        }
    return p;
}
