/* check.c - error reporting for XL_CHECK (see check.h). Part of the common library. */
#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void default_fail(const char *msg)
{
    fprintf(stderr, "error: %s\n", msg);
    exit(1);
}

static xl_fail_fn fail_handler = default_fail;

void xl_set_fail_handler(xl_fail_fn fn)
{
    fail_handler = fn ? fn : default_fail;
}

void xl_fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fail_handler(msg);
    abort(); /* a handler that returns is a bug in the kit */
}

const char *xl_cuda_hint(cudaError_t err)
{
    switch (err) {
    case cudaErrorInsufficientDriver:
        return "no NVIDIA driver, or one older than this CUDA toolkit: run 'make doctor'";
    case cudaErrorNoDevice:
        return "no CUDA GPU is visible: check nvidia-smi and CUDA_VISIBLE_DEVICES";
    case cudaErrorMemoryAllocation:
        return "out of memory: try a smaller size, or free what you allocated";
    case cudaErrorInvalidValue:
        return "an argument is wrong: a NULL pointer, a wrong size, the wrong copy direction, or a buffer lost to cudaDeviceReset()?";
    case cudaErrorIllegalAddress:
        return "a kernel touched memory outside its buffers: run compute-sanitizer on the program";
    case cudaErrorInvalidResourceHandle:
    case cudaErrorContextIsDestroyed:
        return "a stream, event or buffer is no longer valid: was it destroyed, or was cudaDeviceReset() called?";
    case cudaErrorNotReady:
        return "the GPU has not finished yet: wait for an event or the stream before reading results";
    case cudaErrorInvalidDevicePointer:
        return "a host pointer was passed where a device pointer was expected";
    case cudaErrorHostMemoryAlreadyRegistered:
        return "this host range is already registered with cudaHostRegister";
    case cudaErrorLaunchTimeout:
        return "a kernel ran too long and was stopped by the driver's watchdog";
    default:
        return "";
    }
}

void xl_check_failed(cudaError_t err, const char *call, const char *file, int line)
{
    const char *hint = xl_cuda_hint(err);
    xl_fail("%s:%d: %s failed: %s%s%s%s", file, line, call, cudaGetErrorString(err),
            *hint ? " (" : "", hint, *hint ? ")" : "");
}

int xl_refuse(const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", fn);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

int xl_cuda_failed(cudaError_t err, const char *fn, const char *call)
{
    if (err == cudaSuccess)
        return 0;
    (void)cudaGetLastError();
    const char *hint = xl_cuda_hint(err);
    fprintf(stderr, "%s: %s failed: %s%s%s%s\n", fn, call, cudaGetErrorString(err), *hint ? " (" : "", hint,
            *hint ? ")" : "");
    return 1;
}
