/* timeline.c - tests of common/timeline: host and GPU spans on one clock. Needs a GPU (skipped without). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/delay.h"
#include "common/gpu.h"
#include "common/timeline.h"
#include "common/timing.h"

Test(timeline, gpu_and_host_spans_share_one_clock)
{
    char why[512], dir[] = "/tmp/xl-tl-XXXXXX", path[128], line[256];
    if (xl_gpu_probe(NULL, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    cudaStream_t s;
    cr_assert(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    xl_timeline *t = xl_timeline_create(3);
    cr_assert(t != NULL);
    double h0 = xl_now_ms();
    int id = xl_timeline_gpu_begin(t, s, "run", "GPU", "delay");
    xl_delay(s, 20000000); /* 20 ms */
    xl_timeline_gpu_end(t, id, s);
    cr_assert(cudaStreamSynchronize(s) == cudaSuccess);
    double h1 = xl_now_ms();
    cr_assert(xl_timeline_host(t, "run", "host", "wait", h0, h1) == 0);
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.csv", dir);
    cr_assert(xl_timeline_write(t, path, NULL, NULL, 0) == 0);
    FILE *f = fopen(path, "r");
    cr_assert(fgets(line, sizeof line, f) && strcmp(line, "run,lane,what,start_ms,end_ms,bytes\n") == 0);
    double g0, g1, w0, w1;
    cr_assert(fscanf(f, "run,GPU,delay,%lf,%lf,0\n", &g0, &g1) == 2);
    cr_assert(fscanf(f, "run,host,wait,%lf,%lf,0\n", &w0, &w1) == 2);
    fclose(f);
    unlink(path);
    rmdir(dir);
    cr_assert(g1 - g0 > 19.5 && g1 - g0 < 25, "the 20 ms kernel spans %.3f ms", g1 - g0);
    cr_assert(g0 >= w0 - 0.5 && g1 <= w1 + 0.5,
              "the GPU span [%.3f, %.3f] must lie inside the host wait around it [%.3f, %.3f]", g0, g1, w0, w1);
    cr_assert(xl_timeline_host(t, "run", "host", "third", 0, 1) == 0, "a timeline of 3 takes a third span");
    cr_assert(xl_timeline_host(t, "run", "host", "fourth", 0, 1) == -1, "a full timeline refuses more spans");
    xl_timeline_destroy(t);
}

Test(timeline, written_beside_the_figures, .description = "figures at NAME.csv, the timeline at NAME-timeline.csv")
{
    char why[512], dir[] = "/tmp/xl-tl-XXXXXX", path[128], tl_path[160], line[256];
    xl_gpu_info g;
    if (xl_gpu_probe(&g, why, sizeof why) != 0)
        cr_skip_test("%s", why);
    xl_timeline *t = xl_timeline_create(1);
    double h0 = xl_now_ms(), a, b;
    cr_assert(t != NULL && xl_timeline_host(t, "run", "host", "work", h0, h0 + 1) == 0);
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/pipe.csv", dir);
    snprintf(tl_path, sizeof tl_path, "%s/pipe-timeline.csv", dir);
    xl_csv *c = xl_csv_open(path, "version,ms", why, sizeof why);
    cr_assert(c != NULL, "%s", why);
    xl_csv_row(c, "depth 2,1.5");
    cr_assert(xl_timeline_write_beside(t, c, &g, "test", 3) == 0);
    FILE *f = fopen(path, "r"), *h = fopen(tl_path, "r");
    cr_assert(f && h, "both %s and %s must exist", path, tl_path);
    cr_assert(fgets(line, sizeof line, f) && strcmp(line, "version,ms\n") == 0);
    cr_assert(fgets(line, sizeof line, f) && strcmp(line, "depth 2,1.5\n") == 0);
    cr_assert(fgets(line, sizeof line, f) && strncmp(line, "# gpu: ", 7) == 0, "then where it was measured");
    cr_assert(fgets(line, sizeof line, h) && strcmp(line, "run,lane,what,start_ms,end_ms,bytes\n") == 0);
    cr_assert(fscanf(h, "run,host,work,%lf,%lf,0\n", &a, &b) == 2 && b - a > 0.999 && b - a < 1.001,
              "the span of 1 ms must follow the header");
    cr_assert(fgets(line, sizeof line, h) && strncmp(line, "# gpu: ", 7) == 0, "then where it was measured");
    fclose(f);
    fclose(h);
    unlink(path);
    unlink(tl_path);
    rmdir(dir);
    xl_timeline_destroy(t);
}

Test(timeline, overlap_of_two_sets_of_spans)
{
    /* a: [0,2] and [1,3] (one run of 3 ms), [10,11]; b: [2.5,4], [10.5,20] */
    double a[] = {10, 11, 1, 3, 0, 2}, b[] = {10.5, 20, 2.5, 4};
    double got = xl_spans_overlap_ms(a, 3, b, 2);
    cr_assert(got > 0.999 && got < 1.001, "overlap %.4f, expected 0.5 + 0.5", got);
    double c[] = {5, 6}, d[] = {6, 7};
    cr_assert(xl_spans_overlap_ms(c, 1, d, 1) == 0, "spans that only touch do not overlap");
    cr_assert(xl_spans_overlap_ms(c, 1, d, 0) == 0, "nothing overlaps an empty set");
    double e[] = {0, 4, 1, 2, 3, 5, 7, 8};
    cr_assert(xl_spans_total_ms(e, 4) == 6, "the union of [0,4] [1,2] [3,5] [7,8] is 6 ms long");
}
