/* labcalls.c - counts the calls a lab's own code must never make (see labcalls.h). */
#include "labcalls.h"

static int counts[XL_LAB_CALLS]; /* __atomic: a lab's threads call too */

static const char *const names[XL_LAB_CALLS] = {
    [XL_LAB_DEVICE_SYNC] = "cudaDeviceSynchronize",
    [XL_LAB_SET_FLAGS] = "cudaSetDeviceFlags",
    [XL_LAB_RESET] = "cudaDeviceReset",
    [XL_LAB_CACHE_CONFIG] = "cudaDeviceSetCacheConfig",
    [XL_LAB_SET_LIMIT] = "cudaDeviceSetLimit",
};

void xl_labcalls_reset(void)
{
    for (int c = 0; c < XL_LAB_CALLS; c++)
        __atomic_store_n(&counts[c], 0, __ATOMIC_SEQ_CST);
}

int xl_labcalls_count(xl_lab_call c)
{
    return c >= 0 && c < XL_LAB_CALLS ? __atomic_load_n(&counts[c], __ATOMIC_SEQ_CST) : 0;
}

const char *xl_labcalls_name(xl_lab_call c)
{
    return c >= 0 && c < XL_LAB_CALLS ? names[c] : "?";
}

/* counted - one more call c */
static void counted(xl_lab_call c)
{
    __atomic_add_fetch(&counts[c], 1, __ATOMIC_SEQ_CST);
}

cudaError_t xl_lab_cudaDeviceSynchronize(void)
{
    counted(XL_LAB_DEVICE_SYNC);
    return cudaDeviceSynchronize();
}

cudaError_t xl_lab_cudaSetDeviceFlags(unsigned int flags)
{
    counted(XL_LAB_SET_FLAGS);
    return cudaSetDeviceFlags(flags);
}

cudaError_t xl_lab_cudaDeviceReset(void)
{
    counted(XL_LAB_RESET);
    return cudaDeviceReset();
}

cudaError_t xl_lab_cudaDeviceSetCacheConfig(enum cudaFuncCache config)
{
    counted(XL_LAB_CACHE_CONFIG);
    return cudaDeviceSetCacheConfig(config);
}

cudaError_t xl_lab_cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    counted(XL_LAB_SET_LIMIT);
    return cudaDeviceSetLimit(limit, value);
}
