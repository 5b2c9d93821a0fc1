/* gpu.c - GPU detection with one clear line when there is none (see gpu.h). */
#include "gpu.h"
#include "env.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *xl_version_string(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
    return buf;
}

const char *xl_driver_release(char *buf, size_t len)
{
    FILE *f = fopen("/sys/module/nvidia/version", "r");
    snprintf(buf, len, "unknown");
    if (f) {
        if (fgets(buf, (int)len, f))
            buf[strcspn(buf, "\r\n")] = '\0';
        fclose(f);
    }
    return buf;
}

int xl_gpu_probe(xl_gpu_info *info, char *why, size_t why_len)
{
    xl_gpu_info tmp;
    char a[16], b[16];
    int count = 0, drv = 0, rt = 0;
    cudaError_t err;

    if (!info)
        info = &tmp;
    memset(info, 0, sizeof *info);
    if (xl_env_on("XL_NO_GPU")) {
        snprintf(why, why_len, "no CUDA GPU: XL_NO_GPU is set, so GPU work is skipped on purpose");
        return -1;
    }
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver && drv == 0) {
        snprintf(why, why_len, "no CUDA GPU: no NVIDIA driver is installed on this machine");
        return -1;
    }
    if (err == cudaErrorInsufficientDriver) {
        snprintf(why, why_len,
                 "no usable CUDA GPU: the driver supports CUDA %s but this kit was built with CUDA %s; "
                 "update the driver or build with an older toolkit (CUDA_HOME=...)",
                 xl_version_string(drv, a, sizeof a), xl_version_string(rt, b, sizeof b));
        return -1;
    }
    if (err != cudaSuccess || count == 0) {
        snprintf(why, why_len, "no CUDA GPU: %s (check nvidia-smi and CUDA_VISIBLE_DEVICES)",
                 err != cudaSuccess ? cudaGetErrorString(err) : "no device found");
        return -1;
    }
    struct cudaDeviceProp p;
    if ((err = cudaGetDevice(&info->device)) != cudaSuccess ||
        (err = cudaGetDeviceProperties(&p, info->device)) != cudaSuccess ||
        (err = cudaFree(0)) != cudaSuccess) {
        snprintf(why, why_len, "the CUDA GPU cannot be used: %s", cudaGetErrorString(err));
        return -1;
    }
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->copy_engines = p.asyncEngineCount;
    info->total_mem_bytes = p.totalGlobalMem;
    info->driver_version = drv;
    info->runtime_version = rt;
    if (why_len)
        why[0] = '\0';
    return 0;
}

int xl_gpu_count(void)
{
    int count = 0;
    if (xl_env_on("XL_NO_GPU"))
        return 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

void xl_gpu_require(const char *prog, xl_gpu_info *info)
{
    char why[512];
    if (xl_gpu_probe(info, why, sizeof why) != 0) {
        fprintf(stderr, "%s: %s\n", prog, why);
        exit(3);
    }
}

int xl_pcie_link(int *gen, int *width, double *line_gbps)
{
    /* per-lane rate in GB/s after line encoding: 8b/10b up to gen 2, 128b/130b from gen 3 */
    static const double lane_gbps[] = {0, 0.25, 0.5, 8 * 128.0 / 130 / 8, 16 * 128.0 / 130 / 8, 32 * 128.0 / 130 / 8};
    FILE *p = popen("nvidia-smi --query-gpu=pcie.link.gen.max,pcie.link.width.max --format=csv,noheader,nounits "
                    "2>/dev/null",
                    "r");
    int ok = p && fscanf(p, "%d, %d", gen, width) == 2;
    if (p)
        pclose(p);
    if (!ok || *gen < 1 || *gen > 5 || *width < 1)
        return -1;
    *line_gbps = lane_gbps[*gen] * *width;
    return 0;
}

/* run_info - the lines (without "# ") that say where and when a CSV was measured, into lines; how many */
static int run_info(char lines[3][512], const xl_gpu_info *g, const char *prog, int reps)
{
    char drv[16], rt[16], day[32], rel[64];
    time_t now = time(NULL);
    int n = 0, gen, width;
    double line;
    strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
    snprintf(lines[n++], 512, "gpu: %s; driver %s (CUDA %s); built with CUDA %s; %d copy engines", g->name,
             xl_driver_release(rel, sizeof rel), xl_version_string(g->driver_version, drv, sizeof drv),
             xl_version_string(g->runtime_version, rt, sizeof rt), g->copy_engines);
    if (xl_pcie_link(&gen, &width, &line) == 0)
        snprintf(lines[n++], 512, "link: PCIe gen %d x%d, line rate %.1f GB/s per direction", gen, width, line);
    snprintf(lines[n++], 512, "measured %s by %s, %d timed runs per figure after a warm-up", day, prog, reps);
    return n;
}

int xl_append_run_info(const char *path, const xl_gpu_info *g, const char *prog, int reps)
{
    char lines[3][512];
    int n = run_info(lines, g, prog, reps);
    FILE *f = fopen(path, "a");
    if (!f)
        return -1;
    for (int i = 0; i < n; i++)
        fprintf(f, "# %s\n", lines[i]);
    return fclose(f) == 0 ? 0 : -1;
}

void xl_write_run_info(xl_csv *c, const xl_gpu_info *g, const char *prog, int reps)
{
    char lines[3][512];
    int n = run_info(lines, g, prog, reps);
    for (int i = 0; i < n; i++)
        xl_csv_comment(c, "%s", lines[i]);
}
