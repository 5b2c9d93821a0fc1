/* timeline.h - record when things happened, on the host and on the GPU, against one origin.
 *
 * Part of xferlab's common library. Host spans are read from the host clock; GPU spans are pairs of
 * CUDA events recorded on a stream, converted to the same clock when the timeline is written. Writes a
 * CSV (run,lane,what,start_ms,end_ms,bytes) that plots/ draws as a Gantt chart, so overlap can be seen
 * without a profiler. Accuracy: the two clocks are aligned once, to within tens of microseconds.
 */
#ifndef XL_TIMELINE_H
#define XL_TIMELINE_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xl_timeline xl_timeline;

/* xl_timeline_create - an empty timeline for up to max_spans spans; its origin is now. Fails through
 * XL_CHECK on CUDA errors; NULL when out of memory. */
xl_timeline *xl_timeline_create(int max_spans);

/* xl_timeline_host - adds a host span from host clock readings (xl_now_ms); -1 when full */
int xl_timeline_host(xl_timeline *t, const char *run, const char *lane, const char *what, double start_ms,
                     double end_ms);

/* xl_timeline_gpu_begin - records a start event on stream and opens a GPU span; returns its id, -1 when full */
int xl_timeline_gpu_begin(xl_timeline *t, cudaStream_t stream, const char *run, const char *lane, const char *what);

/* xl_timeline_gpu_end - records the end event of span id on stream */
void xl_timeline_gpu_end(xl_timeline *t, int id, cudaStream_t stream);

/* xl_timeline_lane - the lane for stream's spans on t: "stream 1", "stream 2", ... in order of first use,
 * "stream 0" for the legacy default stream; "streams" once more than 16 streams have been named */
const char *xl_timeline_lane(xl_timeline *t, cudaStream_t stream);

/* xl_timeline_new_lanes - numbers streams afresh from "stream 1" on (each run its own lanes) */
void xl_timeline_new_lanes(xl_timeline *t);

/* xl_timeline_trace_copies - from now on every cudaMemcpyAsync becomes a GPU span of run on t, on its
 * stream's lane (xl_timeline_lane), named "H2D", "D2H" or "D2D"; the lanes are numbered afresh; t == NULL stops. Only in programs linked
 * with -Xlinker --wrap=cudaMemcpyAsync (the explorers are): the code traced needs no change. */
void xl_timeline_trace_copies(xl_timeline *t, const char *run);

/* xl_timeline_bytes - notes how many bytes span id moved (written in the CSV's bytes column) */
void xl_timeline_bytes(xl_timeline *t, int id, size_t bytes);

/* xl_timeline_collect - waits for the events, then copies [start_ms, end_ms] of up to max spans of run
 * whose name is what into pairs (2 doubles each); returns how many (all of them when max is larger) */
int xl_timeline_collect(xl_timeline *t, const char *run, const char *what, double *pairs, int max);

/* xl_spans_overlap_ms - how long some span of a and some span of b ran at the same time: the length of the
 * union of a's intervals intersected with the union of b's (pairs of [start, end] in ms; sorted here) */
double xl_spans_overlap_ms(double *a, int na, double *b, int nb);

/* xl_spans_total_ms - the length of the union of n intervals (pairs; sorted here) */
double xl_spans_total_ms(double *pairs, int n);

/* xl_timeline_write - waits for every event, then writes all spans to path as CSV (header
 * run,lane,what,start_ms,end_ms,bytes), and where they were measured when g is not NULL (xl_write_run_info:
 * g, prog, reps); 0, or -1 with a message on stderr */
int xl_timeline_write(xl_timeline *t, const char *path, const xl_gpu_info *g, const char *prog, int reps);

/* xl_timeline_write_beside - for a program that writes figures and a timeline of one run: adds where they were
 * measured to the figures' CSV and closes it, writes t beside it (NAME.csv, NAME-timeline.csv: xl_csv_sibling)
 * with the same lines, and says "wrote NAME.csv and NAME-timeline.csv"; 0, or -1 after one line on stderr
 * (a file not written keeps what it held). Frees figures either way. */
int xl_timeline_write_beside(xl_timeline *t, xl_csv *figures, const xl_gpu_info *g, const char *prog, int reps);

/* xl_timeline_destroy - frees the timeline and its events; NULL does nothing */
void xl_timeline_destroy(xl_timeline *t);

#ifdef __cplusplus
}
#endif

#endif
