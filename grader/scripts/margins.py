#!/usr/bin/env python3
"""margins.py [DIR] - the instructors' guide's table of threshold margins, as Markdown, from the stability
reports kept in DIR (default refdata/stability; one folder per machine, each holding make stability's
NN-slug.txt). Course staff. make test checks that docs/instructors.md holds exactly this table between
<!-- margins:begin --> and <!-- margins:end -->. A file whose name has more after the slug (a report on an earlier
version of a grader, or other notes, kept for the record) is left out. Exit 0, or 2 when DIR has no reports.
"""
import glob
import os
import re
import sys

from kitlabs import KIT, labs as kit_labs

CHECK = re.compile(r'^(.*?): need (>=|<=) (\S+); (\d+) first measurements, median (\S+), min (\S+), max (\S+), '
                   r'sd (\S+); (?:margin (\S+) spreads|no spread measured)')
RUNS = re.compile(r'full points in (\d+) of (\d+) runs')


def reports(root):
    """{machine: {slug: (runs line, [check tuples])}} from root/<machine>/NN-slug.txt"""
    labs = set(kit_labs().values())
    out = {}
    for path in sorted(glob.glob(os.path.join(root, '*', '*.txt'))):
        machine, slug = os.path.basename(os.path.dirname(path)), os.path.basename(path)[:-4]
        if slug not in labs:
            continue
        lines = open(path).read().splitlines()
        runs = RUNS.search(lines[0]) if lines else None
        checks = [m.groups() for m in map(CHECK.match, lines[1:]) if m]
        out.setdefault(machine, {})[slug] = (runs.groups() if runs else ('?', '?'), checks)
    return out


def cell(c):
    """one machine's figures for one check"""
    if c is None:
        return 'not measured with this grader'
    _, _, _, n, med, lo, hi, sd, margin = c
    return '%s: %s (%s to %s), sd %s, **%s**' % (n, med, lo, hi, sd, margin if margin else '-')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(KIT, 'refdata', 'stability')
    r = reports(root)
    if not r:
        print('margins: no stability reports under %s' % root, file=sys.stderr)
        return 2
    machines = sorted(r)
    print('| lab | check | threshold | ' + ' | '.join('%s: runs, median (range), sd, **margin**' % m.upper()
                                                  for m in machines) + ' |')
    print('|---|---|---|' + '---|' * len(machines))
    for slug in sorted({s for m in machines for s in r[m]}):
        names = []
        for m in machines:
            for c in r[m].get(slug, (None, []))[1]:
                if c[0] not in names:
                    names.append(c[0])
        for name in sorted(names):
            per = [next((c for c in r[m].get(slug, (None, []))[1] if c[0] == name), None) for m in machines]
            first = next(c for c in per if c)
            what = re.sub(r' \(need [^)]*\)$', '', name)
            print('| %s | %s | %s %s | %s |' % (slug[:2], what, first[1].replace('>=', '≥').replace('<=', '≤'),
                                              first[2], ' | '.join(cell(c) for c in per)))
    print('| | **full points** | | ' + ' | '.join(
        ', '.join('%s %s/%s' % (s[:2], *r[m][s][0]) for s in sorted(r[m])) for m in machines) + ' |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
