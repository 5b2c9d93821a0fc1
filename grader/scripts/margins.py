#!/usr/bin/env python3
"""margins.py [DIR] - the instructors' guide's table of threshold margins, as Markdown, from the stability
measurements kept in DIR (default refdata/stability; one folder per machine, each holding make stability's tables
NN-slug.tsv and NN-slug-runs.tsv). Course staff. make test checks that docs/instructors.md holds exactly this table
between <!-- margins:begin --> and <!-- margins:end -->. Tables whose name has more after the slug (measurements of
an earlier version of a grader, kept for the record) are left out. Exit 0, or 2 when DIR has none.
"""
import glob
import os
import sys

from kitlabs import KIT, labs as kit_labs
from stability import check_stats, read_measurements


def reports(root):
    """{machine: {slug: ((full, runs), {check: stats})}} from root/<machine>/NN-slug.tsv and -runs.tsv"""
    labs = set(kit_labs().values())
    out = {}
    for path in sorted(glob.glob(os.path.join(root, '*', '*-runs.tsv'))):
        machine, slug = os.path.basename(os.path.dirname(path)), os.path.basename(path)[:-len('-runs.tsv')]
        if slug in labs:
            runs, full, rows = read_measurements(path[:-len('-runs.tsv')])
            out.setdefault(machine, {})[slug] = ((full, runs), check_stats(rows))
    return out


def cell(c):
    """one machine's figures for one check"""
    if c is None:
        return 'not measured with this grader'
    margin = '%.1f' % c['margin'] if c['margin'] is not None else '-'
    return '%d: %.3f (%.3f to %.3f), sd %.3f, **%s**' % (c['n'], c['median'], c['min'], c['max'], c['sd'], margin)


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith('-')):
        print('margins: usage: margins.py [DIR] (DIR holds a folder per machine of make stability\'s tables; default '
              'refdata/stability)', file=sys.stderr)
        return 2
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(KIT, 'refdata', 'stability')
    try:
        r = reports(root)
    except (OSError, ValueError, KeyError) as e:
        print('margins: a table under %s cannot be read: %s (make stability writes them; move a broken one away)' % (
            root, getattr(e, 'strerror', None) and '%s: %s' % (e.filename, e.strerror) or e), file=sys.stderr)
        return 2
    if not r:
        print('margins: no stability tables under %s' % root, file=sys.stderr)
        return 2
    machines = sorted(r)
    print('| lab | check | threshold | ' + ' | '.join('%s: runs, median (range), sd, **margin**' % m.upper()
                                                  for m in machines) + ' |')
    print('|---|---|---|' + '---|' * len(machines))
    for slug in sorted({s for m in machines for s in r[m]}):
        for check in sorted({c for m in machines for c in r[m].get(slug, (None, {}))[1]}):
            per = [r[m].get(slug, (None, {}))[1].get(check) for m in machines]
            first = next(c for c in per if c)
            print('| %s | `%s` %s | %s %.3g | %s |' % (slug[:2], check, first['label'],
                                                    '≥' if first['at_least'] else '≤', first['need'],
                                                    ' | '.join(cell(c) for c in per)))
    print('| | **full points** | | ' + ' | '.join(
        ', '.join('%s %d/%d' % (s[:2], *r[m][s][0]) for s in sorted(r[m])) for m in machines) + ' |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
