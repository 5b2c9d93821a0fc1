/* send-zero-batches-error.cu - planted wrong lab 03: lab_send refuses n = 0 as a bad argument (n < 1 instead of
 * n < 0); lab.h allows it (nothing to send). The old grader always sent 6 or 3 batches.
 * target: send.correct_under_delay
 */
#include <stdio.h>

#include "labs/03-nonblocking-sync/lab.h"
#define lab_send reference_lab_send
#include "solutions/03-nonblocking-sync/lab.cu"
#undef lab_send

extern "C" int lab_send(const lab_send_job *j)
{
    if (!j || j->n < 1) { /* the mistake: 0 batches is not an error */
        fprintf(stderr, "lab_send: bad job\n");
        return -1;
    }
    return reference_lab_send(j);
}
