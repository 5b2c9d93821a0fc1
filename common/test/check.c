/* check.c - unit tests of common/check and common/gpu that need no GPU. */
#include <criterion/criterion.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/gpu.h"

static char caught[1024];
static jmp_buf back;

/* catch_fail - a fail handler that records the message and jumps back to the test */
static void catch_fail(const char *msg)
{
    snprintf(caught, sizeof caught, "%s", msg);
    longjmp(back, 1);
}

Test(check, failed_call_names_file_line_call_error_and_hint)
{
    xl_set_fail_handler(catch_fail);
    if (setjmp(back) == 0) {
        XL_CHECK(cudaErrorMemoryAllocation);
        cr_assert_fail("XL_CHECK did not call the fail handler");
    }
    cr_assert(strstr(caught, "check.c:") != NULL, "%s", caught);
    cr_assert(strstr(caught, "cudaErrorMemoryAllocation failed") != NULL, "%s", caught);
    cr_assert(strstr(caught, "out of memory") != NULL, "%s", caught);
    cr_assert(strchr(caught, '\n') == NULL, "one line: %s", caught);
}

Test(check, success_does_not_fail)
{
    xl_set_fail_handler(catch_fail);
    caught[0] = '\0';
    XL_CHECK(cudaSuccess);
    cr_assert_str_empty(caught);
}

Test(check, default_handler_exits_1, .exit_code = 1)
{
    XL_CHECK(cudaErrorInvalidValue);
}

Test(check, hints_cover_the_usual_causes)
{
    cr_assert(strstr(xl_cuda_hint(cudaErrorInsufficientDriver), "make doctor"));
    cr_assert(strstr(xl_cuda_hint(cudaErrorNoDevice), "nvidia-smi"));
    cr_assert(strstr(xl_cuda_hint(cudaErrorInvalidResourceHandle), "cudaDeviceReset"));
    cr_assert_str_empty(xl_cuda_hint(cudaSuccess));
}

Test(gpu, forced_absence_gives_one_line)
{
    char why[512];
    setenv("XL_NO_GPU", "1", 1);
    cr_assert(xl_gpu_probe(NULL, why, sizeof why) == -1);
    cr_assert(strstr(why, "XL_NO_GPU") != NULL && strchr(why, '\n') == NULL, "%s", why);
}

Test(gpu, version_string)
{
    char buf[16];
    cr_assert_str_eq(xl_version_string(13000, buf, sizeof buf), "13.0");
    cr_assert_str_eq(xl_version_string(12040, buf, sizeof buf), "12.4");
}
