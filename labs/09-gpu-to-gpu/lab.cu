/* lab.cu - lab 09 (GPU to GPU: peer access, and the road through the host): YOUR CODE. This is the only file you
 * edit.
 *
 * Read lab.h (the contract) and the handout (README.md); baseline.cu has the kit's plain ways (peer access and a
 * peer copy, a serial copy through the host, reads). Write the group (peer access both ways, undone exactly), the
 * peer copy, the ring, the two reads and the double-buffered road through the host. Start with the stage: it runs
 * on any GPU. Everything must work with every rank on one device (device 0), which is how a one-GPU host grades it.
 * Check it with `make run LAB=09` (bandwidths, chunk sizes, a timeline) and `make grade LAB=09`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/check.h"
#include "labs/09-gpu-to-gpu/lab.h"

/* not_yet - what every function says (once) until you write it; -1 */
static int not_yet(const char *fn, int *said)
{
    if (!*said)
        fprintf(stderr, "%s: not written yet (labs/09-gpu-to-gpu/lab.cu)\n", fn);
    *said = 1;
    return -1;
}

/* ===== A group of ranks, and peer access ===== */

struct lab_group {
    int n; /* TODO: what else? each rank's device, its events (made once, on its device), the directions you enabled */
};

extern "C" lab_group *lab_group_create(const int *devs, int n, int *peer)
{
    static int said;
    (void)devs, (void)n, (void)peer;
    /* TODO: the refusals; remember the current device; make the ring's events, each with its rank's device current;
     * for each pair of distinct devices (a device is not its own peer) ask cudaDeviceCanAccessPeer both ways, and
     * only when both can enable both (cudaDeviceEnablePeerAccess, from each side): remember what you enabled, treat
     * cudaErrorPeerAccessAlreadyEnabled as enabled but not yours (and clear it), undo everything on any other
     * failure; one line for the first pair without a path; put the current device back */
    not_yet("lab_group_create", &said);
    return NULL;
}

extern "C" void lab_group_destroy(lab_group *g)
{
    (void)g;
    /* TODO: disable exactly the directions your create enabled (each with its device current), destroy the events,
     * free g, put the current device back; NULL does nothing */
}

/* ===== Copies ===== */

extern "C" int lab_peer_copy(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes, cudaStream_t stream)
{
    static int said;
    (void)dst, (void)dst_dev, (void)src, (void)src_dev, (void)bytes, (void)stream;
    /* TODO: the refusals (lab.h), then one asynchronous copy on stream, which names both devices; no waiting */
    return not_yet("lab_peer_copy", &said);
}

extern "C" int lab_ring_exchange(lab_group *g, void *const *send, void *const *recv, size_t bytes,
                                 const cudaStream_t *streams)
{
    static int said;
    (void)g, (void)send, (void)recv, (void)bytes, (void)streams;
    /* TODO: rank i's copy goes on streams[i] and must wait for two streams' earlier work: its own (send[i]) and the
     * receiver's (recv[i + 1]); the receiver's later work must wait for the copy. Mark each stream with one of g's
     * events (recorded with that event's device current), make the copies, mark them, and make each receiver's
     * stream wait. Put the current device back. */
    return not_yet("lab_ring_exchange", &said);
}

/* ===== A kernel reading another GPU's memory ===== */

extern "C" int lab_read_direct(const lab_read_job *j, int reps, cudaStream_t stream)
{
    static int said;
    (void)j, (void)reps, (void)stream;
    /* TODO: the refusals (lab.h, after lab_read_copied; words * 4 past SIZE_MAX too); with out_dev current, reps
     * launches of a kernel in which consecutive threads add consecutive words; put the current device back */
    return not_yet("lab_read_direct", &said);
}

extern "C" int lab_read_copied(const lab_read_job *j, uint32_t *scratch, int reps, cudaStream_t stream)
{
    static int said;
    (void)j, (void)scratch, (void)reps, (void)stream;
    /* TODO: as lab_read_direct, but first one copy of src's words into scratch (as lab_peer_copy makes), on stream,
     * and the passes read scratch */
    return not_yet("lab_read_copied", &said);
}

/* ===== The road through the host ===== */

struct lab_stage {
    int src_dev; /* TODO: what else? the other device, the chunk, the pinned buffers, the events that guard them */
};

extern "C" lab_stage *lab_stage_create(int src_dev, int dst_dev, size_t chunk_bytes)
{
    static int said;
    (void)src_dev, (void)dst_dev, (void)chunk_bytes;
    /* TODO: the refusals; pinned host memory for two chunks that every device sees as pinned (which cudaHostAlloc
     * flag?); the events, each made on the device whose stream will record it; on any failure free what you made,
     * clear the CUDA error, NULL; put the current device back */
    not_yet("lab_stage_create", &said);
    return NULL;
}

extern "C" int lab_stage_copy(lab_stage *s, void *dst, const void *src, size_t bytes, cudaStream_t src_stream,
                              cudaStream_t dst_stream)
{
    static int said;
    (void)s, (void)dst, (void)src, (void)bytes, (void)src_stream, (void)dst_stream;
    /* TODO: chunk c (the last one shorter) goes out of src into buffer c % 2 on src_stream, then from there into dst
     * on dst_stream. Before a copy out: wait (on the GPU) until that buffer's last copy in is done; before a copy in:
     * until its copy out is done. Which device must be current for each event record? Put it back at the end. */
    return not_yet("lab_stage_copy", &said);
}

extern "C" void lab_stage_destroy(lab_stage *s)
{
    (void)s;
    /* TODO: free the pinned memory and destroy the events create made, then s; NULL does nothing */
}
