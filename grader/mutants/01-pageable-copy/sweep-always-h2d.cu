/* sweep-always-h2d.cu - planted wrong lab 01: the sweep measures host-to-device copies whichever direction it is
 * given. Pageable rates of the two directions are close enough that the device-to-host figures stayed within the
 * 1.5x bar (on the H200 reference data the median ratio over 1 MiB to 256 MiB is 0.9).
 * target: sweep.sizes_and_figures
 */
#include "labs/01-pageable-copy/lab.h"
#define lab_sweep reference_lab_sweep
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_sweep

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out, int max_points)
{
    if (dir != LAB_H2D && dir != LAB_D2H)
        return -1;
    return reference_lab_sweep(LAB_H2D, min_bytes, max_bytes, reps, out, max_points); /* the mistake */
}
