/* reclog.c - a record of calls kept in the caller's array, shared by threads (see reclog.h). */
#include "reclog.h"

#include <string.h>

void xl_reclog_start(xl_reclog *l, void *recs, size_t size, int max)
{
    pthread_mutex_lock(&l->lock);
    l->recs = recs, l->size = size, l->max = max, l->n = 0;
    pthread_mutex_unlock(&l->lock);
}

int xl_reclog_stop(xl_reclog *l)
{
    pthread_mutex_lock(&l->lock);
    int n = l->n;
    l->recs = NULL, l->max = 0, l->n = 0;
    pthread_mutex_unlock(&l->lock);
    return n;
}

int xl_reclog_count(xl_reclog *l)
{
    pthread_mutex_lock(&l->lock);
    int n = l->recs ? l->n : 0;
    pthread_mutex_unlock(&l->lock);
    return n;
}

void xl_reclog_note(xl_reclog *l, const void *rec)
{
    pthread_mutex_lock(&l->lock);
    if (l->recs) {
        if (l->n < l->max)
            memcpy((char *)l->recs + (size_t)l->n * l->size, rec, l->size);
        l->n++;
    }
    pthread_mutex_unlock(&l->lock);
}
