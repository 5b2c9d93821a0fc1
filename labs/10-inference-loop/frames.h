/* frames.h - lab 10's frame source: the decode and deliver callbacks of a lab_job, what they record, and the kit's
 * right results for every frame.
 *
 * The kit's; do not edit, and not part of what you write. Implemented in frames.cu. A source makes frame f (its own
 * numbering: a job's frame k is the source's frame first + k) from a random pool drawn from its seed: the bytes
 * pool[o(f) .. o(f) + LAB_IMAGE_BYTES) XORed with a 32-bit key of f, o(f) a multiple of 4, both mixed from
 * (seed, f); the same function runs on the GPU (fr_make_gpu), so the kit's reference needs no transfer. decode then
 * spins until the call has taken cpu_us in all (host clock, no system call in the spin): real CPU time, which W
 * threads on W free cores do W times as fast and one thread cannot hide.
 * While a job is open the source records, per frame: how many times it was decoded, by which thread, into which
 * buffer, when; per deliver: which frames, on which thread, when; and keeps every delivered result (poisoned first).
 */
#ifndef LAB10_FRAMES_H
#define LAB10_FRAMES_H

#include <stdint.h>

#include "labs/10-inference-loop/lab.h"
#include "labs/10-inference-loop/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_source fr_source;

/* fr_create - a source of fresh frames from seed, for jobs of up to max_frames frames; its pool also on the current
 * GPU. NULL with a one-line message on failure (nothing held). */
fr_source *fr_create(uint64_t seed, int max_frames);
/* fr_destroy - releases it; NULL does nothing */
void fr_destroy(fr_source *s);

/* fr_set_cpu_us - each decode takes at least cpu_us (the spin); 0: making the pixels only */
void fr_set_cpu_us(fr_source *s, double cpu_us);
/* fr_cpu_us - the source's cpu_us */
double fr_cpu_us(const fr_source *s);

/* fr_job - opens a job of frames frames (<= max_frames) in batches of batch, the job's frame k being the source's
 * frame first + k: clears the records, poisons the delivered results (NaN scores, a digest no frame has), and
 * returns the lab_job to hand to a run (ctx is s). frames and batch are passed as given, even when invalid. */
lab_job fr_job(fr_source *s, int frames, int batch, int first);
/* fr_close - closes the job: a decode from now on is counted as late (fr_log's late) */
void fr_close(fr_source *s);

/* fr_fail_at - the job's frame k fails to decode in jobs opened from now on: its decode sleeps wait_ms first (the
 * other workers meanwhile decode as far as the slots let them, and wait), then returns -1, writing nothing; k < 0
 * ends it */
void fr_fail_at(fr_source *s, int k, double wait_ms);

/* fr_make - frame f of the source into dst (LAB_IMAGE_BYTES), with the spin when spin is 1; records nothing: the
 * kit's own stage measurements use it */
void fr_make(const fr_source *s, int f, uint8_t *dst, int spin);

/* fr_make_gpu - frames first .. first + n - 1 of the source into dev (n * LAB_IMAGE_BYTES, device memory), queued on
 * stream; 0, or -1 with a message */
int fr_make_gpu(const fr_source *s, int first, int n, uint8_t *dev, cudaStream_t stream);

/* fr_expected - the right results of the source's frames first .. first + n - 1 into out (host): frames made on the
 * GPU, the kit's model at batches of 64, no transfer of pixels. 0, or -1 with a message. */
int fr_expected(const fr_source *s, const mdl_model *m, int first, int n, lab_result *out);

/* ===== What the open job recorded ===== */

/* One frame of the job. */
typedef struct {
    int decodes;            /* decode calls for it (1 is right) */
    long tid;               /* the thread of its last decode (xl_tid) */
    const uint8_t *dst;     /* where its last decode wrote */
    double start_ms, end_ms; /* its last decode, host clock */
    int delivered;          /* deliver calls that held it (1 is right) */
    double deliver_ms;      /* its last deliver's start, host clock */
} fr_frame_rec;

/* One deliver call. */
typedef struct {
    int first, n;
    long tid;
    double at_ms; /* host clock */
} fr_deliver_rec;

/* What the open (or last) job recorded. */
typedef struct {
    int frames, batch, first;   /* the job */
    const fr_frame_rec *frame;  /* frames of them */
    const fr_deliver_rec *deliver; /* delivers of them, in call order */
    int delivers;
    int bad_range;   /* decode or deliver calls that named frames outside 0 .. frames - 1 */
    int late;        /* decode calls after fr_close */
    int failed;      /* decode calls that returned -1 (fr_fail_at) */
    int busy_at_close; /* decode calls still running when fr_close closed the job (0 is right: a run returns once
                        * every decode of it has) */
    const lab_result *results; /* frames of them, as delivered (the poison where none was) */
} fr_log;

/* fr_log_get - what the job recorded so far (pointers into the source, valid until the next fr_job) */
fr_log fr_log_get(const fr_source *s);

/* fr_check - compares the delivered results of the job's frames 0 .. upto - 1 with want (the right results of
 * those frames, from fr_expected): digest exact, every score within LAB_SCORE_TOL, each frame delivered once, in
 * order, in batches of the job's batch. 0 when all hold; else the count of frames wrong, and why (one line naming
 * the first wrong frame, its batch, and what it got: e.g. "frame 193 (batch 3 of 64): digest 0x5e1c.. is frame
 * 129's: delivered out of order?") */
int fr_check(const fr_source *s, const lab_result *want, int upto, char *why, size_t len);

/* fr_point - the job's figures as a lab_point: fps = frames / (last deliver - first decode start); per frame, latency
 * = its deliver - its decode start; their median, 99th percentile and largest. 0, or -1 when a frame was never
 * decoded or delivered. */
int fr_point(const fr_source *s, lab_point *out);

/* fr_distinct_threads - how many distinct threads decoded the job's frames; fr_distinct_dst - how many distinct
 * batch buffers they were decoded into (a frame's buffer: its dst less its place in its batch times
 * LAB_IMAGE_BYTES) */
int fr_distinct_threads(const fr_source *s);
int fr_distinct_dst(const fr_source *s);

#ifdef __cplusplus
}
#endif

#endif
