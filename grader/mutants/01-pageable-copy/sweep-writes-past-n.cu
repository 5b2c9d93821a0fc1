/* sweep-writes-past-n.cu - planted wrong lab 01: after the last point the sweep writes an all-zero point as an end
 * marker whenever there is room, into out[n], which the caller did not ask it to fill.
 * target: sweep.sizes_and_figures
 */
#include <string.h>

#include "labs/01-pageable-copy/lab.h"
#define lab_sweep reference_lab_sweep
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_sweep

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out, int max_points)
{
    int n = reference_lab_sweep(dir, min_bytes, max_bytes, reps, out, max_points);
    if (n >= 0 && n < max_points)
        memset(&out[n], 0, sizeof out[n]); /* the mistake */
    return n;
}
