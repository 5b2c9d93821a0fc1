#!/usr/bin/env python3
"""dashcheck.py WHAT OUT - checks one behaviour of the class dashboard that dashboard.py built in OUT, against make
class's records there (results/, dashboard-key.csv): make test's dashboard section (grader/test/dashboard.sh) runs
it. Course staff; standard library only.

WHAT is one of
  pages     every record has its page, linked from index.html at dashboard/FOLDER/NN-slug.html (FOLDER: its label,
            submission-NN, or with --names the student); prints "PAGE<TAB>CHART IDS" per page ("-" for none: the
            charts a grading that ran on a GPU must carry, for pagecheck.py)
  ranking   each speed check's ranking is sorted (best first by the figure's share of its bar), names submissions
            by label only, and holds every submission whose results measured that check
  ungraded  the list of submissions not graded has a row for each record whose status is not graded, with that
            status and a reason, and none for a graded one
  failed    the tests failed most often: the first row's count is the most submissions that failed one test
Prints one line: what holds, or each problem. Exit 0 when it holds, 1 when not, 2 when OUT cannot be read.
"""
import collections
import csv
import html.parser
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'report'))
import ratiolog  # noqa: E402  (a reading's share of its bar, as the grader and the dashboard count it)

LAB_CHARTS = {'01': 'chart-sweep', '04': 'chart-timeline-yours', '05': 'chart-timeline-yours', '06': 'chart-peak'}


class Index(html.parser.HTMLParser):
    """what index.html holds: its links, its tables (id, attributes, rows of (tr attributes, [cell texts]))"""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.tables, self.row, self.cell = [], [], None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'a' and a.get('href'):
            self.links.append(a['href'])
        elif tag == 'table':
            self.tables.append((a, []))
        elif tag == 'tr' and self.tables:
            self.row = (a, [])
            self.tables[-1][1].append(self.row)
        elif tag in ('td', 'th') and self.row is not None:
            self.cell = []
            self.row[1].append(self.cell)

    def handle_endtag(self, tag):
        if tag in ('td', 'th'):
            self.cell = None
        elif tag == 'tr':
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)

    def table(self, cls):
        """the tables whose class is cls: [(attributes, rows of (tr attributes, [cell texts]))]"""
        return [(a, [(ra, [''.join(c).strip() for c in cells]) for ra, cells in rows])
                for a, rows in self.tables if cls in (a.get('class') or '').split()]


def load(out):
    """(records, {student: label}, Index of index.html); OSError or ValueError when one cannot be read"""
    recs = []
    base = os.path.join(out, 'results')
    for student in sorted(os.listdir(base)):
        for lab in sorted(os.listdir(os.path.join(base, student))):
            with open(os.path.join(base, student, lab, 'record.json')) as f:
                recs.append(json.load(f))
    with open(os.path.join(out, 'dashboard-key.csv'), newline='') as f:
        key = {r['student']: r['label'] for r in csv.DictReader(f)}
    page = Index()
    with open(os.path.join(out, 'index.html'), encoding='utf-8') as f:
        page.feed(f.read())
    return recs, key, page


def shown(key, names):
    """{student: what the dashboard shows}: the name with --names, else the label"""
    return {s: (s if names else label) for s, label in key.items()}


def check_pages(out, recs, key, page, names):
    """every record's page is linked and there; the lines for pagecheck.py"""
    problems, lines = [], []
    who = shown(key, names)
    for r in recs:
        href = 'dashboard/%s/%s.html' % (who[r['student']].replace(' ', '-'), r['lab'])
        if href not in page.links:
            problems.append('%s lab %s: index.html has no link to %s' % (who[r['student']], r['lab'][:2], href))
        elif not os.path.isfile(os.path.join(out, href)):
            problems.append('%s: linked, not there' % href)
        d = os.path.join(out, 'results', r['student'], r['lab'])
        charts = []
        if r['status'] in ('graded', 'regrade') and os.path.isfile(os.path.join(d, 'device.txt')):
            charts = ['chart-speed'] + ([LAB_CHARTS[r['lab'][:2]]] if r['lab'][:2] in LAB_CHARTS else [])
        lines.append('%s\t%s' % (os.path.join(out, href), ' '.join(charts) or '-'))
    folders = sorted(set(os.listdir(os.path.join(out, 'dashboard'))) - {'_points.png'})
    if sorted(set(w.replace(' ', '-') for s, w in who.items() if any(r['student'] == s for r in recs))) != folders:
        problems.append('dashboard/ holds the folders %s, not one per student shown' % ' '.join(folders[:4]))
    return problems, lines


def check_ranking(out, recs, key, page):
    """every ranking sorted, anonymous and complete"""
    labels = set(key.values())
    measured = collections.defaultdict(set)  # check -> labels whose results measured it
    for r in recs:
        path = os.path.join(out, 'results', r['student'], r['lab'], 'ratios.tsv')
        if os.path.isfile(path):
            for row in ratiolog.read(path):
                measured[(r['lab'][:2], row['check'])].add(key[r['student']])
    problems, n = [], 0
    for a, rows in page.table('ranking'):
        name = a.get('id', '?')
        need, at_least = float(a['data-need']), a['data-at-least'] == '1'
        entries = [(ra, cells) for ra, cells in rows if 'entry' in (ra.get('class') or '').split()]
        shares = [ratiolog.share({'ratio': float(ra['data-figure']), 'need': need, 'at_least': at_least})
                  for ra, _ in entries if 'data-figure' in ra]
        if any(x < y for x, y in zip(shares, shares[1:])):
            problems.append('%s: not sorted best first (%s)' % (name, ', '.join('%.3g' % s for s in shares[:6])))
        who = {cells[1] for _, cells in entries}
        if who - labels or not all(re.match(r'^submission \d+$', w) for w in who):
            problems.append('%s: names what is not a label: %s' % (name, ', '.join(sorted(who - labels)[:3])))
        want = [v for (l, c), v in measured.items() if 'rank-%s-%s' % (l, re.sub(r'[^A-Za-z0-9_-]', '-', c)) == name]
        if not want or want[0] != who:
            problems.append('%s: ranks %d submissions, the results measured it for %d' % (
                name, len(who), len(want[0]) if want else 0))
        n += 1
    if not n:
        problems.append('no ranking in index.html')
    return problems, '%d rankings sorted best first, every entry a label, each complete' % n


def check_ungraded(recs, key, page):
    """a row for each record not graded, with its status and a reason; none for a graded one"""
    tables = page.table('ungraded')
    rows = {ra.get('id'): cells for ra, cells in (tables[0][1] if tables else [])}
    problems = []
    for r in recs:
        rid = 'ungraded-%s-%s' % (key[r['student']].replace(' ', '-'), r['lab'][:2])
        if r['status'] == 'graded':
            if rid in rows:
                problems.append('%s: listed as not graded, but it was' % rid)
        elif rid not in rows:
            problems.append('%s (%s): not in the list of submissions not graded' % (rid, r['status']))
        elif rows[rid][0] != key[r['student']] or rows[rid][2] != r['status'] or len(rows[rid][3]) < 10:
            problems.append('%s: the row says %s, not its label, status %s and a reason' % (rid, rows[rid][:4],
                                                                                           r['status']))
    n = sum(r['status'] != 'graded' for r in recs)
    return problems, '%d submissions not graded, each listed with its status and a reason' % n


def check_failed(recs, page):
    """the first row of the tests failed most often counts the most submissions that failed one test"""
    counts = collections.Counter((r['lab'][:2], t) for r in recs for t in r.get('failed') or [])
    tables = page.table('failed')
    if not counts:
        return ([] if not tables else ['a table of failed tests, but no record failed one']), 'no test failed'
    if not tables or not tables[0][1][1:]:
        return ['no table of the tests failed most often'], ''
    first = tables[0][1][1][1]
    most = max(counts.values())
    if not first[2].startswith('%d of ' % most) or counts[(first[0], first[1])] != most or len(first[3]) < 10:
        return ['the first row says %s; the records: %d submissions failed %s' % (
            first, most, ' and '.join('%s %s' % k for k, v in counts.items() if v == most))], ''
    return [], 'the test failed most often heads the list: %s %s, by %d submissions, with a message' % (
        first[0], first[1], most)


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ('pages', 'ranking', 'ungraded', 'failed'):
        print('dashcheck: usage: dashcheck.py pages|ranking|ungraded|failed OUT [--names]', file=sys.stderr)
        return 2
    what, out, names = sys.argv[1], sys.argv[2], sys.argv[3:] == ['--names']
    try:
        recs, key, page = load(out)
    except (OSError, ValueError, KeyError) as e:
        print('dashcheck: %s cannot be read: %s' % (out, e), file=sys.stderr)
        return 2
    if what == 'pages':
        problems, lines = check_pages(out, recs, key, page, names)
        print('\n'.join(problems or lines))
    else:
        problems, said = (check_ranking(out, recs, key, page) if what == 'ranking' else
                          check_ungraded(recs, key, page) if what == 'ungraded' else check_failed(recs, page))
        print('; '.join(problems[:5]) + (' (+%d more)' % (len(problems) - 5) if len(problems) > 5 else '')
              if problems else said)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
