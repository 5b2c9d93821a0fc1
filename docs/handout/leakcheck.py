#!/usr/bin/env python3
"""leakcheck.py SOLUTIONS_DIR TREE - does any reference solution's code appear in TREE? Course staff only.

Every function body in SOLUTIONS_DIR/*/lab.cu is cut into tokens (comments dropped; local names made
anonymous, so that a renamed copy is found too) and searched for in every C, CUDA, header and Markdown file
under TREE: a body of fewer than K tokens must not appear whole, a longer one must share no run of K tokens.
Prints one line per finding and exits 1 if there is any, 0 if none, 2 on bad arguments. K is 40 (about three
lines of code), or XL_LEAK_K.
"""
import os
import re
import sys

TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_]\w*|\d[\w.]*|->|<<|>>|[<>=!+\-*/&|]=|&&|\|\||\+\+|--|\S')
COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/', re.S)
# names that say what the code does: the APIs and the kit's own (kept); every other name is made anonymous
KEEP = re.compile(r'^(cuda\w*|xl_\w*|XL_\w*|lab_\w*|LAB_\w*|kit_\w*|mem\w*|malloc|free|calloc|aligned_alloc|'
                  r'if|else|for|while|do|return|switch|case|break|continue|sizeof|static|const|void|int|long|'
                  r'size_t|double|float|char|unsigned|struct|NULL|nullptr)$')
EXTS = ('.c', '.cu', '.h', '.cuh', '.md', '.py', '.sh', '.gp')


def tokens(text):
    """tokens of C text, comments dropped, local names anonymous"""
    out = []
    for t in TOKEN.findall(COMMENT.sub(' ', text)):
        if (t[0].isalpha() or t[0] == '_') and not KEEP.match(t):
            t = 'ID'
        out.append(t)
    return out


def bodies(text):
    """(name, body text) of every top-level function defined in C text"""
    text = COMMENT.sub(' ', text)
    found = []
    for m in re.finditer(r'(\w+)\s*\([^;{}]*\)\s*\{', text):
        if m.group(1) in ('if', 'for', 'while', 'switch'):
            continue
        depth, i = 0, m.end() - 1
        while i < len(text):
            depth += {'{': 1, '}': -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        found.append((m.group(1), text[m.end():i]))
    return found


def main():
    if len(sys.argv) != 3:
        print('usage: leakcheck.py SOLUTIONS_DIR TREE (two folders: the reference solutions, the tree to search)',
              file=sys.stderr)
        return 2
    for d in sys.argv[1:]:
        if not os.path.isdir(d):
            print('leakcheck: no folder %s (usage: leakcheck.py SOLUTIONS_DIR TREE)' % d, file=sys.stderr)
            return 2
    k = os.environ.get('XL_LEAK_K', '40')
    if not k.isdigit() or int(k) < 1:
        print("leakcheck: XL_LEAK_K is a whole number of tokens, 1 or more (default 40), not '%s'" % k, file=sys.stderr)
        return 2
    k = int(k)
    sols, tree = sys.argv[1], sys.argv[2]
    wanted = []  # (where, token tuple, whole)
    for lab in sorted(os.listdir(sols)):
        path = os.path.join(sols, lab, 'lab.cu')
        if not os.path.isfile(path):
            continue
        for name, body in bodies(open(path, encoding='utf-8', errors='replace').read()):
            t = tokens(body)
            if len(t) < 8:
                continue  # "return 0;" and the like: nothing to leak
            wanted.append(('%s/%s' % (lab, name), t))
    grams = {}  # k-token run -> solution function
    wholes = {}  # a short body -> solution function
    for where, t in wanted:
        if len(t) < k:
            wholes[tuple(t)] = where
        for i in range(len(t) - k + 1):
            grams.setdefault(tuple(t[i:i + k]), where)
    # what every student is given anyway, the skeletons and contracts, is not a leak
    for lab in sorted(os.listdir(os.path.join(tree, 'labs'))) if os.path.isdir(os.path.join(tree, 'labs')) else []:
        for f in ('lab.cu', 'lab.h'):
            path = os.path.join(tree, 'labs', lab, f)
            if os.path.isfile(path):
                t = tokens(open(path, encoding='utf-8', errors='replace').read())
                for i in range(len(t) - k + 1):
                    grams.pop(tuple(t[i:i + k]), None)
                for w in list(wholes):
                    if any(tuple(t[i:i + len(w)]) == w for i in range(len(t))):
                        del wholes[w]
    hits = 0
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in ('.git', 'build'))
        for f in sorted(files):
            if not f.endswith(EXTS):
                continue
            path = os.path.join(root, f)
            t = tokens(open(path, encoding='utf-8', errors='replace').read())
            seen = set()
            for i in range(len(t)):
                g = tuple(t[i:i + k])
                where = grams.get(g)
                if where is None:
                    for n in set(len(w) for w in wholes):
                        where = wholes.get(tuple(t[i:i + n]))
                        if where:
                            break
                if where and where not in seen:
                    seen.add(where)
                    hits += 1
                    print('leak: %s holds code of solutions/%s: %s' % (os.path.relpath(path, tree), where,
                                                                      ' '.join(t[i:i + min(k, 16)])))
    return 1 if hits else 0


if __name__ == '__main__':
    sys.exit(main())
