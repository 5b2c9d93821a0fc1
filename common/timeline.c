/* timeline.c - host and GPU spans on one clock (see timeline.h). */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv.h"
#include "timing.h"

/* One span: host times, or two events. */
typedef struct {
    char run[32], lane[32], what[48];
    double start_ms, end_ms; /* host clock, relative to the origin */
    size_t bytes;            /* moved by a copy; 0 otherwise */
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

void xl_timeline_bytes(xl_timeline *t, int id, size_t bytes)
{
    if (id >= 0 && id < t->n)
        t->spans[id].bytes = bytes;
}

/* resolve - GPU spans get their times from their events (waiting for them) */
static void resolve(xl_timeline *t)
{
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
    }
}

int xl_timeline_collect(xl_timeline *t, const char *run, const char *what, double *pairs, int max)
{
    int n = 0;
    resolve(t);
    for (int i = 0; i < t->n; i++) {
        span *s = &t->spans[i];
        if (strcmp(s->run, run) != 0 || strcmp(s->what, what) != 0)
            continue;
        if (n < max) {
            pairs[2 * n] = s->start_ms;
            pairs[2 * n + 1] = s->end_ms;
        }
        n++;
    }
    return n;
}

/* by_start - qsort order of [start, end] pairs */
static int by_start(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* merge - sorts n pairs and merges overlapping ones in place; returns how many disjoint pairs remain */
static int merge(double *p, int n)
{
    if (n == 0)
        return 0;
    qsort(p, (size_t)n, 2 * sizeof(double), by_start);
    int m = 0;
    for (int i = 1; i < n; i++) {
        if (p[2 * i] <= p[2 * m + 1]) {
            if (p[2 * i + 1] > p[2 * m + 1])
                p[2 * m + 1] = p[2 * i + 1];
        } else {
            m++;
            p[2 * m] = p[2 * i];
            p[2 * m + 1] = p[2 * i + 1];
        }
    }
    return m + 1;
}

double xl_spans_total_ms(double *pairs, int n)
{
    double total = 0;
    n = merge(pairs, n);
    for (int i = 0; i < n; i++)
        total += pairs[2 * i + 1] - pairs[2 * i];
    return total;
}

double xl_spans_overlap_ms(double *a, int na, double *b, int nb)
{
    double total = 0;
    na = merge(a, na);
    nb = merge(b, nb);
    for (int i = 0, j = 0; i < na && j < nb;) {
        double lo = a[2 * i] > b[2 * j] ? a[2 * i] : b[2 * j];
        double hi = a[2 * i + 1] < b[2 * j + 1] ? a[2 * i + 1] : b[2 * j + 1];
        if (hi > lo)
            total += hi - lo;
        if (a[2 * i + 1] < b[2 * j + 1])
            i++;
        else
            j++;
    }
    return total;
}

int xl_timeline_write(xl_timeline *t, const char *path, const xl_gpu_info *g, const char *prog, int reps)
{
    char err[256];
    xl_csv *c = xl_csv_open(path, "run,lane,what,start_ms,end_ms,bytes", err, sizeof err);
    if (!c) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    resolve(t);
    for (int i = 0; i < t->n; i++) {
        span *s = &t->spans[i];
        xl_csv_row(c, "%s,%s,%s,%.4f,%.4f,%zu", s->run, s->lane, s->what, s->start_ms, s->end_ms, s->bytes);
    }
    if (g)
        xl_write_run_info(c, g, prog, reps);
    if (xl_csv_close(c, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

int xl_timeline_write_beside(xl_timeline *t, xl_csv *figures, const xl_gpu_info *g, const char *prog, int reps)
{
    char err[256], path[4096], tl_path[4096];
    snprintf(path, sizeof path, "%s", xl_csv_path(figures));
    if (xl_csv_sibling(path, "timeline", tl_path, sizeof tl_path) != 0) {
        xl_csv_abandon(figures);
        fprintf(stderr, "%s: %s: the name is too long for a second file beside it\n", prog, path);
        return -1;
    }
    xl_write_run_info(figures, g, prog, reps);
    if (xl_csv_close(figures, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    if (xl_timeline_write(t, tl_path, g, prog, reps) != 0)
        return -1;
    printf("wrote %s and %s\n", path, tl_path);
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
