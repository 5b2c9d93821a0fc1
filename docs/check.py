#!/usr/bin/env python3
"""check.py [FILE.md ...] - the kit's Markdown says only what is there (make test). Course staff.

For README.md, docs/*.md and every labs/*/README.md (or the files named): every relative link and image must
resolve (a chart under build/plots/ must be one that make plots draws: its plots/NN-name.gp and its
refdata/<lab>/<machine>.csv exist); every `make TARGET` quoted in code must name a target of the Makefile;
every quoted path of the kit's own (grader/, common/, labs/, plots/, refdata/, docs/, build/bin/) must exist or,
for build/bin/ programs, be one the Makefile builds (placeholders such as NN and slug, and grader/hidden/, which an
instructor creates, are let through); a lab's handout (a page titled "# Lab ...") must have the common shape: what
you will learn, background, tasks, how it is graded, figures measured on the H100 and H200, questions, further
reading, in that order; an answer key (solutions/NN-slug/answers.md, titled "# Lab NN — answer key") answers each of its
handout's questions, numbered the same (## N, or N. items); every heading has an empty line above it. One line per problem; exit 1 if any, else 0.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'grader', 'scripts'))  # kitlabs.py
from kitlabs import KIT, labs as kit_labs

LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)\)')
REF_LINK = re.compile(r'^ {0,3}\[(?!\^)[^\]]+\]:\s*(\S+)', re.M)  # [name]: target, a reference-style link
CODE = re.compile(r'`([^`\n]+)`')
FENCE = re.compile(r'^```[^\n]*\n(.*?)^```', re.S | re.M)
KIT_PATH = re.compile(r'(?<![\w./-])((?:grader|common|labs|plots|refdata|docs|solutions|build/bin)/[\w./*-]+)')


def make_targets():
    """the Makefile's targets (its .PHONY list and rule names)"""
    text = open(os.path.join(KIT, 'Makefile')).read()
    targets = set()
    for m in re.finditer(r'^\.PHONY:(.*)$', text, re.M):
        targets.update(m.group(1).split())
    targets.update(re.findall(r'^([a-z][\w-]*):', text, re.M))
    return targets


def programs():
    """names of the programs the Makefile builds into build/bin/"""
    labs = kit_labs().values()
    # the kit's own programs, as the Makefile names them (PROBE := $(B)/bin/gpu-probe)
    names = set(re.findall(r':=\s*\$\(B\)/bin/([a-z][\w-]*)\s*$', open(os.path.join(KIT, 'Makefile')).read(), re.M))
    names.update('unit-' + os.path.basename(f)[:-2] for f in glob.glob(os.path.join(KIT, 'common', 'test', '*.c')))
    for lab in labs:
        names.update(lab + s for s in ('-explore', '-explore-solution', '-grade', '-grade-solution'))
        names.update('%s-mutant-%s' % (lab, os.path.basename(m)[:-3])
                     for m in glob.glob(os.path.join(KIT, 'grader', 'mutants', lab, '*.cu')))
    return names


def chart_ok(rel):
    """build/plots/NN-name-machine.svg|png is drawn by make plots from what is committed"""
    m = re.match(r'build/plots/((\d\d)-[\w-]+?)-(\w+)\.(svg|png)$', rel)
    if not m:
        return False
    lab = glob.glob(os.path.join(KIT, 'refdata', m.group(2) + '-*'))
    return (os.path.isfile(os.path.join(KIT, 'plots', m.group(1) + '.gp')) and bool(lab) and
            os.path.isfile(os.path.join(lab[0], m.group(3) + '.csv')))


ANSWER_KEY = re.compile(r'# Lab (\d\d) — answer key')
SHAPE = ['What you will learn', 'Background', 'Tasks', 'How it is graded', 'Figures measured on the H100 and H200',
         'Questions', 'Further reading']


def shape(text, where):
    """problems with a handout's shape (a page whose title starts "# Lab "): SHAPE's sections, in that order; other
    sections may sit between them"""
    if not text.startswith('# Lab ') or ANSWER_KEY.match(text):
        return []
    heads = re.findall(r'^## (.+?)\s*$', text, re.M)
    problems, last = [], -1
    for want in SHAPE:
        if want not in heads:
            problems.append('%s: a handout needs a section "## %s"' % (where, want))
        elif heads.index(want) < last:
            problems.append('%s: "## %s" comes too early (order: %s)' % (where, want, ', '.join(SHAPE)))
        else:
            last = heads.index(want)
    return problems


def questions(text):
    """the numbers of the items of a page's "## Questions" section (1. ..., 2. ...)"""
    m = re.search(r'^## Questions\s*$(.*?)(?=^## |\Z)', text, re.M | re.S)
    return re.findall(r'^(\d+)\. ', m.group(1), re.M) if m else []


def answers(text, where):
    """an answer key (a page titled "# Lab NN — answer key") answers each question of lab NN's handout, in order,
    as a heading "## N" or, without such headings, a numbered item "N. " of the same number, and nothing else"""
    m = ANSWER_KEY.match(text)
    if not m:
        return []
    slug = kit_labs().get(m.group(1))
    handout = os.path.join(KIT, 'labs', slug or '?', 'README.md')
    if not os.path.isfile(handout):
        return ['%s: an answer key for lab %s, which has no handout' % (where, m.group(1))]
    asked = questions(open(handout, encoding='utf-8').read())
    given = re.findall(r'^## (\d+)\s*$', text, re.M) or re.findall(r'^(\d+)\. ', text, re.M)
    if given != asked:
        return ['%s: answers %s, but the handout asks questions %s (one numbered answer per question, in order)'
                % (where, ' '.join(given) or 'none', ' '.join(asked) or 'none')]
    return []


def headings(text, where):
    """a heading right under a line of text is no heading to pandoc: it renders as a paragraph's words"""
    problems, fenced, prev = [], False, ''
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(('```', '~~~')):
            fenced = not fenced
        elif not fenced and re.match(r'#{1,6} ', line) and prev.strip():
            problems.append('%s:%d: heading "%s" needs an empty line above it' % (where, n, line))
        prev = line
    return problems


def check(path, targets, progs):
    """problems in one Markdown file"""
    text = open(path, encoding='utf-8').read()
    where = os.path.relpath(path, KIT)
    here = os.path.dirname(path)
    problems = shape(text, where) + answers(text, where) + headings(text, where)
    for link in LINK.findall(text) + REF_LINK.findall(text):
        if re.match(r'^[a-z]+:', link) or link.startswith('#'):
            continue
        target = os.path.normpath(os.path.join(here, link.split('#')[0]))
        rel = os.path.relpath(target, KIT)
        if rel.startswith('build/plots/'):
            if not chart_ok(rel):
                problems.append('%s: chart %s is not one that make plots draws' % (where, rel))
        elif not os.path.exists(target):
            problems.append('%s: link to %s, which does not exist' % (where, rel))
    code = CODE.findall(text) + [l for block in FENCE.findall(text) for l in block.splitlines()]
    for c in code:
        for m in re.finditer(r'(?:^|[;&|(]\s*)make\s+([a-z][\w-]*)', c):
            if m.group(1) not in targets:
                problems.append('%s: `%s` names no make target %s' % (where, c.strip(), m.group(1)))
        for p in KIT_PATH.findall(c):
            p = p.rstrip('.,:;)')
            if p.startswith('build/bin/'):
                name = p[len('build/bin/'):]
                if '*' not in name and 'NN' not in name and name not in progs:
                    problems.append('%s: `%s`: the Makefile builds no program %s' % (where, c.strip(), name))
            elif not any(w in p for w in ('NN', '*', '<', 'slug', 'DIR', 'FILE', 'grader/hidden/')) and \
                    not os.path.exists(os.path.join(KIT, p)):
                problems.append('%s: `%s` names %s, which does not exist' % (where, c.strip(), p))
    return problems


def main():
    files = sys.argv[1:] or ([os.path.join(KIT, 'README.md')] + sorted(glob.glob(os.path.join(KIT, 'docs', '*.md'))) +
                             sorted(glob.glob(os.path.join(KIT, 'labs', '*', 'README.md'))) +
                             sorted(glob.glob(os.path.join(KIT, 'solutions', '*', 'answers.md'))))
    targets, progs = make_targets(), programs()
    problems = [p for f in files for p in check(f, targets, progs)]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
