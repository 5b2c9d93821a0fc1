/* reclog.h - a record of calls kept in the caller's array, shared by threads: the part common to the kit's call
 * records (memlog.h, peerlog.h). Part of xferlab's common library. */
#ifndef XL_RECLOG_H
#define XL_RECLOG_H

#include <pthread.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One record: the caller's array of max records of size bytes each, how many calls were noted, and its lock. */
typedef struct {
    void *recs; /* NULL: no record open */
    size_t size;
    int max, n;
    pthread_mutex_t lock;
} xl_reclog;
#define XL_RECLOG_INIT {NULL, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER}

/* xl_reclog_start - opens l into recs (max records of size bytes each), forgetting what it noted before */
void xl_reclog_start(xl_reclog *l, void *recs, size_t size, int max);
/* xl_reclog_stop - closes l; how many calls it noted (more than max when some were not kept) */
int xl_reclog_stop(xl_reclog *l);
/* xl_reclog_count - how many calls l has noted so far; 0 when it is not open */
int xl_reclog_count(xl_reclog *l);
/* xl_reclog_note - where l is open, counts one call and keeps *rec (size bytes) while there is room */
void xl_reclog_note(xl_reclog *l, const void *rec);

#ifdef __cplusplus
}
#endif

#endif
