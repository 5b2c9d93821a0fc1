/* devlog.h - the cudaSetDevice calls made on one thread, so that a grader sees code that changes the device its
 * caller made current.
 *
 * Part of xferlab's common library. Programs linked with the kit's --wrap flags (the Makefile's WRAP) pass every
 * cudaSetDevice through common/devlog.c. While a thread is watched, each call made on that thread is counted, its
 * device kept; calls on other threads (workers a lab starts, which may set their own device) are not. The kit's own
 * device changes go through xl_set_device_unlogged and are never counted. The code watched needs no change.
 */
#ifndef XL_DEVLOG_H
#define XL_DEVLOG_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xl_devlog_watch - from now on counts the cudaSetDevice calls made on the calling thread (the count starts at 0) */
void xl_devlog_watch(void);

/* xl_devlog_sets - how many cudaSetDevice calls the watched thread made since xl_devlog_watch; *last (when not
 * NULL) is the device the last of them asked for (-1 when none) */
int xl_devlog_sets(int *last);

/* xl_set_device_unlogged - cudaSetDevice(d) for the kit, never counted; the runtime's result */
cudaError_t xl_set_device_unlogged(int d);

#ifdef __cplusplus
}
#endif

#endif
