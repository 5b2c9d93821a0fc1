/* results.h - what a grading leaves for its report page, beside results.json, in $XL_RESULTS_DIR.
 *
 * Part of xferlab's grader library. make grade sets XL_RESULTS_DIR; there the grading writes ratios.tsv (each
 * speed measurement, as the ratio log), device.txt (the GPU's name) and data/NAME.csv (the student's own figures,
 * in the columns of the matching reference CSV), which grader/report/report.py draws. Without XL_RESULTS_DIR
 * nothing is written. Nothing here ever fails a test: a file that cannot be written is said once on stderr.
 */
#ifndef XL_RESULTS_H
#define XL_RESULTS_H

#include <stddef.h>

#include "common/csv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* xl_results_reset - removes what an earlier grading left (ratios.tsv, device.txt, the data CSVs); called once,
 * before the tests run */
void xl_results_reset(void);

/* xl_results_file - $XL_RESULTS_DIR/name into buf; 0, or -1 when no results folder is set or the path is too long */
int xl_results_file(const char *name, char *buf, size_t len);

/* xl_results_data_path - $XL_RESULTS_DIR/data/name.csv into buf, its folder made; 0, or -1 (no folder set, or it
 * cannot be made: said once) */
int xl_results_data_path(const char *name, char *buf, size_t len);

/* xl_results_csv - starts data/name.csv with header (xl_csv: the file appears only when closed whole); NULL when
 * there is no results folder or it cannot be written */
xl_csv *xl_results_csv(const char *name, const char *header);

/* xl_results_close - closes what xl_results_csv started (NULL does nothing) */
void xl_results_close(xl_csv *c);

/* xl_results_row - appends one row (printf format) to data/name.csv, writing header first when the file is new:
 * for a table that several tests fill, one row each */
void xl_results_row(const char *name, const char *header, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* xl_results_device - writes device.txt: the GPU's name, one line */
void xl_results_device(const char *name);

#ifdef __cplusplus
}
#endif

#endif
