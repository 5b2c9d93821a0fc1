/* check.h - check every CUDA call, always.
 *
 * Part of xferlab's common library (students do not edit it). XL_CHECK wraps a
 * CUDA runtime call; on failure it reports "file:line: call: error (hint)" and
 * calls the fail handler: explorers print and exit(1), graders fail the current
 * test with the same message (never exit(): Criterion counts exit(0) as a pass).
 */
#ifndef XL_CHECK_H
#define XL_CHECK_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A fail handler receives one line of text and must not return. */
typedef void (*xl_fail_fn)(const char *msg);

/* xl_set_fail_handler - makes fn what a failed check calls; NULL restores the default (print, exit 1) */
void xl_set_fail_handler(xl_fail_fn fn);

/* xl_fail - formats one line and hands it to the fail handler; never returns */
void xl_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* xl_check_failed - reports a failed CUDA call as "file:line: call: error (hint)"; never returns */
void xl_check_failed(cudaError_t err, const char *call, const char *file, int line)
    __attribute__((noreturn));

/* xl_cuda_hint - a short sentence naming the usual causes of err; "" when there is none */
const char *xl_cuda_hint(cudaError_t err);

/* xl_refuse - prints "fn: " and the message (printf format) as one line of stderr; returns -1, for a refusal of bad
 * arguments: "return xl_refuse(fn, ...);" */
int xl_refuse(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* xl_cuda_failed - 0 for cudaSuccess; else clears the error, prints "fn: call failed: error (hint)" on one line (as
 * XL_CHECK words it) and returns 1: for code that must go on after a failed call (release, report, return -1) */
int xl_cuda_failed(cudaError_t err, const char *fn, const char *call);

#ifdef __cplusplus
}
#endif

/* XL_CHECK - evaluates a CUDA runtime call once; any error goes to the fail handler */
#define XL_CHECK(call)                                                     \
    do {                                                                   \
        cudaError_t xl_err_ = (call);                                      \
        if (xl_err_ != cudaSuccess)                                        \
            xl_check_failed(xl_err_, #call, __FILE__, __LINE__);           \
    } while (0)

/* XL_CHECK_LAUNCH - checks the kernel launch just made (bad configuration, no device) */
#define XL_CHECK_LAUNCH() XL_CHECK(cudaGetLastError())

#endif
