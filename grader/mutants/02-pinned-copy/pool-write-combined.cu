/* pool-write-combined.cu - planted wrong lab 02: the pool's buffers are allocated write-combined. They are pinned,
 * which was all the pool test asked, but the host reads them many times slower than ordinary memory.
 * target: pool.buffers
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_pool_create reference_lab_pool_create
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pool_create

extern "C" lab_pool *lab_pool_create(size_t bytes, int count)
{
    lab_pool *p = reference_lab_pool_create(bytes, count);
    for (int i = 0; p && i < p->count; i++) { /* the mistake: each buffer swapped for a write-combined one */
        lab_pinned_free(p->all[i]);
        XL_CHECK(cudaHostAlloc(&p->all[i], bytes, cudaHostAllocWriteCombined));
        p->free_buf[i] = p->all[i];
    }
    return p;
}
