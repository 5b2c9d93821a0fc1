/* sweep-half-sizes.cu - planted wrong lab 01: the sweep times copies of half of each size it reports
 * (an off-by-one in the shift), so every figure is twice too fast.
 * target: sweep.sizes_and_figures
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_sweep reference_lab_sweep
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_sweep

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out, int max_points)
{
    if (min_bytes < 2)
        return -1;
    int n = reference_lab_sweep(dir, min_bytes / 2, max_bytes / 2, reps, out, max_points);
    for (int i = 0; i < n; i++)
        out[i].bytes *= 2; /* the mistake: labels say twice what was copied */
    return n;
}
