/* register-unchecked.cu - planted wrong lab 06: lab_register ignores what cudaHostRegister says, so pages
 * pinned twice (or not at all) are reported as pinned.
 * target: bad.input
 */
#include "labs/06-pinning/lab.h"
#define lab_register reference_lab_register
#include "solutions/06-pinning/lab.cu"
#undef lab_register

extern "C" int lab_register(void *data, size_t bytes, lab_pinned *out)
{
    if (!out || !data || bytes == 0)
        return failed(out, "lab_register", "bad arguments", cudaSuccess);
    size_t page = page_size();
    uintptr_t first = (uintptr_t)data / page * page, end = ((uintptr_t)data + bytes + page - 1) / page * page;
    cudaHostRegister((void *)first, end - first, cudaHostRegisterDefault); /* the mistake: not checked */
    cudaGetLastError();
    *out = (lab_pinned){data, bytes, LAB_REGISTERED, (void *)first, end - first};
    return 0;
}
