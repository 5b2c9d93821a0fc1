/* lab.cu - lab 08 (zero-copy and managed memory): YOUR CODE. This is the only file you edit.
 *
 * Read lab.h (the contract) and the handout (README.md); baseline.cu has a plain version of every function. Write
 * the gather kernel, the two allocators (mapped pinned memory, managed memory with advice), the three ways to read
 * a host array (copy everything, zero-copy, managed with or without a prefetch) and the rule that picks one.
 * Check it with `make run LAB=08` (the ways against fraction read and reuse) and `make grade LAB=08`.
 */
#include <stdint.h>
#include <stdio.h>

#include "common/check.h"
#include "labs/08-zero-copy/lab.h"

/* not_yet - what every function says (once) until you write it; -1 */
static int not_yet(const char *fn, int *said)
{
    if (!*said)
        fprintf(stderr, "%s: not written yet (labs/08-zero-copy/lab.cu)\n", fn);
    *said = 1;
    return -1;
}

extern "C" int lab_gather(const lab_job *j, cudaStream_t stream)
{
    static int said;
    (void)j, (void)stream;
    /* TODO: the job's rules (lab.h: "The job's rules"), then one kernel launch with <<< >>> on stream:
     * out[k] += element k. Consecutive threads on consecutive k, and enough threads for the link's latency. */
    return not_yet("lab_gather", &said);
}

extern "C" void *lab_mapped_alloc(size_t bytes, void **dev)
{
    static int said;
    (void)bytes, (void)dev;
    /* TODO: pinned host memory the GPU can map (which cudaHostAlloc flag? which one must you not add?) and its
     * device pointer; on any failure free what you made, clear the CUDA error, NULL (lab.h: lab_mapped_alloc) */
    not_yet("lab_mapped_alloc", &said);
    return NULL;
}

extern "C" void *lab_managed_alloc(size_t bytes, lab_advice advice)
{
    static int said;
    (void)bytes, (void)advice;
    /* TODO: check the advice first; cudaMallocManaged, then the advice for the current device (CUDA 12 and 13 call
     * cudaMemAdvise differently: #if LAB_LOCATION_API); if the advice fails, free and clear (lab.h: lab_advice) */
    not_yet("lab_managed_alloc", &said);
    return NULL;
}

extern "C" int lab_read_copied(const lab_job *j, uint32_t *dev, int reps, cudaStream_t stream)
{
    static int said;
    (void)j, (void)dev, (void)reps, (void)stream;
    /* TODO: the refusals (lab.h, after lab_read_managed), one cudaMemcpyAsync of the whole array, reps passes over
     * dev; all on stream, nothing waited for */
    return not_yet("lab_read_copied", &said);
}

extern "C" int lab_read_mapped(const lab_job *j, int reps, cudaStream_t stream)
{
    static int said;
    (void)j, (void)reps, (void)stream;
    /* TODO: the device pointer of src (cudaHostGetDevicePointer: refuse memory that is not mapped pinned, and clear
     * the error), then reps passes through it; no copy of any kind */
    return not_yet("lab_read_mapped", &said);
}

extern "C" int lab_read_managed(const lab_job *j, int reps, int prefetch, cudaStream_t stream)
{
    static int said;
    (void)j, (void)reps, (void)prefetch, (void)stream;
    /* TODO: refuse what is not managed memory; with prefetch 1, prefetch the span the passes read (which bytes
     * exactly?) to this GPU before the passes and back to the host after them, both on stream */
    return not_yet("lab_read_managed", &said);
}

extern "C" lab_way lab_choose(double fraction, int reuse)
{
    static int said;
    (void)fraction, (void)reuse;
    /* TODO: LAB_NONE for what lab.h refuses (NaN too); then the rule your sweep found (make run LAB=08) */
    not_yet("lab_choose", &said);
    return LAB_NONE;
}
