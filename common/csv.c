/* csv.c - CSV writer that never leaves a half-written file in place (see csv.h). */
#include "csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xl_csv {
    FILE *f;
    char *path;
    char *tmp;
    int failed; /* a write went wrong */
};

xl_csv *xl_csv_open(const char *path, const char *header, char *err, size_t err_len)
{
    xl_csv *c = calloc(1, sizeof *c);
    size_t n = strlen(path);
    if (!c || !(c->path = strdup(path)) || !(c->tmp = malloc(n + 5))) {
        snprintf(err, err_len, "%s: out of memory", path);
        goto fail;
    }
    snprintf(c->tmp, n + 5, "%s.tmp", path);
    if (!(c->f = fopen(c->tmp, "w"))) {
        snprintf(err, err_len, "cannot write %s: %s", c->tmp, strerror(errno));
        goto fail;
    }
    fprintf(c->f, "%s\n", header);
    return c;
fail:
    if (c) {
        free(c->path);
        free(c->tmp);
        free(c);
    }
    return NULL;
}

void xl_csv_comment(xl_csv *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (fputs("# ", c->f) < 0 || vfprintf(c->f, fmt, ap) < 0 || fputc('\n', c->f) < 0)
        c->failed = 1;
    va_end(ap);
}

void xl_csv_row(xl_csv *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(c->f, fmt, ap) < 0 || fputc('\n', c->f) < 0)
        c->failed = 1;
    va_end(ap);
}

const char *xl_csv_path(const xl_csv *c)
{
    return c->path;
}

/* csv_free - releases c's memory */
static void csv_free(xl_csv *c)
{
    free(c->path);
    free(c->tmp);
    free(c);
}

int xl_csv_close(xl_csv *c, char *err, size_t err_len)
{
    int rc = 0;
    if (fclose(c->f) != 0 || c->failed) {
        snprintf(err, err_len, "writing %s failed (disk full?); %s is unchanged", c->tmp, c->path);
        remove(c->tmp);
        rc = -1;
    } else if (rename(c->tmp, c->path) != 0) {
        snprintf(err, err_len, "cannot replace %s: %s", c->path, strerror(errno));
        remove(c->tmp);
        rc = -1;
    }
    csv_free(c);
    return rc;
}

void xl_csv_abandon(xl_csv *c)
{
    fclose(c->f);
    remove(c->tmp);
    csv_free(c);
}

int xl_csv_sibling(const char *path, const char *name, char *out, size_t len)
{
    size_t n = strlen(path);
    if (n >= 4 && strcmp(path + n - 4, ".csv") == 0)
        n -= 4;
    int got = snprintf(out, len, "%.*s-%s.csv", (int)n, path, name);
    if (got < 0 || (size_t)got >= len) {
        if (len)
            out[0] = '\0';
        return -1;
    }
    return 0;
}
