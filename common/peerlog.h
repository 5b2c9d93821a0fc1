/* peerlog.h - a record of every peer copy and every peer-access call a piece of code makes, in order, and a way to
 * deny a peer path that the hardware has.
 *
 * Part of xferlab's common library, beside copylog.h (which records cudaMemcpy and cudaMemcpyAsync only). Programs
 * linked with the kit's --wrap flags (the Makefile's WRAP) pass cudaMemcpyPeerAsync, cudaMemcpyPeer,
 * cudaDeviceCanAccessPeer, cudaDeviceEnablePeerAccess and cudaDeviceDisablePeerAccess through common/peerlog.c; while
 * a record is open each call is appended with its devices, its stream and what it returned, so that a grader can
 * check what a student's code copied between GPUs, which directions it asked about, enabled and disabled, and in
 * which order, without reading its source. An enable asks common/faults.h first, as a create does: a grader reaches
 * every failed enable of a setup call the way it reaches a failed allocation. The code recorded needs no change.
 */
#ifndef XL_PEERLOG_H
#define XL_PEERLOG_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XL_PEER_COPY = 1,  /* cudaMemcpyPeerAsync */
    XL_PEER_COPY_SYNC, /* cudaMemcpyPeer (blocking, ordered with the legacy stream) */
    XL_PEER_CAN,       /* cudaDeviceCanAccessPeer */
    XL_PEER_ENABLE,    /* cudaDeviceEnablePeerAccess */
    XL_PEER_DISABLE    /* cudaDeviceDisablePeerAccess */
} xl_peer_kind;

/* One call as asked for. */
typedef struct {
    xl_peer_kind kind;
    void *dst;            /* copies: as passed */
    int dst_dev;
    const void *src;
    int src_dev;
    size_t bytes;
    cudaStream_t stream;  /* XL_PEER_COPY: as passed; XL_PEER_COPY_SYNC: 0 */
    int device;           /* the current device at the call (enable, disable: the direction's "from"); can: the
                           * device asked about (its first argument) */
    int peer;             /* enable, disable, can: the peer device */
    int answer;           /* can: *canAccessPeer as returned (-1 when the call failed) */
    cudaError_t result;   /* what the call returned */
    int copies_before;    /* xl_copylog_count() at the call: places it among an open copy record's copies */
    int mem_before;       /* xl_memlog_count() at the call: places it among an open record of launches */
} xl_peer_rec;

/* xl_peerlog_start - from now on appends every call to recs (up to max; later ones are counted only) */
void xl_peerlog_start(xl_peer_rec *recs, int max);

/* xl_peerlog_stop - closes the record; returns how many calls were made since the start */
int xl_peerlog_stop(void);

/* xl_peerlog_count - how many calls were made since the start, the record still open (0 when closed) */
int xl_peerlog_count(void);

/* xl_peer_kind_name - "cudaMemcpyPeerAsync", "cudaMemcpyPeer", "cudaDeviceCanAccessPeer", ... */
const char *xl_peer_kind_name(xl_peer_kind kind);

/* xl_peer_deny - from now on cudaDeviceCanAccessPeer(&c, device, peer) answers 0 (after the runtime's own call
 * succeeded), and an enable of peer with device current returns cudaErrorInvalidDevice, left as the last error, as
 * on a host with no such path; the other direction is untouched. xl_peer_deny(-1, -1) lifts every denial. */
void xl_peer_deny(int device, int peer);

/* xl_peer_enable_unlogged, xl_peer_disable_unlogged - the runtime's own cudaDeviceEnablePeerAccess(peer, 0) and
 * cudaDeviceDisablePeerAccess(peer), past the record, the denials and the faults: for the kit's own probes of the
 * peer state, which must not show among the calls of the code under test */
cudaError_t xl_peer_enable_unlogged(int peer);
cudaError_t xl_peer_disable_unlogged(int peer);

#ifdef __cplusplus
}
#endif

#endif
