/* pool-pageable.cu - planted wrong lab 02: the pool's buffers are malloc'd, not pinned.
 * target: pool.buffers
 */
#include <stdlib.h>

#include "labs/02-pinned-copy/lab.h"
#define lab_pool_create reference_lab_pool_create
#define lab_pool_destroy reference_lab_pool_destroy
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pool_create
#undef lab_pool_destroy

extern "C" lab_pool *lab_pool_create(size_t bytes, int count)
{
    lab_pool *p = reference_lab_pool_create(bytes, count);
    for (int i = 0; p && i < p->count; i++) { /* the mistake: swap each pinned buffer for a pageable one */
        lab_pinned_free(p->all[i]);
        p->all[i] = p->free_buf[i] = malloc(bytes);
    }
    return p;
}

extern "C" void lab_pool_destroy(lab_pool *pool)
{
    for (int i = 0; pool && i < pool->count; i++)
        free(pool->all[i]);
    if (pool)
        pool->count = 0;
    reference_lab_pool_destroy(pool);
}
