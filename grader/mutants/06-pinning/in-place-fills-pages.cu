/* in-place-fills-pages.cu - planted wrong lab 06: "pin in place" asks fill for the whole page-rounded buffer, not
 * the data's bytes (the producer is asked for up to a page more data than there is).
 * target: pin.in_place
 */
#include "labs/06-pinning/lab.h"
#define lab_pin_in_place reference_lab_pin_in_place
#include "solutions/06-pinning/lab.cu"
#undef lab_pin_in_place

extern "C" int lab_pin_in_place(size_t bytes, lab_fill_fn fill, void *ctx, lab_pinned *out)
{
    size_t page = page_size();
    if (!out || !fill || bytes == 0 || bytes > SIZE_MAX - page)
        return failed(out, "lab_pin_in_place", "need bytes > 0, a fill and an out", cudaSuccess);
    size_t len = (bytes + page - 1) / page * page;
    void *p = aligned_alloc(page, len);
    if (!p)
        return failed(out, "lab_pin_in_place", "out of memory", cudaSuccess);
    fill(p, len, ctx); /* the mistake: len, not bytes */
    cudaError_t err = cudaHostRegister(p, len, cudaHostRegisterDefault);
    if (err != cudaSuccess) {
        free(p);
        return failed(out, "lab_pin_in_place", "cannot pin the buffer", err);
    }
    *out = (lab_pinned){p, bytes, LAB_IN_PLACE, p, len};
    return 0;
}
