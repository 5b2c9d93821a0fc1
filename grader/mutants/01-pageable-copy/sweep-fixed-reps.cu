/* sweep-fixed-reps.cu - planted wrong lab 01: the sweep times 5 runs per size whatever reps says. Every test asked
 * for 5.
 * target: sweep.sizes_and_figures
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_sweep reference_lab_sweep
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_sweep

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out, int max_points)
{
    (void)reps;
    return reference_lab_sweep(dir, min_bytes, max_bytes, 5, out, max_points); /* the mistake */
}
