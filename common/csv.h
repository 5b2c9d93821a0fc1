/* csv.h - write CSV files with a header row, safely.
 *
 * Part of xferlab's common library; pure CPU code with unit tests. Rows go to
 * "<path>.tmp", which replaces <path> only when xl_csv_close succeeds: an error
 * halfway never destroys the file the user already had. Lines starting with '#'
 * are comments (gnuplot skips them); they carry the machine and the date. A file holds one table;
 * a program with a second table writes it to a file of its own beside the first (xl_csv_sibling).
 */
#ifndef XL_CSV_H
#define XL_CSV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xl_csv xl_csv;

/* xl_csv_open - starts a CSV at path with the header line; NULL with one line in err on failure */
xl_csv *xl_csv_open(const char *path, const char *header, char *err, size_t err_len);

/* xl_csv_comment - writes "# text" (printf format) */
void xl_csv_comment(xl_csv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* xl_csv_row - writes one row (printf format, no newline needed) */
void xl_csv_row(xl_csv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* xl_csv_path - the path the file will have once closed */
const char *xl_csv_path(const xl_csv *c);

/* xl_csv_close - finishes the file and moves it into place; 0, or -1 with err (the old file kept).
 * Frees c either way. */
int xl_csv_close(xl_csv *c, char *err, size_t err_len);

/* xl_csv_abandon - drops the unfinished file, leaving any old one in place; frees c */
void xl_csv_abandon(xl_csv *c);

/* xl_csv_sibling - the path of a second table named name beside the CSV at path, into out: "run/foo.csv" and
 * "timeline" give "run/foo-timeline.csv" (a path without ".csv" at its end gets "-timeline.csv" added);
 * 0, or -1 with out empty when it does not fit in len bytes */
int xl_csv_sibling(const char *path, const char *name, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
