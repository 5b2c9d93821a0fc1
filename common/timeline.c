/* timeline.c - host and GPU spans on one clock (see timeline.h). */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "csv.h"
#include "timing.h"

/* One span: host times, or two events. */
typedef struct {
    char run[32], lane[32], what[48];
    double start_ms, end_ms; /* host clock, relative to the origin */
    cudaEvent_t ev_start, ev_end; /* GPU spans only */
    int gpu;
} span;

#define MAX_LANES 16

struct xl_timeline {
    span *spans;
    int n, max;
    cudaStream_t streams[MAX_LANES]; /* streams[i] is lane "stream i+1" */
    char lanes[MAX_LANES][24];
    int nstreams;
    cudaEvent_t origin;   /* recorded when the host clock read origin_host_ms */
    double origin_host_ms;
};

xl_timeline *xl_timeline_create(int max_spans)
{
    xl_timeline *t = calloc(1, sizeof *t);
    if (!t || !(t->spans = calloc((size_t)max_spans, sizeof(span)))) {
        free(t);
        return NULL;
    }
    t->max = max_spans;
    cudaStream_t s;
    XL_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    XL_CHECK(cudaEventCreate(&t->origin));
    double before = xl_now_ms();
    XL_CHECK(cudaEventRecord(t->origin, s));
    XL_CHECK(cudaEventSynchronize(t->origin));
    t->origin_host_ms = 0.5 * (before + xl_now_ms()); /* the event ran between the two readings */
    XL_CHECK(cudaStreamDestroy(s));
    return t;
}

/* add - a new span with its names; NULL when full */
static span *add(xl_timeline *t, const char *run, const char *lane, const char *what)
{
    if (t->n >= t->max)
        return NULL;
    span *s = &t->spans[t->n++];
    snprintf(s->run, sizeof s->run, "%s", run);
    snprintf(s->lane, sizeof s->lane, "%s", lane);
    snprintf(s->what, sizeof s->what, "%s", what);
    return s;
}

int xl_timeline_host(xl_timeline *t, const char *run, const char *lane, const char *what, double start_ms,
                     double end_ms)
{
    span *s = add(t, run, lane, what);
    if (!s)
        return -1;
    s->start_ms = start_ms - t->origin_host_ms;
    s->end_ms = end_ms - t->origin_host_ms;
    return 0;
}

int xl_timeline_gpu_begin(xl_timeline *t, cudaStream_t stream, const char *run, const char *lane, const char *what)
{
    span *s = add(t, run, lane, what);
    if (!s)
        return -1;
    s->gpu = 1;
    XL_CHECK(cudaEventCreate(&s->ev_start));
    XL_CHECK(cudaEventCreate(&s->ev_end));
    XL_CHECK(cudaEventRecord(s->ev_start, stream));
    return t->n - 1;
}

void xl_timeline_gpu_end(xl_timeline *t, int id, cudaStream_t stream)
{
    if (id >= 0 && id < t->n && t->spans[id].gpu)
        XL_CHECK(cudaEventRecord(t->spans[id].ev_end, stream));
}

void xl_timeline_new_lanes(xl_timeline *t)
{
    t->nstreams = 0;
}

const char *xl_timeline_lane(xl_timeline *t, cudaStream_t stream)
{
    if (stream == 0)
        return "stream 0";
    for (int i = 0; i < t->nstreams; i++)
        if (t->streams[i] == stream)
            return t->lanes[i];
    if (t->nstreams == MAX_LANES)
        return "streams";
    t->streams[t->nstreams] = stream;
    snprintf(t->lanes[t->nstreams], sizeof t->lanes[0], "stream %d", t->nstreams + 1);
    return t->lanes[t->nstreams++];
}

int xl_timeline_write(xl_timeline *t, const char *path)
{
    char err[256];
    xl_csv *c = xl_csv_open(path, "run,lane,what,start_ms,end_ms", err, sizeof err);
    if (!c) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    for (int i = 0; i < t->n; i++) {
        span *s = &t->spans[i];
        if (s->gpu) {
            float a, b;
            XL_CHECK(cudaEventSynchronize(s->ev_end));
            XL_CHECK(cudaEventElapsedTime(&a, t->origin, s->ev_start));
            XL_CHECK(cudaEventElapsedTime(&b, t->origin, s->ev_end));
            s->start_ms = a;
            s->end_ms = b;
        }
        xl_csv_row(c, "%s,%s,%s,%.4f,%.4f", s->run, s->lane, s->what, s->start_ms, s->end_ms);
    }
    if (xl_csv_close(c, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

void xl_timeline_destroy(xl_timeline *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        if (t->spans[i].gpu) {
            cudaEventDestroy(t->spans[i].ev_start);
            cudaEventDestroy(t->spans[i].ev_end);
        }
    cudaEventDestroy(t->origin);
    free(t->spans);
    free(t);
}
