#!/usr/bin/env python3
"""studentmd.py FILE... - rewrites Markdown files in place for the student tree (make handout; course staff only).

A student tree has no reference solutions, so what only the full kit can do is left out of its pages:
- text between <!-- staff --> and <!-- /staff --> (within a line or across lines), markers included;
- a line of a fenced code block that runs IMPL=solution.
Exit 0; 2 with one line when a file cannot be read or written, or a staff span is not closed.
"""
import re
import sys

SPAN = re.compile(r'<!-- staff -->.*?<!-- /staff -->', re.S)


def for_students(text):
    """text without its staff spans and its code blocks' IMPL=solution lines; None when a span is left open"""
    text = SPAN.sub('', text)
    if '<!-- staff -->' in text or '<!-- /staff -->' in text:
        return None
    out, fenced = [], False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith('```'):
            fenced = not fenced
        elif fenced and 'IMPL=solution' in line:
            continue
        out.append(line)
    return ''.join(out)


def main(paths):
    for path in paths:
        try:
            with open(path, encoding='utf-8') as f:
                text = for_students(f.read())
            if text is None:
                print('studentmd: %s: a <!-- staff --> span is not closed by <!-- /staff -->' % path, file=sys.stderr)
                return 2
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
        except OSError as e:
            print('studentmd: %s: %s' % (path, e.strerror), file=sys.stderr)
            return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
