#!/usr/bin/env python3
"""ratiolog.py - the graders' ratio log, read in one place: what grader/grade.c writes for each speed or timed
measurement (XL_RATIO_LOG=FILE, and ratios.tsv in a grading's results folder), one line each, tab-separated:
check (suite.name, "#k" for a test's later checks), attempt, ratio, need, at_least (1: the ratio must be at least
need; 0: at most), label, figures (starting "NOT SOUND (why)" for a measurement that could not be trusted).
The report page (report.py beside it), make stability (grader/scripts/stability.py), make mutate
(grader/mutate/run.py) and make test (grader/test/graders.sh) read it through here.

As a command: ratiolog.py closest NAME=FILE... - of the tests each NAME's files measured, the one whose sound
readings came closest to its bar without meeting it: "share NAME test" (see reached()), or "0 - -" when none
missed; exit 2 with one line on a file it cannot read.
"""
import math
import sys

COLUMNS = ('check', 'attempt', 'ratio', 'need', 'at_least', 'label', 'figures')


def parse(lines, where='', strict=False):
    """the measurements of the log's lines, typed (attempt int, ratio and need float, at_least bool) with 'sound'
    (False for a NOT SOUND one); a line that is not one is skipped, or with strict raises ValueError naming
    where:line"""
    rows = []
    for n, line in enumerate(lines, 1):
        line = line.rstrip('\n')
        if not line.strip():
            continue
        f = line.split('\t')
        try:
            if len(f) != len(COLUMNS):
                raise ValueError
            r = dict(zip(COLUMNS, f))
            r.update(attempt=int(r['attempt']), ratio=float(r['ratio']), need=float(r['need']),
                     at_least=r['at_least'] == '1', sound=not r['figures'].startswith('NOT SOUND'))
        except ValueError:
            if strict:
                raise ValueError('%s:%d: not %d tab-separated columns (%s)' % (where, n, len(COLUMNS),
                                                                             ', '.join(COLUMNS)))
            continue
        rows.append(r)
    return rows


def read(path, strict=False):
    """parse() of the file at path; OSError when it cannot be read"""
    with open(path, encoding='utf-8') as f:
        return parse(f, path, strict)


def share(r):
    """how far a reading got towards its bar: ratio / need for an "at least" bar, need / ratio for an "at most"
    one (1 and more meets it); where a bar or a figure of 0 or less leaves no such quotient, inf for a reading that
    meets its bar and 0 for one that does not; NaN for a reading that is not a number"""
    ratio, need = r['ratio'], r['need']
    if math.isnan(ratio):
        return math.nan
    if r['at_least'] and need > 0:
        return ratio / need
    if not r['at_least'] and need > 0 and ratio > 0:
        return need / ratio
    return math.inf if (ratio >= need if r['at_least'] else ratio <= need) else 0.0


def reached(rows):
    """{test: the share of its bar its sound readings reached}: each check's best reading, the smallest over the
    test's checks (a test earns its points only when every check meets its bar)"""
    best = {}
    for r in rows:
        if r['sound']:
            checks = best.setdefault(r['check'].split('#')[0], {})
            checks[r['check']] = max(checks.get(r['check'], 0.0), share(r))
    return {test: min(c.values()) for test, c in best.items()}


def closest(named):
    """(share, name, test) of the reading that came closest to its bar without meeting it, over [(name, rows)];
    None when none missed"""
    missed = [(s, name, test) for name, rows in named for test, s in reached(rows).items() if s < 1]
    return max(missed) if missed else None


def main(argv):
    if len(argv) < 2 or argv[0] != 'closest' or any('=' not in a for a in argv[1:]):
        print('ratiolog: usage: ratiolog.py closest NAME=FILE...', file=sys.stderr)
        return 2
    rows = {}
    for a in argv[1:]:
        name, path = a.split('=', 1)
        try:
            rows.setdefault(name, []).extend(read(path))
        except OSError as e:
            print('ratiolog: cannot read %s: %s' % (path, e.strerror), file=sys.stderr)
            return 2
    c = closest(rows.items())
    print('%.3f %s %s' % c if c else '0 - -')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
