#!/usr/bin/env python3
"""report.py - the report of a mutation run: counts and score per lab, every survivor with its diff, every mutant.
Course staff only; standard library only.

grader/mutate/run.py calls these functions after grading; make test feeds them planted statuses. On its own,
    python3 grader/mutate/report.py REPORT.csv [--out DIR]
renders DIR/report.txt (default: the CSV's folder) again from a report.csv (columns lab, id, operator, line,
function, status, killed_by, seconds), taking each survivor's diff from DIR/NN-slug/ID.diff where it exists.
A status is killed, survived, equivalent, stillborn or unreached (unreached here: only tests that need 2 GPUs
reach it, and this host has one); a lab's score is killed / (killed + survived).
"""
import argparse
import csv
import os
import sys

STATUSES = ['killed', 'survived', 'equivalent', 'stillborn', 'unreached']
COLUMNS = ['lab', 'id', 'operator', 'line', 'function', 'status', 'killed_by', 'seconds', 'reached']
# reached: for a mutant a speed or timed test killed, the share of that test's bar its best sound reading reached
# (the smallest over the test's checks; e.g. 0.67 for 1.0x against "at least 1.5x"), empty otherwise: under linear
# speed credit (grader/credit.h) a mutant earns part of the points unless it stays under the floor


def summarize(rows):
    """{lab: {status: count, 'score': percent or None, 'seconds': sum}} in the order labs first appear"""
    out = {}
    for r in rows:
        s = out.setdefault(r['lab'], dict({k: 0 for k in STATUSES}, score=None, seconds=0.0))
        s[r['status']] += 1
        s['seconds'] += float(r.get('seconds') or 0)
    for s in out.values():
        judged = s['killed'] + s['survived']
        s['score'] = 100.0 * s['killed'] / judged if judged else None
    return out


def score_text(s):
    """a lab's score as '75.0%', or '-' when no mutant was judged"""
    return '-' if s['score'] is None else '%.1f%%' % s['score']


def diff_lines(out_dir, lab, mid):
    """the changed lines (- and +) of a mutant's diff, or [] when it is not there"""
    path = os.path.join(out_dir, lab, mid + '.diff')
    if not os.path.isfile(path):
        return []
    with open(path) as f:
        return [ln.rstrip('\n') for ln in f if ln[:1] in '-+' and not ln.startswith(('---', '+++'))]


def render(rows, out_dir, lab_seconds=None, notes=None, header=''):
    """report.txt's text: per lab the counts, score and time; every survivor with operator, file:line, function
    and its diff lines; then every mutant, one line each. lab_seconds overrides the summed times; notes are
    lines per lab (e.g. why a lab was not judged)."""
    summary = summarize(rows)
    lines = [header] if header else []
    labs = list(summary) + [lab for lab in (notes or {}) if lab not in summary]
    for lab in labs:
        s = summary.get(lab)
        if s:
            secs = (lab_seconds or {}).get(lab, s['seconds'])
            graded = sum(s[k] for k in STATUSES)
            lines.append('lab %s: %d mutants: killed %d, survived %d, equivalent %d, stillborn %d%s; score %s; '
                         '%.0f s' % (lab, graded, s['killed'], s['survived'], s['equivalent'], s['stillborn'],
                                     ', unreached here %d' % s['unreached'] if s['unreached'] else '', score_text(s),
                                     secs))
            if s['unreached']:
                lines.append('lab %s: %d mutants unreached here: only tests that need 2 GPUs reach them, SKIPPED on '
                             'this host; not in the score (grade them on a host with two)' % (lab, s['unreached']))
        speed = [r for r in rows if r['lab'] == lab and r['status'] == 'killed' and r.get('reached')]
        if speed:
            top = max(speed, key=lambda r: float(r['reached']))
            lines.append('lab %s: %d mutants killed by a speed or timed test; the closest reached %s of its bar (%s, '
                         '%s): under linear speed credit the floor must stay above it' % (
                             lab, len(speed), top['reached'], top['id'], top['killed_by']))
        for note in (notes or {}).get(lab, []):
            lines.append('lab %s: %s' % (lab, note))
    survivors = [r for r in rows if r['status'] == 'survived']
    lines += ['', 'survivors (%d): no test lost points; strengthen a test, or list the mutant in '
                  'grader/mutants/NN-slug/equivalent.txt when no graded behaviour can change' % len(survivors)]
    for r in survivors:
        lines.append('  %s %s: %s at solutions/%s/lab.cu:%s in %s' % (
            r['lab'], r['id'], r['operator'], r['lab'], r['line'], r['function'] or '(outside functions)'))
        lines += ['      ' + d for d in diff_lines(out_dir, r['lab'], r['id'])]
    lines += ['', 'every mutant']
    for r in rows:
        lines.append('  %-20s %-26s %-10s %-30s %6.1f s' % (r['lab'], r['id'], r['status'], r['killed_by'] or '-',
                                                              float(r.get('seconds') or 0)))
    return '\n'.join(lines) + '\n'


def table(rows, lab_seconds=None):
    """the short per-lab table printed last (a column "unreached" only when some lab has such mutants)"""
    summary = summarize(rows)
    unreached = any(s['unreached'] for s in summary.values())
    out = ['%-22s %7s %9s %11s %10s%s %7s %8s' % ('lab', 'killed', 'survived', 'equivalent', 'stillborn',
                                                   ' %9s' % 'unreached' if unreached else '', 'score', 'time')]
    for lab, s in summary.items():
        out.append('%-22s %7d %9d %11d %10d%s %7s %6.0f s' % (lab, s['killed'], s['survived'], s['equivalent'],
                                                             s['stillborn'],
                                                             ' %9d' % s['unreached'] if unreached else '',
                                                             score_text(s),
                                                             (lab_seconds or {}).get(lab, s['seconds'])))
    return '\n'.join(out)


def write_csv(rows, path):
    """report.csv: one row per mutant, COLUMNS"""
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction='ignore', lineterminator='\n')
        w.writeheader()
        for r in rows:
            w.writerow(dict(r, seconds='%.1f' % float(r.get('seconds') or 0)))


def read_csv(path):
    """the rows of a report.csv; ValueError when it is not one"""
    with open(path, newline='') as f:
        rows = list(csv.DictReader(f))
    for i, r in enumerate(rows, 2):
        r.setdefault('reached', '')  # a report.csv written before the column
        if set(COLUMNS) - set(r) or r['status'] not in STATUSES:
            raise ValueError('%s:%d: not a row of a report.csv (columns %s; status one of %s)' % (
                path, i, ','.join(COLUMNS), ', '.join(STATUSES)))
    return rows


def main():
    """renders report.txt from a report.csv; exit 0, or 2 with one line"""
    ap = argparse.ArgumentParser(description='Render report.txt from a report.csv of grader/mutate/run.py.')
    ap.add_argument('csv', help='a report.csv')
    ap.add_argument('--out', help='where report.txt goes and the NN-slug/ID.diff files are '
                                  '(default: the CSV\'s folder)')
    ap.error = lambda msg: ap.exit(2, 'report: %s (--help lists the options)\n' % msg)  # one line, not a usage dump
    a = ap.parse_args()
    out = a.out or os.path.dirname(os.path.abspath(a.csv))
    rows = read_csv(a.csv)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'report.txt'), 'w') as f:
        f.write(render(rows, out))
    print(table(rows))
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except (OSError, ValueError) as e:
        print('report: %s' % ('%s: %s' % (e.filename, e.strerror) if isinstance(e, OSError) and e.strerror else e),
              file=sys.stderr)
        sys.exit(2)
