/* hang.cu - planted wrong lab 01: on an odd size, starts a GPU kernel that never ends and waits for it.
 * The grader must stop it at the test's timeout and go on grading.
 * target: copy.h2d_exact copy.d2h_exact
 */
#include "common/delay.h"
#include "labs/01-pageable-copy/lab.h"
#define lab_copy reference_lab_copy
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_copy

extern "C" int lab_copy(void *dst, const void *src, size_t bytes, lab_dir dir)
{
    if (bytes % 2 == 1) { /* the mistake: a loop that never finishes, on the GPU */
        xl_hang(0);
        XL_CHECK(cudaDeviceSynchronize());
    }
    return reference_lab_copy(dst, src, bytes, dir);
}
