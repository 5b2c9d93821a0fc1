/* env.c - unit tests of common/env (the on/off rule of the kit's switches). CPU only. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "common/env.h"

Test(env, unset_empty_and_zero_are_off)
{
    unsetenv("XL_TEST_SWITCH");
    cr_assert(xl_env_on("XL_TEST_SWITCH") == 0, "an unset switch is off");
    setenv("XL_TEST_SWITCH", "", 1);
    cr_assert(xl_env_on("XL_TEST_SWITCH") == 0, "an empty switch is off");
    setenv("XL_TEST_SWITCH", "0", 1);
    cr_assert(xl_env_on("XL_TEST_SWITCH") == 0, "XL_TEST_SWITCH=0 is off");
}

Test(env, any_other_value_is_on)
{
    static const char *on[] = {"1", "yes", "00", "true"};
    for (int i = 0; i < 4; i++) {
        setenv("XL_TEST_SWITCH", on[i], 1);
        cr_assert(xl_env_on("XL_TEST_SWITCH") == 1, "XL_TEST_SWITCH=%s is on", on[i]);
    }
}
