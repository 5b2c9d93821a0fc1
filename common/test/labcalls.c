/* labcalls.c - unit tests of common/labcalls: the calls a lab's code must never make are counted, on any thread,
 * and made all the same. CPU only: without a GPU each call fails, and is counted all the same (a call is what is
 * counted).
 */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <pthread.h>

#include "common/labcalls.h"

/* reset_main - a thread that asks for a device reset, as a lab's worker might */
static void *reset_main(void *arg)
{
    (void)arg;
    xl_lab_cudaDeviceReset();
    return NULL;
}

Test(labcalls, each_call_counted_apart)
{
    xl_labcalls_reset();
    for (int c = 0; c < XL_LAB_CALLS; c++)
        cr_assert_eq(xl_labcalls_count(c), 0, "%s starts at 0", xl_labcalls_name(c));
    xl_lab_cudaDeviceSynchronize();
    xl_lab_cudaDeviceSynchronize();
    xl_lab_cudaSetDeviceFlags(cudaDeviceScheduleAuto);
    xl_lab_cudaDeviceSetCacheConfig(cudaFuncCachePreferNone);
    xl_lab_cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1u << 20);
    cr_assert_eq(xl_labcalls_count(XL_LAB_DEVICE_SYNC), 2, "two device-wide waits are two");
    cr_assert_eq(xl_labcalls_count(XL_LAB_SET_FLAGS), 1, "one change of flags is one");
    cr_assert_eq(xl_labcalls_count(XL_LAB_RESET), 0, "no reset was asked for");
    cr_assert_eq(xl_labcalls_count(XL_LAB_CACHE_CONFIG), 1, "one cache setting is one");
    cr_assert_eq(xl_labcalls_count(XL_LAB_SET_LIMIT), 1, "one limit is one");
    xl_labcalls_reset();
    cr_assert_eq(xl_labcalls_count(XL_LAB_DEVICE_SYNC), 0, "a reset of the counts starts again at 0");
}

Test(labcalls, other_threads_counted)
{
    pthread_t t;
    xl_labcalls_reset();
    cr_assert_eq(pthread_create(&t, NULL, reset_main, NULL), 0);
    cr_assert_eq(pthread_join(t, NULL), 0);
    cr_assert_eq(xl_labcalls_count(XL_LAB_RESET), 1, "a call on a thread the lab started counts");
}

Test(labcalls, names_and_range)
{
    cr_assert_str_eq(xl_labcalls_name(XL_LAB_DEVICE_SYNC), "cudaDeviceSynchronize");
    cr_assert_str_eq(xl_labcalls_name(XL_LAB_SET_FLAGS), "cudaSetDeviceFlags");
    cr_assert_str_eq(xl_labcalls_name(XL_LAB_RESET), "cudaDeviceReset");
    cr_assert_str_eq(xl_labcalls_name(XL_LAB_CACHE_CONFIG), "cudaDeviceSetCacheConfig");
    cr_assert_str_eq(xl_labcalls_name(XL_LAB_SET_LIMIT), "cudaDeviceSetLimit");
    cr_assert_str_eq(xl_labcalls_name(XL_LAB_CALLS), "?", "a call out of range has no name");
    cr_assert_eq(xl_labcalls_count((xl_lab_call)-1), 0, "a call out of range counts nothing");
}
