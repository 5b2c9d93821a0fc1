/* devlog.c - unit tests of common/devlog: cudaSetDevice counted on the watched thread only, never the kit's own.
 * CPU only: without a GPU cudaSetDevice fails, and is counted all the same (a call is what is counted).
 *
 * This program is linked with the kit's --wrap flags, so its own cudaSetDevice calls pass through common/devlog.c,
 * as a lab's do.
 */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <pthread.h>

#include "common/devlog.h"

/* set_device_main - a thread that calls cudaSetDevice(*arg) */
static void *set_device_main(void *arg)
{
    cudaSetDevice(*(int *)arg);
    return NULL;
}

Test(devlog, counts_the_watched_thread)
{
    int last = 7;
    xl_devlog_watch();
    cr_assert_eq(xl_devlog_sets(&last), 0, "a fresh watch starts at 0");
    cr_assert_eq(last, -1, "no device before a call");
    cudaSetDevice(3);
    cudaSetDevice(2);
    cr_assert_eq(xl_devlog_sets(&last), 2, "two calls on the watched thread are two");
    cr_assert_eq(last, 2, "the last call's device is kept");
    xl_devlog_watch();
    cr_assert_eq(xl_devlog_sets(NULL), 0, "watching again starts again at 0");
}

Test(devlog, other_threads_and_the_kit_are_not_counted)
{
    pthread_t t;
    int d = 1;
    xl_devlog_watch();
    cr_assert_eq(pthread_create(&t, NULL, set_device_main, &d), 0);
    cr_assert_eq(pthread_join(t, NULL), 0);
    xl_set_device_unlogged(0);
    cr_assert_eq(xl_devlog_sets(NULL), 0, "another thread's call and the kit's are not counted");
}
