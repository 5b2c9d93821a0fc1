/* peerlog.c - tests of common/peerlog: every peer copy and peer-access call recorded in order while a record is
 * open, with its devices, stream and result; a denied direction answered and refused as on a host without the path;
 * an enable failing on demand (common/faults). The first two run without a GPU (a call that fails is recorded too);
 * the others need one (skipped without), and one is enough: a device is asked about and copies to itself. */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "common/buffers.h"
#include "common/copylog.h"
#include "common/devmem.h"
#include "common/faults.h"
#include "common/gpu.h"
#include "common/peerlog.h"

#define BYTES (((size_t)1 << 20) + 13) /* a copy of an odd size */

/* need_gpu - skips the test where there is no GPU */
static void need_gpu(void)
{
    char why[512];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
}

Test(peerlog, records_each_call_with_what_it_returned)
{
    xl_peer_rec r[3];
    int can = 7;
    xl_peerlog_start(r, 3);
    cudaError_t e1 = cudaMemcpyPeerAsync(NULL, 0, NULL, 0, 0, 0);
    cudaError_t e2 = cudaDeviceCanAccessPeer(&can, 0, 1);
    cudaError_t e3 = cudaDeviceDisablePeerAccess(1);
    int n = xl_peerlog_stop();
    cudaGetLastError();
    cr_assert(n == 3, "3 calls, counted %d", n);
    cr_assert(r[0].kind == XL_PEER_COPY && r[0].bytes == 0 && r[0].dst_dev == 0 && r[0].src_dev == 0 &&
                  r[0].stream == 0 && r[0].result == e1,
              "the copy first, as asked, with its result (got %s, result %d, want %d)", xl_peer_kind_name(r[0].kind),
              r[0].result, e1);
    cr_assert(r[1].kind == XL_PEER_CAN && r[1].device == 0 && r[1].peer == 1 && r[1].result == e2 &&
                  r[1].answer == (e2 == cudaSuccess ? can : -1),
              "the question second: device 0 about 1 (got %d about %d, answer %d)", r[1].device, r[1].peer,
              r[1].answer);
    cr_assert(r[2].kind == XL_PEER_DISABLE && r[2].peer == 1 && r[2].result == e3, "the disable third");
    cr_assert(xl_peerlog_count() == 0, "a closed record counts nothing");
}

Test(peerlog, counts_past_the_record_and_keeps_only_max)
{
    xl_peer_rec r[2];
    memset(r, 0, sizeof r);
    r[1].kind = (xl_peer_kind)99;
    xl_peerlog_start(r, 1);
    for (int i = 0; i < 3; i++)
        cudaMemcpyPeer(NULL, 0, NULL, 0, 0);
    cr_assert(xl_peerlog_count() == 3, "3 calls while open, counted %d", xl_peerlog_count());
    int n = xl_peerlog_stop();
    cudaGetLastError();
    cr_assert(n == 3, "3 calls, counted %d", n);
    cr_assert(r[0].kind == XL_PEER_COPY_SYNC && r[0].stream == 0, "the first kept, a blocking copy");
    cr_assert(r[1].kind == (xl_peer_kind)99, "nothing written past max");
}

Test(peerlog, places_a_device_copy_among_the_copy_record)
{
    need_gpu();
    unsigned char *a, *b, *want = malloc(BYTES), *got = malloc(BYTES);
    cudaStream_t s;
    xl_peer_rec r[4];
    xl_copy_rec c[4];
    cr_assert(want && got);
    cr_assert(cudaMalloc((void **)&a, BYTES) == cudaSuccess && cudaMalloc((void **)&b, BYTES) == cudaSuccess);
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    xl_fill_random(want, BYTES, xl_fresh_seed());
    xl_dev_upload(a, want, BYTES);
    xl_dev_fill(b, XL_POISON_BYTE, BYTES);
    xl_copylog_start(c, 4);
    xl_peerlog_start(r, 4);
    cr_assert(cudaMemcpyPeerAsync(b, 0, a, 0, BYTES, s) == cudaSuccess, "a copy from device 0 to itself");
    cr_assert(cudaMemcpyAsync(got, b, BYTES, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    cr_assert(cudaMemcpyPeerAsync(a, 0, b, 0, 5, s) == cudaSuccess);
    int np = xl_peerlog_stop(), nc = xl_copylog_stop();
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    cr_assert(np == 2 && nc == 1, "2 peer copies and 1 other, counted %d and %d: a peer copy is not a "
              "cudaMemcpyAsync the copy record sees", np, nc);
    cr_assert(r[0].kind == XL_PEER_COPY && r[0].dst == b && r[0].src == a && r[0].bytes == BYTES &&
                  r[0].stream == s && r[0].device == 0 && r[0].result == cudaSuccess && r[0].copies_before == 0,
              "the first peer copy, before any other (copies_before %d)", r[0].copies_before);
    cr_assert(r[1].bytes == 5 && r[1].copies_before == 1, "the second after the copy back (copies_before %d)",
              r[1].copies_before);
    cr_assert(memcmp(got, want, BYTES) == 0, "the copy carried every byte");
    cr_assert(cudaStreamDestroy(s) == cudaSuccess && cudaFree(a) == cudaSuccess && cudaFree(b) == cudaSuccess);
    free(want), free(got);
}

Test(peerlog, a_denied_direction_answers_0_and_refuses_its_enable)
{
    need_gpu();
    xl_peer_rec r[4];
    int can = -5, real = -5;
    cr_assert(cudaDeviceCanAccessPeer(&real, 0, 0) == cudaSuccess, "asking about device 0 and itself");
    xl_peer_deny(0, 0);
    xl_peerlog_start(r, 4);
    cr_assert(cudaDeviceCanAccessPeer(&can, 0, 0) == cudaSuccess);
    cudaError_t e = cudaDeviceEnablePeerAccess(0, 0);
    cudaError_t left = cudaGetLastError();
    int n = xl_peerlog_stop();
    xl_peer_deny(-1, -1);
    cr_assert(can == 0, "denied: the answer is 0 (got %d)", can);
    cr_assert(e == cudaErrorInvalidDevice && left == cudaErrorInvalidDevice,
              "denied: the enable returns cudaErrorInvalidDevice and leaves it as the last error (got %s, left %s)",
              cudaGetErrorName(e), cudaGetErrorName(left));
    cr_assert(n == 2 && r[0].kind == XL_PEER_CAN && r[0].answer == 0 && r[1].kind == XL_PEER_ENABLE &&
                  r[1].device == 0 && r[1].peer == 0 && r[1].result == cudaErrorInvalidDevice,
              "both recorded as the caller saw them");
    can = -5;
    cr_assert(cudaDeviceCanAccessPeer(&can, 0, 0) == cudaSuccess);
    cr_assert(can == real, "lifted: the runtime's own answer again (%d, got %d)", real, can);
}

Test(peerlog, an_enable_fails_on_demand_as_out_of_memory)
{
    need_gpu();
    xl_peer_rec r[1];
    xl_peerlog_start(r, 1);
    xl_fail_create_after(0);
    cudaError_t e = cudaDeviceEnablePeerAccess(0, 0);
    int fired = xl_fault_fired();
    xl_fail_create_after(-1);
    cudaError_t left = cudaGetLastError();
    int n = xl_peerlog_stop();
    cr_assert(fired && e == cudaErrorMemoryAllocation && left == cudaErrorMemoryAllocation,
              "the armed fault falls on the enable, the runtime's out of memory left (got %s, left %s)",
              cudaGetErrorName(e), cudaGetErrorName(left));
    cr_assert(n == 1 && r[0].kind == XL_PEER_ENABLE && r[0].result == cudaErrorMemoryAllocation, "and recorded");
}

Test(peerlog, the_kits_own_calls_are_not_recorded)
{
    need_gpu();
    xl_peer_rec r[2];
    xl_peer_deny(0, 0);
    xl_fail_create_after(0);
    xl_peerlog_start(r, 2);
    cudaError_t e = xl_peer_enable_unlogged(0);
    cudaError_t d = xl_peer_disable_unlogged(0);
    int n = xl_peerlog_stop();
    int fired = xl_fault_fired();
    xl_fail_create_after(-1);
    xl_peer_deny(-1, -1);
    cudaGetLastError();
    cr_assert(n == 0 && !fired, "no record, no fault taken (counted %d)", n);
    cr_assert(e != cudaErrorMemoryAllocation, "the runtime's own answer, not the denial's or the fault's (%s)",
              cudaGetErrorName(e));
    (void)d;
}
