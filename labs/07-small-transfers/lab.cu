/* lab.cu - lab 07 (many small transfers): YOUR CODE. This is the only file you edit.
 *
 * Read lab.h (the contract) and the handout (README.md). Write the packed path both ways (pack into pinned
 * staging, a few large copies, scatter or gather on the GPU with a kernel), the same pieces with
 * cudaMemcpyBatchAsync, and the rule that says when packing pays.
 * Check it with `make run LAB=07` (loop, batch and packed against piece size and count) and `make grade LAB=07`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "labs/07-small-transfers/lab.h"

/* not_yet - what every function says until you write it; -1 */
static int not_yet(const char *fn)
{
    fprintf(stderr, "%s: not written yet (labs/07-small-transfers/lab.cu)\n", fn);
    return -1;
}

/* TODO: what the packed path keeps between calls (pinned staging, device staging, the offsets table, ...) */
struct lab_packer {
    size_t max_bytes;
    int max_pieces;
};

extern "C" lab_packer *lab_packer_create(size_t max_bytes, int max_pieces)
{
    (void)max_bytes, (void)max_pieces;
    /* TODO: allocate everything the calls reuse, here and only here */
    not_yet("lab_packer_create");
    return NULL;
}

extern "C" void lab_packer_destroy(lab_packer *p)
{
    /* TODO: wait for the packer's work, then release everything lab_packer_create made */
    (void)p;
}

extern "C" int lab_send_packed(lab_packer *p, const lab_piece *pieces, int n, cudaStream_t stream)
{
    (void)p, (void)pieces, (void)n, (void)stream;
    /* TODO: check the arguments; pack the pieces and an offsets table into pinned staging; copy it in trips of
     * at least LAB_TRIP_BYTES on stream; scatter it with a kernel. When may you write the staging buffer again? */
    return not_yet("lab_send_packed");
}

extern "C" int lab_fetch_packed(lab_packer *p, const lab_piece *pieces, int n, cudaStream_t stream)
{
    (void)p, (void)pieces, (void)n, (void)stream;
    /* TODO: gather on the GPU, copy back in trips, wait for this call's work only, unpack */
    return not_yet("lab_fetch_packed");
}

extern "C" int lab_send_batch(const lab_piece *pieces, int n, cudaStream_t stream)
{
    (void)pieces, (void)n, (void)stream;
    /* TODO: one cudaMemcpyBatchAsync (which attributes does it need? which stream does it refuse?) */
    return not_yet("lab_send_batch");
}

extern "C" int lab_fetch_batch(const lab_piece *pieces, int n, cudaStream_t stream)
{
    (void)pieces, (void)n, (void)stream;
    /* TODO: the same, device to host */
    return not_yet("lab_fetch_batch");
}

extern "C" double lab_pack_pays_below(double latency_us, double link_gbps, double pack_gbps)
{
    (void)latency_us, (void)link_gbps, (void)pack_gbps;
    /* TODO: the piece size s where the loop's latency_us + s / link equals the packed path's cost (see lab.h) */
    return -2;
}
