#!/usr/bin/env python3
"""apply.py DIFF OUT - a mutant's source from its diff: the file the diff's "--- PATH" line names (a reference
solution, PATH from the kit's root) with the diff's hunks applied, written to OUT. Course staff; the Makefile
builds every mutant this way, the planted ones (grader/mutants/NN-slug/NAME.diff, whose text before the diff says
what mistake it plants and which tests must catch it) and the generated ones (build/mutate/NN-slug/ID.diff).

A hunk must match its context and removed lines exactly; it may have moved (the solution gained or lost lines
elsewhere), and is looked for nearest its stated line first. Exit 0, or 1 with one line when a hunk matches
nowhere (the solution changed under it: write the mutant again) or the diff is not one.
"""
import os
import re
import sys

KIT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
HUNK = re.compile(r'^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@')


class Bad(Exception):
    """a diff that cannot be applied, with why"""


def parse(text):
    """(path, hunks) of a unified diff of one file: hunks are (old_start, old_lines, new_lines); text before the
    '--- ' line is the mutant's description and is skipped"""
    lines = text.splitlines(keepends=True)
    i = next((k for k, l in enumerate(lines) if l.startswith('--- ')), None)
    if i is None or i + 1 >= len(lines) or not lines[i + 1].startswith('+++ '):
        raise Bad('no "--- PATH" and "+++ PATH" lines')
    path = lines[i][4:].split('\t')[0].strip()
    hunks, k = [], i + 2
    while k < len(lines):
        m = HUNK.match(lines[k])
        if not m:
            raise Bad('line %d: expected a hunk header "@@ -a,b +c,d @@"' % (k + 1))
        n_old = int(m.group(2)) if m.group(2) is not None else 1
        n_new = int(m.group(4)) if m.group(4) is not None else 1
        old, new, k = [], [], k + 1
        while k < len(lines) and (len(old) < n_old or len(new) < n_new):
            l = lines[k]
            tag, body = l[:1], l[1:]
            if l.startswith('\\'):  # "\ No newline at end of file"
                k += 1
                continue
            if tag in (' ', '\n'):
                body = body if tag == ' ' else '\n'
                old.append(body)
                new.append(body)
            elif tag == '-':
                old.append(body)
            elif tag == '+':
                new.append(body)
            else:
                raise Bad('line %d: not a line of a hunk' % (k + 1))
            k += 1
        if len(old) != n_old or len(new) != n_new:
            raise Bad('a hunk ends early (line %d)' % k)
        while k < len(lines) and lines[k].startswith('\\'):
            k += 1
        hunks.append((int(m.group(1)), old, new))
    return path, hunks


def apply(src, hunks):
    """src (a list of lines) with the hunks applied; Bad when one matches nowhere"""
    out, pos, shift = list(src), 0, 0
    for start, old, new in hunks:
        want = max(start - 1 + shift, 0) if old else start + shift  # an insertion at line 0 has start 0
        at = None
        for d in range(0, len(out) + 1):  # nearest its stated place first, never before the previous hunk
            for c in (want - d, want + d):
                if pos <= c <= len(out) - len(old) and out[c:c + len(old)] == old:
                    at = c
                    break
            if at is not None:
                break
        if at is None:
            raise Bad('the hunk at line %d matches nowhere: the solution changed under this mutant' % start)
        out[at:at + len(old)] = new
        pos = at + len(new)
        shift += len(new) - len(old) + (at - want)
    return out


def main():
    if len(sys.argv) != 3:
        print('usage: apply.py DIFF OUT', file=sys.stderr)
        return 1
    diff, dest = sys.argv[1], sys.argv[2]
    try:
        path, hunks = parse(open(diff).read())
        src = open(os.path.join(KIT, path)).readlines()
        text = ''.join(apply(src, hunks))
    except (Bad, OSError, UnicodeDecodeError) as e:
        print('apply.py: %s: %s' % (diff, e), file=sys.stderr)
        return 1
    tmp = dest + '.tmp'
    try:
        if os.path.isdir(dest):
            raise IsADirectoryError(21, 'a folder: name the .cu file to write', dest)
        with open(tmp, 'w') as f:
            f.write(text)
        os.replace(tmp, dest)
    except OSError as e:
        print('apply.py: cannot write %s: %s' % (dest, e.strerror), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
