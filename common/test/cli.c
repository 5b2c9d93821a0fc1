/* cli.c - unit tests of common/cli (the explorers' options). CPU only. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"

/* Options as an explorer declares them, with their defaults. */
static int reps;
static size_t max_bytes;
static const char *csv;

/* parse - runs xl_cli_parse over args (NULL-terminated) with fresh defaults; returns its result */
static int parse(const char **args)
{
    xl_opt opts[] = {{"reps", XL_OPT_INT, &reps, 1, 100, "runs"},
                     {"max", XL_OPT_SIZE, &max_bytes, 4096, 1ll << 32, "largest"},
                     {"csv", XL_OPT_TEXT, &csv, 0, 0, "output"}};
    char *argv[16] = {"prog"};
    int argc = 1;
    while (args[argc - 1])
        argv[argc] = (char *)args[argc - 1], argc++;
    reps = 5, max_bytes = 1 << 20, csv = NULL;
    return xl_cli_parse("prog", "about", opts, sizeof opts / sizeof opts[0], argc, argv);
}

Test(cli, values_are_set_and_defaults_kept, .init = cr_redirect_stderr)
{
    cr_assert(parse((const char *[]){"--reps", "7", "--csv=out.csv", NULL}) == 0);
    cr_assert(reps == 7 && strcmp(csv, "out.csv") == 0 && max_bytes == 1 << 20);
    cr_assert(parse((const char *[]){"--max", "16M", NULL}) == 0);
    cr_assert(max_bytes == 16u << 20 && reps == 5 && csv == NULL);
}

Test(cli, bad_input_gives_2_and_one_line, .init = cr_redirect_stderr)
{
    const char *cases[][3] = {{"--reps", "-1", NULL}, {"--reps", "101", NULL}, {"--reps", "3x", NULL},
                              {"--reps", NULL, NULL}, {"--bogus", NULL, NULL}, {"stray", NULL, NULL},
                              {"--max", "1K", NULL},  {"--max", "12Q", NULL},  {"--csv", "", NULL}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        cr_assert(parse(cases[k]) == 2, "case %zu (%s %s) was accepted", k, cases[k][0], cases[k][1] ? cases[k][1] : "");
    cr_assert(reps == 5, "a refused value changed the option");
}

Test(cli, help_prints_usage_and_returns_1, .init = cr_redirect_stdout)
{
    cr_assert(parse((const char *[]){"--help", NULL}) == 1);
    fflush(stdout);
    cr_assert_stdout_eq_str("usage: prog [--reps N] [--max SIZE] [--csv FILE]\nabout\n"
                            "  --reps N          runs\n  --max SIZE        largest\n  --csv FILE        output\n"
                            "SIZE: bytes, or with K, M, G (KiB, MiB, GiB), e.g. 4096, 64K, 16M, 1G\n");
}

Test(cli, an_output_file_that_cannot_be_written_is_refused_at_once, .init = cr_redirect_stderr)
{
    const char *out = NULL;
    const char *ok_path = "/tmp/xferlab-unit-cli-never-written.csv";
    xl_opt opts[] = {{"csv", XL_OPT_OUTFILE, &out, 0, 0, "output"}};
    const char *paths[] = {"/nonexistent-xferlab/x.csv", "/tmp", "/tmp/", "/etc/passwd/x.csv", ""};
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        char *argv[] = {"prog", "--csv", (char *)paths[k]};
        cr_assert(xl_cli_parse("prog", "about", opts, 1, 3, argv) == 2, "--csv '%s' was accepted", paths[k]);
        cr_assert(out == NULL, "a refused --csv '%s' was kept", paths[k]);
    }
    unlink(ok_path);
    char *argv[] = {"prog", "--csv", (char *)ok_path};
    cr_assert(xl_cli_parse("prog", "about", opts, 1, 3, argv) == 0 && out == ok_path, "a file in /tmp was refused");
    cr_assert(access(ok_path, F_OK) != 0, "checking --csv made the file");
}

Test(cli, a_sweep_with_min_at_most_max_goes_on, .init = cr_redirect_stderr)
{
    xl_sweep_check("prog", 1, 1);
    xl_sweep_check("prog", XL_SWEEP_MIN, XL_SWEEP_MAX);
    xl_sweep_check("prog", 1, (size_t)XL_SWEEP_LIMIT);
    fflush(stderr);
    cr_assert_stderr_eq_str("", "xl_sweep_check printed a line for --min at most --max");
}

Test(cli, a_sweep_with_min_above_max_exits_2, .init = cr_redirect_stderr, .exit_code = 2)
{
    xl_sweep_check("prog", (size_t)XL_SWEEP_LIMIT, (size_t)XL_SWEEP_LIMIT - 1);
    cr_assert_fail("xl_sweep_check returned with --min above --max");
}
