/* synclog.c - records every wait and stream ordering asked for while a record is open (see synclog.h).
 *
 * Programs linked with the Makefile's WRAP call the __wrap_ functions below instead of the runtime's: each passes
 * the call on unchanged and, where a record is open, notes it as it was asked (the thread, its place among the open
 * copy and launch records) with its result once it returns; so the record is in the order the calls returned. The
 * kit's own timing records events too: with no record open a wrapper costs one atomic load beside the call (no
 * lock, no system call).
 */
#include "synclog.h"

#include "copylog.h"
#include "delay.h"
#include "memlog.h"
#include "reclog.h"
#include "threads.h"

cudaError_t __real_cudaDeviceSynchronize(void);
cudaError_t __real_cudaStreamSynchronize(cudaStream_t stream);
cudaError_t __real_cudaEventSynchronize(cudaEvent_t event);
cudaError_t __real_cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t __real_cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t __real_cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags);

static xl_reclog calls = XL_RECLOG_INIT;
static int open_now; /* 1 between start and stop: the wrappers' test without the lock (__atomic, any thread) */

void xl_synclog_start(xl_sync_rec *recs, int max)
{
    xl_reclog_start(&calls, recs, sizeof *recs, max);
    __atomic_store_n(&open_now, 1, __ATOMIC_SEQ_CST);
}

int xl_synclog_stop(void)
{
    __atomic_store_n(&open_now, 0, __ATOMIC_SEQ_CST);
    return xl_reclog_stop(&calls);
}

int xl_synclog_count(void)
{
    return xl_reclog_count(&calls);
}

const char *xl_sync_name(xl_sync_kind kind)
{
    switch (kind) {
    case XL_SYNC_DEVICE: return "cudaDeviceSynchronize";
    case XL_SYNC_STREAM: return "cudaStreamSynchronize";
    case XL_SYNC_EVENT: return "cudaEventSynchronize";
    case XL_SYNC_WAIT_EVENT: return "cudaStreamWaitEvent";
    case XL_SYNC_RECORD: return "cudaEventRecord";
    default: return "unknown";
    }
}

/* ask - where a record is open, fills *r with the call (kind, stream, event), the asking thread and the copy and
 * launch counts as it is asked, and returns 1; 0 (nothing to note) when none is open */
static int ask(xl_sync_rec *r, xl_sync_kind kind, cudaStream_t stream, cudaEvent_t event)
{
    if (!__atomic_load_n(&open_now, __ATOMIC_RELAXED))
        return 0;
    *r = (xl_sync_rec){.kind = kind, .stream = stream, .event = event, .tid = xl_tid()};
    unsigned int flags = cudaStreamDefault; /* the legacy stream's, and that of a call without a stream */
    if ((kind == XL_SYNC_STREAM || kind == XL_SYNC_WAIT_EVENT || kind == XL_SYNC_RECORD) && stream != 0 &&
        stream != cudaStreamLegacy && cudaStreamGetFlags(stream, &flags) != cudaSuccess)
        flags = ~0u; /* not a stream: the call itself will fail and say so */
    r->stream_flags = flags;
    r->copies_before = xl_copylog_count(); /* before our lock: the copy and launch records have their own */
    r->launches_before = xl_memlog_count();
    return 1;
}

/* note - appends r, asked (ask returned asked), with the call's result: in the order the calls return, a wait
 * noted when it is over (counted beyond max, not kept) */
static cudaError_t note(int asked, xl_sync_rec *r, cudaError_t result)
{
    if (asked) {
        r->result = result;
        xl_reclog_note(&calls, r);
    }
    return result;
}

/* ===== The wrapped calls: the runtime's, then the record ===== */

/* __wrap_cudaDeviceSynchronize - cudaDeviceSynchronize, noted in the open record; same result */
cudaError_t __wrap_cudaDeviceSynchronize(void)
{
    xl_sync_rec r;
    int asked = ask(&r, XL_SYNC_DEVICE, 0, NULL);
    return note(asked, &r, __real_cudaDeviceSynchronize());
}

/* __wrap_cudaStreamSynchronize - cudaStreamSynchronize, noted with its stream; same result */
cudaError_t __wrap_cudaStreamSynchronize(cudaStream_t stream)
{
    xl_sync_rec r;
    int asked = ask(&r, XL_SYNC_STREAM, stream, NULL);
    return note(asked, &r, __real_cudaStreamSynchronize(stream));
}

/* __wrap_cudaEventSynchronize - cudaEventSynchronize, noted with its event; same result */
cudaError_t __wrap_cudaEventSynchronize(cudaEvent_t event)
{
    xl_sync_rec r;
    int asked = ask(&r, XL_SYNC_EVENT, 0, event);
    return note(asked, &r, __real_cudaEventSynchronize(event));
}

/* __wrap_cudaStreamWaitEvent - cudaStreamWaitEvent, noted with the stream that waits and the event; same result */
cudaError_t __wrap_cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    xl_sync_rec r;
    int asked = ask(&r, XL_SYNC_WAIT_EVENT, stream, event);
    return note(asked, &r, __real_cudaStreamWaitEvent(stream, event, flags));
}

/* The hold armed by xl_synclog_delay_after_record. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static int hold_armed, hold_fired, hold_after;
static cudaStream_t hold_stream;
static unsigned long long hold_ns;

void xl_synclog_delay_after_record(cudaStream_t stream, int after_copies, unsigned long long ns)
{
    pthread_mutex_lock(&hold_lock);
    hold_armed = ns > 0, hold_fired = 0, hold_after = after_copies, hold_stream = stream, hold_ns = ns;
    pthread_mutex_unlock(&hold_lock);
}

int xl_synclog_delay_fired(void)
{
    pthread_mutex_lock(&hold_lock);
    int fired = hold_fired;
    pthread_mutex_unlock(&hold_lock);
    return fired;
}

/* is_legacy - 1 when s names the legacy stream */
static int is_legacy(cudaStream_t s)
{
    return s == 0 || s == cudaStreamLegacy;
}

/* hold_after_record - a record on stream just returned (result e): queues the armed hold behind it when due */
static void hold_after_record(cudaStream_t stream, cudaError_t e)
{
    if (!__atomic_load_n(&hold_armed, __ATOMIC_SEQ_CST) || e != cudaSuccess)
        return;
    pthread_mutex_lock(&hold_lock);
    int due = hold_armed && (stream == hold_stream || (is_legacy(stream) && is_legacy(hold_stream))) &&
              xl_copylog_count() >= hold_after;
    if (due)
        hold_armed = 0, hold_fired = 1;
    unsigned long long ns = hold_ns;
    pthread_mutex_unlock(&hold_lock);
    if (due)
        xl_delay(stream, ns);
}

/* __wrap_cudaEventRecord - cudaEventRecord, noted with its event and stream, then the armed hold; same result */
cudaError_t __wrap_cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    xl_sync_rec r;
    int asked = ask(&r, XL_SYNC_RECORD, stream, event);
    cudaError_t e = note(asked, &r, __real_cudaEventRecord(event, stream));
    hold_after_record(stream, e);
    return e;
}

/* __wrap_cudaEventRecordWithFlags - cudaEventRecordWithFlags, noted as a record (XL_SYNC_RECORD); same result */
cudaError_t __wrap_cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    xl_sync_rec r;
    int asked = ask(&r, XL_SYNC_RECORD, stream, event);
    cudaError_t e = note(asked, &r, __real_cudaEventRecordWithFlags(event, stream, flags));
    hold_after_record(stream, e);
    return e;
}
