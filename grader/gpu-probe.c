/* gpu-probe.c - says in one line whether this machine has a usable CUDA GPU. Course staff tool.
 *
 * Used by make test, make demo, make plots and make doctor. Exit 0 and
 * "gpu: NAME, ..." when there is one; exit 3 and the reason when there is not.
 */
#include <stdio.h>

#include "common/gpu.h"

int main(void)
{
    xl_gpu_info g;
    char why[512], drv[16], rt[16];
    if (xl_gpu_probe(&g, why, sizeof why) != 0) {
        printf("%s\n", why);
        return 3;
    }
    printf("gpu: %s, compute capability %d.%d, %d copy engines, %.0f GiB; driver supports CUDA %s, kit built with %s\n",
           g.name, g.cc_major, g.cc_minor, g.copy_engines, g.total_mem_bytes / 1073741824.0,
           xl_version_string(g.driver_version, drv, sizeof drv), xl_version_string(g.runtime_version, rt, sizeof rt));
    return 0;
}
