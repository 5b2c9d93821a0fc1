/* gpu-probe.c - says in one line whether this machine has a usable CUDA GPU. Course staff tool.
 *
 * Used by make test, make demo, make plots, make doctor and class grading.
 * Exit 0 and "gpu: NAME, ..." when there is one; exit 3 and the reason when
 * there is not. With --others it says instead whether other processes use the
 * GPU: exit 0 when none does (or the driver cannot tell, which it says), 4 with
 * the processes when some do.
 */
#include <stdio.h>
#include <string.h>

#include "common/gpu.h"
#include "common/gpushare.h"

int main(int argc, char *argv[])
{
    xl_gpu_info g;
    char why[512], drv[16], rt[16], who[1024];
    int others = argc == 2 && strcmp(argv[1], "--others") == 0;
    if (argc > 1 && !others) {
        fprintf(stderr, "gpu-probe: unknown argument %s (usage: gpu-probe [--others])\n", argv[1]);
        return 2;
    }
    if (xl_gpu_probe(&g, why, sizeof why) != 0) {
        printf("%s\n", why);
        return 3;
    }
    if (others) {
        int n = xl_gpu_others(g.device, who, sizeof who);
        if (n < 0)
            printf("gpu: cannot tell whether other processes use it: %s\n", who);
        else if (n == 0)
            printf("gpu: no other process is using it\n");
        else
            printf("gpu: %d other process%s using it: %s\n", n, n > 1 ? "es are" : " is", who);
        return n > 0 ? 4 : 0;
    }
    printf("gpu: %s, compute capability %d.%d, %d copy engines, %.0f GiB; driver supports CUDA %s, kit built with %s\n",
           g.name, g.cc_major, g.cc_minor, g.copy_engines, g.total_mem_bytes / 1073741824.0,
           xl_version_string(g.driver_version, drv, sizeof drv), xl_version_string(g.runtime_version, rt, sizeof rt));
    return 0;
}
