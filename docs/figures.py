#!/usr/bin/env python3
"""figures.py [--check | --write | --show NAME...] [FILE.md ...] - the figures the pages quote, from refdata/.
Course staff (make figures writes them, make test checks them).

A page quotes a measured figure as <!--f:NN.name-->VALUE<!--/f-->: the comment is hidden where the page is
read, VALUE is what the reader sees. Each lab's figures are defined once, in refdata/NN-slug/figures.tsv, beside
the data they come from, one per row (name, format, expression, what it is); see EXPRESSIONS below.
  --check  (the default) every quoted VALUE equals its figure, every name is defined, and no page quotes a
           measurement by hand (a decimal number before GB/s, ms, us, x, % or spreads outside a <!--f:...--> quote,
           a code span and the generated points and margins tables); one line per problem, exit 1 if any.
  --write  rewrites each quoted VALUE from the data (the files are changed only where a value differs).
  --show   prints the named figures (NN.name), or all, with their values.
FILE defaults to README.md, docs/*.md, every labs/NN-slug/README.md and every solutions/NN-slug/answers.md.
Exit 2, with one line, on a definition that cannot be read or evaluated.

EXPRESSIONS are Python expressions over the lab's tables, read with these names:
  rows(lab, machine, table='', **where)   the rows of refdata/<lab>/<machine>[-table].csv matching where
  one(lab, machine, column, **where)      the column of the only row matching (an error unless exactly one)
  col(lab, machine, column, **where)      that column of every row matching, in order
  best(lab, machine, column, by, **where) (the largest column of the rows matching, the by column of its row;
                                          by='bytes' gives the size as size() writes it)
  note(lab, machine, pattern)             the number a regular expression's group 1 finds in the CSV's comment
                                          lines (# link: ...), where an explorer writes figures that are not rows
  stab(lab, machine, check, stat)         a stability figure of refdata/stability/<machine>/<slug>.tsv: stat is
                                          n, median, min, max, sd or margin of the check (suite.name as logged)
  stabtext(lab, machine, check, pattern)  the numbers a regular expression's group 1 finds in that check's
                                          figures text, one per first measurement (e.g. the kit's rates)
  size(bytes)                             '4 KiB', '256 MiB': a size as the handouts write it
  span(values)                            (min, max) of values, for a format such as {:.1f} to {:.1f}
  KiB MiB GiB, min max sum len abs round sorted median ceil floor log2
lab is 'NN' (any lab's data may be used); a where value matches a number or the column's text exactly.
FORMAT is a str.format pattern; a figure whose expression gives a tuple fills as many places, e.g. {:.1f}-{:.1f}.
"""
import csv
import glob
import math
import os
import re
import signal
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'grader', 'scripts'))
from kitlabs import KIT, labs as kit_labs  # noqa: E402
from stability import check_stats, read_measurements  # noqa: E402

QUOTE = re.compile(r'<!--f:([0-9]{2}\.[\w-]+)-->(.*?)<!--/f-->')
BY_HAND = re.compile(r'(?<![\w.])\d+\.\d+\s?(?:GB/s|ms\b|us\b|µs|x\b|×|%|spreads\b)')
CODE_SPAN = re.compile(r'`[^`\n]*`')
FENCE = re.compile(r'^```.*?^```', re.S | re.M)
GENERATED = re.compile(r'<!-- (points|margins):begin -->.*?<!-- \1:end -->', re.S)  # the points and margins tables


class FigureError(Exception):
    """a definition that cannot be read or evaluated"""


# ===== The data =====

_tables = {}


def _number(text):
    """text as a float where it is one, else the text"""
    try:
        return float(text)
    except ValueError:
        return text


def _table(lab, machine, table):
    """the rows of one refdata CSV as dicts (numbers as floats); comment lines (#) left out"""
    slug = kit_labs().get(lab)
    if slug is None:
        raise FigureError('no lab %r' % lab)
    path = os.path.join(KIT, 'refdata', slug, machine + ('-' + table if table else '') + '.csv')
    if path not in _tables:
        try:
            with open(path, newline='') as f:
                lines = [line for line in f if not line.startswith('#')]
        except OSError as e:
            raise FigureError('cannot read %s: %s' % (os.path.relpath(path, KIT), e.strerror))
        _tables[path] = [{k: _number(v) for k, v in r.items()} for r in csv.DictReader(lines)]
    return _tables[path]


def rows(lab, machine, table='', **where):
    """the rows of refdata/<lab>/<machine>[-table].csv whose columns equal where's values"""
    found = []
    for r in _table(lab, machine, table):
        for k, v in where.items():
            if k not in r:
                raise FigureError('refdata %s/%s has no column %r' % (lab, machine, k))
            if r[k] != (float(v) if isinstance(v, (int, float)) else v):
                break
        else:
            found.append(r)
    return found


def col(lab, machine, column, table='', **where):
    """column of every row matching where, in the table's order"""
    found = rows(lab, machine, table, **where)
    if found and column not in found[0]:
        raise FigureError('refdata %s/%s has no column %r' % (lab, machine, column))
    return [r[column] for r in found]


def one(lab, machine, column, table='', **where):
    """column of the only row matching where"""
    found = col(lab, machine, column, table, **where)
    if len(found) != 1:
        raise FigureError('%d rows of refdata %s/%s match %s, not one' % (len(found), lab, machine, where))
    return found[0]


def stab(lab, machine, check, stat):
    """stat (n, median, min, max, sd, margin) of check in refdata/stability/<machine>/<slug>.tsv"""
    stem = os.path.join(KIT, 'refdata', 'stability', machine, kit_labs().get(lab, '?'))
    try:
        checks = check_stats(read_measurements(stem)[2])
    except (OSError, ValueError, KeyError):
        raise FigureError('no stability tables %s.tsv and -runs.tsv' % os.path.relpath(stem, KIT))
    if check not in checks or stat not in checks[check]:
        raise FigureError('%s has no %s of %r' % (os.path.relpath(stem, KIT), stat, check))
    return checks[check][stat]


def note(lab, machine, pattern, table=''):
    """the number pattern's group 1 finds in the comment lines (# ...) of refdata/<lab>/<machine>[-table].csv,
    where an explorer writes its figures that are not rows (lab 05's link rates)"""
    slug = kit_labs().get(lab)
    path = os.path.join(KIT, 'refdata', slug or '?', machine + ('-' + table if table else '') + '.csv')
    try:
        with open(path) as f:
            comments = ''.join(line for line in f if line.startswith('#'))
    except OSError as e:
        raise FigureError('cannot read %s: %s' % (os.path.relpath(path, KIT), e.strerror))
    m = re.search(pattern, comments)
    if not m:
        raise FigureError('%r finds nothing in the comment lines of %s' % (pattern, os.path.relpath(path, KIT)))
    return float(m.group(1))


def stabtext(lab, machine, check, pattern):
    """the number pattern's group 1 finds in each first measurement's figures text of check (refdata/stability)"""
    stem = os.path.join(KIT, 'refdata', 'stability', machine, kit_labs().get(lab, '?'))
    try:
        texts = [r['figures'] for r in read_measurements(stem)[2] if r['check'] == check and r['attempt'] == 1]
    except (OSError, ValueError, KeyError):
        raise FigureError('no stability tables %s.tsv and -runs.tsv' % os.path.relpath(stem, KIT))
    found = [float(m.group(1)) for m in (re.search(pattern, t) for t in texts) if m]
    if not found:
        raise FigureError('%r finds nothing in the figures of %s on %s' % (pattern, check, machine))
    return found


def best(lab, machine, column, by, table='', **where):
    """(the largest value of column among the rows matching where, the by column of its row)"""
    found = rows(lab, machine, table, **where)
    if not found:
        raise FigureError('no rows of refdata %s/%s match %s' % (lab, machine, where))
    top = max(found, key=lambda r: r[column])
    return top[column], size(top[by]) if by == 'bytes' else top[by]


def span(values):
    """(the smallest, the largest) of values"""
    return min(values), max(values)


def size(n):
    """bytes n as the handouts write a size: 4 KiB, 1 MiB, 1.5 GiB"""
    for unit, b in (('GiB', 1 << 30), ('MiB', 1 << 20), ('KiB', 1 << 10)):
        if n >= b:
            return ('%d %s' if n % b == 0 else '%.1f %s') % (n / b, unit)
    return '%d bytes' % n


NAMES = dict(rows=rows, col=col, one=one, best=best, note=note, stab=stab, stabtext=stabtext, size=size, span=span, KiB=1 << 10, MiB=1 << 20, GiB=1 << 30, min=min, max=max,
             sum=sum, len=len, abs=abs, round=round, sorted=sorted, median=statistics.median, ceil=math.ceil,
             floor=math.floor, log2=math.log2)


# ===== The definitions =====

def definitions():
    """{'NN.name': (format, expression, where)} from every refdata/NN-slug/figures.tsv"""
    defs = {}
    for lab, slug in kit_labs().items():
        path = os.path.join(KIT, 'refdata', slug, 'figures.tsv')
        if not os.path.isfile(path):
            continue
        with open(path, newline='') as f:
            for n, row in enumerate(csv.reader(f, delimiter='\t'), 1):
                if n == 1 or not row or row[0].startswith('#'):
                    continue
                where = '%s:%d' % (os.path.relpath(path, KIT), n)
                if len(row) != 4 or not re.fullmatch(r'[\w-]+', row[0]):
                    raise FigureError('%s: need 4 columns separated by tabs (name, format, expression, what it is)'
                                      % where)
                name = lab + '.' + row[0]
                if name in defs:
                    raise FigureError('%s: %s is defined twice' % (where, name))
                defs[name] = (row[1], row[2], where)
    return defs


def one_range(text):
    """'0.99 to 0.99' (a range whose ends print the same) as '0.99'; any other text as it is"""
    m = re.fullmatch(r'(\S+) to (\S+)((?: \S+)?)', text)
    return m.group(1) + m.group(3) if m and m.group(1) == m.group(2) else text


def value(defs, name):
    """the text of figure name, from its definition"""
    fmt, expr, where = defs[name]
    try:
        v = eval(expr, dict(NAMES, __builtins__={}))  # the kit's own definitions, not input from outside
        return one_range(fmt.format(*(v if isinstance(v, tuple) else (v,))))
    except FigureError as e:
        raise FigureError('%s (%s): %s' % (where, name, e))
    except Exception as e:  # a mistake in the expression or its format: one line naming the definition
        raise FigureError('%s (%s): %s: %s' % (where, name, type(e).__name__, e))


# ===== The pages =====

def default_pages():
    """README.md, docs/*.md, the handouts and the answer keys"""
    pages = [os.path.join(KIT, 'README.md')] + sorted(glob.glob(os.path.join(KIT, 'docs', '*.md')))
    for slug in kit_labs().values():
        pages += [p for p in (os.path.join(KIT, 'labs', slug, 'README.md'),
                              os.path.join(KIT, 'solutions', slug, 'answers.md')) if os.path.isfile(p)]
    return pages


def by_hand(text):
    """(line, quoted text) of each measurement typed by hand: outside quotes, code spans, fences and the tables
    generated from the graders and the stability tables"""
    text = GENERATED.sub(lambda m: '\n' * m.group(0).count('\n'), FENCE.sub(lambda m: '\n' * m.group(0).count('\n'), text))
    found = []
    for n, line in enumerate(text.split('\n'), 1):
        bare = CODE_SPAN.sub('', QUOTE.sub('', line))
        found += [(n, m.group(0)) for m in BY_HAND.finditer(bare)]
    return found


def check(defs, path, problems):
    """appends one line per problem of page path"""
    text = open(path, encoding='utf-8').read()
    rel = os.path.relpath(path, KIT)
    for n, line in enumerate(text.split('\n'), 1):
        for m in QUOTE.finditer(line):
            if m.group(1) not in defs:
                problems.append('%s:%d: %s is not defined (refdata/NN-slug/figures.tsv)' % (rel, n, m.group(1)))
            elif m.group(2) != value(defs, m.group(1)):
                problems.append('%s:%d: %s says %s, the data %s (make figures writes it)' % (
                    rel, n, m.group(1), m.group(2), value(defs, m.group(1))))
    problems += ['%s:%d: "%s" is typed by hand: quote it from refdata as <!--f:NN.name-->...<!--/f-->' % (
            rel, n, t) for n, t in by_hand(text)]


def write(defs, path):
    """rewrites the quoted values of page path from the data; returns how many changed"""
    text = open(path, encoding='utf-8').read()
    changed = [0]

    def fill(m):
        if m.group(1) not in defs:
            raise FigureError('%s: %s is not defined' % (os.path.relpath(path, KIT), m.group(1)))
        v = value(defs, m.group(1))
        changed[0] += v != m.group(2)
        return '<!--f:%s-->%s<!--/f-->' % (m.group(1), v)

    new = QUOTE.sub(fill, text)
    if changed[0]:
        with open(path + '.new', 'w', encoding='utf-8') as f:
            f.write(new)
        os.replace(path + '.new', path)
    return changed[0]


def main(argv):
    mode = argv[0] if argv and argv[0] in ('--check', '--write', '--show') else '--check'
    args = argv[1:] if argv and argv[0] == mode else argv
    bad = [a for a in args if a.startswith('-')]
    if bad:
        print('figures: unknown option %s (use --check, --write or --show)' % bad[0], file=sys.stderr)
        return 2
    try:
        defs = definitions()
        if mode == '--show':
            for name in args or sorted(defs):
                if name not in defs:
                    print('figures: no figure %s' % name, file=sys.stderr)
                    return 2
                print('%s\t%s' % (name, value(defs, name)))
            return 0
        pages = [os.path.abspath(a) for a in args] or default_pages()
        missing = [p for p in pages if not os.path.isfile(p)]
        if missing:
            print('figures: no file %s' % missing[0], file=sys.stderr)
            return 2
        if mode == '--write':
            n = sum(write(defs, p) for p in pages)
            print('figures: %d quoted value%s rewritten from refdata/' % (n, '' if n == 1 else 's'))
            return 0
        problems = []
        for p in pages:
            check(defs, p, problems)
    except FigureError as e:
        print('figures: %s' % e, file=sys.stderr)
        return 2
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == '__main__':
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # piped into head, end quietly as other commands do
    sys.exit(main(sys.argv[1:]))
