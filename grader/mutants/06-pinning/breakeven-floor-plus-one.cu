/* breakeven-floor-plus-one.cu - planted wrong lab 06: lab_breakeven rounds up as floor + 1, which is one transfer
 * too many when pin_ms is an exact multiple of the saving per transfer.
 * target: cost.breakeven
 */
#include "labs/06-pinning/lab.h"
#define lab_breakeven reference_lab_breakeven
#include "solutions/06-pinning/lab.cu"
#undef lab_breakeven

extern "C" long lab_breakeven(double pin_ms, size_t bytes, double pinned_gbps, double pageable_gbps)
{
    if (pin_ms <= 0)
        return 0;
    if (bytes == 0 || pinned_gbps <= 0 || pageable_gbps <= 0)
        return -1;
    double saved_ms = bytes * 1e-6 / pageable_gbps - bytes * 1e-6 / pinned_gbps;
    if (saved_ms <= 0)
        return -1;
    return (long)floor(pin_ms / saved_ms) + 1; /* the mistake: not the ceiling at an exact multiple */
}
