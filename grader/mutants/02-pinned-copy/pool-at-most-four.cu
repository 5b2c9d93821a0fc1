/* pool-at-most-four.cu - planted wrong lab 02: the pool keeps its buffers in a fixed table of four, so a pool of
 * more than four buffers allocates only four (and hands out only four). Every test asked for two or three.
 * target: pool.buffers
 */
#include "labs/02-pinned-copy/lab.h"
#define lab_pool_create reference_lab_pool_create
#include "solutions/02-pinned-copy/lab.cu"
#undef lab_pool_create

extern "C" lab_pool *lab_pool_create(size_t bytes, int count)
{
    return reference_lab_pool_create(bytes, count > 4 ? 4 : count); /* the mistake */
}
