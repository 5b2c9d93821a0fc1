/* gpushare.c - other processes on the GPU, through NVML loaded at run time (see gpushare.h). */
#include "gpushare.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* NVML's own declarations, the few used here (nvml.h is not part of every toolkit install) */
typedef void *nvml_device;
typedef struct {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
} nvml_process; /* nvmlProcessInfo_t, as the _v3 queries fill it */
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_bus_fn)(const char *bus, nvml_device *dev);
typedef int (*nvml_procs_fn)(nvml_device dev, unsigned int *count, nvml_process *infos);
#define MAX_PROCS 64

/* nvml - NVML's entry points, loaded once; NULL with why when it cannot be loaded */
static void *nvml(const char *sym, char *why, size_t len)
{
    static void *lib;
    static int tried, ready;
    if (!tried) {
        tried = 1;
        lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        nvml_init_fn init = lib ? (nvml_init_fn)dlsym(lib, "nvmlInit_v2") : NULL;
        ready = init && init() == 0;
    }
    void *f = ready ? dlsym(lib, sym) : NULL;
    if (!f)
        snprintf(why, len, "the driver's NVML (libnvidia-ml.so.1) %s", !lib ? "is not installed" : "cannot be used");
    return f;
}

/* add_procs - appends the pids that query lists for dev to pids (at most MAX_PROCS in all); 0 or -1 */
static int add_procs(nvml_procs_fn query, nvml_device dev, unsigned int *pids, int *n)
{
    nvml_process p[MAX_PROCS];
    unsigned int count = MAX_PROCS;
    if (query(dev, &count, p) != 0)
        return -1;
    for (unsigned int i = 0; i < count && *n < MAX_PROCS; i++) {
        int seen = 0;
        for (int k = 0; k < *n; k++)
            seen |= pids[k] == p[i].pid;
        if (!seen)
            pids[(*n)++] = p[i].pid;
    }
    return 0;
}

/* name_of - "pid NAME" of a process, NAME from /proc where this process can see it */
static void name_of(unsigned int pid, char *buf, size_t len)
{
    char path[64], name[64] = "";
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(name, sizeof name, f))
            name[strcspn(name, "\n")] = '\0';
        fclose(f);
    }
    snprintf(buf, len, "pid %u%s%s", pid, *name ? " " : "", name);
}

int xl_gpu_others(int device, char *who, size_t len)
{
    char bus[32];
    nvml_device dev;
    unsigned int pids[MAX_PROCS];
    int n = 0, others = 0, me = 0;
    nvml_by_bus_fn by_bus = (nvml_by_bus_fn)nvml("nvmlDeviceGetHandleByPciBusId_v2", who, len);
    nvml_procs_fn compute = (nvml_procs_fn)nvml("nvmlDeviceGetComputeRunningProcesses_v3", who, len);
    nvml_procs_fn graphics = (nvml_procs_fn)nvml("nvmlDeviceGetGraphicsRunningProcesses_v3", who, len);
    if (!by_bus || !compute || !graphics)
        return -1;
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess || by_bus(bus, &dev) != 0 ||
        add_procs(compute, dev, pids, &n) != 0 || add_procs(graphics, dev, pids, &n) != 0) {
        cudaGetLastError();
        snprintf(who, len, "the driver's NVML did not list the processes on GPU %d", device);
        return -1;
    }
    for (int i = 0; i < n; i++)
        me |= pids[i] == (unsigned int)getpid();
    who[0] = '\0';
    for (int i = 0, skipped_one = me; i < n; i++) {
        if (pids[i] == (unsigned int)getpid() || !skipped_one) { /* without our pid in the list: one is us */
            skipped_one = 1;
            continue;
        }
        size_t used = strlen(who);
        char one[96];
        name_of(pids[i], one, sizeof one);
        snprintf(who + used, len - used, "%s%s", used ? ", " : "", one);
        others++;
    }
    return others;
}
