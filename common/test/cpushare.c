/* cpushare.c - unit tests of common/cpushare: /proc/stat's busy ticks of this process's cores, and the share of the
 * cores other processes used. CPU only. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cpushare.h"
#include "common/timing.h"

/* A /proc/stat as Linux writes it, two cores and the total. */
static const char stat_text[] =
    "cpu  400 20 300 9000 50 6 7 8 0 0\n"
    "cpu0 100 10 100 4000 20 1 2 3 0 0\n"
    "cpu1 300 10 200 5000 30 5 5 5 0 0\n"
    "intr 123456 0 0 0 0\n"
    "ctxt 987654\n"
    "cpu9 garbage\n";

Test(cpushare, counts_the_busy_fields_of_the_cores_in_the_mask)
{
    unsigned char both[2] = {1, 1}, first[2] = {1, 0}, second[2] = {0, 1};
    int cpus = -1;
    /* busy: user + nice + system + irq + softirq + steal; idle and iowait are not */
    cr_assert_eq(xl_cpu_busy_ticks(stat_text, first, 2, &cpus), 100 + 10 + 100 + 1 + 2 + 3);
    cr_assert_eq(cpus, 1);
    cr_assert_eq(xl_cpu_busy_ticks(stat_text, second, 2, &cpus), 300 + 10 + 200 + 5 + 5 + 5);
    cr_assert_eq(cpus, 1);
    cr_assert_eq(xl_cpu_busy_ticks(stat_text, both, 2, &cpus), 216 + 525, "the total line is not counted again");
    cr_assert_eq(cpus, 2);
}

Test(cpushare, no_core_of_the_mask_is_minus_one)
{
    unsigned char none[2] = {0, 0}, past[12] = {0};
    int cpus = -1;
    past[9] = 1; /* cpu9's line is not a core's counters */
    cr_assert_eq(xl_cpu_busy_ticks(stat_text, none, 2, &cpus), -1);
    cr_assert_eq(cpus, 0);
    cr_assert_eq(xl_cpu_busy_ticks(stat_text, past, 12, &cpus), -1);
    cr_assert_eq(xl_cpu_busy_ticks("", past, 12, &cpus), -1);
}

Test(cpushare, others_is_the_busy_time_less_this_process_over_the_window)
{
    xl_cpu_mark from = {10.0, 100.0, 5.0, 16, 1}, to = {10.5, 102.0, 5.5, 16, 1};
    /* 2 core-seconds busy in 0.5 s, 0.5 of them this process's: 1.5 / 0.5 = 3 cores */
    cr_assert_float_eq(xl_cpu_others(&from, &to), 3.0, 1e-9);
    to.self_s = 7.5; /* this process counted more than the ticks saw: never below 0 */
    cr_assert_float_eq(xl_cpu_others(&from, &to), 0.0, 1e-12);
    to.ok = 0;
    cr_assert_float_eq(xl_cpu_others(&from, &to), -1.0, 1e-12, "a mark not read");
    to.ok = 1;
    to.wall_s = from.wall_s + XL_CPU_WINDOW_S / 2;
    cr_assert_float_eq(xl_cpu_others(&from, &to), -1.0, 1e-12, "marks closer than XL_CPU_WINDOW_S");
    to.wall_s = from.wall_s + XL_CPU_WINDOW_S * 1.01;
    cr_assert(xl_cpu_others(&from, &to) >= 0, "marks XL_CPU_WINDOW_S apart are judged");
}

Test(cpushare, a_mark_here_reads_every_counter)
{
    xl_cpu_mark m;
    xl_cpu_mark_now(&m);
    cr_assert_eq(m.ok, 1, "/proc/stat and the affinity mask are readable on Linux");
    cr_assert(m.cpus >= 1 && m.busy_s > 0 && m.self_s >= 0, "cpus %d, busy %g s, self %g s", m.cpus, m.busy_s,
              m.self_s);
}

Test(cpushare, another_process_spinning_is_seen, .timeout = 20)
{
    xl_cpu_mark from, to;
    pid_t hog = fork();
    cr_assert(hog >= 0, "fork failed");
    if (hog == 0) {
        alarm(10); /* ends it should this test die before it kills it */
        for (;;)
            ; /* spins until killed */
    }
    xl_cpu_mark_now(&from);
    xl_sleep_ms(600);
    xl_cpu_mark_now(&to);
    kill(hog, SIGKILL);
    waitpid(hog, NULL, 0);
    double others = xl_cpu_others(&from, &to);
    /* one spinning process is one core (shared with whatever else runs, at least half of one here) */
    cr_assert(others >= 0.5, "a process spinning beside a sleeping one: %.2f cores of others, not >= 0.5", others);
}

Test(cpushare, this_process_spinning_is_its_own, .timeout = 20)
{
    xl_cpu_mark from, to;
    xl_cpu_mark_now(&from);
    do /* spins until 0.3 s of this process's CPU time (on a loaded machine that takes longer), or 10 s */
        xl_cpu_mark_now(&to);
    while (to.self_s - from.self_s < 0.3 && to.wall_s - from.wall_s < 10);
    cr_assert(to.self_s - from.self_s >= 0.3, "10 s of spinning counted only %.3f s of this process's CPU time",
              to.self_s - from.self_s);
    /* the cores' busy time holds this process's own: the ticks may each miss up to 10 ms at either end */
    cr_assert(to.busy_s - from.busy_s >= to.self_s - from.self_s - 0.02 * to.cpus,
              "the cores' busy time grew %.3f s while this process used %.3f s", to.busy_s - from.busy_s,
              to.self_s - from.self_s);
}
