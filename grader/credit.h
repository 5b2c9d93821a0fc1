/* credit.h - how much of a speed test's points a reading below its bar earns: the instructor's choice.
 *
 * Part of xferlab's grader library. XL_SPEED_CREDIT=linear (the default, unset or empty too) gives part of a speed
 * test's points to a sound reading between a floor and the bar, in a straight line from none at the floor to all at
 * the bar; the floor is the bar times XL_SPEED_FLOOR (0.5 to 0.99, default 0.75, above what the planted and
 * generated mutants reach) for an "at least" bar, the bar divided by it for an "at most" one. XL_SPEED_CREDIT=all
 * gives a speed test all its points at its bar and none below. A test with several speed checks earns the smallest
 * share among them; a failed correctness check still earns nothing.
 */
#ifndef XL_CREDIT_H
#define XL_CREDIT_H

#include <stddef.h>

#include "grade.h"

#ifdef __cplusplus
extern "C" {
#endif

/* xl_credit_check - 0 when XL_SPEED_CREDIT and XL_SPEED_FLOOR are unset or hold a value they take; else -1 with one
 * line in why saying what they take */
int xl_credit_check(char *why, size_t len);

/* xl_credit_linear - 1 unless XL_SPEED_CREDIT=all */
int xl_credit_linear(void);

/* xl_credit_floor - the reading below which a check under need earns nothing (see above); need's own value when
 * credit is all or nothing */
double xl_credit_floor(xl_need need);

/* xl_credit_share - the share of its points (0 to 1) a sound best reading earns against need: 1 when it meets need,
 * 0 at or past the floor (and for a reading that is not a number), in a straight line between */
double xl_credit_share(double best, xl_need need);

/* xl_credit_text - how speed tests are scored, for people, into buf: "all or nothing at the bar" or "linear from
 * 50% of the bar (an "at most" bar: 2x it) to the bar"; buf */
const char *xl_credit_text(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
