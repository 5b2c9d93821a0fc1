/* cli.c - the explorers' command line (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sizes.h"

/* bad - one line about what is wrong; returns 2 */
static int bad(const char *prog, const char *msg)
{
    fprintf(stderr, "%s: %s (try --help)\n", prog, msg);
    return 2;
}

/* metavar - what an option's value is called in the usage */
static const char *metavar(const xl_opt *o)
{
    return o->kind == XL_OPT_INT ? "N" : o->kind == XL_OPT_SIZE ? "SIZE" : "FILE";
}

int xl_can_write(const char *path)
{
    struct stat st;
    char dir[1024];
    const char *slash = strrchr(path, '/');
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        return access(path, W_OK);
    }
    if (errno != ENOENT)
        return -1;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return access(dir, W_OK | X_OK);
}

/* out_file_problem - 0 when a file can be written at path (xl_can_write), else 1 with why, naming option --name and
 * what to give instead, as one line into msg */
static int out_file_problem(const char *name, const char *path, char *msg, size_t len)
{
    if (xl_can_write(path) == 0)
        return 0;
    int n = (int)strlen(path);
    const char *slash = strrchr(path, '/');
    char dir[1024];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (errno == EISDIR)
        snprintf(msg, len, "--%s: '%.100s' is a folder: name a file in it, e.g. --%s %.*s/out.csv", name, path, name,
                 n < 100 ? n : 100, path);
    else if (errno == ENOENT || errno == ENOTDIR)
        snprintf(msg, len, "--%s: no folder '%.100s' to write '%.100s' in: make it first, or name a file in a folder "
                 "that exists", name, dir, slash ? slash + 1 : path);
    else
        snprintf(msg, len, "--%s: cannot write '%.100s' (%s): name a file in a folder you can write", name, path,
                 strerror(errno));
    return 1;
}

/* usage - the usage line, about, and one line per option, to stdout */
static void usage(const char *prog, const char *about, const xl_opt *opts, int n)
{
    printf("usage: %s", prog);
    for (int k = 0; k < n; k++)
        printf(" [--%s %s]", opts[k].name, metavar(&opts[k]));
    printf("\n%s\n", about);
    int sizes = 0;
    for (int k = 0; k < n; k++) {
        char left[64];
        snprintf(left, sizeof left, "--%s %s", opts[k].name, metavar(&opts[k]));
        printf("  %-17s %s\n", left, opts[k].help);
        sizes |= opts[k].kind == XL_OPT_SIZE;
    }
    if (sizes)
        printf("SIZE: bytes, or with K, M, G (KiB, MiB, GiB), e.g. 4096, 64K, 16M, 1G\n");
}

/* set - parses value into opts[k]; 0, or 2 after one line */
static int set(const char *prog, const xl_opt *o, const char *value)
{
    char msg[512];
    if (o->kind == XL_OPT_TEXT || o->kind == XL_OPT_OUTFILE) {
        if (!*value)
            return bad(prog, o->kind == XL_OPT_OUTFILE ? "an empty file name" : "an empty value");
        if (o->kind == XL_OPT_OUTFILE && out_file_problem(o->name, value, msg, sizeof msg))
            return bad(prog, msg);
        *(const char **)o->out = value;
        return 0;
    }
    if (o->kind == XL_OPT_SIZE) {
        size_t v;
        char err[200];
        if (xl_parse_size(value, (size_t)o->hi, &v, err, sizeof err) != 0) {
            snprintf(msg, sizeof msg, "--%s: %s", o->name, err);
            return bad(prog, msg);
        }
        if ((long long)v < o->lo) {
            char least[32];
            snprintf(msg, sizeof msg, "--%s must be at least %s", o->name, xl_format_size((size_t)o->lo, least, sizeof least));
            return bad(prog, msg);
        }
        *(size_t *)o->out = v;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (!*value || *end || errno || v < o->lo || v > o->hi) {
        snprintf(msg, sizeof msg, "--%s must be a whole number from %lld to %lld", o->name, o->lo, o->hi);
        return bad(prog, msg);
    }
    *(int *)o->out = (int)v;
    return 0;
}

int xl_cli_parse(const char *prog, const char *about, const xl_opt *opts, int n, int argc, char **argv)
{
    char msg[256];
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(prog, about, opts, n);
            return 1;
        }
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(msg, sizeof msg, "unexpected argument '%.100s'", arg);
            return bad(prog, msg);
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int k = 0;
        while (k < n && !(strlen(opts[k].name) == len && strncmp(opts[k].name, name, len) == 0))
            k++;
        if (k == n) {
            snprintf(msg, sizeof msg, "unknown option '%.100s'", arg);
            return bad(prog, msg);
        }
        const char *value = eq ? eq + 1 : (a + 1 < argc ? argv[++a] : NULL);
        if (!value) {
            snprintf(msg, sizeof msg, "--%s needs a value", opts[k].name);
            return bad(prog, msg);
        }
        int rc = set(prog, &opts[k], value);
        if (rc)
            return rc;
    }
    return 0;
}

void xl_cli_or_exit(const char *prog, const char *about, const xl_opt *opts, int n, int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a log then shows the table and the errors in the order they happened */
    int rc = xl_cli_parse(prog, about, opts, n, argc, argv);
    if (rc)
        exit(rc == 1 ? 0 : rc);
}

void xl_cli_die(const char *prog, const char *msg)
{
    exit(bad(prog, msg));
}

void xl_sweep_check(const char *prog, size_t min, size_t max)
{
    if (min > max)
        xl_cli_die(prog, "--min is larger than --max");
}
