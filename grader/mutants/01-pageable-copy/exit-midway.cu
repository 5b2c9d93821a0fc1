/* exit-midway.cu - planted wrong lab 01: copies, then calls exit(0) on a large size.
 * Criterion reports a test whose process exits with 0 as passed; the grader must not.
 * target: copy.h2d_exact copy.d2h_exact
 */
#include <stdlib.h>

#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    int rc = reference_lab_copy(dst, src, bytes, dir);
    if (bytes > (1u << 20) && bytes % 2 == 1)
        exit(0); /* the mistake: "done" */
    return rc;
}
