/* sweep-points-off-by-one.cu - planted wrong lab 01: the sweep refuses a max_points equal to its number of sizes
 * (>= where > was meant). Every test gave it room to spare.
 * target: sweep.sizes_and_figures
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_sweep reference_lab_sweep
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_sweep

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out, int max_points)
{
    int n = 0;
    for (size_t b = min_bytes; min_bytes && b <= max_bytes && b >= min_bytes; b *= 2)
        n++;
    if (n >= max_points) /* the mistake: n == max_points fits */
        return -1;
    return reference_lab_sweep(dir, min_bytes, max_bytes, reps, out, max_points);
}
