#!/usr/bin/env python3
"""stability.py NN [RUNS] - grades lab NN's reference RUNS times (default 50) and reports how often it got full
points and, for every timing ratio its grader checks, the spread of the first measurement against the threshold
(make stability LAB=NN N=RUNS). Course staff only.

The margin of a check is (median - threshold) / standard deviation (the other way round for an "at most"
check): under 3 the threshold is too close to what the reference does on this machine, and the report says so.
Writes build/stability/NN-slug.txt (the report) and NN-slug.tsv (every measurement). --minutes M stops after the
run that ends past M minutes (at least one run; the report says how many were made). --resume keeps the runs of
the last report in build/stability/ and makes runs until there are RUNS in all (for a machine you hold only a few
minutes at a time). --load KIND grades beside the kit's own load generator (build/bin/loadgen: copy, compute or
memory) and writes NN-slug-load-KIND.txt/.tsv instead: under load no test of the reference may fail, and a speed
test may only pass or be NOT GRADED; the report counts the runs of each. --from-log FILE reports on a ratio log
instead of grading (for testing). Exit 0, or 2 on bad arguments or a grader that gave no results.
"""
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from kitlabs import KIT, labs as kit_labs



# ===== The report =====
def report(rows, runs, full, where):
    """the report's lines from ratio rows (run, what, attempt, ratio, need, at_least, figures)"""
    lines = ['%s: full points in %d of %d runs of the reference' % (where, full, runs) if runs else where]
    checks = {}
    for run, what, attempt, ratio, need, at_least, _ in rows:
        c = checks.setdefault(what, {'first': [], 'retried': set(), 'need': need, 'at_least': at_least})
        if attempt == 1:
            c['first'].append(ratio)
        else:
            c['retried'].add(run)
    if not checks:
        lines.append('no timing ratios were measured (they need a GPU)')
    for what, c in sorted(checks.items()):
        v = c['first']
        med = statistics.median(v)
        sd = statistics.stdev(v) if len(v) > 1 else 0.0
        gap = (med - c['need']) if c['at_least'] else (c['need'] - med)
        margin = gap / sd if sd > 0 else float('inf')
        verdict = 'margin %.1f spreads' % margin if sd > 0 else 'no spread measured'
        if sd > 0 and margin < 3:
            verdict += ': UNDER 3, move this threshold or say why not'
        lines.append('%s: need %s %.3g; %d first measurements, median %.3f, min %.3f, max %.3f, sd %.3f; %s; '
                     'a second try in %d runs' % (what, '>=' if c['at_least'] else '<=', c['need'], len(v), med,
                                                 min(v), max(v), sd, verdict, len(c['retried'])))
    return lines


# ===== Load beside the runs =====
def start_load(kind):
    """the kit's load generator of that kind, started and running (its first line read); None after saying why
    it could not start"""
    gen = os.path.join(KIT, 'build', 'bin', 'loadgen')
    if kind not in ('copy', 'compute', 'memory') or not os.access(gen, os.X_OK):
        print('stability: LOAD must be copy, compute or memory, with build/bin/loadgen built (make)', file=sys.stderr)
        return None
    p = subprocess.Popen([gen, '--kind', kind], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = p.stdout.readline().strip()
    if not first.startswith('loadgen: %s load' % kind):
        p.wait()
        print('stability: the load did not start: %s' % (first or 'no output'), file=sys.stderr)
        return None
    print('stability: ' + first.replace('loadgen: ', 'beside ', 1))
    return p


def stop_load(p):
    """ends the load generator and waits for it"""
    if p and p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


# ===== Reading the graders' logs =====
def verdicts(tally, full, runs, kind):
    """the lines on a run under load: full points, tests not graded, tests failed (which, how often)"""
    def names(d):
        return ', '.join('%s %d' % (t, n) for t, n in sorted(d.items())) or 'none'
    return ['under %s load: full points in %d of %d runs; a test NOT GRADED in %d runs (%s); a test FAILED in %d '
            'runs (%s)%s' % (kind, full, runs, tally['ungraded_runs'], names(tally['ungraded']),
                             tally['failed_runs'], names(tally['failed']),
                             ': a wrong verdict on the reference' if tally['failed_runs'] else '')]


def ratio_row(run, f):
    """one ratio row (run, what, attempt, ratio, need, at_least, figures) from a ratio log line's fields; ValueError
    or IndexError when they are not one"""
    return run, f[0], int(f[1]), float(f[2]), float(f[3]), f[4] == '1', f[5] if len(f) > 5 else ''


def read_log(path, run):
    """ratio rows of one log file"""
    return [ratio_row(run, f) for f in (line.rstrip('\n').split('\t') for line in open(path)) if len(f) in (5, 6)]


def kept_runs(txt, tsv):
    """(runs, full, rows) of an earlier report and its measurements; None if there is none; 'bad' if there is one
    this script cannot read (not resumed, and not overwritten)"""
    if not (os.path.isfile(txt) and os.path.isfile(tsv)):
        return None
    m = re.search(r'full points in (\d+) of (\d+) runs', open(txt).readline())
    try:
        rows = [ratio_row(int(line.split('\t')[0]), line.split('\t')[1:])
                for line in open(tsv).read().splitlines()[1:]]
    except (ValueError, IndexError):
        return 'bad'
    return (int(m.group(2)), int(m.group(1)), rows) if m else 'bad'


# ===== Grading again and again =====
def grade_runs(grader, slug, first, runs, deadline, tally):
    """grades the reference for runs first..runs (fewer when past deadline), counting verdicts into tally; (last
    run made, the last run's points.tsv rows, ratio rows, runs with full points), or None when a run gave no
    results"""
    rows, full, got, last = [], 0, [], first - 1
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(first, runs + 1):
            log, res = os.path.join(tmp, 'ratios-%d.tsv' % i), os.path.join(tmp, 'run-%d' % i)
            os.makedirs(res)
            env = dict(os.environ, XL_RATIO_LOG=log, XL_RESULTS_DIR=res, XL_IMPL='solution')
            subprocess.run([grader, '--short-filename'], env=env, capture_output=True)
            tsv = os.path.join(res, 'points.tsv')
            if not os.path.isfile(tsv):
                print('stability: run %d of %s gave no results' % (i, slug), file=sys.stderr)
                return None
            got = [l.split('\t') for l in open(tsv).read().splitlines()[1:]]
            graded = [g for g in got if g[3] != 'skipped']
            full += all(g[1] == g[2] for g in graded)
            for status, key in (('ungraded', 'ungraded'), ('failed', 'failed')):
                hit = [g[0] for g in got if g[3] == status]
                tally[key + '_runs'] += bool(hit)
                for t in hit:
                    tally[key][t] = tally[key].get(t, 0) + 1
            rows += read_log(log, i) if os.path.isfile(log) else []
            last = i
            if sys.stderr.isatty():
                sys.stderr.write('\rstability: %s, run %d of %d' % (slug, i, runs))
            if deadline is not None and time.monotonic() > deadline and i < runs:
                break
    return last, got, rows, full


# ===== Main =====
def main():
    args = sys.argv[1:]
    resume = '--resume' in args
    args = [a for a in args if a != '--resume']
    load = None
    if '--load' in args:
        k = args.index('--load')
        load = args[k + 1] if k + 1 < len(args) else ''
        args = args[:k] + args[k + 2:]
        if resume:
            print('stability: --load and --resume do not go together', file=sys.stderr)
            return 2
    if len(args) == 2 and args[0] == '--from-log':
        print('\n'.join(report(read_log(args[1], 1), 0, 0, 'from ' + args[1])))
        return 0
    minutes = None
    if len(args) >= 2 and args[-2] == '--minutes':
        try:
            minutes = float(args[-1])
        except ValueError:
            minutes = -1.0
        args = args[:-2]
    if not 1 <= len(args) <= 2 or not args[0].isdigit() or (len(args) == 2 and not args[1].isdigit()) or \
            (minutes is not None and not 0 <= minutes <= 10000):
        print('usage: stability.py NN [RUNS] [--minutes M] [--resume] [--load KIND]  (M a number of minutes, 0 or '
              'more)',
              file=sys.stderr)
        return 2
    runs = int(args[1]) if len(args) == 2 else 50
    deadline = time.monotonic() + minutes * 60 if minutes is not None else None
    asked = runs
    slugs = [s for n, s in kit_labs().items() if n == args[0].zfill(2)]
    grader = os.path.join(KIT, 'build', 'bin', '%s-grade-solution' % slugs[0]) if slugs else ''
    if not slugs or not os.access(grader, os.X_OK) or not 1 <= runs <= 1000:
        print('stability: no lab %s with a built reference grader (make), or RUNS not 1 to 1000' % args[0],
              file=sys.stderr)
        return 2
    out = os.path.join(KIT, 'build', 'stability')
    os.makedirs(out, exist_ok=True)
    rows, full, first = [], 0, 1
    kept = kept_runs(os.path.join(out, slugs[0] + '.txt'), os.path.join(out, slugs[0] + '.tsv')) if resume else None
    if resume:
        if kept == 'bad':
            print('stability: %s.txt or .tsv in %s is not a report this script wrote; nothing resumed or overwritten '
                  '(move them away, or run without RESUME=1)' % (slugs[0], out), file=sys.stderr)
            return 2
        if kept is None:
            print('stability: no earlier report of %s in %s to resume; starting afresh' % (slugs[0], out))
        else:
            first, full, rows = kept[0] + 1, kept[1], kept[2]
            print('stability: resuming %s after %d runs (%d with full points)' % (slugs[0], kept[0], kept[1]))
            runs = max(runs, kept[0])
    name = slugs[0] + ('-load-%s' % load if load is not None else '')
    tally = {'ungraded_runs': 0, 'failed_runs': 0, 'ungraded': {}, 'failed': {}}
    gen = start_load(load) if load is not None else None
    if load is not None and gen is None:
        return 2
    try:
        grading = grade_runs(grader, slugs[0], first, runs, deadline, tally)
    finally:
        stop_load(gen)
    if grading is None:
        return 2
    runs, got, more, full = grading[0], grading[1], grading[2], full + grading[3]
    rows += more
    if sys.stderr.isatty():
        sys.stderr.write('\n')
    skipped = sum(1 for g in got if g[3] == 'skipped')
    where = 'lab %s%s' % (slugs[0], ' (%d tests skipped)' % skipped if skipped else '')
    if runs < asked:
        where += ' (stopped at the %g-minute limit: %d of the %d runs asked)' % (minutes, runs, asked)
    lines = report(rows, runs, full, where)
    if load is not None:
        lines[1:1] = verdicts(tally, full, runs, load)
    open(os.path.join(out, name + '.txt'), 'w').write('\n'.join(lines) + '\n')
    with open(os.path.join(out, name + '.tsv'), 'w') as f:
        f.write('run\tcheck\tattempt\tratio\tneed\tat_least\tfigures\n')
        for r in rows:
            f.write('%d\t%s\t%d\t%.6g\t%.6g\t%d\t%s\n' % r)
    print('\n'.join(lines))
    print('stability: %s and .tsv' % os.path.join(out, name + '.txt'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
