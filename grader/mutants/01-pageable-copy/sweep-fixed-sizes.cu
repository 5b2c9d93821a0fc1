/* sweep-fixed-sizes.cu - planted wrong lab 01: the sweep always measures 4 KiB to 256 MiB, whatever min_bytes and
 * max_bytes say. Every test asked for exactly those sizes.
 * target: sweep.sizes_and_figures
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_sweep reference_lab_sweep
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_sweep

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out, int max_points)
{
    if (min_bytes == 0 || max_bytes < min_bytes)
        return -1;
    return reference_lab_sweep(dir, 4u << 10, 256u << 20, reps, out, max_points); /* the mistake */
}
