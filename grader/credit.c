/* credit.c - how much of a speed test's points a reading below its bar earns (credit.h). */
#include "credit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Above every mutant a speed or timed test kills: the closest planted one reached 0.65 to 0.68 of its bar (lab 02's
 * pageable buffers, about 1.0x against 1.5x; make test on an H100 and an H200, 2026-11-24), the closest generated
 * one 0.50 (make mutate, H100), so at 0.75 none earns a point */
#define FLOOR_DEFAULT 0.75
#define FLOOR_MIN 0.5  /* below half the bar a sound reading is a far miss (XL_FAR_MISS): it earns nothing */
#define FLOOR_MAX 0.99 /* at the bar there is no room left for a line */

/* floor_fraction - XL_SPEED_FLOOR as a number, or -1 when it is set and not one from FLOOR_MIN to FLOOR_MAX */
static double floor_fraction(void)
{
    const char *s = getenv("XL_SPEED_FLOOR");
    char *end;
    if (!s || !*s)
        return FLOOR_DEFAULT;
    double f = strtod(s, &end);
    return *end == '\0' && f >= FLOOR_MIN && f <= FLOOR_MAX ? f : -1;
}

int xl_credit_linear(void)
{
    const char *s = getenv("XL_SPEED_CREDIT");
    return !s || strcmp(s, "all") != 0;
}

int xl_credit_check(char *why, size_t len)
{
    const char *s = getenv("XL_SPEED_CREDIT");
    if (s && *s && strcmp(s, "all") != 0 && strcmp(s, "linear") != 0) {
        snprintf(why, len, "XL_SPEED_CREDIT is linear (part of the points from a floor to the bar, the default) or all (all or nothing at the bar), not '%s'", s);
        return -1;
    }
    if (floor_fraction() < 0) {
        snprintf(why, len, "XL_SPEED_FLOOR is a fraction of the bar from %.2g to %.2g (default %.2g), not '%s'",
                 FLOOR_MIN, FLOOR_MAX, FLOOR_DEFAULT, getenv("XL_SPEED_FLOOR"));
        return -1;
    }
    return 0;
}

double xl_credit_floor(xl_need need)
{
    if (!xl_credit_linear())
        return need.value;
    double f = floor_fraction();
    return need.at_least ? need.value * f : need.value / f;
}

double xl_credit_share(double best, xl_need need)
{
    if (!isfinite(best))
        return 0;
    if (need.at_least ? best >= need.value : best <= need.value)
        return 1;
    double lo = xl_credit_floor(need);
    if (lo == need.value)
        return 0;
    double share = need.at_least ? (best - lo) / (need.value - lo) : (lo - best) / (lo - need.value);
    return share <= 0 ? 0 : share >= 1 ? 1 : share;
}

const char *xl_credit_text(char *buf, size_t len)
{
    if (!xl_credit_linear())
        snprintf(buf, len, "a speed test earns all its points at its bar and none below");
    else
        snprintf(buf, len,
                 "a speed test below its bar earns part of its points, in a straight line from none at %.0f%% of the "
                 "bar (an \"at most\" bar: %.3gx it) to all at the bar",
                 100 * floor_fraction(), 1 / floor_fraction());
    return buf;
}
