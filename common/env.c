/* env.c - the kit's switches in the environment (see env.h) */
#include "common/env.h"

#include <stdlib.h>
#include <string.h>

int xl_env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}
