#!/usr/bin/env python3
"""stability.py NN [RUNS] - grades lab NN's reference RUNS times (default 50) and reports how often it got full
points and, for every timing ratio its grader checks, the spread of the first measurement against the threshold
(make stability LAB=NN N=RUNS). Course staff only.

The margin of a check is (median - threshold) / standard deviation (the other way round for an "at most"
check): under 3 the threshold is too close to what the reference does on this machine, and the report says so.
Writes build/stability/NN-slug.txt (the report, for people), NN-slug.tsv (every measurement: a table with the
columns of COLUMNS, a check being its test's suite.name) and NN-slug-runs.tsv (the runs and how many had full
points); margins.py reads the two tables. --minutes M stops after the
run that ends past M minutes (at least one run; the report says how many were made). --resume keeps the runs of
the last report in build/stability/ and makes runs until there are RUNS in all (for a machine you hold only a few
minutes at a time); without it an earlier report is kept beside the new one as NN-slug.previous.txt,
NN-slug.previous.tsv and NN-slug-runs.previous.tsv (one earlier report is kept). --load KIND grades beside the kit's own load generator (build/bin/loadgen: copy, compute,
memory or cpu) and writes NN-slug-load-KIND.txt/.tsv instead: under load no test of the reference may fail, and a speed
test may only pass or be NOT GRADED; the report counts the runs of each. --from-log FILE reports on a ratio log
instead of grading (for testing). --check only checks the arguments (make stability, before building). Exit 0, or 2 on bad arguments or a grader that gave no results.
"""
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'report'))
import ratiolog  # noqa: E402  (the ratio log's format, shared with the report page)

from kitlabs import KIT, labs as kit_labs


# ===== The tables and the report =====
# The measurements' table (NN-slug.tsv): one row per measurement, columns by name. The runs' table
# (NN-slug-runs.tsv): one row, how many runs and how many of them had full points.
COLUMNS = ('run', 'check', 'label', 'attempt', 'ratio', 'need', 'at_least', 'figures')
LOAD_KINDS = ('copy', 'compute', 'memory', 'cpu')  # build/bin/loadgen's kinds (grader/load/loadgen.cu)
RUNS_COLUMNS = ('runs', 'full_points')


def check_stats(rows):
    """{check: stats} from measurement rows (dicts of COLUMNS): the first attempts' n, median, min, max, sd, the
    margin in spreads (None without a spread), the runs that needed a second try, the bar and the label"""
    checks = {}
    for r in rows:
        c = checks.setdefault(r['check'], {'first': [], 'retried': set(), 'need': r['need'],
                                           'at_least': r['at_least'], 'label': r['label']})
        if r['attempt'] == 1:
            c['first'].append(r['ratio'])
        else:
            c['retried'].add(r['run'])
    for c in checks.values():
        v = c['first']
        c['n'], c['median'], c['min'], c['max'] = len(v), statistics.median(v), min(v), max(v)
        c['sd'] = statistics.stdev(v) if len(v) > 1 else 0.0
        gap = (c['median'] - c['need']) if c['at_least'] else (c['need'] - c['median'])
        c['margin'] = gap / c['sd'] if c['sd'] > 0 else None
    return checks


def report(rows, runs, full, where):
    """the report's lines from measurement rows"""
    lines = ['%s: full points in %d of %d runs of the reference' % (where, full, runs) if runs else where]
    checks = check_stats(rows)
    if not checks:
        lines.append('no timing ratios were measured (they need a GPU)')
    for check, c in sorted(checks.items()):
        verdict = 'margin %.1f spreads' % c['margin'] if c['margin'] is not None else 'no spread measured'
        if c['margin'] is not None and c['margin'] < 3:
            verdict += ': UNDER 3, move this threshold or say why not'
        lines.append('%s (%s): need %s %.3g; %d first measurements, median %.3f, min %.3f, max %.3f, sd %.3f; %s; '
                     'a second try in %d runs' % (check, c['label'], '>=' if c['at_least'] else '<=', c['need'],
                                                 c['n'], c['median'], c['min'], c['max'], c['sd'], verdict,
                                                 len(c['retried'])))
    return lines


def typed(r):
    """a measurement row with its numbers as numbers; ValueError or KeyError when it is not one"""
    return dict(r, run=int(r['run']), attempt=int(r['attempt']), ratio=float(r['ratio']), need=float(r['need']),
                at_least=r['at_least'] == '1')


def read_table(path, columns):
    """the rows of a TSV table this script wrote (dicts by column name); ValueError when it is not one"""
    with open(path, newline='') as f:
        rd = csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE)
        if tuple(rd.fieldnames or ()) != columns:
            raise ValueError('%s: columns %s, not %s' % (path, rd.fieldnames, columns))
        rows = list(rd)
    if any(None in r or None in r.values() for r in rows):
        raise ValueError('%s: a row of the wrong length' % path)
    return rows


def write_table(path, columns, rows):
    """rows (dicts) as a TSV table with a header"""
    with open(path, 'w', newline='') as f:
        w = csv.writer(f, delimiter='\t', quoting=csv.QUOTE_NONE, escapechar='\\', lineterminator='\n')
        w.writerow(columns)
        for r in rows:
            w.writerow(['%.6g' % r[c] if isinstance(r[c], float) else int(r[c]) if isinstance(r[c], bool)
                        else r[c] for c in columns])


def read_measurements(stem):
    """(runs, full, rows) of a kept report stem (NN-slug): its runs' and measurements' tables; ValueError when
    they are not this script's"""
    runs = read_table(stem + '-runs.tsv', RUNS_COLUMNS)
    if len(runs) != 1:
        raise ValueError('%s-runs.tsv: %d rows, not 1' % (stem, len(runs)))
    return int(runs[0]['runs']), int(runs[0]['full_points']), [typed(r) for r in read_table(stem + '.tsv', COLUMNS)]


# ===== Load beside the runs =====
def kinds_text():
    """LOAD_KINDS for people: 'copy, compute, memory or cpu'"""
    return ', '.join(LOAD_KINDS[:-1]) + ' or ' + LOAD_KINDS[-1]


def start_load(kind):
    """the kit's load generator of that kind, started and running (its first line read); None after saying why
    it could not start"""
    gen = os.path.join(KIT, 'build', 'bin', 'loadgen')
    if kind not in LOAD_KINDS or not os.access(gen, os.X_OK):
        print("stability: LOAD must be %s, not '%s', with build/bin/loadgen built (make)" % (kinds_text(), kind),
              file=sys.stderr)
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


def verdicts(tally, full, runs, kind):
    """the lines on the runs (under load, or any short of full points): full points, tests not graded, tests failed
    (which, how often, and what each said the first time)"""
    def names(d):
        return ', '.join('%s %d' % (t, n) for t, n in sorted(d.items())) or 'none'
    return ['%s: full points in %d of %d runs; a test NOT GRADED in %d runs (%s); a test FAILED in %d '
            'runs (%s)%s' % ('under %s load' % kind if kind else 'with no load', full, runs, tally['ungraded_runs'],
                             names(tally['ungraded']),
                             tally['failed_runs'], names(tally['failed']),
                             ': a wrong verdict on the reference' if tally['failed_runs'] else '')] + \
        ['  %s, the first time: %s' % (t, tally['said'].get(t, '?'))
         for t in sorted(set(tally['failed']) | set(tally['ungraded']))]


def said(res, test):
    """what the grading in folder res said of test (its results.json output, on one line, shortened)"""
    try:
        for t in json.load(open(os.path.join(res, 'results.json')))['tests']:
            if t['name'] == test:
                text = ' | '.join(t['output'].splitlines()[1:]) or t['output']
                return text[:600]
    except (OSError, ValueError, KeyError):
        pass
    return 'no message kept'



# ===== Reading the graders' logs and the kept tables =====
def read_log(path, run):
    """measurement rows of one ratio log (the grader's XL_RATIO_LOG, read by grader/report/ratiolog.py), of run"""
    return [dict(r, run=run) for r in ratiolog.read(path)]


def kept_runs(stem):
    """(runs, full, rows) of an earlier report; None if there is none; 'bad' if there is one this script cannot
    read (not resumed, and not overwritten)"""
    if not any(os.path.isfile(stem + e) for e in ('.tsv', '-runs.tsv')):
        return None
    try:
        return read_measurements(stem)
    except (OSError, ValueError, KeyError):
        return 'bad'


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
                    tally['said'].setdefault(t, said(res, t))
            rows += read_log(log, i) if os.path.isfile(log) else []
            last = i
            if sys.stderr.isatty():
                sys.stderr.write('\rstability: %s, run %d of %d' % (slug, i, runs))
            if deadline is not None and time.monotonic() > deadline and i < runs:
                break
    return last, got, rows, full


# ===== Main =====
def keep_previous(out, name):
    """renames an earlier report of name in out (its .txt, .tsv and -runs.tsv) to name.previous.txt, .previous.tsv
    and name-runs.previous.tsv, replacing an older previous one, and says so in one line"""
    moved = []
    for part in ('.txt', '.tsv', '-runs.tsv'):
        src = os.path.join(out, name + part)
        if os.path.isfile(src):
            os.replace(src, os.path.join(out, name + part[:-4] + '.previous' + part[-4:]))
            moved.append(name + part)
    if moved:
        print('stability: the earlier report is kept beside the new one: %s' % ', '.join(
            m.replace('.t', '.previous.t') for m in moved))


USAGE = 'usage: stability.py NN [RUNS] [--minutes M] [--resume] [--load KIND]'


def refuse(msg):
    """one line on stderr saying what is wrong (with make stability's variable in brackets); the exit status 2"""
    print('stability: %s' % msg, file=sys.stderr)
    return 2


def main():
    args = sys.argv[1:]
    check_only = '--check' in args  # only check the arguments (make stability, before it builds anything)
    args = [a for a in args if a != '--check']
    resume = '--resume' in args
    args = [a for a in args if a != '--resume']
    load = None
    if '--load' in args:
        k = args.index('--load')
        load = args[k + 1] if k + 1 < len(args) else ''
        args = args[:k] + args[k + 2:]
        if resume:
            return refuse('--load and --resume do not go together (LOAD= and RESUME=1): give one of them')
    if len(args) == 2 and args[0] == '--from-log':
        try:
            rows = read_log(args[1], 1)
        except (OSError, ValueError, KeyError) as e:
            return refuse('--from-log %s: cannot read a ratio log there (%s)' % (args[1], getattr(e, 'strerror', 0) or e))
        print('\n'.join(report(rows, 0, 0, 'from ' + args[1])))
        return 0
    minutes = None
    if '--minutes' in args:
        k = args.index('--minutes')
        text = args[k + 1] if k + 1 < len(args) else ''
        args = args[:k] + args[k + 2:]
        try:
            minutes = float(text)
        except ValueError:
            minutes = -1.0
        if not 0 <= minutes <= 10000:
            return refuse("--minutes (MINUTES=) takes a number of minutes from 0 to 10000, not '%s'" % text)
    if load is not None and load not in LOAD_KINDS:
        return refuse("LOAD (--load) must be %s, not '%s'" % (kinds_text(), load))
    unknown = [a for a in args if a.startswith('--')]
    if unknown or not 1 <= len(args) <= 2:
        return refuse(("unknown option '%s': " % unknown[0] if unknown else
                       'give a lab and at most a number of runs: ' if args else 'say which lab: ') + USAGE)
    labs = kit_labs()
    slug = labs.get(args[0].zfill(2)) if args[0].isdigit() else None
    if not slug:
        return refuse("no lab '%s': say its number (labs: %s)" % (args[0], ' '.join(labs)))
    if len(args) == 2 and not (args[1].isdigit() and 1 <= int(args[1]) <= 1000):
        return refuse("RUNS (N=) must be a whole number from 1 to 1000, not '%s'" % args[1])
    runs = int(args[1]) if len(args) == 2 else 50
    if check_only:
        return 0
    deadline = time.monotonic() + minutes * 60 if minutes is not None else None
    asked = runs
    slugs = [slug]
    grader = os.path.join(KIT, 'build', 'bin', '%s-grade-solution' % slug)
    if not os.access(grader, os.X_OK):
        return refuse('no reference grader of lab %s built (%s): run make first' % (slug[:2], os.path.relpath(grader)))
    out = os.path.join(KIT, 'build', 'stability')
    os.makedirs(out, exist_ok=True)
    rows, full, first = [], 0, 1
    kept = kept_runs(os.path.join(out, slugs[0])) if resume else None
    if resume:
        if kept == 'bad':
            print('stability: %s.tsv or -runs.tsv in %s is not a report this script wrote; nothing resumed or '
                  'overwritten (move them away, or run without RESUME=1)' % (slugs[0], out), file=sys.stderr)
            return 2
        if kept is None:
            print('stability: no earlier report of %s in %s to resume; starting afresh' % (slugs[0], out))
        else:
            first, full, rows = kept[0] + 1, kept[1], kept[2]
            print('stability: resuming %s after %d runs (%d with full points)' % (slugs[0], kept[0], kept[1]))
            runs = max(runs, kept[0])
    name = slugs[0] + ('-load-%s' % load if load is not None else '')
    tally = {'ungraded_runs': 0, 'failed_runs': 0, 'ungraded': {}, 'failed': {}, 'said': {}}
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
    where = 'lab %s%s' % (slugs[0], ' (%d tests skipped, no GPU? "full points" counts the tests that ran)' % skipped
                           if skipped else '')
    if runs < asked:
        where += ' (stopped at the %g-minute limit: %d of the %d runs asked)' % (minutes, runs, asked)
    lines = report(rows, runs, full, where)
    if load is not None or full < runs: # which tests cost the runs short of full points, and what they said
        lines[1:1] = verdicts(tally, full, runs, load)
    if not resume:
        keep_previous(out, name)
    open(os.path.join(out, name + '.txt'), 'w').write('\n'.join(lines) + '\n')
    write_table(os.path.join(out, name + '.tsv'), COLUMNS, rows)
    write_table(os.path.join(out, name + '-runs.tsv'), RUNS_COLUMNS, [{'runs': runs, 'full_points': full}])
    print('\n'.join(lines))
    print('stability: %s (the tables: %s.tsv, %s-runs.tsv)' % (os.path.join(out, name + '.txt'), name, name))
    return 0


if __name__ == '__main__':
    sys.exit(main())
