/* csv.c - unit tests of common/csv (header, rows, and never losing the old file). CPU only. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/csv.h"

/* slurp - the whole file into a static buffer */
static const char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "cannot read %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* tmpname - a fresh path in a fresh folder under /tmp */
static void tmpname(char *dir, char *path, size_t len)
{
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, len, "%s/out.csv", dir);
}

Test(csv, writes_header_comments_and_rows)
{
    char dir[] = "/tmp/xl-csv-XXXXXX", path[128], err[256];
    tmpname(dir, path, sizeof path);
    xl_csv *c = xl_csv_open(path, "bytes,ms", err, sizeof err);
    cr_assert(c != NULL, "%s", err);
    cr_assert_str_eq(xl_csv_path(c), path);
    xl_csv_comment(c, "gpu: %s", "test");
    xl_csv_row(c, "%d,%.3f", 4096, 0.5);
    cr_assert(xl_csv_close(c, err, sizeof err) == 0, "%s", err);
    cr_assert_str_eq(slurp(path), "bytes,ms\n# gpu: test\n4096,0.500\n");
    unlink(path);
    rmdir(dir);
}

Test(csv, abandoned_file_leaves_the_old_one)
{
    char dir[] = "/tmp/xl-csv-XXXXXX", path[128], err[256];
    tmpname(dir, path, sizeof path);
    FILE *f = fopen(path, "w");
    fputs("precious\n", f);
    fclose(f);
    xl_csv *c = xl_csv_open(path, "a,b", err, sizeof err);
    xl_csv_row(c, "1,2");
    xl_csv_abandon(c);
    cr_assert_str_eq(slurp(path), "precious\n");
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cr_assert(access(tmp, F_OK) != 0, "the unfinished file must be removed");
    unlink(path);
    rmdir(dir);
}

Test(csv, unwritable_path_gives_a_message)
{
    char err[256] = "";
    xl_csv *c = xl_csv_open("/nonexistent-xferlab/x.csv", "a", err, sizeof err);
    cr_assert(c == NULL);
    cr_assert(strstr(err, "cannot write") != NULL, "message was '%s'", err);
}

Test(csv, sibling_sits_beside_the_first_table)
{
    char out[64];
    cr_assert(xl_csv_sibling("run/foo.csv", "timeline", out, sizeof out) == 0);
    cr_assert_str_eq(out, "run/foo-timeline.csv");
    cr_assert(xl_csv_sibling("a.b/pipe", "timeline", out, sizeof out) == 0);
    cr_assert_str_eq(out, "a.b/pipe-timeline.csv", "a path without .csv keeps its name whole");
    cr_assert(xl_csv_sibling(".csv", "t", out, sizeof out) == 0);
    cr_assert_str_eq(out, "-t.csv");
    cr_assert(xl_csv_sibling("foo.csv", "timeline", out, 16) == -1, "foo-timeline.csv needs 17 bytes");
    cr_assert_str_eq(out, "", "a name that does not fit leaves out empty, never cut short");
    cr_assert(xl_csv_sibling("foo.csv", "timeline", out, 17) == 0);
    cr_assert_str_eq(out, "foo-timeline.csv");
}
