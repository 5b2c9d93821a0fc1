/* csv-int-bytes.cu - planted wrong lab 01: the CSV prints each size through an int, so sizes of 2 GiB or more come
 * out wrong (negative or wrapped). Every test wrote sizes under 1 MiB.
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
            fprintf(f, "%s,%d,%.9g,%.9g,%.9g,%.9g\n", k ? "D2H" : "H2D", (int)p[i].bytes, /* the mistake */
                    p[i].t.median_ms, p[i].t.min_ms, p[i].t.max_ms, xl_gbps((double)p[i].bytes, p[i].t.median_ms));
    }
    return fclose(f) == 0 ? 0 : -1;
}
