/* pool-destroy-free-list.cu - planted wrong lab 02: lab_pool_destroy frees the buffers on the free list, those that
 * were given back, and forgets the ones still taken. Every test gave every buffer back before destroying the pool.
 * target: leaks.none
 */
#include <stdlib.h>

#include "labs/02-pinned-copy/lab.h"
#define lab_pool_destroy reference_lab_pool_destroy
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pool_destroy

extern "C" void lab_pool_destroy(lab_pool *pool)
{
    if (!pool)
        return;
    for (int i = 0; i < pool->free_n; i++) /* the mistake: only the free ones */
        lab_pinned_free(pool->free_buf[i]);
    free(pool->all);
    free(pool->free_buf);
    free(pool);
}
