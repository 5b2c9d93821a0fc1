/* peerlog.c - records every peer copy and peer-access call while a record is open, and denies peer paths on demand
 * (see peerlog.h). Programs linked with the Makefile's WRAP call the __wrap_ functions below instead of the
 * runtime's. */
#include "peerlog.h"

#include <pthread.h>

#include "copylog.h"
#include "faults.h"
#include "reclog.h"
#include "memlog.h"

cudaError_t __real_cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes,
                                       cudaStream_t stream);
cudaError_t __real_cudaMemcpyPeer(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes);
cudaError_t __real_cudaDeviceCanAccessPeer(int *can, int device, int peer);
cudaError_t __real_cudaDeviceEnablePeerAccess(int peer, unsigned int flags);
cudaError_t __real_cudaDeviceDisablePeerAccess(int peer);

#define DENY_MAX 64 /* devices a denial can name */

static xl_reclog calls = XL_RECLOG_INIT;
static unsigned char denied[DENY_MAX][DENY_MAX]; /* [device][peer]: 1 when xl_peer_deny named the direction */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void xl_peerlog_start(xl_peer_rec *recs, int max)
{
    xl_reclog_start(&calls, recs, sizeof *recs, max);
}

int xl_peerlog_stop(void)
{
    return xl_reclog_stop(&calls);
}

int xl_peerlog_count(void)
{
    return xl_reclog_count(&calls);
}

const char *xl_peer_kind_name(xl_peer_kind kind)
{
    switch (kind) {
    case XL_PEER_COPY: return "cudaMemcpyPeerAsync";
    case XL_PEER_COPY_SYNC: return "cudaMemcpyPeer";
    case XL_PEER_CAN: return "cudaDeviceCanAccessPeer";
    case XL_PEER_ENABLE: return "cudaDeviceEnablePeerAccess";
    case XL_PEER_DISABLE: return "cudaDeviceDisablePeerAccess";
    default: return "unknown";
    }
}

void xl_peer_deny(int device, int peer)
{
    pthread_mutex_lock(&lock);
    if (device < 0 && peer < 0) {
        for (int d = 0; d < DENY_MAX; d++)
            for (int p = 0; p < DENY_MAX; p++)
                denied[d][p] = 0;
    } else if (device >= 0 && device < DENY_MAX && peer >= 0 && peer < DENY_MAX) {
        denied[device][peer] = 1;
    }
    pthread_mutex_unlock(&lock);
}

/* is_denied - 1 when xl_peer_deny named device -> peer */
static int is_denied(int device, int peer)
{
    pthread_mutex_lock(&lock);
    int d = device >= 0 && device < DENY_MAX && peer >= 0 && peer < DENY_MAX && denied[device][peer];
    pthread_mutex_unlock(&lock);
    return d;
}

/* note - appends r to the open record, if any (counted beyond max, not kept); fills in copies_before */
static void note(xl_peer_rec r)
{
    r.copies_before = xl_copylog_count(); /* before our lock: the copy and launch records have their own */
    r.mem_before = xl_memlog_count();
    xl_reclog_note(&calls, &r);
}

/* current - the current device, -1 when the runtime cannot say (its error cleared: the wrapper leaves only the
 * wrapped call's own) */
static int current(void)
{
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess) {
        cudaGetLastError();
        d = -1;
    }
    return d;
}

/* invalid_device - the runtime's own cudaErrorInvalidDevice, left as its last error, as a denied enable returns it */
static cudaError_t invalid_device(void)
{
    int v = 0;
    cudaError_t e = cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, -1); /* no device -1: the runtime's own error */
    return e == cudaSuccess ? cudaErrorInvalidDevice : e;
}

cudaError_t xl_peer_enable_unlogged(int peer)
{
    return __real_cudaDeviceEnablePeerAccess(peer, 0);
}

cudaError_t xl_peer_disable_unlogged(int peer)
{
    return __real_cudaDeviceDisablePeerAccess(peer);
}

/* ===== The wrapped calls: the runtime's (or the planted failure), then the record ===== */

/* __wrap_cudaMemcpyPeerAsync - cudaMemcpyPeerAsync, noted in the open record; same result */
cudaError_t __wrap_cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes,
                                       cudaStream_t stream)
{
    xl_peer_rec r = {.kind = XL_PEER_COPY, .dst = dst, .dst_dev = dst_dev, .src = src, .src_dev = src_dev,
                     .bytes = bytes, .stream = stream, .device = current(), .peer = -1, .answer = -1};
    r.result = __real_cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, stream);
    note(r);
    return r.result;
}

/* __wrap_cudaMemcpyPeer - cudaMemcpyPeer, noted in the open record; same result */
cudaError_t __wrap_cudaMemcpyPeer(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes)
{
    xl_peer_rec r = {.kind = XL_PEER_COPY_SYNC, .dst = dst, .dst_dev = dst_dev, .src = src, .src_dev = src_dev,
                     .bytes = bytes, .stream = 0, .device = current(), .peer = -1, .answer = -1};
    r.result = __real_cudaMemcpyPeer(dst, dst_dev, src, src_dev, bytes);
    note(r);
    return r.result;
}

/* __wrap_cudaDeviceCanAccessPeer - cudaDeviceCanAccessPeer, 0 for a denied direction, noted; same result */
cudaError_t __wrap_cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    xl_peer_rec r = {.kind = XL_PEER_CAN, .device = device, .peer = peer, .answer = -1, .src_dev = -1,
                     .dst_dev = -1};
    r.result = __real_cudaDeviceCanAccessPeer(can, device, peer);
    if (r.result == cudaSuccess && can) {
        if (is_denied(device, peer))
            *can = 0;
        r.answer = *can;
    }
    note(r);
    return r.result;
}

/* __wrap_cudaDeviceEnablePeerAccess - cudaDeviceEnablePeerAccess, or the armed fault (faults.h), or a denial's
 * cudaErrorInvalidDevice, instead; noted; same result */
cudaError_t __wrap_cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    xl_peer_rec r = {.kind = XL_PEER_ENABLE, .device = current(), .peer = peer, .answer = -1, .src_dev = -1,
                     .dst_dev = -1};
    if (xl_fault_due())
        r.result = xl_fault_error();
    else if (is_denied(r.device, peer))
        r.result = invalid_device();
    else
        r.result = __real_cudaDeviceEnablePeerAccess(peer, flags);
    note(r);
    return r.result;
}

/* __wrap_cudaDeviceDisablePeerAccess - cudaDeviceDisablePeerAccess, noted; same result */
cudaError_t __wrap_cudaDeviceDisablePeerAccess(int peer)
{
    xl_peer_rec r = {.kind = XL_PEER_DISABLE, .device = current(), .peer = peer, .answer = -1, .src_dev = -1,
                     .dst_dev = -1};
    r.result = __real_cudaDeviceDisablePeerAccess(peer);
    note(r);
    return r.result;
}
