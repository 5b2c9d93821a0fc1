/* csv-binary-gb.cu - planted wrong lab 01: the CSV's gbps column in GiB/s (2^30) instead of GB/s (1e9).
 * target: sweep.csv_file
 */
#include <stdio.h>

#include "labs/01-pageable-copy/lab.h"
#define lab_write_csv reference_lab_write_csv
#include "solutions/01-pageable-copy/lab.cu"
#undef lab_write_csv

extern "C" int lab_write_csv(const char *path, const lab_point *h2d, const lab_point *d2h, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "direction,bytes,median_ms,min_ms,max_ms,gbps\n");
    for (int k = 0; k < 2; k++) {
        const lab_point *p = k ? d2h : h2d;
        for (int i = 0; i < n; i++)
            fprintf(f, "%s,%zu,%.9g,%.9g,%.9g,%.9g\n", k ? "D2H" : "H2D", p[i].bytes, p[i].t.median_ms,
                    p[i].t.min_ms, p[i].t.max_ms, p[i].bytes / (p[i].t.median_ms * 1e-3) / (1 << 30));
    }
    return fclose(f) == 0 ? 0 : -1;
}
