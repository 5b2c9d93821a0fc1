#!/usr/bin/env python3
"""dashboard.py OUT [--names] - the class's dashboard, built again from what make class left in OUT, without grading
(make class builds it at the end of each run). Course staff; Python 3 standard library and gnuplot.

What it writes in OUT (make class's own files are beside them):
  index.html                     the dashboard: points per lab (a chart and a table), the tests failed most often (how
                                 many submissions, one message), every speed and timed check's figures ranked against
                                 its bar and the kit's reference solution on the same GPU model, the submissions not
                                 graded and why, and a link to every submission's report page
  dashboard/_points.png          the chart of points per lab (without gnuplot the page says why it is not there)
  dashboard/LABEL/NN-slug.html   each submission's report page, drawn by grader/report/report.py from
                                 results/<student>/<NN-slug>/; a build failure, or a grading that was stopped or
                                 crashed, gets a short page of its own that says why there are no points
  dashboard-key.csv              label,student: who each label is
index.html and dashboard/ are safe to share: a student appears only as a label, "submission 07" (folder
submission-07), drawn at random the first time the student is seen (so the labels' order says nothing of the names)
and kept in dashboard-key.csv, so each student keeps the label from one build to the next (remove the key to draw new
ones); a student's name in a message shown there is replaced by the label. The key, results/, gradebook.csv and
summary.txt name the students: they stay with course staff. --names shows the students' names instead, folders
named by student, for course staff only, and the page says so at its top.
Exit 0 with the dashboard written, or 2 after one line on stderr (no OUT, no gradings in it, a file that cannot be
read or written).
"""
import argparse
import collections
import concurrent.futures
import csv
import datetime
import importlib
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'report'))
sys.path.insert(0, os.path.join(HERE, '..', 'scripts'))
import report  # noqa: E402  (grader/report/report.py: a grading's files, the page's look and words)
import ratiolog  # noqa: E402  (a reading's share of its bar)
from report import Stop, esc, fmt_num, fmt_points  # noqa: E402
from stability import check_stats, read_measurements  # noqa: E402  (the reference's figures, refdata/stability/)
klass = importlib.import_module('class')  # class.py beside this file: make class's records

KEY = 'dashboard-key.csv'   # beside index.html, outside the shareable folder
PAGES = 'dashboard'         # the shareable folder: the chart and a folder per student
CHART = '_points.png'       # in PAGES; "_" starts no student's name (class.py's NAME_OK)
CHART_PX = (1100, 460)
LABEL = re.compile(r'^submission (\d+)$')
HAS_RESULTS = ('graded', 'regrade', 'no-gpu')  # statuses whose grading ran and left results.json and points.tsv
# each status but graded (gradebook.csv's word): why the submission has no final points, and what comes next
NOT_GRADED = {'compile': ('build failure', 'final unless the student submits again'),
              'stopped': ('stopped at a limit', 'final unless the student submits again'),
              'crashed': ('the grader crashed', 'look at its log (results/STUDENT/NN-slug/log.txt), then grade again'),
              'regrade': ('a speed test to measure again', 'graded again by the next make class'),
              'no-gpu': ('GPU tests not graded yet', 'graded again by the next make class on a GPU')}
BANDS = ('0–19%', '20–39%', '40–59%', '60–79%', '80–99%', '100%')
FAILED_SHOWN = 15  # the tests failed most often: how many rows


# ===== Labels and the key =====
def read_key(path):
    """{student: label} of the key at path; {} when there is none; Stop when it is not a key this script wrote"""
    if not os.path.exists(path):
        return {}
    try:
        with open(path, newline='', encoding='utf-8') as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise Stop(f'{path}: cannot be read ({getattr(e, "strerror", None) or e})')
    key = {r[1]: r[0] for r in rows[1:] if len(r) == 2}
    if rows[:1] != [['label', 'student']] or len(key) != len(rows) - 1 or len(set(key.values())) != len(key) or \
            not all(LABEL.match(v) for v in key.values()):
        raise Stop(f'{path}: not a key of labels (label,student, one row per student, "submission NN"): fix it, or '
                   'remove it to draw new labels')
    return key


def write_key(path, key):
    """the key (label,student, by label) at path, written whole or not at all; Stop when it cannot be written"""
    try:
        with open(path + '.new', 'w', newline='', encoding='utf-8') as f:
            w = csv.writer(f, lineterminator='\n')
            w.writerow(('label', 'student'))
            w.writerows(sorted(((v, s) for s, v in key.items()), key=lambda r: report.natural(r[0])))
        os.replace(path + '.new', path)
    except OSError as e:
        raise Stop(f'{path}: cannot be written ({e.strerror})')


def assign_labels(students, key):
    """key with a label for each of students it lacks: "submission NN", NN drawn at random among the numbers no one
    has, with digits enough for twice the class; the labels already in key are kept"""
    new = sorted(set(students) - set(key))
    if not new:
        return key
    digits = max(2, len(str(2 * (len(key) + len(new)))))
    used = {int(LABEL.match(v).group(1)) for v in key.values()}
    free = [n for n in range(1, 10 ** digits) if n not in used]
    picks = random.SystemRandom().sample(free, len(new))
    return dict(key, **{s: 'submission %0*d' % (digits, n) for s, n in zip(new, picks)})


# ===== Names out of what is shown =====
def scrubber(shown):
    """text -> text with each student's name, as a whole word in any case, replaced by what shown ({student: label
    or name}) shows for that student; the identity where every student is shown by name"""
    swap = {s.lower(): v for s, v in shown.items() if s != v}
    if not swap:
        return lambda text: text
    rx = re.compile(r'(?<![A-Za-z0-9])(%s)(?![A-Za-z0-9])' % '|'.join(
        re.escape(s) for s in sorted(swap, key=len, reverse=True)), re.I)
    return lambda text: rx.sub(lambda m: swap[m.group(1).lower()], text)


def scrub_json(value, scrub):
    """value (parsed JSON) with scrub applied to every string in it"""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_json(v, scrub) for v in value]
    if isinstance(value, dict):
        return {k: scrub_json(v, scrub) for k, v in value.items()}
    return value


# ===== Reading the class =====
def submissions(out, recs, shown, scrub):
    """one dict per record, by label: student, lab, rec, who (label or name), folder, href (its page), d (its
    results folder), and for a grading that ran its results, tests, checks and device; Stop on a file that cannot
    be read"""
    subs = []
    for r in recs:
        if not all(k in r for k in ('student', 'lab', 'points', 'max', 'status', 'message')) or \
                not klass.NAME_OK.match(str(r['student'])) or not re.match(r'^\d\d-[a-z0-9-]+$', str(r['lab'])):
            raise Stop(f'{out}/results: a record.json that is not make class\'s (student, lab, points, max, status, '
                       f'message): {str(r)[:80]}')
        who = shown[r['student']]
        folder = who.replace(' ', '-')
        s = {'student': r['student'], 'lab': r['lab'], 'rec': r, 'who': who, 'folder': folder,
             'href': f'{PAGES}/{folder}/{r["lab"]}.html', 'd': os.path.join(out, 'results', r['student'], r['lab']),
             'tests': [], 'checks': [], 'device': None, 'message': scrub(str(r['message']))}
        if r['status'] in HAS_RESULTS:
            results = scrub_json(report.read_results(s['d']), scrub)
            s['tests'] = report.tests_of(results, report.read_points(s['d']), 'student')
            s['checks'] = report.read_ratios(s['d'])
            s['device'] = report.read_device(s['d'])
        subs.append(s)
    return sorted(subs, key=lambda s: (report.natural(s['who']), s['lab']))


def reference(slug, tags):
    """{(tag, check): (median, gradings)}: the kit's reference solution's first measurement of each check of lab slug
    on each GPU model of tags, from make stability's tables in refdata/stability/TAG/ (none where it has no table)"""
    ref = {}
    for tag in sorted(tags):
        stem = os.path.join(klass.KIT, 'refdata', 'stability', tag, slug)
        if not os.path.isfile(stem + '.tsv'):
            continue
        try:
            _, _, rows = read_measurements(stem)
        except (OSError, ValueError, KeyError) as e:
            raise Stop(f'{stem}.tsv: cannot be read ({getattr(e, "strerror", None) or e})')
        for check, c in check_stats(rows).items():
            ref[(tag, check)] = (c['median'], c['n'])
    return ref


def standing(ratio, need, at_least):
    """how far a figure got towards its bar (1 and more meets it; ratiolog.share), None for one that is not a
    number"""
    if ratio is None or not math.isfinite(ratio):
        return None
    return ratiolog.share({'ratio': ratio, 'need': need, 'at_least': at_least})


# ===== The report pages =====
def stage(s, tmp, scrub):
    """a copy of the submission's results in tmp/FOLDER/NN-slug/ with the students' names out of its messages
    (results.json's strings, ratios.tsv's labels and figures), for report.py; its path from tmp"""
    rel = os.path.join(s['folder'], s['lab'])
    d = os.path.join(tmp, rel)
    os.makedirs(os.path.join(d, 'data'))
    src = os.path.join(s['d'], 'results.json')
    with open(src, encoding='utf-8') as f:
        results = scrub_json(json.load(f), scrub)
    with open(os.path.join(d, 'results.json'), 'w', encoding='utf-8') as f:
        json.dump(results, f)
    st = os.stat(src)
    os.utime(os.path.join(d, 'results.json'), (st.st_atime, st.st_mtime))  # the page says when it was graded
    for name in ('points.tsv', 'device.txt'):
        if os.path.isfile(os.path.join(s['d'], name)):
            shutil.copyfile(os.path.join(s['d'], name), os.path.join(d, name))
    if os.path.isfile(os.path.join(s['d'], 'ratios.tsv')):
        with open(os.path.join(s['d'], 'ratios.tsv'), encoding='utf-8') as f, \
                open(os.path.join(d, 'ratios.tsv'), 'w', encoding='utf-8') as o:
            for line in f:
                cols = line.rstrip('\n').split('\t')
                o.write('\t'.join(cols[:5] + [scrub(c) for c in cols[5:]]) + '\n')
    data = os.path.join(s['d'], 'data')
    for name in sorted(os.listdir(data)) if os.path.isdir(data) else []:
        if name.endswith('.csv'):
            shutil.copyfile(os.path.join(data, name), os.path.join(d, 'data', name))
    return rel


def report_page(s, tmp, pages, scrub):
    """draws the submission's report page into pages/FOLDER/NN-slug.html with report.py; '' or why not"""
    try:
        rel = stage(s, tmp, scrub)
    except (OSError, ValueError) as e:
        return f'{s["who"]} lab {s["lab"][:2]}: its results cannot be read ({getattr(e, "strerror", None) or e})'
    page = os.path.join(pages, s['folder'], s['lab'] + '.html')
    p = subprocess.run([sys.executable, os.path.join(HERE, '..', 'report', 'report.py'), rel, page, '--lab', s['lab'],
                        '--impl', 'student', '--no-history'], cwd=tmp, capture_output=True, text=True)
    return '' if p.returncode == 0 else (p.stderr.strip().splitlines() or ['report.py failed'])[-1]


def html_page(title, body):
    """a whole page: title, the report page's look and the dashboard's, body"""
    css = ''
    for path in (os.path.join(HERE, '..', 'report', 'page.css'), os.path.join(HERE, 'dashboard.css')):
        with open(path, encoding='utf-8') as f:
            css += f.read()
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{esc(title)}</title>\n'
            f'<style>\n{css}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n')


def unrun_page(s, pages):
    """pages/FOLDER/NN-slug.html for a submission whose grading did not run to its end: why it has no points"""
    word, _ = NOT_GRADED[s['rec']['status']]
    lines = s['message'].splitlines() or ['(no reason was recorded)']
    after = {'compile': 'Fix the first error the compiler names and submit again: <code>make grade LAB=%s</code> '
                        'shows the same message on your own machine.',
             'stopped': 'Look for a loop that never ends, a wait for work that never comes, or memory or files that '
                        'keep growing: <code>make grade LAB=%s</code> runs the same tests, each with a time limit.',
             'crashed': 'The grader stopped before it could give points; course staff look at what happened and '
                        'grade it again (<code>make grade LAB=%s</code> runs the same tests on your machine).'}
    stamp = datetime.datetime.fromtimestamp(os.path.getmtime(os.path.join(s['d'], 'record.json')))
    body = (f'<header class="top"><h1>Lab {esc(s["lab"][:2])}: {esc(report.lab_title(s["lab"]))}</h1>\n'
            f'<p class="who">{esc(s["who"])}: not graded ({esc(word)}), 0 of {fmt_points(s["rec"]["max"])} '
            'points.</p>\n'
            f'<p class="meta"><span>recorded {esc(stamp.strftime("%Y-%m-%d %H:%M"))}</span></p></header>\n'
            f'<section id="why"><h2>Why there are no points</h2>\n<div class="card"><h3>{esc(word)}</h3>\n'
            f'<p class="message">{esc(lines[0])}</p>\n' +
            (f'<pre class="figures">{esc(chr(10).join(lines[1:]))}</pre>\n' if lines[1:] else '') +
            f'<p class="hint"><b>Next:</b> {after[s["rec"]["status"]] % esc(s["lab"][:2])}</p>\n</div>\n</section>\n'
            '<footer>Written by grader/class/dashboard.py from make class\'s record of this submission.</footer>\n')
    path = os.path.join(pages, s['folder'], s['lab'] + '.html')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(html_page(f'Lab {s["lab"][:2]}: not graded', body))


def write_pages(subs, pages, scrub):
    """every submission's page into pages/, report.py's drawn several at once; Stop naming the first that failed"""
    for s in subs:
        if s['rec']['status'] not in HAS_RESULTS:
            unrun_page(s, pages)
    with tempfile.TemporaryDirectory(prefix='xl-dashboard-') as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
        ran = [s for s in subs if s['rec']['status'] in HAS_RESULTS]
        for s, why in zip(ran, pool.map(lambda s: report_page(s, tmp, pages, scrub), ran)):
            if why:
                raise Stop(f'the report page of {s["who"]} lab {s["lab"][:2]}: {why}')


# ===== The chart of points per lab =====
def band_counts(labs, graded):
    """{lab: how many of the graded submissions scored in each band of BANDS}; labs: {lab: its points}"""
    counts = {lab: [0] * len(BANDS) for lab in labs}
    for s in graded:
        p, top, last = s['rec']['points'], labs[s['lab']], len(BANDS) - 1  # the last band: full points
        counts[s['lab']][last if p >= top else min(last - 1, int(last * p / (top or 1)))] += 1
    return counts


def points_chart(labs, counts, path):
    """draws the chart of points per lab (grader/class/dashboard.gp) of counts (band_counts()) into path; '' or why
    it is not drawn"""
    gnuplot = shutil.which('gnuplot')
    if not gnuplot:
        return 'gnuplot is not installed (sudo apt-get install gnuplot-nox, then build the dashboard again)'
    top = max([max(c) for c in counts.values()] + [1])
    with tempfile.TemporaryDirectory(prefix='xl-dashboard-chart-') as tmp:
        data = os.path.join(tmp, 'points.csv')
        with open(data, 'w', newline='', encoding='utf-8') as f:
            w = csv.writer(f, lineterminator='\n')
            w.writerow(['band'] + [f'lab {lab[:2]} ({fmt_points(labs[lab])} points)' for lab in labs])
            w.writerows([b] + [counts[lab][i] for lab in labs] for i, b in enumerate(BANDS))
        stem = os.path.join(tmp, 'chart')
        setv = report.gp_vars(dict(data=data, out=stem, fmt='png', nlabs=len(labs), ymax=math.ceil(top * 1.25) + 1,
                                   ystep=max(1, math.ceil(top / 8)), width=CHART_PX[0], height=CHART_PX[1]))
        try:
            p = subprocess.run([gnuplot, '-e', setv, os.path.join(HERE, 'dashboard.gp')], cwd=klass.KIT,
                               capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f'gnuplot could not draw it ({e})'
        if p.returncode != 0 or not os.path.isfile(stem + '.png'):
            why = [l.strip() for l in p.stderr.splitlines() if l.strip()]
            return f'gnuplot could not draw it ({why[-1] if why else "no reason given"})'
        shutil.copyfile(stem + '.png', path)
    return ''


# ===== The dashboard's sections =====
def points_section(labs, subs, counts, chart_why):
    """the chart of points per lab (or why it is not there) and its table; counts: band_counts()"""
    graded = [s for s in subs if s['rec']['status'] == 'graded']
    w = ['<section id="points"><h2>Points per lab</h2>\n']
    if chart_why:
        w.append(f'<p class="nochart" id="chart-points-missing">The chart of points per lab: not drawn: '
                 f'{esc(chart_why)}.</p>\n')
    else:
        w.append(f'<figure class="chart" id="chart-points"><img class="chart" src="{PAGES}/{CHART}" '
                 f'width="{CHART_PX[0]}" height="{CHART_PX[1]}" alt="Points per lab: how many graded submissions '
                 f'scored in each band of the lab\'s points">\n<figcaption>How many of each lab\'s graded submissions '
                 f'scored in each band of its points; the submissions not graded are listed '
                 f'<a href="#not-graded">below</a>, not counted here.</figcaption></figure>\n')
    w.append('<table class="points"><thead><tr><th>lab</th><th>graded</th><th>not graded</th><th>min</th>'
             '<th>median</th><th>max</th><th>of</th>' + ''.join(f'<th>{b}</th>' for b in BANDS) +
             '</tr></thead><tbody>\n')
    for lab, top in labs.items():
        pts = sorted(s['rec']['points'] for s in graded if s['lab'] == lab)
        n_not = sum(1 for s in subs if s['lab'] == lab and s['rec']['status'] != 'graded')
        figures = [fmt_points(pts[0]), fmt_points(statistics.median(pts)), fmt_points(pts[-1])] if pts else ['–'] * 3
        w.append(f'<tr><td>{esc(lab)}</td><td class="num">{len(pts)}</td><td class="num">{n_not}</td>' +
                 ''.join(f'<td class="num">{x}</td>' for x in figures + [fmt_points(top)] + counts[lab]) + '</tr>\n')
    w.append('</tbody></table>\n</section>\n')
    return ''.join(w)


def failed_section(subs):
    """the tests failed most often: lab, test, how many submissions of the lab failed it, one message"""
    failed = collections.defaultdict(list)
    for s in subs:
        for t in s['rec'].get('failed') or []:
            failed[(s['lab'], t)].append(s)
    ran = collections.Counter(s['lab'] for s in subs if s['rec']['status'] in HAS_RESULTS)
    w = ['<section id="failed"><h2>Tests failed most often</h2>\n']
    if not failed:
        return w[0] + '<p>No submission failed a test.</p>\n</section>\n'
    top = sorted(failed.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    w.append('<p>Each test failed, by how many of the lab\'s submissions whose tests ran (those graded, and those '
             'waiting for a regrade or a GPU; a test SKIPPED, NOT GRADED or short of its bar for partial credit is not '
             'counted), with the message one of them got.</p>\n'
             '<table class="failed"><thead><tr><th>lab</th><th>test</th><th>failed by</th><th>one message</th></tr>'
             '</thead><tbody>\n')
    for (lab, test), who in top[:FAILED_SHOWN]:
        t = next((t for t in who[0]['tests'] if t['name'] == test), None)
        if t is None:
            msg = '(no message: the grading left none)'
        elif t['hidden']:
            msg = '(a hidden test: what it saw is for course staff)'
        else:
            lines = t['lines'] or [t['desc']]
            msg = lines[0] + (' ' + lines[1].strip() if lines[0].endswith(':') and lines[1:] else '')
        if len(msg) > 300:
            msg = msg[:299] + '…'
        w.append(f'<tr id="failed-{esc(lab[:2])}-{esc(test)}"><td>{esc(lab[:2])}</td><td class="name">{esc(test)}</td>'
                 f'<td class="num" data-count="{len(who)}">{len(who)} of {ran[lab]}</td><td class="msg">{esc(msg)} '
                 f'<span class="fig">({esc(who[0]["who"])})</span></td></tr>\n')
    w.append('</tbody></table>\n')
    if len(top) > FAILED_SHOWN:
        n = len(top[FAILED_SHOWN][1])
        w.append(f'<p>And {len(top) - FAILED_SHOWN} more tests failed, each by {n} '
                 f'submission{"s or fewer" if n > 1 else ""} '
                 '(course staff\'s gradebook.csv has every test of every submission).</p>\n')
    return ''.join(w) + '</section>\n'


def ranking(lab, check, entries, refs):
    """one check of lab's ranking: its submissions' deciding figures best first, the bar and the reference's figures
    where they fall, then those not measured soundly; entries [(who, checks entry)], refs [(tag, median, gradings)]"""
    name, label, need, at_least = check
    rows, unsound = [], []
    for who, c in entries:
        ratio = report.deciding_ratio(c)
        k = standing(ratio, need, at_least)
        (unsound if k is None else rows).append((k, who, ratio, report.check_verdict(c)))
    rows.sort(key=lambda r: (-r[0], report.natural(r[1])))
    met = sum(1 for r in rows if r[0] >= 1)
    marks = [(1.0, 0, '<tr class="mark"><td></td><td>the bar</td><td class="num">%s</td></tr>\n' % esc(
        report.bar_text({'need': need, 'at_least': at_least})))]
    for tag, median, n in refs:
        marks.append((standing(median, need, at_least), 1,
                      f'<tr class="ref"><td></td><td>reference ({esc(tag.upper())})</td>'
                      f'<td class="num fig">{esc(fmt_num(median))}</td></tr>\n'))
    marks.sort(key=lambda m: (-m[0], m[1]))
    out = []
    for rank, (k, who, ratio, _) in enumerate(rows, 1):
        while marks and marks[0][0] > k:
            out.append(marks.pop(0)[2])
        cls = 'ok' if k >= 1 else 'missed'
        out.append(f'<tr class="entry {cls}" data-figure="{ratio:.6g}"><td class="num">{rank}</td>'
                   f'<td class="who">{esc(who)}</td><td class="num fig">{esc(fmt_num(ratio))}</td></tr>\n')
    out += [m[2] for m in marks]
    for _, who, _, verdict in sorted(unsound, key=lambda r: report.natural(r[1])):
        out.append(f'<tr class="entry unsound"><td class="num">–</td><td class="who">{esc(who)}</td>'
                   f'<td class="num">{esc(verdict)}</td></tr>\n')
    ref_text = ', '.join(f'{fmt_num(m)} on the {t.upper()} ({n} gradings)' for t, m, n in refs) or \
        'none measured on this GPU model'
    anchor = f'rank-{lab[:2]}-' + re.sub(r'[^A-Za-z0-9_-]', '-', name)
    return (f'<div class="check"><h4><code>{esc(name)}</code> {esc(label)}</h4>\n<p class="bar">bar: '
            f'{esc(report.bar_text({"need": need, "at_least": at_least}))}'
            f'{" (lower is better)" if not at_least else ""}; met by {met} of {len(entries)}; the reference: '
            f'{esc(ref_text)}</p>\n<table class="ranking" id="{esc(anchor)}" data-need="{need:.6g}" '
            f'data-at-least="{int(at_least)}"><thead><tr><th>#</th><th>submission</th><th>figure</th></tr></thead>'
            '<tbody>\n' + ''.join(out) + '</tbody></table>\n</div>\n')


def speed_section(labs, subs):
    """for each lab, each speed and timed check's ranking of the class (ranking())"""
    w = ['<section id="speed"><h2>Speed and timed checks: the class ranked</h2>\n']
    measured = [s for s in subs if s['checks']]
    if not measured:
        return w[0] + '<p>No speed or timed check was measured: no submission was graded on a GPU.</p>\n</section>\n'
    w.append('<p>Each check\'s deciding figure for every submission that measured it (its last sound attempt, as the '
             'grader decides), best first, with the bar and the kit\'s reference solution where they fall: the '
             'reference is the median of make stability\'s gradings of it on the same GPU model (refdata/stability/). '
             'A figure is a ratio against the kit\'s own measurement in the same run, or a time in ms where the check '
             'says so. A submission whose attempts were all NOT SOUND is listed last.</p>\n')
    for lab in labs:
        ms = [s for s in measured if s['lab'] == lab]
        if not ms:
            continue
        checks = {}
        for s in ms:
            for c in s['checks']:
                checks.setdefault(c['check'], (c['check'], c['label'], c['need'], c['at_least']))
        tags = {report.gpu_tag(s['device']) for s in ms} - {None}
        ref = reference(lab, tags)
        w.append(f'<h3 id="speed-{esc(lab[:2])}">Lab {esc(lab[:2])}: {esc(report.lab_title(lab))}</h3>\n'
                 '<div class="checks">\n')
        for name, check in checks.items():
            entries = [(s['who'], c) for s in ms for c in s['checks'] if c['check'] == name]
            refs = [(t, *ref[(t, name)]) for t in sorted(tags) if (t, name) in ref]
            w.append(ranking(lab, check, entries, refs))
        w.append('</div>\n')
    return ''.join(w) + '</section>\n'


def status_tag(status):
    """a status other than graded, as gradebook.csv says it: red where the grading did not run to its end, amber
    where it waits to be graded again"""
    cls = 'ungraded' if status in ('regrade', 'no-gpu') else 'bad'
    return f'<span class="st {cls} status">{esc(status)}</span>'


def ungraded_section(subs):
    """the submissions not graded: who, lab, why, what comes next, a link to the page"""
    left = sorted((s for s in subs if s['rec']['status'] != 'graded'),
                  key=lambda s: (s['lab'], report.natural(s['who'])))
    w = ['<section id="not-graded"><h2>Not graded</h2>\n']
    if not left:
        return w[0] + '<p>Every submission was graded.</p>\n</section>\n'
    w.append(f'<p>{len(left)} submission{"s" if len(left) != 1 else ""} without final points: the build failed, the '
             'grading was stopped at a limit or crashed, a speed test could not be measured soundly (regrade), or '
             'the GPU tests wait for a run with a GPU (no GPU).</p>\n<table class="ungraded"><thead><tr>'
             '<th>submission</th><th>lab</th><th>status</th><th>why</th><th>next</th></tr></thead>'
             '<tbody>\n')
    for s in left:
        word, after = NOT_GRADED.get(s['rec']['status'], ('', ''))
        lines = [l.strip() for l in s['message'].splitlines() if l.strip()] or ['(no reason was recorded)']
        said = f'<b>{esc(word)}</b>: {esc(lines[0])}' + (
            f' <code>{esc(lines[1])}</code>' if s['rec']['status'] == 'compile' and lines[1:] else '')
        w.append(f'<tr id="ungraded-{esc(s["folder"])}-{esc(s["lab"][:2])}"><td class="who">'
                 f'<a href="{esc(s["href"])}">{esc(s["who"])}</a></td><td>{esc(s["lab"][:2])}</td>'
                 f'<td>{status_tag(s["rec"]["status"])}</td><td class="why">{said}</td>'
                 f'<td>{esc(after)}</td></tr>\n')
    return ''.join(w) + '</tbody></table>\n</section>\n'


def pages_section(labs, subs):
    """a row per student, a column per lab: points, linked to the submission's page"""
    by = {(s['who'], s['lab']): s for s in subs}
    w = ['<section id="submissions"><h2>Every submission\'s report page</h2>\n<table class="matrix"><thead><tr>'
         '<th>submission</th>' + ''.join(f'<th>lab {esc(lab[:2])}</th>' for lab in labs) + '</tr></thead><tbody>\n']
    for who in sorted({s['who'] for s in subs}, key=report.natural):
        cells = []
        for lab in labs:
            s = by.get((who, lab))
            if not s:
                cells.append('<td>–</td>')
                continue
            st = s['rec']['status']
            cells.append(f'<td><a href="{esc(s["href"])}">{fmt_points(s["rec"]["points"])}/'
                         f'{fmt_points(s["rec"]["max"])}</a>{"" if st == "graded" else status_tag(st)}</td>')
        w.append(f'<tr><td class="who">{esc(who)}</td>' + ''.join(cells) + '</tr>\n')
    return ''.join(w) + '</tbody></table>\n</section>\n'


# ===== Building =====
def build(out, recs, names=False):
    """writes OUT/index.html, OUT/dashboard/ and OUT/dashboard-key.csv from make class's records (class.py's
    records(OUT)); names shows the students' names instead of their labels. The line that says where it is;
    Stop when it cannot be built"""
    if not recs:
        raise Stop(f'{out}: no gradings in it (results/STUDENT/NN-slug/record.json): make class writes them')
    key = assign_labels([r['student'] for r in recs], read_key(os.path.join(out, KEY)))
    write_key(os.path.join(out, KEY), key)
    shown = {s: (s if names else label) for s, label in key.items()}
    scrub = scrubber(shown)
    subs = submissions(out, recs, shown, scrub)
    labs = {}
    for s in sorted(subs, key=lambda s: s['lab']):
        labs[s['lab']] = max(labs.get(s['lab'], 0), s['rec']['max'])
    new, pages, old = os.path.join(out, '.dashboard.new'), os.path.join(out, PAGES), os.path.join(out, '.dashboard.old')
    for d in (new, old):
        shutil.rmtree(d, ignore_errors=True)
    try:
        os.makedirs(new)
        write_pages(subs, new, scrub)
        counts = band_counts(labs, [s for s in subs if s['rec']['status'] == 'graded'])
        chart_why = points_chart(labs, counts, os.path.join(new, CHART))
        body = header(subs, labs, names) + points_section(labs, subs, counts, chart_why) + failed_section(subs) + \
            speed_section(labs, subs) + ungraded_section(subs) + pages_section(labs, subs) + \
            ('<footer>Written by grader/class/dashboard.py from make class\'s results. ' +
             ('The students are named (--names). ' if names else
              'Each student is a label; the key is kept by course staff, not with this page. ') +
             'Bandwidth is decimal GB/s: bytes &times; 10<sup>-6</sup> / milliseconds.</footer>\n')
        students = len({s['student'] for s in subs})
        with open(os.path.join(out, 'index.html.new'), 'w', encoding='utf-8') as f:
            f.write(html_page(f'Class dashboard: {students} students, {len(subs)} submissions', body))
        if os.path.isdir(pages):
            os.rename(pages, old)
        os.rename(new, pages)
        os.replace(os.path.join(out, 'index.html.new'), os.path.join(out, 'index.html'))
    except OSError as e:
        raise Stop(f'{getattr(e, "filename", None) or out}: cannot be written ({e.strerror or e})')
    finally:
        for d in (new, old):
            shutil.rmtree(d, ignore_errors=True)
    return (f'dashboard: {os.path.join(out, "index.html")} ({len(subs)} report pages in {pages}/; ' +
            ('the students are NAMED: keep it among course staff)' if names else
             f'safe to share with {PAGES}/: each student is a label, the key is {os.path.join(out, KEY)})'))


def header(subs, labs, names):
    """the page's top: what the class is, where it was graded, whether it names the students, the contents"""
    students = len({s['student'] for s in subs})
    graded = sum(1 for s in subs if s['rec']['status'] == 'graded')
    gpus = collections.Counter(s['device'] for s in subs if s['device'])
    when = datetime.datetime.now().strftime('%Y-%m-%d %H:%M')
    return (f'<header class="top"><h1>Class dashboard</h1>\n<p class="who">{students} students, {len(subs)} '
            f'submissions of lab{"s" if len(labs) > 1 else ""} {esc(", ".join(l[:2] for l in labs))}: {graded} '
            f'graded, {len(subs) - graded} not graded.</p>\n'
            f'<p class="meta">' + ''.join(f'<span>{esc(d)}: <b>{n}</b> gradings</span>' for d, n in gpus.most_common())
            + ('' if gpus else '<span class="nogpu">no grading used a GPU</span>') +
            f' <span>built {esc(when)}</span></p></header>\n' +
            ('<p class="named">This page names the students (built with --names): keep it among course staff. Built '
             'without --names, it shows each student as a label and is safe to share.</p>\n' if names else
             '<p class="anon">Each student is shown as a label, such as "submission 07", drawn at random and kept '
             'from one build to the next; who is who is known to course staff only. Your own pages are in the folder '
             'of your label.</p>\n') +
            '<nav class="toc"><a href="#points">Points per lab</a><a href="#failed">Tests failed most often</a>'
            '<a href="#speed">Speed checks ranked</a><a href="#not-graded">Not graded</a>'
            '<a href="#submissions">Every report page</a></nav>\n')


def main():
    ap = argparse.ArgumentParser(prog='dashboard.py', description='the class dashboard, from make class\'s results')
    ap.error = lambda msg: sys.exit(print(f'dashboard: {msg} (usage: dashboard.py OUT [--names])', file=sys.stderr)
                                    or 2)
    ap.add_argument('out', help='make class\'s results folder (build/class)')
    ap.add_argument('--names', action='store_true', help='show the students\' names (not safe to share)')
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    try:
        if not os.path.isdir(out):
            raise Stop(f'{a.out}: no such folder (make class SUBS=folder writes build/class, or --out DIR)')
        try:
            recs = klass.records(out)
        except (OSError, ValueError) as e:
            raise Stop(str(e))
        print(build(out, recs, a.names))
    except Stop as e:
        print(f'dashboard: {e}', file=sys.stderr)
        return 2
    except Exception as e:  # never a traceback: one line, and the dashboard as it was
        print(f'dashboard: cannot build the dashboard: {type(e).__name__}: {e}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
