/* baseline.h - lab 09's kit: the plain ways you are measured against, and the helpers the explorer and the grader
 * share (fresh data on a GPU, a hash of device memory).
 *
 * The kit's; do not edit, and not part of what you write (that is lab.h). Implemented in baseline.cu. The ways take
 * the same arguments and follow the same rules as lab.h's (refusals, devices, streams, the current device kept); the
 * kit's peer rate is base_peer_copy under the kit's own enabling (base_peer_enable). There is no double-buffered
 * copy here: that is yours (lab_stage_copy).
 */
#ifndef LAB09_BASELINE_H
#define LAB09_BASELINE_H

#include "labs/09-gpu-to-gpu/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===== Peer access and copies ===== */

/* Bits of base_peer_enable's *owned: the directions it enabled itself. */
#define BASE_OWN_AB 1 /* a -> b (a current, b its peer) */
#define BASE_OWN_BA 2 /* b -> a */

/* base_peer_enable - peer access between devices a and b, both ways where both can (cudaDeviceCanAccessPeer), else
 * neither; a direction already enabled counts as enabled and is not owned (its error cleared). *owned gets the bits
 * of the directions enabled here (0 when none). 1: access both ways; 0: no path (nothing enabled); -1: a refusal (a
 * device out of range, owned NULL) or a failed enable (what this call enabled is undone, the error cleared). a == b:
 * 1, nothing asked or enabled. The current device is kept. */
int base_peer_enable(int a, int b, int *owned);

/* base_peer_disable - disables exactly the directions in owned (base_peer_enable's bits for a and b); the current
 * device is kept. Devices out of range or owned 0: nothing. */
void base_peer_disable(int a, int b, int owned);

/* base_peer_copy - lab_peer_copy's contract: one cudaMemcpyPeerAsync on stream. */
int base_peer_copy(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes, cudaStream_t stream);

/* ===== The road through the host, plain ===== */

typedef struct base_stage base_stage; /* two pinned chunk buffers A and B, and the events that order them */

/* base_stage_create - lab_stage_create's contract (the same refusals and failures) */
base_stage *base_stage_create(int src_dev, int dst_dev, size_t chunk_bytes);

/* base_stage_serial - lab_stage_copy's contract, the plain way: chunk by chunk through buffer A alone, each copy out
 * waiting for the copy in before it and each copy in for its copy out (out, in, out, in: never two at once) */
int base_stage_serial(base_stage *s, void *dst, const void *src, size_t bytes, cudaStream_t src_stream,
                      cudaStream_t dst_stream);

/* base_stage_ideal - the ceiling, not a copy: the same chunked copies out (of src into buffer A) on src_stream and in
 * (from buffer B into scratch_dst, device memory of dst_dev, bytes long) on dst_stream, with no dependency between
 * the two streams, so that they overlap as much as the link allows. scratch_dst ends up garbage. Work queued on
 * dst_stream after the call follows both streams' copies. Refusals as base_stage_serial's. */
int base_stage_ideal(base_stage *s, void *scratch_dst, const void *src, size_t bytes, cudaStream_t src_stream,
                     cudaStream_t dst_stream);

/* base_stage_destroy - releases what base_stage_create made (cudaFreeHost waits for the device); NULL does nothing */
void base_stage_destroy(base_stage *s);

/* ===== Reads ===== */

/* base_read_direct, base_read_copied - lab_read_direct's and lab_read_copied's contracts */
int base_read_direct(const lab_read_job *j, int reps, cudaStream_t stream);
int base_read_copied(const lab_read_job *j, uint32_t *scratch, int reps, cudaStream_t stream);

/* ===== Data and checks ===== */

/* base_fill_mix - byte i of p (device memory of dev, bytes long, any alignment) = a byte mixed from seed and i, queued
 * on s (a stream of dev, or 0): fresh data for blocks too large to fill from the host. The current device is kept.
 * 0, or -1 on a CUDA error or a device out of range (the error cleared). bytes 0: 0 and nothing. */
int base_fill_mix(void *p, int dev, size_t bytes, uint64_t seed, cudaStream_t s);

/* base_hash - a hash of bytes of p (device memory of dev, any alignment), computed on dev after the work queued on s
 * (a stream of dev, or 0); waits for it. It depends on each byte's value and its offset from p, not on where p lies,
 * so a copy's source and destination hash alike; base_hash_host gives the same figure for host memory. The current
 * device is kept. Returns 0 and sets *ok 0 on a CUDA error or a device out of range (the error cleared); *ok is left
 * as it is otherwise, so one flag can collect several calls (ok may be NULL). */
uint64_t base_hash(const void *p, int dev, size_t bytes, cudaStream_t s, int *ok);

/* base_hash_host - base_hash's figure for bytes of host memory p */
uint64_t base_hash_host(const void *p, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
