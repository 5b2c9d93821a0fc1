/* sweep-keeps-device.cu - planted wrong lab 01: the sweep never frees its device buffer, so each sweep leaves its
 * largest size allocated on the GPU.
 * target: sweep.sizes_and_figures
 */
#include <stdlib.h>
#include <string.h>

#include "labs/01-pageable-copy/lab.h"
#define lab_sweep reference_lab_sweep
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_sweep

extern "C" int lab_sweep(lab_dir dir, size_t min_bytes, size_t max_bytes, int reps, lab_point *out, int max_points)
{
    if (min_bytes == 0 || max_bytes < min_bytes || !out || (dir != LAB_H2D && dir != LAB_D2H))
        return -1;
    int n = 0;
    for (size_t b = min_bytes; b <= max_bytes && b >= min_bytes; b *= 2)
        n++;
    if (n > max_points)
        return -1;
    size_t largest = min_bytes << (n - 1);
    void *host = malloc(largest), *dev = NULL;
    if (!host)
        return -1;
    memset(host, 1, largest);
    XL_CHECK(cudaMalloc(&dev, largest));
    XL_CHECK(cudaMemset(dev, 1, largest));
    for (int i = 0; i < n; i++) {
        copy_job job = {dir == LAB_H2D ? dev : host, dir == LAB_H2D ? host : dev, min_bytes << i, dir};
        out[i].bytes = job.bytes;
        if (lab_time_gpu(run_copy, &job, 0, 1, reps, &out[i].t) != 0) {
            n = -1;
            break;
        }
    }
    free(host); /* the mistake: no cudaFree(dev) */
    return n;
}
