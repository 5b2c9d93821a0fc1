#!/usr/bin/env python3
"""report.py RESULTS_DIR OUT.html [--source lab.cu] - one grading's report page, for the student who was graded.
Course staff and students; make grade runs it after each lab it grades. Python 3 standard library only.

Reads what a grading leaves in RESULTS_DIR (make grade's build/results/NN-slug-IMPL/; docs/grading.md, "The report
page", is the contract): results.json and points.tsv (the points), ratios.tsv (every speed measurement), device.txt
(the GPU) and data/NAME.csv (the student's own figures: sweep, timeline, peak, ways). Writes OUT.html, one page that
opens from disk with nothing else: inline CSS (grader/report/page.css) and inline SVG charts drawn by gnuplot
(grader/report/*.gp, in the look of plots/terminal.gpi), beside the reference data of the same GPU model
(refdata/NN-slug/h100.csv or h200.csv). Without gnuplot the page has the tables and says the charts need it; a
chart whose data is absent is left out with a line saying why.

Each call also appends a row to history.csv beside OUT.html (time, lab, impl, points, max_points, ratio, sha256,
check: the first speed check's deciding ratio and the digest of --source), and the page draws the lab's earlier
attempts from it. --lab NN-slug and --impl student|solution name the grading when RESULTS_DIR's name does not
(NN-slug-IMPL); --history FILE puts the history elsewhere; --no-history keeps none (no row appended, no attempts
drawn: make class's pages, rendered again from the same gradings each time its dashboard is built).
Exit 0 with the page written (OUT.html.new, then renamed: never half a page), or 2 after one line on stderr.
"""
import argparse
import csv
import datetime
import fcntl
import hashlib
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

KIT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ratiolog  # noqa: E402  (beside this file: the ratio log's format)
HERE = os.path.join(KIT, 'grader', 'report')
HISTORY_COLUMNS = ('time', 'lab', 'impl', 'points', 'max_points', 'ratio', 'sha256', 'check')
# points.tsv's statuses as the grader's table says them (partial: a speed test short of its bar, under linear credit)
STATUS_WORDS = {'passed': 'passed', 'partial': 'PARTIAL', 'failed': 'FAILED', 'skipped': 'SKIPPED',
                'ungraded': 'NOT GRADED'}
# the reference data's file for a GPU whose name holds the key (device.txt: "NVIDIA H100 80GB HBM3", "NVIDIA H200")
REFERENCE_GPUS = (('H100', 'h100'), ('H200', 'h200'))
# lab 06's ways to pinned data as the reference data names them, and as plots/06-peak.gp labels them
PEAK_METHODS = (('malloc + fill', 'malloc + fill'), ('(a) at alloc', '(a) pinned at alloc'),
                ('(b) by copy', '(b) pinned by copy'), ('(c) in place', '(c) pinned in place'))
# lab 08's ways as data/ways.csv names them: the words on the chart and the bar's colour
WAY_WORDS = {'copied': ('copy everything', '#1f77b4'), 'mapped': ('zero-copy', '#d62728'),
             'managed': ('managed, prefetched', '#2ca02c'), 'pageable': ('pageable (malloc)', '#8c564b')}
# lab 08's chart of data/ways.csv: its gnuplot script, written beside its data (it needs the per-check tics, bars and
# labels report.py computes, so it is kept here, in the look of plots/terminal.gpi); drawn with data (a CSV
# x,ms,colour,impl,label: impl 0 yours, 1 the kit's), defs (xtics, xrange, yrange), out, fmt
WAYS_GP = '''reset
set datafile separator comma
size_px = "960,520"; size_in = "6.4in,3.5in"
load "plots/terminal.gpi"
set datafile missing NaN
load defs
set title "Each timed check's ways: yours (solid) beside the kit's (hatched), medians"
set ylabel "ms per call, to the end of its work (log scale)"
set logscale y
set format y "%g"
set ytics nomirror
set xtics nomirror noenhanced font ",10"
set grid ytics lc rgb "#dddddd"
set boxwidth 0.36
set key top left box opaque noenhanced font ",10" maxrows 3
plot data using "x":(column("impl") == 0 ? column("ms") : NaN):"colour" with boxes fs solid 0.85 border \\
        lc rgb "#333333" lc rgb variable notitle, \\
     data using "x":(column("impl") == 1 ? column("ms") : NaN):"colour" with boxes fs pattern 4 border \\
        lc rgb "#333333" lc rgb variable notitle, \\
     data using "x":"ms":"label" with labels offset 0, 0.8 font ",9" noenhanced notitle, \\
     NaN with boxes fs solid 0.85 border lc rgb "#333333" lc rgb "#bbbbbb" title "yours", \\
     NaN with boxes fs pattern 4 border lc rgb "#333333" lc rgb "#555555" title "the kit's", \\
     for [w = 1:words(ways)] NaN with boxes fs solid 0.85 border lc rgb "#333333" lc rgb word(way_colours, w) \\
        title word(way_names, w)
'''

# lab 10's series of data/loop.csv (and of its reference data), as (loop, impl): the words on the chart and the
# colour; the reference's are drawn thin and dashed in the same colour
LOOP_SERIES = ((('pipelined', 'yours'), 'pipelined', '#1f77b4'), (('async', 'yours'), 'async', '#ff7f0e'),
               (('blocking', 'yours'), 'blocking', '#7f7f7f'),
               (('pipelined', 'kit'), 'the kit\'s pipelined', '#9ecae1'),
               (('blocking', 'kit'), 'the kit\'s blocking', '#525252'),
               (('resident', 'kit'), 'the model alone, no transfers', '#2ca02c'))
# lab 10's chart of data/loop.csv beside the reference: its gnuplot script, written beside its data (report.py
# computes the columns, one per series, and the plot), in the look of plots/10-fps.gp; drawn with data (a CSV
# batch,COLUMN...), defs (xrange, xtics, the plot), title, out, fmt
LOOP_GP = """reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"
set datafile missing NaN
set title noenhanced title
set xlabel "batch size (frames, log scale)"
set ylabel "frames per second (log scale)"
set logscale x 2
set logscale y 10
set format y "%.0s%c"
set xtics nomirror
set ytics nomirror
set grid xtics ytics lc rgb "#dddddd"
set key outside right center vertical box noenhanced font ",10" spacing 1.1 samplen 3
load defs
"""


class Stop(Exception):
    """what stops the page: one line for stderr, exit 2"""


class NoChart(Exception):
    """why one chart is left out: one line on the page"""


# ===== Reading a grading =====
def read_text(path):
    """the text of path; Stop when it cannot be read"""
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise Stop(f'{path}: cannot be read ({getattr(e, "strerror", None) or e})')


def read_results(d):
    """results.json: {score, max_score, output, tests: [{name, score, max_score, status, visibility, output}]}"""
    path = os.path.join(d, 'results.json')
    if not os.path.isfile(path):
        raise Stop(f'{path}: not there (was the lab graded into {d}?)')
    try:
        r = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise Stop(f'{path}: not valid JSON ({e.msg}: line {e.lineno}, column {e.colno})')
    ok = isinstance(r, dict) and isinstance(r.get('tests'), list) and all(
        isinstance(t, dict) and isinstance(t.get('name'), str) and isinstance(t.get('score'), (int, float))
        and isinstance(t.get('max_score'), (int, float)) for t in r['tests'])
    if not ok:
        raise Stop(f'{path}: not a grading\'s results (tests[] of name, score, max_score expected)')
    return r


def read_points(d):
    """points.tsv: {test: {score, max, status, seconds}}; {} when there is none"""
    path = os.path.join(d, 'points.tsv')
    if not os.path.exists(path):
        return {}
    out = {}
    for n, line in enumerate(read_text(path).splitlines(), 1):
        f = line.split('\t')
        if n == 1 and f[:1] == ['test']:
            continue
        try:
            out[f[0]] = {'score': float(f[1]), 'max': float(f[2]), 'status': f[3], 'seconds': float(f[4])}
        except (IndexError, ValueError):
            raise Stop(f'{path}:{n}: not test, score, max, status, seconds')
    return out


def read_ratios(d):
    """ratios.tsv: the checks in order, each {check, label, need, at_least, attempts: [{attempt, ratio, figures,
    sound}]}; [] when there is none"""
    path = os.path.join(d, 'ratios.tsv')
    if not os.path.exists(path):
        return []
    try:
        rows = ratiolog.parse(read_text(path).splitlines(), path, strict=True)
    except ValueError as e:
        raise Stop(str(e))
    checks = {}
    for r in rows:
        c = checks.setdefault(r['check'], {'check': r['check'], 'label': r['label'], 'need': r['need'],
                                           'at_least': r['at_least'], 'attempts': []})
        c['attempts'].append({k: r[k] for k in ('attempt', 'ratio', 'figures', 'sound')})
    return list(checks.values())


def read_device(d):
    """the GPU's name from device.txt, or None (no GPU was used)"""
    path = os.path.join(d, 'device.txt')
    if not os.path.exists(path):
        return None
    lines = read_text(path).strip().splitlines()
    return lines[0].strip() if lines and lines[0].strip() else None


def read_table(path, columns):
    """the rows (dicts) of a CSV with a header row, comment lines ('#') left out; NoChart when it is not there,
    holds no rows or lacks one of columns"""
    if not os.path.exists(path):
        raise NoChart(f'no {path}')
    try:
        with open(path, encoding='utf-8', newline='') as f:
            lines = [l for l in f if l.strip() and not l.startswith('#')]
    except (OSError, UnicodeDecodeError) as e:
        raise NoChart(f'{path} cannot be read ({e})')
    rows = list(csv.DictReader(lines))
    missing = [c for c in columns if not rows or c not in rows[0]]
    if not rows:
        raise NoChart(f'{path} holds no rows')
    if missing:
        raise NoChart(f'{path} has no column {missing[0]}')
    return rows


def number(row, col, path):
    """row[col] as a float; NoChart naming path when it is not one"""
    try:
        return float(row[col])
    except (TypeError, ValueError):
        raise NoChart(f'{path}: {col} "{row.get(col)}" is not a number')


def meets(value, need, at_least):
    """True when value meets its bar (the grader's meets())"""
    return value >= need if at_least else value <= need


# ===== What the page says about each test =====
def split_hint(line):
    """(line, hint): a closing parenthetical that asks a question ("(is every point weighted by 1/T^2?)") is the
    hint; a part of it before '; ' that does not ask stays in the line"""
    if not line.endswith(')'):
        return line, ''
    depth = 0
    for i in range(len(line) - 1, -1, -1):
        depth += {')': 1, '(': -1}.get(line[i], 0)
        if depth == 0:
            break
    else:
        return line, ''
    inner = line[i + 1:-1]
    if '?' not in inner:
        return line, ''
    parts = inner.split('; ')
    keep = [p for p in parts if '?' not in p]
    hint = '; '.join(p for p in parts if '?' in p)
    head = line[:i].rstrip()
    return (f'{head} ({"; ".join(keep)})' if keep else head), hint


def tests_of(results, points, impl):
    """each test: {name, score, max, status, desc, lines, hidden} in the grader's order"""
    out = []
    for t in results['tests']:
        p = points.get(t['name'], {})
        status = p.get('status') or t.get('status') or 'failed'
        text = str(t.get('output') or '')
        desc, _, rest = text.partition('\n')
        out.append({'name': t['name'], 'score': t['score'], 'max': t['max_score'], 'status': status, 'desc': desc,
                    'lines': [l for l in rest.split('\n') if l.strip()],
                    'hidden': impl == 'student' and t.get('visibility') == 'hidden'})
    return out


def fmt_num(v):
    """a figure for people: 0.982, 150, 1.2e-05, 'not a number'"""
    if math.isnan(v):
        return 'not a number'
    if math.isinf(v):
        return 'infinite'
    return f'{v:.4g}'


def fmt_points(v):
    """points as the grader counts them: 45, 7.5"""
    return f'{v:g}'


def bar_text(c):
    """a check's bar for people: 'at least 0.85', 'at most 150'"""
    return f'{"at least" if c["at_least"] else "at most"} {fmt_num(c["need"])}'


def check_verdict(c):
    """'passed', 'missed' or 'not graded': the deciding attempt's verdict, as the grader decides it"""
    last = c['attempts'][-1]
    if last['sound'] and meets(last['ratio'], c['need'], c['at_least']):
        return 'passed'
    return 'not graded' if any(not a['sound'] for a in c['attempts']) else 'missed'


def deciding_ratio(c):
    """the ratio that decided a check: its last sound attempt's, or None"""
    sound = [a for a in c['attempts'] if a['sound']]
    return sound[-1]['ratio'] if sound else None


# ===== Charts (gnuplot, SVG, inlined) =====
def gp_quote(s):
    """s as a gnuplot single-quoted string"""
    return "'" + str(s).replace("'", "''") + "'"


def gp_vars(vars):
    """gnuplot's -e text that sets each of vars: numbers as they are, anything else as a quoted string"""
    return '; '.join(f'{k}={v!r}' if isinstance(v, (int, float)) else f'{k}={gp_quote(v)}' for k, v in vars.items())


def gp_dquote(s):
    """s as a gnuplot double-quoted string (for tic labels written into a defs file)"""
    return '"' + str(s).replace('\\', '\\\\').replace('"', '\\"') + '"'


class Charts:
    """draws charts with gnuplot into a scratch folder and returns each as inline SVG"""

    def __init__(self, tmp):
        self.gnuplot = shutil.which('gnuplot')
        self.tmp = tmp
        self.n = 0

    def scratch(self, name):
        return os.path.join(self.tmp, name)

    def write_csv(self, name, header, rows):
        """a scratch CSV with a header row; its path"""
        path = self.scratch(name)
        with open(path, 'w', newline='', encoding='utf-8') as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
        return path

    def draw(self, script, alt, **vars):
        """inline SVG of grader/report/SCRIPT drawn with vars (strings quoted, numbers as they are), alt its text for
        screen readers; NoChart when gnuplot fails"""
        self.n += 1
        out = self.scratch(f'chart{self.n}')
        vars.update(out=out, fmt='svg')
        setv = gp_vars(vars)
        try:
            p = subprocess.run([self.gnuplot, '-e', setv, os.path.join(HERE, script)], cwd=KIT, capture_output=True,
                               text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise NoChart(f'gnuplot could not draw it ({e})')
        svg = ''
        if os.path.exists(out + '.svg'):
            with open(out + '.svg', encoding='utf-8', errors='replace') as f:
                svg = f.read()
        if p.returncode != 0 or '</svg>' not in svg:
            why = [l.strip() for l in p.stderr.splitlines() if l.strip()]
            raise NoChart(f'gnuplot could not draw it ({why[-1] if why else "no reason given"})')
        return inline_svg(svg, f'c{self.n}', alt)


def inline_svg(svg, prefix, title):
    """gnuplot's SVG file made fit to sit in the page: no XML prolog, ids made unique to this chart (every chart
    defines gpPt0 ...), a title for screen readers"""
    svg = svg[svg.index('<svg'):]
    svg = re.sub(r'<title>.*?</title>\s*<desc>.*?</desc>', f'<title>{html.escape(title)}</title>', svg, count=1,
                 flags=re.S)
    seen = {}

    def new_id(m):  # gnuplot gives a plot's group and its key entry the same id: the second gets "-2"
        name = f'{prefix}-{m.group(2)}'
        seen[name] = seen.get(name, 0) + 1
        return f'id={m.group(1)}{name}{"-" + str(seen[name]) if seen[name] > 1 else ""}{m.group(1)}'
    svg = re.sub(r'''\bid=(['"])(.*?)\1''', new_id, svg)
    svg = re.sub(r'''href=(['"])#(.*?)\1''', lambda m: f'href={m.group(1)}#{prefix}-{m.group(2)}{m.group(1)}', svg)
    svg = re.sub(r'url\(#([^)]*)\)', lambda m: f'url(#{prefix}-{m.group(1)})', svg)
    return svg.replace('<svg', f'<svg role="img" aria-label="{html.escape(title)}"', 1)


def speed_chart(charts, checks):
    """every attempt of every check against its bar: a check's name and bar on a line of its own, then one row per
    attempt; x is how far past its bar the figure is, turned so that right of the line (1) always meets it"""
    lo, hi = 1 / 8, 16
    rows, heads, seps, y = [], [], [], 0.0
    for c in reversed(checks):  # drawn bottom up: the first check at the top
        for a in reversed(c['attempts']):
            r, need = a['ratio'], c['need']
            x = ratiolog.share({'ratio': r, 'need': need, 'at_least': c['at_least']})
            off = not lo <= x <= hi  # a figure that is not a number too
            x = lo if math.isnan(x) else min(max(x, lo), hi)
            verdict = 'not sound' if not a['sound'] else 'passed' if meets(r, need, c['at_least']) else 'missed'
            text = f'#{a["attempt"]}: {fmt_num(r)}' + (' (off the scale)' if off else '') + \
                ('  NOT SOUND: not graded' if not a['sound'] else '')
            y += 0.7
            rows.append((f'{x:.6g}', f'{y:.3f}', verdict, text.replace(',', ';')))
        y += 0.8
        label = c['label'] if len(c['label']) <= 90 else c['label'][:89].rstrip() + '…'
        heads.append((y, f'{c["check"]}: {label}, {bar_text(c)}'))
        y += 0.45
        seps.append(y)
    data = charts.write_csv('speed.csv', ('x', 'y', 'verdict', 'text'), rows)
    defs = charts.scratch('speed.gpi')
    with open(defs, 'w', encoding='utf-8') as f:
        f.write(f'set yrange [0.2:{y:.3f}]\n')
        for hy, text in heads:
            f.write(f'set label {gp_dquote(text)} at graph 0.008, first {hy:.3f} left front boxed '
                    f'noenhanced font ",12" textcolor rgb "#222222"\n')
        for sy in seps[:-1]:
            f.write(f'set arrow from graph 0, first {sy:.3f} to graph 1, first {sy:.3f} nohead lc rgb "#bbbbbb"\n')
    height = int(140 + 30 * y)
    return charts.draw('speed.gp', 'Speed and timed checks: each attempt against its bar', data=data, defs=defs,
                       height=height)


def sweep_chart(charts, sweep_path, ref_path, machine):
    """lab 01: the student's sweep, both directions, beside the reference's of the same GPU model"""
    rows = read_table(sweep_path, ('direction', 'bytes', 'median_ms', 'gbps'))
    for r in rows:
        number(r, 'bytes', sweep_path), number(r, 'gbps', sweep_path)
    dirs = {r['direction'] for r in rows}
    if not dirs & {'H2D', 'D2H'}:
        raise NoChart(f'{sweep_path} has no H2D or D2H rows')
    return charts.draw('sweep.gp', 'Your sweep beside the reference', you=sweep_path, ref=ref_path or '',
                       machine=machine)


def timeline_chart(charts, path, title, tag, lane_rank=None):
    """a timeline CSV (run,lane,what,start_ms,end_ms) drawn as plots/04-timeline.gp and 05-timeline.gp draw
    theirs: one row per run and lane, in order of first appearance, each run from its own start, spans coloured
    by kind (plots/timeline.gpi); lane_rank(lane), where given, orders a run's lanes from the top (lab 10: its
    workers, its loop, its streams)"""
    rows = read_table(path, ('run', 'lane', 'what', 'start_ms', 'end_ms'))
    t0, lanes = {}, []
    for r in rows:
        s, e = number(r, 'start_ms', path), number(r, 'end_ms', path)
        t0[r['run']] = min(t0.get(r['run'], s), s)
        if (r['run'], r['lane']) not in lanes:
            lanes.append((r['run'], r['lane']))
    runs = list(t0)
    lanes.sort(key=lambda rl: (runs.index(rl[0]), lane_rank(rl[1]) if lane_rank else 0 if rl[1] == 'host' else 1,
                               natural(rl[1])))
    if len(lanes) > 40:
        raise NoChart(f'{path} has {len(lanes)} lanes: too many to draw')
    ypos, y = {}, 0.0
    for i, (run, lane) in enumerate(reversed(lanes)):
        if i and run != list(reversed(lanes))[i - 1][0]:
            y += 0.6  # a gap between runs
        y += 1
        ypos[(run, lane)] = y
    one_run = len(runs) == 1
    tics = ', '.join(f'{gp_dquote(lane if one_run else run + ": " + lane)} {v:g}' for (run, lane), v in ypos.items())
    row_f = ' : '.join(f'(r eq {gp_dquote(run)} && l eq {gp_dquote(lane)}) ? {v:g}'
                       for (run, lane), v in ypos.items()) + ' : NaN'
    t0_f = ' : '.join(f'r eq {gp_dquote(run)} ? {t:.6f}' for run, t in t0.items()) + ' : NaN'
    kinds = []
    for r in rows:
        if r['what'] not in kinds:
            kinds.append(r['what'])
    style = {'produce': ('s_host', 'produce (host)'), 'host work': ('s_host', 'host work'),
             'H2D': ('s_h2d', 'copy in (H2D)'), 'compute': ('s_kernel', 'kernel'), 'kernel': ('s_kernel', 'kernel'),
             'GPU work': ('s_kernel', 'GPU work'), 'D2H': ('s_d2h', 'copy out (D2H)'),
             'copy to host': ('s_d2h', 'copy to host'), 'read result': ('s_read', 'the host reads the result'),
             'decode': ('s_host', 'decode (a worker)'), 'deliver': ('s_read', 'deliver (the loop thread)'),
             'model': ('s_kernel', 'the model')}
    clauses = []
    for k in kinds:
        s, t = style.get(k, ('s_other', k))
        clauses.append(f'data using @mid:(span({gp_dquote(k)})):@half:(0.32) with boxxyerror @{s} '
                       f'title {gp_dquote(t)}')
    defs = charts.scratch(f'timeline-{tag}.gpi')
    with open(defs, 'w', encoding='utf-8') as f:
        f.write(f'row(r, l) = {row_f}\nt0(r) = {t0_f}\n')
        f.write(f'set ytics nomirror noenhanced ({tics})\nset yrange [0.4:{y + 0.6:g}]\n')
        f.write('plot ' + ', \\\n     '.join(clauses) + '\n')
    return charts.draw('timeline.gp', title, data=path, defs=defs, title=title, height=int(150 + 34 * y))


def natural(s):
    """a sort key that puts "stream 2" before "stream 10\""""
    return [int(p) if p.isdigit() else p for p in re.split(r'(\d+)', s)]


def peak_chart(charts, peak_path, ref_path, machine):
    """lab 06: the student's peak resident memory per way to pinned data beside the reference's, at the size the
    grading measured (the reference's nearest size where it has not that one)"""
    rows = read_table(peak_path, ('method', 'bytes', 'peak_x'))
    yours = {r['method']: (number(r, 'bytes', peak_path), number(r, 'peak_x', peak_path)) for r in rows}
    big = max(b for b, _ in yours.values())
    if not big > 0:
        raise NoChart(f'{peak_path}: no size (bytes) above 0')
    ref, ref_bytes = {}, None
    if ref_path:
        rrows = read_table(ref_path, ('method', 'bytes', 'peak_x'))
        sizes = sorted({number(r, 'bytes', ref_path) for r in rrows} - {0.0}) or [big]
        ref_bytes = min(sizes, key=lambda b: (abs(math.log(b / big)), -b))
        ref = {r['method']: number(r, 'peak_x', ref_path) for r in rrows if number(r, 'bytes', ref_path) == ref_bytes}
    known = [m for m, _ in PEAK_METHODS]
    methods = [m for m in known if m in yours] + [m for m in yours if m not in known]
    label = dict(PEAK_METHODS)
    data = charts.write_csv('peak.csv', ('i', 'yours', 'reference'),
                            [(i, f'{yours[m][1]:.4g}', f'{ref[m]:.4g}' if m in ref else 'NaN')
                             for i, m in enumerate(methods)])
    defs = charts.scratch('peak.gpi')
    with open(defs, 'w', encoding='utf-8') as f:
        f.write('set xtics nomirror noenhanced (' + ', '.join(f'{gp_dquote(label.get(m, m))} {i}'
                                                             for i, m in enumerate(methods)) + ')\n')
        f.write(f'set xrange [-0.6:{len(methods) - 0.4}]\n')
        top = max([v for _, v in yours.values()] + list(ref.values()) + [2.3])
        f.write(f'set yrange [0:{top * 1.18:.3g}]\n')
    return charts.draw('peak.gp', 'Peak resident memory per way', data=data, defs=defs, machine=machine or '',
                       you_mib=big / 1048576, ref_mib=(ref_bytes or 0) / 1048576)


def ways_chart(charts, path):
    """lab 08: the ways each timed check ran (data/ways.csv: check,way,impl,fraction,reuse,array_bytes,ms), yours
    beside the kit's, one group of bars per check; returns (svg, note): note is the line for a GPU that cannot read
    pageable memory (a pageable row whose ms is not a number), else None"""
    rows = read_table(path, ('check', 'way', 'impl', 'fraction', 'reuse', 'array_bytes', 'ms'))
    checks, bars, note = [], [], None
    for r in rows:
        try:
            ms = float(r['ms'])
        except (TypeError, ValueError):
            ms = math.nan
        if not math.isfinite(ms) or ms <= 0:
            if r['way'] == 'pageable':
                note = ('this GPU cannot read pageable memory (cudaDevAttrPageableMemoryAccess 0): the fourth way was '
                        'not measured')
                continue
            raise NoChart(f'{path}: ms "{r["ms"]}" of {r["check"]} ({r["way"]}, {r["impl"]}) is not a time')
        group = (r['check'], number(r, 'fraction', path), number(r, 'reuse', path), number(r, 'array_bytes', path))
        if group not in checks:
            checks.append(group)
        bars.append((group, r['way'], r['impl'], ms))
    if not bars:
        raise NoChart(f'{path} holds no timed ways')
    out, tics, x = [], [], 0.0
    for c in checks:  # a group: one check at one fraction and reuse (the fourth way's two readings are two)
        mine = [b for b in bars if b[0] == c]
        mine.sort(key=lambda b: b[2] != 'yours')  # yours first, then the kit's, each in the file's order
        first = x
        for _, way, impl, ms in mine:
            colour = WAY_WORDS.get(way, (way, '#7f7f7f'))[1]
            out.append((f'{x:g}', f'{ms:.6g}', str(int(colour[1:], 16)), 0 if impl == 'yours' else 1,
                        f'{ms:.3g}'))
            x += 0.4
        check, f, reuse, size = c
        what = f'{100 * f:g} % ' + ('once' if reuse == 1 else f'x {reuse:g}')
        tics.append((f'{check}<NL>{what}, {size / 1048576:g} MiB', (first + x - 0.4) / 2))
        x += 0.6 if len(mine) > 1 else 1.0  # a lone bar's group as wide as a pair's: room for its tic label
    data = charts.write_csv('ways.csv', ('x', 'ms', 'colour', 'impl', 'label'), out)
    defs = charts.scratch('ways.gpi')
    top = max(b[3] for b in bars) * 4
    low = min(b[3] for b in bars) / 3
    with open(defs, 'w', encoding='utf-8') as f:
        # a tic label is a format (% doubled) with backslash-n for a new line: quoted here, not by gp_dquote
        f.write('set xtics (' + ', '.join('"%s" %g' % (t.replace('\\', '').replace('"', "'").replace('%', '%%')
                                                       .replace('<NL>', '\\n'), v) for t, v in tics) + ')\n')
        f.write(f'set xrange [-0.5:{x - 0.3:g}]\nset yrange [{low:.3g}:{top:.3g}]\nset bmargin 4\n')
        shown = [w for w in WAY_WORDS if any(b[1] == w for b in bars)]  # a key entry for each way drawn
        f.write('ways = "' + ' '.join(shown) + '"\nway_names = \'' + ' '.join(
            '"%s"' % WAY_WORDS[w][0] for w in shown) + '\'\nway_colours = "' + ' '.join(
            WAY_WORDS[w][1] for w in shown) + '"\n')
    script = charts.scratch('ways.gp')
    with open(script, 'w', encoding='utf-8') as f:
        f.write(WAYS_GP)
    return charts.draw(script, 'The timed checks\' ways, yours beside the kit\'s', data=data, defs=defs), note


def loop_lane_rank(lane):
    """lab 10's lanes from the top: the workers, the loop's thread, the streams, anything else"""
    return 0 if lane.startswith('worker') else 1 if lane == 'loop' else 2 if lane.startswith('stream') else 3


def loop_chart(charts, path, ref_path, machine):
    """lab 10: frames/s against batch size of the grading's loops (data/loop.csv: loop,impl,batch,fps[,ideal_fps];
    the medians of its runs at each batch), beside the reference solution's explorer on the same GPU model
    (refdata/10-inference-loop/h100.csv or h200.csv) over the same batches"""
    def medians(rows, where):
        """{(loop, impl): {batch: median fps}} and {batch: median ideal} of rows"""
        runs, ideal = {}, {}
        for r in rows:
            b, fps = number(r, 'batch', where), number(r, 'fps', where)
            if math.isfinite(fps) and fps > 0 and b >= 1:
                runs.setdefault((r['loop'], r['impl']), {}).setdefault(b, []).append(fps)
            try:
                i = float(r.get('ideal_fps') or 'nan')
            except ValueError:
                i = math.nan
            if math.isfinite(i) and i > 0 and b >= 1:
                ideal.setdefault(b, []).append(i)
        med = {k: {b: sorted(v)[len(v) // 2] if len(v) % 2 else sum(sorted(v)[len(v) // 2 - 1:len(v) // 2 + 1]) / 2
                   for b, v in d.items()} for k, d in runs.items()}
        return med, {b: sorted(v)[len(v) // 2] for b, v in ideal.items()}
    yours, ideal = medians(read_table(path, ('loop', 'impl', 'batch', 'fps')), path)
    if not yours:
        raise NoChart(f'{path} holds no frames/s above 0')
    batches = sorted({b for d in yours.values() for b in d})
    ref = {}
    if ref_path:
        ref, _ = medians(read_table(ref_path, ('loop', 'impl', 'batch', 'fps')), ref_path)
        lo, hi = min(batches), max(batches)
        ref = {k: {b: v for b, v in d.items() if lo <= b <= hi} for k, d in ref.items()}
        batches = sorted(set(batches) | {b for d in ref.values() for b in d})
    cols, clauses = [], []
    for key, words, colour in LOOP_SERIES:
        for src, tag, style, title in ((yours, 'y', f'lw 2.5 pt 7 ps 0.8 lc rgb "{colour}"', words),
                                       (ref, 'r', f'lw 1.2 dt 2 pt 6 ps 0.6 lc rgb "{colour}"',
                                        f'{words} (reference)')):
            if key in src and src[key]:
                cols.append((f'{tag}_{key[0]}_{key[1]}', src[key]))
                clauses.append(f'data using "batch":"{cols[-1][0]}" with linespoints {style} title {gp_dquote(title)}')
    if ideal:
        cols.append(('ideal', ideal))
        clauses.append('data using "batch":"ideal" with points pt 6 ps 1.6 lc rgb "#000000" '
                       'title "the ideal, measured in the same runs"')
    data = charts.write_csv('loop.csv', ['batch'] + [c for c, _ in cols],
                            [[f'{b:g}'] + [f'{d[b]:.6g}' if b in d else 'NaN' for _, d in cols] for b in batches])
    defs = charts.scratch('loop.gpi')
    with open(defs, 'w', encoding='utf-8') as f:
        f.write(f'set xrange [{batches[0] / 1.5:g}:{batches[-1] * 1.5:g}]\n')
        f.write('set xtics (' + ', '.join(f'"{b:g}" {b:g}' for b in batches) + ')\n')
        f.write('plot ' + ', \\\n     '.join(clauses) + '\n')
    script = charts.scratch('loop.gp')
    with open(script, 'w', encoding='utf-8') as f:
        f.write(LOOP_GP)
    title = 'Your loops\' frames per second against batch size' + (', beside the reference solution\'s' if ref
                                                                  else '') + (f' ({machine})' if machine else '')
    return charts.draw(script, 'Your loops\' frames per second against batch size', data=data, defs=defs,
                       title=title)


def history_chart(charts, rows, check):
    """points, and the first speed check's ratio where the attempts have it, over this lab's attempts"""
    data = charts.write_csv('history.csv', ('n', 'points', 'ratio'),
                            [(i + 1, r['points'], r['ratio'] if (r.get('check') or '') == (check or {}).get(
                                'check', '') and r['ratio'] else 'NaN') for i, r in enumerate(rows)])
    has_ratio = check is not None and any(r['ratio'] and (r.get('check') or '') == check['check'] for r in rows)
    return charts.draw('history.gp', 'Your attempts', data=data, maxp=float(rows[-1]['max_points'] or 0),
                       has_ratio=1 if has_ratio else 0, need=check['need'] if check else 0,
                       ratio_label=f'{check["label"].split(" (")[0]}' if check else '',
                       bar=bar_text(check) if check else '')


# ===== History =====
def read_history(path):
    """the history's rows (dicts of HISTORY_COLUMNS; a column an older file lacks reads as ''); [] when new"""
    if not os.path.exists(path):
        return []
    try:
        with open(path, newline='', encoding='utf-8') as f:
            return [{c: (r.get(c) or '') for c in HISTORY_COLUMNS} for r in csv.DictReader(f)]
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise Stop(f'{path}: cannot be read ({getattr(e, "strerror", None) or e})')


def append_history(path, row):
    """appends row (HISTORY_COLUMNS) to the history CSV, its header first when it is new"""
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    try:
        with open(path, 'a+', newline='', encoding='utf-8') as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # a class graded several at once may append beside us
            f.seek(0)
            had = f.read()
            if not had.strip():
                f.write(','.join(HISTORY_COLUMNS) + '\n')
            elif not had.endswith('\n'):
                f.write('\n')
            csv.writer(f, lineterminator='\n').writerow([row[c] for c in HISTORY_COLUMNS])
    except OSError as e:
        raise Stop(f'{path}: cannot be written ({e.strerror})')


def sha256_of(path):
    """the hex sha256 of the file at path ('' without one); Stop when it cannot be read"""
    if not path:
        return ''
    try:
        with open(path, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        raise Stop(f'{path}: cannot be read ({e.strerror})')


# ===== The page =====
def esc(s):
    """s made safe in HTML text and attributes"""
    return html.escape(str(s), quote=True)


def status_cell(status):
    """a test's status as the page shows it: the grader's word, coloured"""
    word = STATUS_WORDS.get(status, status.upper())
    cls = {'passed': 'ok', 'partial': 'partial', 'failed': 'bad', 'skipped': 'skip',
           'ungraded': 'ungraded'}.get(status, 'bad')
    return f'<span class="st {cls}">{esc(word)}</span>'


def anchor(name, kind='test'):
    """the id of a test's row in the points table (kind 'test') or of its card in "What did not pass" ('why')"""
    return kind + '-' + re.sub(r'[^A-Za-z0-9_-]', '-', name)


def figure(fid, caption, svg=None, why=None):
    """a chart with its caption, or the one line that says why it is not there"""
    if svg is None:
        return f'<p class="nochart" id="{fid}-missing">{esc(caption)}: not drawn: {esc(why)}.</p>\n'
    return (f'<figure class="chart" id="{fid}">\n{svg}\n<figcaption>{caption}</figcaption>\n</figure>\n')


def lab_title(slug):
    """the handout's title without "Lab NN — ", or the slug in words"""
    path = os.path.join(KIT, 'labs', slug, 'README.md')
    try:
        with open(path, encoding='utf-8') as f:
            first = f.readline().strip()
        m = re.match(r'#\s*Lab\s+\d+\s*[—-]\s*(.+)', first)
        if m:
            return m.group(1)
    except OSError:
        pass
    return slug.split('-', 1)[-1].replace('-', ' ')


def gpu_tag(device):
    """the kit's name for the GPU model of device ('h100', 'h200': REFERENCE_GPUS), or None"""
    return next((tag for key, tag in REFERENCE_GPUS if device and key in device), None)


def reference_for(slug, device, suffix=''):
    """(refdata path, machine tag) of the same GPU model, or (None, why)"""
    if not device:
        return None, 'no GPU was used'
    tag = gpu_tag(device)
    if not tag:
        return None, f'the kit has no reference data for the {device} (only for the H100 and H200)'
    path = os.path.join('refdata', slug, f'{tag}{suffix}.csv')
    if os.path.isfile(os.path.join(KIT, path)):
        return path, tag
    return None, f'the kit has no {path}'


def render(args):
    d = args.results.rstrip('/')
    if not os.path.isdir(d):
        raise Stop(f'{d}: no such folder (make grade LAB=NN writes build/results/NN-slug-IMPL/)')
    base = os.path.basename(os.path.abspath(d))
    m = re.match(r'^(\d\d-[a-z0-9-]+?)-(student|solution)$', base)
    slug = args.lab or (m.group(1) if m else None)
    impl = args.impl or (m.group(2) if m else 'student')
    if not slug or not re.match(r'^\d\d-[a-z0-9-]+$', slug):
        raise Stop(f'{d}: cannot tell the lab from the folder\'s name (NN-slug-IMPL): say --lab NN-slug')
    lab_id = slug[:2]
    results = read_results(d)
    points = read_points(d)
    checks = read_ratios(d)
    device = read_device(d)
    tests = tests_of(results, points, impl)
    score, max_score = results.get('score', 0), results.get('max_score', 0)
    source = args.source
    if source and not os.path.isfile(source):
        raise Stop(f'{source}: no such file (--source names the graded lab.cu)')
    stamp = datetime.datetime.fromtimestamp(os.path.getmtime(os.path.join(d, 'results.json')))
    first_check = checks[0] if checks else None
    ratio = deciding_ratio(first_check) if first_check else None
    history_path = None if args.no_history else \
        args.history or os.path.join(os.path.dirname(args.out) or '.', 'history.csv')
    entry = {
        'time': datetime.datetime.now().astimezone().isoformat(timespec='seconds'), 'lab': slug, 'impl': impl,
        'points': fmt_points(score), 'max_points': fmt_points(max_score),
        'ratio': '' if ratio is None or not math.isfinite(ratio) else f'{ratio:.6g}', 'sha256': sha256_of(source),
        'check': first_check['check'] if first_check else ''}
    history = (read_history(history_path) if history_path else []) + [entry]
    mine = [r for r in history if r.get('lab') == slug and r.get('impl') == impl][-30:]

    who = ('your lab.cu' if impl == 'student' else 'the reference solution') + \
        f' ({source or ("labs" if impl == "student" else "solutions") + "/" + slug + "/lab.cu"})'
    out = []
    w = out.append
    w(f'<header class="top"><h1>Lab {esc(lab_id)}: {esc(lab_title(slug))}</h1>\n')
    w(f'<p class="who">The report page of one grading of {esc(who)}.</p>\n<p class="meta">')
    w(f'<span>GPU: <b>{esc(device)}</b></span>' if device else
      '<span class="nogpu">no GPU: the tests that need one were not graded</span>')
    w(f' <span>graded {esc(stamp.strftime("%Y-%m-%d %H:%M"))}</span></p></header>\n')

    # ----- the points -----
    counts = {}
    for t in tests:
        counts[t['status']] = counts.get(t['status'], 0) + 1
    pct = 100.0 * score / max_score if max_score else 0
    w('<section id="points"><h2>Points</h2>\n')
    w(f'<p class="total"><b>{fmt_points(score)} of {fmt_points(max_score)} points</b> '
      f'<span class="meter" aria-hidden="true"><span style="width:{pct:.1f}%"></span></span> ')
    w(', '.join(f'{n} {STATUS_WORDS.get(s, s).lower()}'
                for s, n in sorted(counts.items(), key=lambda kv: list(STATUS_WORDS).index(kv[0])
                                   if kv[0] in STATUS_WORDS else 9)) + '</p>\n')
    if results.get('output'):
        w(f'<p class="notice">{esc(results["output"])}</p>\n')
    if not device:
        w('<p class="notice">This grading ran without a GPU: the tests that need one are SKIPPED and earn nothing '
          'here. Grade on a machine with an NVIDIA GPU for every point.</p>\n')
    w('<table class="points"><thead><tr><th>test</th><th>points</th><th>status</th><th>what it checks</th></tr>'
      '</thead><tbody>\n')
    for t in tests:
        link = t['status'] not in ('passed', 'skipped')
        name = f'<a href="#{anchor(t["name"], "why")}">{esc(t["name"])}</a>' if link else esc(t['name'])
        pts = f'{fmt_points(t["score"])}/{fmt_points(t["max"])}' if t['status'] != 'skipped' else \
            f'–/{fmt_points(t["max"])}'
        w(f'<tr class="{esc(t["status"])}" id="{anchor(t["name"])}"><td class="name">{name}</td>'
          f'<td class="num">{pts}</td><td>{status_cell(t["status"])}</td><td>{esc(t["desc"])}</td></tr>\n')
    w(f'<tr class="sum"><td>total</td><td class="num">{fmt_points(score)}/{fmt_points(max_score)}</td>'
      '<td></td><td></td></tr>\n</tbody></table>\n</section>\n')

    # ----- what did not pass -----
    wrong = [t for t in tests if t['status'] not in ('passed', 'skipped')]
    skipped = [t for t in tests if t['status'] == 'skipped']
    if wrong or skipped:
        w('<section id="not-passed"><h2>What did not pass</h2>\n')
    for t in wrong:
        w(f'<div class="card {esc(t["status"])}" id="{anchor(t["name"], "why")}">\n')
        w(f'<h3>{esc(t["name"])} {status_cell(t["status"])} <span class="pts">{fmt_points(t["score"])} of '
          f'{fmt_points(t["max"])} points</span></h3>\n<p class="desc">It checks: {esc(t["desc"])}</p>\n')
        if t['hidden']:
            w('<p>A hidden test: what it saw is for course staff.</p>\n</div>\n')
            continue
        lines = t['lines'] or ['(the grader gave no message)']
        hints = []
        shown = []
        for line in lines:
            line, hint = split_hint(line)
            shown.append(line)
            if hint:
                hints.append(hint)
        w(f'<p class="message">{esc(shown[0])}</p>\n')
        if shown[1:]:
            w('<pre class="figures">' + esc('\n'.join(l.strip() for l in shown[1:])) + '</pre>\n')
        for h in hints:
            w(f'<p class="hint"><b>Hint:</b> {esc(h)}</p>\n')
        w('</div>\n')
    if skipped:
        why = []
        for t in skipped:
            reason = t['lines'][0] if t['lines'] else 'skipped'
            if reason not in why:
                why.append(reason)
        w(f'<p class="skipped"><b>{len(skipped)} test{"s" if len(skipped) > 1 else ""} SKIPPED</b> '
          f'({fmt_points(sum(t["max"] for t in skipped))} points not graded here): ' + '; '.join(esc(x) for x in why)
          + '.</p>\n')
    if wrong or skipped:
        w('</section>\n')

    # ----- charts -----
    with tempfile.TemporaryDirectory(prefix='xl-report-') as tmp:
        charts = Charts(tmp)
        w('<section id="charts"><h2>Your figures</h2>\n')
        if not charts.gnuplot:
            w('<p class="nochart" id="charts-need-gnuplot">The charts need gnuplot, which is not installed here '
              '(sudo apt-get install gnuplot-nox, then grade again); the tables hold the points and the speed '
              f'checks\' figures, and the figures the grading measured are in {esc(d)}/data/.</p>\n')
        w(speed_section(charts, checks, device, {t['name']: t['status'] for t in tests}))
        w(lab_charts(charts, slug, d, device))
        if history_path:
            w(history_section(charts, mine, first_check, slug))
        w('</section>\n')

    w(f'<footer>Written by grader/report/report.py from {esc(d)}/ (results.json, points.tsv, ratios.tsv, '
      f'device.txt, data/)' + (f'; the history is {esc(history_path)}' if history_path else '') +
      '. Bandwidth is decimal GB/s: '
      'bytes &times; 10<sup>-6</sup> / milliseconds.</footer>\n')
    title = f'Lab {lab_id} {slug[3:]}: {fmt_points(score)}/{fmt_points(max_score)}'
    with open(os.path.join(HERE, 'page.css'), encoding='utf-8') as f:
        css = f.read()
    page = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{esc(title)}</title>\n'
            f'<style>\n{css}</style>\n</head>\n<body>\n<main>\n' + ''.join(out) + '</main>\n</body>\n</html>\n')
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp_out = args.out + '.new'
    try:
        try:
            with open(tmp_out, 'w', encoding='utf-8') as f:
                f.write(page)
        except OSError as e:
            raise Stop(f'{tmp_out}: cannot be written ({e.strerror})')
        if history_path:
            append_history(history_path, entry)
        os.replace(tmp_out, args.out)
    finally:
        if os.path.isfile(tmp_out):  # nothing half-written is left
            os.remove(tmp_out)


def speed_section(charts, checks, device, status):
    """the chart of every speed and timed check, and their table (a check's name links to its test's row; status:
    each test's)"""
    s = ['<h3 id="speed">Speed and timed checks</h3>\n']
    if not checks:
        why = 'no speed or timed check was measured in this grading' + (' (no GPU)' if not device else '')
        return s[0] + figure('chart-speed', 'The chart of speed checks', why=why)
    if charts.gnuplot:
        try:
            s.append(figure('chart-speed', (
                'Each attempt of each check against its bar, the vertical line. A check that must be <i>at least</i> '
                'its bar is drawn as your figure &divide; the bar, one that must be <i>at most</i> its bar as the bar '
                '&divide; your figure: right of the line meets the bar either way. A grader measures up to three '
                'times; an attempt marked NOT SOUND (another process used the GPU, or the kit\'s own timings '
                'jumped) is not graded.'), svg=speed_chart(charts, checks)))
        except NoChart as e:
            s.append(figure('chart-speed', 'The chart of speed checks', why=str(e)))
    s.append('<table class="checks"><thead><tr><th>check</th><th>what is measured</th><th>bar</th>'
             '<th>attempts</th><th>verdict</th></tr></thead><tbody>\n')
    for c in checks:
        atts = '<br>'.join(
            f'#{a["attempt"]}: {esc(fmt_num(a["ratio"]))}' + ('' if a['sound'] else ' <i>NOT SOUND</i>')
            for a in c['attempts'])
        v = check_verdict(c)
        test = c['check'].split('#')[0]
        if v == 'missed' and status.get(test) == 'partial':
            v = 'short: partial credit'
        cls = {'passed': 'ok', 'missed': 'bad', 'not graded': 'ungraded'}.get(v, 'partial')
        name = f'<a href="#{anchor(test)}">{esc(c["check"])}</a>' if test in status else esc(c['check'])
        s.append(f'<tr><td class="name">{name}</td><td>{esc(c["label"])}'
                 f'<div class="fig">{esc(c["attempts"][-1]["figures"])}</div></td><td class="num">'
                 f'{esc(bar_text(c))}</td><td class="num">{atts}</td><td><span class="st {cls}">'
                 f'{esc(v)}</span></td></tr>\n')
    s.append('</tbody></table>\n')
    return ''.join(s)


def lab_charts(charts, slug, d, device):
    """the lab's own charts: lab 01's sweep, labs 04 and 05's timelines, lab 06's peak memory, lab 08's ways, lab
    10's frames/s and timeline"""
    lab_id = slug[:2]
    data = os.path.join(os.path.abspath(d), 'data')  # gnuplot runs in the kit's root
    s = []
    if lab_id == '01':
        ref, tag = reference_for(slug, device)
        s.append('<h3 id="sweep">Your sweep: bandwidth against size</h3>\n')
        s.append(data_chart(charts, 'chart-sweep', 'Your sweep', lambda: sweep_chart(
            charts, os.path.join(data, 'sweep.csv'), ref, device), (
            'Your lab_sweep in each direction as the grader measured it (thick lines; median, from 4 KiB to 256 MiB)'
            + (f', beside the kit\'s reference solution on the same GPU model ({esc(ref)}, thin dashed lines)' if ref
               else f'; no reference is drawn: {esc(tag)}') + '. The grader compares your figures with the kit\'s '
            'own, measured in the same run (the speed checks above), not with this reference.'), device))
    elif lab_id in ('04', '05'):
        s.append('<h3 id="timeline">Your timeline</h3>\n')
        s.append(data_chart(charts, 'chart-timeline-yours', 'Your timeline', lambda: timeline_chart(
            charts, os.path.join(data, 'timeline.csv'), f'Your timeline ({device})', 'yours'), (
            'Every span the grader recorded of your code\'s run (host work, copies, kernels), one row per lane (the '
            'host, each stream), each run from its own start: boxes in different rows that overlap in time ran at '
            'the same time.'), device))
        ref, tag = reference_for(slug, device, '-timeline')
        if ref:
            s.append(data_chart(charts, 'chart-timeline-ref', 'The reference timeline', lambda: timeline_chart(
                charts, os.path.join(KIT, ref), f'The reference solution\'s timeline ({tag.upper()}, {ref})', 'ref'),
                f'The kit\'s reference solution on the same GPU model, as its explorer measured it ({esc(ref)}): '
                'its workload is the explorer\'s, so compare the shape (how much overlaps), not the lengths.',
                'reference'))
        else:
            s.append(figure('chart-timeline-ref', 'The reference timeline', why=tag))
    elif lab_id == '06':
        ref, tag = reference_for(slug, device)
        s.append('<h3 id="peak">Your peak memory per way to pinned data</h3>\n')
        s.append(data_chart(charts, 'chart-peak', 'Your peak memory', lambda: peak_chart(
            charts, os.path.join(data, 'peak.csv'), os.path.join(KIT, ref) if ref else None, device), (
            'How much the peak resident memory rose while each of your functions made pinned data, as a multiple of '
            'the buffer (filling it included)' + (f', beside the kit\'s reference solution ({esc(ref)})' if ref
                                                  else f'; no reference is drawn: {esc(tag)}') +
            '. Pinned from the start or in place needs one buffer; pinning by copy holds two for a moment.'), device))
    elif lab_id == '08':
        s.append('<h3 id="ways">Your ways beside the kit\'s</h3>\n')
        note = []

        def draw():
            svg, why = ways_chart(charts, os.path.join(data, 'ways.csv'))
            note.append(why)
            return svg
        s.append(data_chart(charts, 'chart-ways', 'Your ways beside the kit\'s', draw, (
            'The ways each timed check ran, as the grader measured them (medians, ms, log scale): your '
            'lab_read_mapped, lab_read_copied and lab_read_managed (solid) beside the kit\'s (hatched), one group per '
            'check, at the grader\'s size (its array is smaller than the explorer\'s, so compare these with each '
            'other, not with the explorer\'s figures).'), device))
        if note and note[0]:
            s.append(f'<p class="nochart" id="chart-ways-pageable">{esc(note[0])}.</p>\n')
    elif lab_id == '10':
        ref, tag = reference_for(slug, device)
        s.append('<h3 id="loop">Your loops: frames per second against batch size</h3>\n')
        s.append(data_chart(charts, 'chart-loop', 'Your loops\' frames per second', lambda: loop_chart(
            charts, os.path.join(data, 'loop.csv'), os.path.join(KIT, ref) if ref else None, device), (
            'Frames per second of your loops as the grader measured them (thick lines; the median of its runs at '
            'each batch), the kit\'s loops and the model alone with no transfers, and the ideal the grader measured '
            'in the same runs (open circles)' + (f', beside the reference solution\'s explorer on the same GPU model '
                                                 f'({esc(ref)}, thin dashed lines, the same batches)' if ref
                                                 else f'; no reference is drawn: {esc(tag)}') +
            '. The grader compares your pipelined loop with the ideal and the kit\'s blocking loop of the same run '
            '(the speed checks above), not with this reference.'), device))
        s.append('<h3 id="timeline">Your timeline</h3>\n')
        s.append(data_chart(charts, 'chart-timeline-yours', 'Your timeline', lambda: timeline_chart(
            charts, os.path.join(data, 'timeline.csv'), f'Your pipelined loop\'s timeline ({device})', 'yours',
            loop_lane_rank), (
            'Your pipelined loop as the grader recorded it: a row per worker thread (decode), the loop\'s thread '
            '(deliver), then a row per stream (copy in, the model, copy out). Workers that keep ahead leave no gap on '
            'the stream rows; a gap on every stream row at once is the GPU waiting.'), device))
        ref, tag = reference_for(slug, device, '-timeline')
        if ref:
            s.append(data_chart(charts, 'chart-timeline-ref', 'The reference timeline', lambda: timeline_chart(
                charts, os.path.join(KIT, ref), f'The reference solution\'s timeline ({tag.upper()}, {ref})', 'ref',
                loop_lane_rank),
                f'The kit\'s reference solution on the same GPU model, as its explorer measured it ({esc(ref)}, batch '
                '64): compare the shape (whether the workers keep ahead, how the streams overlap), not the lengths.',
                'reference'))
        else:
            s.append(figure('chart-timeline-ref', 'The reference timeline', why=tag))
    return ''.join(s)


def data_chart(charts, fid, what, draw, caption, device):
    """a chart of the grading's data: drawn, or the line saying why not"""
    if not charts.gnuplot:
        return figure(fid, what, why='gnuplot is not installed')
    try:
        return figure(fid, caption, svg=draw())
    except NoChart as e:
        why = str(e)
        if why.startswith('no ') and why.endswith('.csv'):
            name = os.path.join(os.path.basename(os.path.dirname(why)), os.path.basename(why))
            why = f'the grading left no {name}' + (': no GPU was used, so the test that measures it did not run'
                                                    if not device else ' (the test that records it did not run, '
                                                    'or stopped before it wrote it)')
        return figure(fid, what, why=why)


def history_section(charts, mine, check, slug):
    """this lab's attempts: the chart (2 or more) and the last ones as a table"""
    s = ['<h3 id="history">Your attempts</h3>\n']
    if len(mine) < 2:
        s.append(f'<p class="nochart" id="chart-history-missing">Your attempts: not drawn yet: this is the first '
                 f'grading of lab {esc(slug[:2])} in the history; the next ones are drawn here.</p>\n')
        return ''.join(s)
    if charts.gnuplot:
        try:
            s.append(figure('chart-history', (
                'Points at each grading of this lab' + (f', and the first speed check\'s figure '
                                                        f'({esc(check["check"])}, {esc(bar_text(check))})'
                                                        if check else '') + ', oldest first.'),
                svg=history_chart(charts, mine, check)))
        except NoChart as e:
            s.append(figure('chart-history', 'Your attempts', why=str(e)))
    s.append('<table class="history"><thead><tr><th>#</th><th>graded</th><th>points</th><th>first speed check</th>'
             '<th>lab.cu (sha256)</th></tr></thead><tbody>\n')
    prev = None
    for i, r in enumerate(mine, 1):
        digest = (r.get('sha256') or '')[:12]
        changed = ' <i>changed</i>' if prev is not None and digest and digest != prev else ''
        prev = digest or prev
        s.append(f'<tr><td class="num">{i}</td><td>{esc((r.get("time") or "")[:16].replace("T", " "))}</td>'
                 f'<td class="num">{esc(r.get("points"))}/{esc(r.get("max_points"))}</td>'
                 f'<td class="num">{esc(r.get("ratio") or "–")}</td><td><code>{esc(digest or "–")}</code>'
                 f'{changed}</td></tr>\n')
    s.append('</tbody></table>\n')
    return ''.join(s)


class Args(argparse.ArgumentParser):
    """argparse that says a bad command line in one line (exit 2)"""

    def error(self, message):
        print(f'report: {message} (usage: report.py RESULTS_DIR OUT.html [--source lab.cu])', file=sys.stderr)
        sys.exit(2)


def main():
    ap = Args(prog='report.py', description='one grading\'s report page')
    ap.add_argument('results', help='the grading\'s results folder (build/results/NN-slug-IMPL)')
    ap.add_argument('out', help='the page to write (build/report/NN-slug.html)')
    ap.add_argument('--source', help='the lab.cu that was graded (its sha256 goes into the history)')
    ap.add_argument('--lab', help='NN-slug, when the folder\'s name does not say it')
    ap.add_argument('--impl', choices=('student', 'solution'), help='when the folder\'s name does not say it')
    ap.add_argument('--history', help='the history CSV (default: history.csv beside OUT)')
    ap.add_argument('--no-history', action='store_true', help='keep no history: append nothing, draw no attempts')
    args = ap.parse_args()
    try:
        render(args)
    except Stop as e:
        print(f'report: {e}', file=sys.stderr)
        return 2
    except Exception as e:  # never a traceback: one line, and no page
        print(f'report: cannot write the page: {type(e).__name__}: {e}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
