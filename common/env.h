/* env.h - the kit's switches in the environment (XL_NO_GPU, XL_VERBOSE, XL_POINTS_TABLE, ...).
 *
 * Part of xferlab's common library; pure CPU code with unit tests. One rule for every switch: set to
 * anything but empty or "0" means on.
 */
#ifndef XL_ENV_H
#define XL_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* xl_env_on - 1 when the environment variable name is set to something other than "" or "0", else 0 */
int xl_env_on(const char *name);

#ifdef __cplusplus
}
#endif

#endif
