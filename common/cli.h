/* cli.h - the explorers' command line: options from a table, one line on bad input.
 *
 * Part of xferlab's common library; pure CPU code with unit tests. Every explorer takes
 * --name VALUE options and --help; a bad option or value prints "prog: what is wrong (try --help)"
 * to stderr, so a student sees one line, never a usage dump or a crash.
 */
#ifndef XL_CLI_H
#define XL_CLI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What an option's value is. */
typedef enum {
    XL_OPT_INT,  /* a whole number from lo to hi, into int *out */
    XL_OPT_SIZE, /* bytes, or with K, M, G, from lo to hi bytes, into size_t *out */
    XL_OPT_TEXT, /* any text, into const char **out */
    XL_OPT_OUTFILE /* a file to write, into const char **out: refused when it names a folder, or a folder that does
                    * not exist or cannot be written (told before any work, not after a long measurement) */
} xl_opt_kind;

/* One option: --name VALUE. */
typedef struct {
    const char *name;  /* without the dashes */
    xl_opt_kind kind;
    void *out;         /* left as it is (the default) unless the option is given */
    long long lo, hi;  /* the range, for numbers and sizes */
    const char *help;  /* its --help line, e.g. "timed runs per size, 1 to 100 (default 5)" */
} xl_opt;

/* xl_cli_parse - parses argv against the n options. Returns 0 to go on; 1 after printing the usage
 * (about, then one line per option, and what a SIZE is when an option takes one) for --help; 2 after printing one line to stderr for an unknown
 * option, a missing or bad value, or a stray argument. */
int xl_cli_parse(const char *prog, const char *about, const xl_opt *opts, int n, int argc, char **argv);

/* xl_can_write - 0 when a file can be written at path (a file that exists and may be written, or a new one in a
 * folder that exists and may be written in), else -1 with errno set: EISDIR when path is a folder, ENOENT or ENOTDIR
 * when its folder is missing or is not a folder, EACCES when it may not be written. Creates nothing. */
int xl_can_write(const char *path);

/* xl_cli_or_exit - xl_cli_parse for a program's main: returns only when the program should go on; exits 0
 * after the usage for --help, 2 after the one line for bad input. Makes stdout line-buffered. */
void xl_cli_or_exit(const char *prog, const char *about, const xl_opt *opts, int n, int argc, char **argv);

/* A sweep of copy sizes doubling from --min to --max (labs 01 and 02): the defaults their help names, and the
 * largest size either takes. */
#define XL_SWEEP_MIN ((size_t)4 << 10)
#define XL_SWEEP_MAX ((size_t)256 << 20)
#define XL_SWEEP_LIMIT ((long long)4 << 30)

/* XL_SWEEP_OPTS - the two xl_opt rows --min and --max of a sweep, into the size_t at min_out and max_out */
#define XL_SWEEP_OPTS(min_out, max_out)                                                                             \
    {"min", XL_OPT_SIZE, (min_out), 1, XL_SWEEP_LIMIT, "smallest copy (default 4K)"},                                \
    {                                                                                                                \
        "max", XL_OPT_SIZE, (max_out), 1, XL_SWEEP_LIMIT,                                                            \
            "largest copy, at most 4G (default 256M); sizes double from --min"                                       \
    }

/* xl_sweep_check - returns when min <= max; else exits 2 after "prog: --min is larger than --max (try --help)" */
void xl_sweep_check(const char *prog, size_t min, size_t max);

/* xl_cli_die - for a bad combination of options found after parsing: "prog: msg (try --help)", exit 2 */
void xl_cli_die(const char *prog, const char *msg) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
