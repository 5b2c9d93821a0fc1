#!/usr/bin/env python3
"""pagecheck.py PAGE.html [--charts "ID ..."] [--missing "ID ..."] - does a report page stand on its own?
make test's report section (grader/test/report.sh) checks every page report.py writes with it. Standard library only.

Checks that every link and image of PAGE resolves: each href or src to "#ID" names an element of the page (the
charts' own references included: ids must be unique, report.py makes each chart's its own), and each one to a file
names a file that exists beside the page (data: URIs are in the page; a report page needs no network); that the
page has no script; that each chart ID of --charts is a <figure> holding an inline SVG; and that each ID of
--missing is the line saying why a chart is left out. Prints one line per problem, or one line saying what holds;
exit 0 when all holds, 1 when not, 2 when the page cannot be read.
"""
import argparse
import html.parser
import os
import sys


class Page(html.parser.HTMLParser):
    """the ids, references, figures and their SVGs of one page"""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.dupes, self.refs, self.scripts = set(), set(), [], 0
        self.figures = {}        # figure id -> how many inline <svg> it holds
        self.nochart = set()     # ids of the lines that say why a chart is left out
        self.open_figure = None  # the id of the figure being read
        self.svg_done = 0        # closed </svg> tags

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get('id'):
            (self.dupes if a['id'] in self.ids else self.ids).add(a['id'])
        for k in ('href', 'src', 'xlink:href'):
            if a.get(k) is not None:
                self.refs.append((tag, k, a[k]))
        if tag == 'script':
            self.scripts += 1
        if tag == 'figure':
            self.open_figure = a.get('id') or ''
            self.figures[self.open_figure] = 0
        if tag == 'svg' and self.open_figure is not None:
            self.figures[self.open_figure] += 1
        if 'nochart' in (a.get('class') or '').split() and a.get('id'):
            self.nochart.add(a['id'])

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == 'figure':
            self.open_figure = None
        if tag == 'svg':
            self.svg_done += 1


def main():
    ap = argparse.ArgumentParser(prog='pagecheck.py')
    ap.add_argument('page')
    ap.add_argument('--charts', default='', help='ids of the charts the page must have ("-": none)')
    ap.add_argument('--missing', default='', help='ids of the lines that must say why a chart is left out')
    args = ap.parse_args()
    try:
        with open(args.page, encoding='utf-8') as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(f'{args.page}: cannot be read ({e})')
        return 2
    p = Page()
    p.feed(text)
    p.close()
    problems = []
    here = os.path.dirname(os.path.abspath(args.page))
    for tag, attr, ref in p.refs:
        if ref.startswith('#'):
            if ref[1:] not in p.ids:
                problems.append(f'<{tag} {attr}="{ref}">: no element has that id')
        elif ref.startswith(('data:', 'mailto:')):
            continue
        elif ref.startswith(('http:', 'https:', '//')):
            problems.append(f'<{tag} {attr}="{ref}">: the page reaches out to the network')
        elif not os.path.exists(os.path.join(here, ref.split('#')[0])):
            problems.append(f'<{tag} {attr}="{ref}">: no such file beside the page')
    if p.dupes:
        problems.append(f'ids used more than once: {" ".join(sorted(p.dupes)[:5])}')
    if p.scripts:
        problems.append(f'{p.scripts} script element(s): the page must need none')
    for cid in [c for c in args.charts.split() if c != "-"]:
        if cid not in p.figures:
            problems.append(f'chart {cid}: not on the page' + (' (a line says why it is left out)'
                                                               if cid + '-missing' in p.nochart else ''))
        elif p.figures[cid] != 1:
            problems.append(f'chart {cid}: holds {p.figures[cid]} inline SVGs, not 1')
    for mid in [m for m in args.missing.split() if m != "-"]:
        if mid not in p.nochart:
            problems.append(f'{mid}: no line saying why that chart is left out')
    svgs = sum(p.figures.values())
    if svgs != p.svg_done:
        problems.append(f'{svgs} SVGs opened in figures, {p.svg_done} closed: a chart is cut short')
    for line in problems:
        print(f'{args.page}: {line}')
    if not problems:
        print(f'{args.page}: {len(p.refs)} links and references resolve, {svgs} charts inline'
              f'{", " + str(len(p.nochart)) + " left out with the reason" if p.nochart else ""}')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
