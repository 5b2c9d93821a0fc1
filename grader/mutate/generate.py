#!/usr/bin/python3
"""generate.py - generated mutants of every lab's reference solution, for grading the graders. Course staff only.

Run with Debian's /usr/bin/python3, which has libclang's bindings (python3-clang): `make mutate-gen`, or
    /usr/bin/python3 grader/mutate/generate.py [--labs "01 05"] [--out build/mutate]
It parses solutions/NN-slug/lab.cu with libclang, applies one mechanical change per mutant (the operators below)
at the byte offsets the parser gives, re-parses each mutant and drops it as stillborn when it no longer compiles
or did not change, and works out from the lab's grader which tests can see each mutant. Per lab it writes
OUT/NN-slug/ID.diff (one change, against solutions/NN-slug/lab.cu; make applies it into ID.cu, as it does a
planted mutant's diff) and manifest.tsv (id, operator, line, function, from, to, tests). grader/mutate/run.py builds and grades them on a
GPU host, which needs no clang. The same sources give the same mutants and IDs (e.g. del-call-L57-1) every run.
"""
import argparse
import ctypes
import difflib
import os
import shutil
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

try:
    import clang.cindex as ci
except ImportError:
    ci = None

# The order is also the priority when two operators make the same mutant: the more specific one keeps it
# (`i < n - 1` is drop-last, not bound; `i < n` from `i <= n` in a loop is drop-last, not rel-op).
OPERATORS = ['del-call', 'stream-arg', 'swap-stream-ops', 'alloc-flags', 'drop-last', 'div-round', 'param-const',
             'rel-op', 'bound']

# Calls that only print: what a program says is not graded, so deleting or changing them tells nothing.
MESSAGE_CALLS = {'printf', 'fprintf', 'vprintf', 'vfprintf', 'perror', 'puts', 'fputs', 'putchar', 'fputc'}

# Calls that release something: two in a row can be swapped without changing anything (swap-stream-ops skips them).
RELEASE_CALLS = {'cudaEventDestroy', 'cudaStreamDestroy', 'cudaFree', 'cudaFreeHost', 'cudaHostUnregister', 'free'}

REL_FLIP = {'<': '<=', '<=': '<', '>': '>=', '>=': '>', '==': '!=', '!=': '=='}
ORDERING = {'<', '<=', '>', '>='}
STREAM_T = 'CUstream_st'  # cudaStream_t points to it
EVENT_T = 'CUevent_st'    # cudaEvent_t points to it


class Fail(Exception):
    """an error for the user: one line, no traceback"""


# ===== libclang =====

def cuda_home():
    """the CUDA Toolkit's folder: $CUDA_HOME, else the one of the nvcc on PATH, else /usr/local/cuda"""
    if os.environ.get('CUDA_HOME'):
        return os.environ['CUDA_HOME']
    nvcc = shutil.which('nvcc')
    return str(Path(nvcc).resolve().parents[1]) if nvcc else '/usr/local/cuda'


def cuda_args():
    """libclang's arguments for a lab.cu: host side of CUDA, the toolkit's headers, the kit's root"""
    home = cuda_home()
    return ['-x', 'cuda', '--cuda-host-only', '-nocudainc', '--cuda-path=' + home, '-Wno-unknown-cuda-version',
            '-include', 'cuda_runtime.h', '-include', str(ROOT / 'grader' / 'mutate' / 'libclang-cuda.h'),
            '-I' + home + '/include', '-I' + str(ROOT)]


def grader_args():
    """libclang's arguments for a grader (C): the toolkit's headers, the kit's root, Criterion's flags"""
    home = cuda_home()
    args = ['-x', 'c', '-std=gnu11', '-I' + home + '/include', '-I' + str(ROOT)]
    bundle = ROOT / 'build' / 'criterion' / 'include'
    if (bundle / 'criterion' / 'criterion.h').is_file():
        args += ['-I' + str(bundle), '-DBXF_STATIC_LIB=1']
    try:
        out = subprocess.run(['pkg-config', '--cflags', 'criterion'], capture_output=True, text=True)
        args += out.stdout.split() if out.returncode == 0 else []
    except OSError:
        pass
    return args


_file_location = None


def file_offset(loc, path):
    """loc's byte offset in path, as written there (a macro argument where it is spelled, a macro's expansion
    where it is used); None when it lies in another file"""
    global _file_location
    if _file_location is None:
        _file_location = ci.conf.lib.clang_getFileLocation
        _file_location.argtypes = [ci.SourceLocation, ctypes.POINTER(ci.c_object_p), ctypes.POINTER(ctypes.c_uint),
                                   ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
        _file_location.restype = None
    f, line, col, off = ci.c_object_p(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    _file_location(loc, ctypes.byref(f), ctypes.byref(line), ctypes.byref(col), ctypes.byref(off))
    if not f or ci.File(f).name != path:
        return None
    return off.value


def errors(tu):
    """the error diagnostics of a translation unit, as one-line strings"""
    return [d.spelling for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]


# ===== A parsed source: positions, macros, a tree of its functions =====

class Macro:
    """one macro expansion in the file: its range and, for a function-like macro, the range of its arguments"""

    def __init__(self, name, start, end, args):
        self.name, self.start, self.end, self.args = name, start, end, args  # args: (start, end) or None


class Node:
    """a cursor of a function's body with its file range (None where it cannot be edited), parent and children"""

    def __init__(self, cursor, span, parent):
        self.cursor, self.kind, self.span, self.parent, self.children = cursor, cursor.kind, span, parent, []

    def walk(self):
        """this node and every node under it, in source order"""
        yield self
        for c in self.children:
            yield from c.walk()


class Func:
    """a function defined in the file: name, range, tree, and the functions it names (calls or pointers)"""

    def __init__(self, name, span, tree, refs):
        self.name, self.span, self.tree, self.refs = name, span, tree, refs


class Source:
    """a lab.cu parsed by libclang: its bytes, macro expansions and functions, and helpers to read and edit it"""

    def __init__(self, index, path):
        self.path = path
        self.text = Path(path).read_bytes()
        opts = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD | ci.TranslationUnit.PARSE_PRECOMPILED_PREAMBLE
        self.tu = index.parse(path, args=cuda_args(), unsaved_files=[(path, self.text)], options=opts)
        errs = errors(self.tu)
        if errs:
            raise Fail('%s does not parse: %s' % (os.path.relpath(path, ROOT), errs[0]))
        self.file = self.tu.get_file(path)
        self.line_starts = [0] + [i + 1 for i, b in enumerate(self.text) if b == 0x0A]
        self.macros = [self._macro(c) for c in self.tu.cursor.get_children()
                       if c.kind == ci.CursorKind.MACRO_INSTANTIATION and c.location.file
                       and c.location.file.name == path]
        self.funcs = []
        self._functions(self.tu.cursor)

    def _macro(self, c):
        """a Macro from a MACRO_INSTANTIATION cursor"""
        toks = self.tokens(c.extent.start.offset, c.extent.end.offset)
        args = None
        if len(toks) >= 3 and toks[1][0] == '(' and toks[-1][0] == ')':
            args = (toks[2][1], toks[-2][2]) if len(toks) > 3 else (toks[1][2], toks[1][2])
        return Macro(c.spelling, c.extent.start.offset, c.extent.end.offset, args)

    def _functions(self, cursor):
        """collects every function defined in this file, looking inside extern "C" and namespaces"""
        for c in cursor.get_children():
            if not c.location.file or c.location.file.name != self.path:
                continue
            if c.kind == ci.CursorKind.FUNCTION_DECL and c.is_definition():
                tree = self._tree(c, None)
                refs = []
                for n in tree.walk():
                    r = n.cursor.referenced if n.kind == ci.CursorKind.DECL_REF_EXPR else None
                    if r is not None and r.kind == ci.CursorKind.FUNCTION_DECL and r.spelling not in refs:
                        refs.append(r.spelling)
                self.funcs.append(Func(c.spelling, tree.span, tree, refs))
            elif c.kind in (ci.CursorKind.LINKAGE_SPEC, ci.CursorKind.UNEXPOSED_DECL, ci.CursorKind.NAMESPACE):
                self._functions(c)

    def _tree(self, cursor, parent):
        """the Node tree under cursor"""
        node = Node(cursor, self.span_of(cursor), parent)
        node.children = [self._tree(c, node) for c in cursor.get_children()]
        return node

    def raw_span(self, cursor):
        """cursor's (start, end) byte range in this file (a macro's body counts as its whole expansion), or None"""
        s = file_offset(cursor.extent.start, self.path)
        e = file_offset(cursor.extent.end, self.path)
        return None if s is None or e is None or e < s else (s, e)

    def span_of(self, cursor):
        """cursor's (start, end) byte range as written in this file, or None when no such range can be edited
        (inside a macro's body, in another file)"""
        r = self.raw_span(cursor)
        return r if r and self.editable(*r) else None

    def editable(self, s, e):
        """1 when [s, e) can be replaced as text: it touches no macro expansion, covers whole ones (an object-like
        one may be covered exactly), or lies within a function-like macro's arguments"""
        for m in self.macros:
            if e <= m.start or s >= m.end:
                continue
            if s <= m.start and e >= m.end and (m.args is None or (s, e) != (m.start, m.end)):
                continue
            if m.args and m.args[0] <= s and e <= m.args[1]:
                continue
            return False
        return True

    def macro_at(self, span):
        """the function-like Macro whose expansion is exactly span, or None"""
        for m in self.macros:
            if m.args and (m.start, m.end) == span:
                return m
        return None

    def tokens(self, s, e):
        """the tokens wholly inside [s, e) of this file, as (spelling, start, end)"""
        rng = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(self.tu, self.file, s),
                                            ci.SourceLocation.from_offset(self.tu, self.file, e))
        out = []
        for t in self.tu.get_tokens(extent=rng):
            ts, te = t.extent.start.offset, t.extent.end.offset
            if s <= ts and te <= e and t.kind != ci.TokenKind.COMMENT:
                out.append((t.spelling, ts, te))
        return out

    def text_of(self, span):
        """the text of span"""
        return self.text[span[0]:span[1]].decode()

    def line(self, off):
        """the 1-based line of byte offset off"""
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= off:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def func_at(self, off):
        """the name of the function whose definition holds byte offset off; '' outside every function"""
        for f in self.funcs:
            if f.span and f.span[0] <= off < f.span[1]:
                return f.name
        return ''


# ===== Reading the tree =====

def collapse(s):
    """s on one line: every run of white space as one space"""
    return ' '.join(s.split())


def strip(n):
    """n without the implicit wrappers libclang shows (a node with one child and the same range)"""
    while n.kind == ci.CursorKind.UNEXPOSED_EXPR and len(n.children) == 1 and n.children[0].span == n.span:
        n = n.children[0]
    return n


# Kinds of cursors and types, filled in by main once clang is imported: expressions that bind at least as
# tightly as a unary operator (no parentheses needed around them), integer and floating types.
PRIMARY, INTEGER_KINDS, FLOAT_KINDS = set(), set(), set()


def wrap(src, n):
    """n's text, in parentheses unless it binds at least as tightly as a unary operator"""
    t = src.text_of(n.span)
    return t if strip(n).kind in PRIMARY else '(' + t + ')'


def canonical(n):
    """the name of the struct n's type points to (CUstream_st for a cudaStream_t); '' when it is no such pointer"""
    t = n.cursor.type.get_canonical()
    return t.get_pointee().get_declaration().spelling if t.kind == ci.TypeKind.POINTER else ''


def is_integer(n):
    """1 when n has an integer type (not an enum, not a pointer)"""
    k = n.cursor.type.get_canonical().kind
    return k in INTEGER_KINDS


def is_arithmetic(n):
    """1 when n has an integer or floating type"""
    k = n.cursor.type.get_canonical().kind
    return k in INTEGER_KINDS or k in FLOAT_KINDS


def call_args(call):
    """the argument nodes of a CALL_EXPR node, or [] when they cannot be told from the callee"""
    nargs = len(list(call.cursor.get_arguments()))
    return call.children[1:] if len(call.children) == nargs + 1 else []


def in_message(n):
    """1 when n lies in the arguments of a call that only prints"""
    p = n.parent
    while p is not None:
        if p.kind == ci.CursorKind.CALL_EXPR and p.cursor.spelling in MESSAGE_CALLS:
            return True
        p = p.parent
    return False


def op_token(src, n):
    """(spelling, start, end) of a binary operator node's operator, or None when it is not written in the file"""
    if len(n.children) != 2 or not n.span:
        return None
    lhs, rhs = n.children
    if not lhs.span or not rhs.span or lhs.span[1] > rhs.span[0]:
        return None
    toks = src.tokens(lhs.span[1], rhs.span[0])
    return toks[0] if len(toks) == 1 else None


def statements(tree):
    """every node that stands as a statement of its own: in a block, as the body of if/for/while/do/case"""
    out = []
    for n in tree.walk():
        if not n.span or not n.children:
            continue
        k = n.kind
        if k == ci.CursorKind.COMPOUND_STMT:
            out += n.children
        elif k == ci.CursorKind.IF_STMT:
            out += n.children[1:]
        elif k in (ci.CursorKind.FOR_STMT, ci.CursorKind.WHILE_STMT, ci.CursorKind.CASE_STMT,
                   ci.CursorKind.DEFAULT_STMT, ci.CursorKind.LABEL_STMT, ci.CursorKind.CXX_FOR_RANGE_STMT):
            out.append(n.children[-1])
        elif k == ci.CursorKind.DO_STMT:
            out.append(n.children[0])
    return [s for s in out if s.kind != ci.CursorKind.COMPOUND_STMT]


def stmt_call(src, s):
    """(range, call) when statement s is one call, bare or as the argument of a macro such as XL_CHECK(...);
    else None. range is what deleting the statement removes (without its ';')."""
    n = strip(s)
    if n.kind == ci.CursorKind.CALL_EXPR and n.span:
        return (n.span, n) if not n.cursor.spelling.startswith('operator') else None  # `a = b` of a C++ struct
    m = src.macro_at(src.raw_span(s.cursor)) if s.span is None else None
    if m is None:
        return None
    for c in s.walk():
        if c.kind == ci.CursorKind.CALL_EXPR and c.span == m.args:
            return (m.start, m.end), c
    return None


def semicolon_after(src, off):
    """the end of the ';' that follows off (white space and comments between), or None"""
    toks = src.tokens(off, min(len(src.text), off + 256))
    return toks[0][2] if toks and toks[0][0] == ';' and toks[0][1] >= off else None


# ===== Operators =====
# Each takes a Lab and returns candidates: replace bytes [start, end) of the solution by new. frm and to are what
# the manifest shows, on one line: the text around the change (the comparison or the call it is in) before and
# after; at is the offset whose line names the mutant.

Cand = namedtuple('Cand', 'op start end new frm to at')


def cand(op, src, s, e, new, ctx=None, frm=None, to=None, at=None):
    """one candidate mutant: replace [s, e) of src by new; ctx, a range around [s, e), is what from and to show"""
    cs, ce = ctx or (s, e)
    if frm is None:
        frm, to = src.text[cs:ce].decode(), (src.text[cs:s] + new.encode() + src.text[e:ce]).decode()
    return Cand(op, s, e, new, collapse(frm), collapse(to), s if at is None else at)


def op_del_call(lab):
    """del-call - deletes a statement that is one call (also inside XL_CHECK(...)): syncs, waits, records, frees,
    destroys, memsets, the lab's own calls and callbacks; never a call that only prints"""
    src, out = lab.src, []
    for f in src.funcs:
        for s in statements(f.tree):
            got = stmt_call(src, s)
            if not got or got[1].cursor.spelling in MESSAGE_CALLS or in_message(got[1]):
                continue
            (a, b), _ = got
            end = semicolon_after(src, b)
            if end is None:
                continue
            out.append(cand('del-call', src, a, end, ';'))
    return out


def stream_choices(lab, f, call, arg):
    """the other stream expressions a stream argument could name: 0, cudaStreamPerThread, the function's stream
    parameters and locals declared before the call, the stream fields and elements it uses, X[0] for X[i]"""
    src = lab.src
    own = collapse(src.text_of(arg.span))
    out = ['0', 'cudaStreamPerThread']
    for n in f.tree.walk():
        if n.kind == ci.CursorKind.PARM_DECL and canonical(n) == STREAM_T:
            out.append(n.cursor.spelling)
        elif n.kind == ci.CursorKind.VAR_DECL and canonical(n) == STREAM_T and n.span and n.span[0] < call.span[0]:
            block = n.parent.parent if n.parent is not None else None
            if block is not None and block.span and block.span[0] <= call.span[0] < block.span[1]:
                out.append(n.cursor.spelling)
    for n in f.tree.walk():
        m = strip(n)
        if m.span and canonical(n) == STREAM_T and m.kind in (ci.CursorKind.MEMBER_REF_EXPR,
                                                              ci.CursorKind.ARRAY_SUBSCRIPT_EXPR) \
                and not in_message(n):
            out.append(collapse(src.text_of(m.span)))
    a = strip(arg)
    if a.kind == ci.CursorKind.ARRAY_SUBSCRIPT_EXPR and len(a.children) == 2 and a.children[0].span:
        out.append(collapse(src.text_of(a.children[0].span)) + '[0]')
    seen, choices = {own}, []
    for c in out:
        if c not in seen:
            seen.add(c)
            choices.append(c)
    return choices


def op_stream_arg(lab):
    """stream-arg - puts another stream in place of a call's cudaStream_t argument (see stream_choices)"""
    src, out = lab.src, []
    for f in src.funcs:
        for n in f.tree.walk():
            if n.kind != ci.CursorKind.CALL_EXPR or not n.span or n.cursor.spelling in MESSAGE_CALLS:
                continue
            for arg in call_args(n):
                if arg.span and canonical(arg) == STREAM_T:
                    for c in stream_choices(lab, f, n, arg):
                        out.append(cand('stream-arg', src, arg.span[0], arg.span[1], c, ctx=n.span))
    return out


def stream_funcs(src):
    """the functions of src that, themselves or through the functions they call, queue work on a stream"""
    direct = set()
    for f in src.funcs:
        for n in f.tree.walk():
            if n.kind == ci.CursorKind.CALL_EXPR and any(canonical(a) in (STREAM_T, EVENT_T) for a in call_args(n)):
                direct.add(f.name)
    names = {f.name: f for f in src.funcs}
    return {f.name for f in src.funcs if closure(names, f.name) & direct}


def op_swap_stream_ops(lab):
    """swap-stream-ops - swaps two adjacent statements of one block that both queue stream work (a call taking a
    stream or an event, or one of the lab's functions that does); not two releases (destroy, free), which commute"""
    src, out = lab.src, []
    queues = stream_funcs(src)

    def stream_op(s):
        """(range, callee) of statement s when it is a stream operation, else None"""
        got = stmt_call(src, s)
        if not got:
            return None
        call = got[1]
        if call.cursor.spelling in queues or any(canonical(a) in (STREAM_T, EVENT_T) for a in call_args(call)):
            return got[0], call.cursor.spelling
        return None

    for f in src.funcs:
        for n in f.tree.walk():
            if n.kind != ci.CursorKind.COMPOUND_STMT or not n.span:
                continue
            for a, b in zip(n.children, n.children[1:]):
                oa, ob = stream_op(a), stream_op(b)
                if oa and ob and not (oa[1] in RELEASE_CALLS and ob[1] in RELEASE_CALLS):
                    (ra, _), (rb, _) = oa, ob
                    ta, tb = src.text_of(ra), src.text_of(rb)
                    between = src.text[ra[1]:rb[0]].decode()
                    out.append(cand('swap-stream-ops', src, ra[0], rb[1], tb + between + ta,
                                    frm=ta + '; ' + tb + ';', to=tb + '; ' + ta + ';'))
    return out


HOST_ALLOC_FLAGS = ['cudaHostAllocDefault', 'cudaHostAllocWriteCombined', 'cudaHostAllocMapped',
                    'cudaHostAllocPortable']
REGISTER_FLAGS = ['cudaHostRegisterDefault', 'cudaHostRegisterPortable', 'cudaHostRegisterMapped',
                  'cudaHostRegisterReadOnly']


def op_alloc_flags(lab):
    """alloc-flags - other flags for pinned memory and streams: cudaMallocHost -> cudaHostAlloc with each flag,
    cudaHostAlloc's and cudaHostRegister's flags changed, cudaStreamNonBlocking -> cudaStreamDefault"""
    src, out = lab.src, []
    for f in src.funcs:
        for n in f.tree.walk():
            if n.kind != ci.CursorKind.CALL_EXPR or not n.span:
                continue
            args = [a for a in call_args(n) if src.raw_span(a.cursor)]  # as written: no default arguments
            if not args or not all(a.span for a in args):
                continue
            name, texts = n.cursor.spelling, [src.text_of(a.span) for a in args]
            if name == 'cudaMallocHost' and len(args) == 2:
                for flag in HOST_ALLOC_FLAGS[1:]:
                    out.append(cand('alloc-flags', src, n.span[0], n.span[1],
                                    'cudaHostAlloc(%s, %s, %s)' % (texts[0], texts[1], flag)))
            elif name in ('cudaHostAlloc', 'cudaHostRegister') and len(args) == 3:
                flags = HOST_ALLOC_FLAGS if name == 'cudaHostAlloc' else REGISTER_FLAGS
                for flag in flags:
                    if flag != collapse(texts[2]):
                        out.append(cand('alloc-flags', src, args[2].span[0], args[2].span[1], flag, ctx=n.span))
            elif name == 'cudaStreamCreateWithFlags' and len(args) == 2 and \
                    collapse(texts[1]) == 'cudaStreamNonBlocking':
                out.append(cand('alloc-flags', src, args[1].span[0], args[1].span[1], 'cudaStreamDefault', ctx=n.span))
    return out


def comparisons(src):
    """(function, node, (op, start, end)) for every comparison written in a function, outside messages"""
    out = []
    for f in src.funcs:
        for n in f.tree.walk():
            if n.kind == ci.CursorKind.BINARY_OPERATOR and n.span and not in_message(n):
                t = op_token(src, n)
                if t and t[0] in REL_FLIP:
                    out.append((f, n, t))
    return out


def op_rel_op(lab):
    """rel-op - flips a comparison: < and <=, > and >=, == and !="""
    src = lab.src
    return [cand('rel-op', src, t[1], t[2], REL_FLIP[t[0]], ctx=n.span) for _, n, t in comparisons(src)]


def op_bound(lab):
    """bound - moves the right-hand side of an ordering comparison (<, <=, >, >=) of numbers by +1 and by -1
    (== and != are left to rel-op: a bound moved by one there is rarely a mistake anyone makes)"""
    src, out = lab.src, []
    for _, n, t in comparisons(src):
        lhs, rhs = n.children
        if t[0] in ORDERING and rhs.span and is_arithmetic(lhs) and is_arithmetic(rhs):
            for d in (' + 1', ' - 1'):
                out.append(cand('bound', src, rhs.span[0], rhs.span[1], wrap(src, rhs) + d, ctx=n.span, at=t[1]))
    return out


def ceil_form(src, lhs, rhs):
    """the a of a rounding-up division (a + b - 1) / b, as a node, or None"""
    p = strip(lhs)
    if p.kind != ci.CursorKind.PAREN_EXPR or len(p.children) != 1:
        return None
    minus = strip(p.children[0])
    if minus.kind != ci.CursorKind.BINARY_OPERATOR or (op_token(src, minus) or ('',))[0] != '-':
        return None
    one = strip(minus.children[1])
    if one.kind != ci.CursorKind.INTEGER_LITERAL or not one.span or src.text_of(one.span) != '1':
        return None
    plus = strip(minus.children[0])
    if plus.kind != ci.CursorKind.BINARY_OPERATOR or (op_token(src, plus) or ('',))[0] != '+':
        return None
    a, b = plus.children
    if not a.span or not b.span or collapse(src.text_of(b.span)) != collapse(src.text_of(rhs.span)):
        return None
    return a


def op_div_round(lab):
    """div-round - rounds a division the other way: (a + b - 1) / b -> a / b, an integer a / b ->
    (a + b - 1) / b, ceil(x) <-> floor(x)"""
    src, out = lab.src, []
    swap = {'ceil': 'floor', 'floor': 'ceil', 'ceilf': 'floorf', 'floorf': 'ceilf', 'ceill': 'floorl',
            'floorl': 'ceill'}
    for f in src.funcs:
        for n in f.tree.walk():
            if not n.span or in_message(n):
                continue
            if n.kind == ci.CursorKind.CALL_EXPR and n.cursor.spelling in swap and n.children:
                callee = strip(n.children[0])
                if callee.span and src.text_of(callee.span) == n.cursor.spelling:
                    out.append(cand('div-round', src, callee.span[0], callee.span[1], swap[n.cursor.spelling],
                                    ctx=n.span))
            elif n.kind == ci.CursorKind.BINARY_OPERATOR:
                t = op_token(src, n)
                if not t or t[0] != '/' or not is_integer(n.children[0]) or not is_integer(n.children[1]):
                    continue
                lhs, rhs = n.children
                a = ceil_form(src, lhs, rhs)
                if a is not None:
                    new = '%s / %s' % (wrap(src, a), src.text_of(rhs.span))
                else:
                    b = src.text_of(rhs.span)
                    new = '(%s + %s - 1) / %s' % (src.text_of(lhs.span), b, b)
                out.append(cand('div-round', src, n.span[0], n.span[1], new))
    return out


def lab_enum_values(n):
    """the enumerators of n's type when it is an enum of the lab's own header; [] otherwise"""
    decl = n.cursor.type.get_canonical().get_declaration()
    if decl.kind != ci.CursorKind.ENUM_DECL or not decl.location.file:
        return []
    if not decl.location.file.name.startswith(str(ROOT / 'labs')):
        return []
    return [c.spelling for c in decl.get_children() if c.kind == ci.CursorKind.ENUM_CONSTANT_DECL]


def for_parts(src, n):
    """(condition, increment) nodes of a FOR_STMT node, each None when absent, told apart by the ';' tokens"""
    body = n.children[-1]
    if not n.span or not body.span:
        return None, None
    semis, depth = [], 0
    for tok, s, _ in src.tokens(n.span[0], body.span[0]):
        depth += tok == '('
        depth -= tok == ')'
        if tok == ';' and depth == 1:
            semis.append(s)
    if len(semis) != 2:
        return None, None
    cond = next((c for c in n.children[:-1] if c.span and semis[0] < c.span[0] < semis[1]), None)
    inc = next((c for c in n.children[:-1] if c.span and c.span[0] > semis[1]), None)
    return cond, inc


def loop_bounds(f, src):
    """the right-hand sides of for-loop conditions in f, as a set of node ranges"""
    out = set()
    for n in f.tree.walk():
        if n.kind == ci.CursorKind.FOR_STMT:
            cond, _ = for_parts(src, n)
            for c in (cond.walk() if cond else []):
                if c.kind == ci.CursorKind.BINARY_OPERATOR and len(c.children) == 2 and c.children[1].span:
                    out.add(c.children[1].span)
    return out


def op_param_const(lab):
    """param-const - puts a constant (1 and 2; each enumerator for an enum of the lab's header) in place of an
    integer parameter where it flows out: as a call's argument or a for-loop's bound. To keep the count sensible
    only the first and the last such use of each parameter are changed, never in messages, never CUDA's enums."""
    src, out = lab.src, []
    for f in src.funcs:
        bounds = loop_bounds(f, src)
        params = [n for n in f.tree.children if n.kind == ci.CursorKind.PARM_DECL]
        for p in params:
            consts = ['1', '2'] if is_integer(p) else lab_enum_values(p)
            if not consts:
                continue
            uses = []
            for n in f.tree.walk():
                if n.kind != ci.CursorKind.DECL_REF_EXPR or not n.span or in_message(n):
                    continue
                r = n.cursor.referenced
                if r is None or r.kind != ci.CursorKind.PARM_DECL or r.spelling != p.cursor.spelling:
                    continue
                up = n
                while up.parent is not None and up.parent.kind in (ci.CursorKind.UNEXPOSED_EXPR,
                                                                   ci.CursorKind.PAREN_EXPR) and \
                        len(up.parent.children) == 1:
                    up = up.parent
                as_arg = up.parent is not None and up.parent.kind == ci.CursorKind.CALL_EXPR and \
                    up in call_args(up.parent) and up.parent.cursor.spelling not in MESSAGE_CALLS
                if as_arg or up.span in bounds or n.span in bounds:
                    uses.append((n, up.parent.span))
            for n, ctx in ([uses[0], uses[-1]] if len(uses) > 1 else uses):
                for c in consts:
                    if c != src.text_of(n.span):
                        out.append(cand('param-const', src, n.span[0], n.span[1], c, ctx=ctx))
    return out


def op_drop_last(lab):
    """drop-last - drops a for loop's last iteration: i < n -> i < n - 1, i <= n -> i < n (i: what the loop's
    increment changes)"""
    src, out = lab.src, []
    for f in src.funcs:
        for n in f.tree.walk():
            if n.kind != ci.CursorKind.FOR_STMT:
                continue
            cond, inc = for_parts(src, n)
            if cond is None or inc is None:
                continue
            stepped = {c.cursor.referenced.spelling for c in inc.walk()
                       if c.kind == ci.CursorKind.DECL_REF_EXPR and c.cursor.referenced is not None}
            todo = [cond]
            while todo:
                c = strip(todo.pop(0))
                t = op_token(src, c) if c.kind == ci.CursorKind.BINARY_OPERATOR else None
                if not t:
                    continue
                if t[0] == '&&':
                    todo += c.children
                    continue
                lhs, rhs = strip(c.children[0]), c.children[1]
                if lhs.kind != ci.CursorKind.DECL_REF_EXPR or lhs.cursor.spelling not in stepped or not rhs.span:
                    continue
                if t[0] == '<':
                    out.append(cand('drop-last', src, rhs.span[0], rhs.span[1], wrap(src, rhs) + ' - 1', ctx=c.span,
                                    at=t[1]))
                elif t[0] == '<=':
                    out.append(cand('drop-last', src, t[1], t[2], '<', ctx=c.span))
    return out


OPERATOR_FUNCS = {'del-call': op_del_call, 'stream-arg': op_stream_arg, 'swap-stream-ops': op_swap_stream_ops,
                  'alloc-flags': op_alloc_flags, 'drop-last': op_drop_last, 'div-round': op_div_round,
                  'param-const': op_param_const, 'rel-op': op_rel_op, 'bound': op_bound}


# ===== Selection: which tests can see a mutant =====

def closure(funcs, name):
    """the names of the functions of funcs that name reaches, itself included (calls and pointers, transitively)"""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in seen or n not in funcs:
            continue
        seen.add(n)
        todo += funcs[n].refs
    return seen


def grader_tests(index, path):
    """{'suite.name': {lab_ functions its body names, through the grader's own functions, pointers to them and
    its file-scope variables}} for one grader file"""
    tu = index.parse(str(path), args=grader_args(), options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    errs = errors(tu)
    if errs:
        raise Fail('%s does not parse: %s' % (os.path.relpath(path, ROOT), errs[0]))
    names = {}  # xl_body_<suite>_<name> -> suite.name, from the XL_TEST(suite, name, ...) expansions
    for c in tu.cursor.get_children():
        if c.kind == ci.CursorKind.MACRO_INSTANTIATION and c.spelling in ('XL_TEST', 'XL_TEST_SHOWN') and \
                c.location.file and c.location.file.name == str(path):
            toks = [t.spelling for t in c.get_tokens()]
            if len(toks) > 5 and toks[1] == '(' and toks[3] == ',':
                names['xl_body_%s_%s' % (toks[2], toks[4])] = '%s.%s' % (toks[2], toks[4])
    defs = {}
    for c in tu.cursor.get_children():
        if c.location.file and c.location.file.name == str(path) and c.is_definition() and \
                c.kind in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.VAR_DECL):
            defs[c.spelling] = c
    memo = {}

    def reached(name, stack):
        """the lab_ functions that the grader's definition name reaches"""
        if name in memo:
            return memo[name]
        if name in stack:
            return set()
        stack.add(name)
        out = set()
        for n in defs[name].walk_preorder():
            if n.kind != ci.CursorKind.DECL_REF_EXPR or n.referenced is None:
                continue
            r = n.referenced
            if r.kind == ci.CursorKind.FUNCTION_DECL and r.spelling.startswith('lab_'):
                out.add(r.spelling)
            elif r.spelling in defs and r.spelling != name and r.kind in (ci.CursorKind.FUNCTION_DECL,
                                                                            ci.CursorKind.VAR_DECL):
                out |= reached(r.spelling, stack)
        stack.discard(name)
        memo[name] = out
        return out

    tests = {}
    for body, test in names.items():
        if body not in defs:
            raise Fail('%s: no body for test %s' % (os.path.relpath(path, ROOT), test))
        tests[test] = reached(body, set())
    if not tests:
        raise Fail('%s: no XL_TEST found' % os.path.relpath(path, ROOT))
    return tests


def select(lab, tests):
    """{function of the solution: sorted tests that reach it}, and every test for code outside functions"""
    funcs = {f.name: f for f in lab.src.funcs}
    reach = {name: closure(funcs, name) for name in funcs}
    seen = {}
    for f in funcs:
        seen[f] = sorted(t for t, refs in tests.items() if any(f in reach[g] for g in refs if g in reach))
    seen[''] = sorted(tests)
    return seen


# ===== One lab =====

class Lab:
    """one lab's solution, parsed, and what was generated from it"""

    def __init__(self, index, slug):
        self.slug = slug
        self.rel = 'solutions/%s/lab.cu' % slug
        self.src = Source(index, str(ROOT / self.rel))


def make_mutants(lab):
    """the lab's candidate mutants, ordered and with IDs: a list of dicts; duplicates dropped (count returned)"""
    cands = []
    for op in OPERATORS:
        cands += OPERATOR_FUNCS[op](lab)
    src = lab.src
    rank = {op: i for i, op in enumerate(OPERATORS)}
    best = {}  # mutated text -> (index, candidate): the same mutant twice is kept once, by the first operator
    for i, c in enumerate(cands):
        text = src.text[:c.start] + c.new.encode() + src.text[c.end:]
        if text not in best or rank[c.op] < rank[best[text][1].op]:
            best[text] = (i, c)
    kept = sorted(best.items(), key=lambda kv: (kv[1][1].at, kv[1][1].start, rank[kv[1][1].op], kv[1][0]))
    dups = len(cands) - len(kept)
    per, out, shown = {}, [], {}
    for text, (_, c) in kept:
        line = src.line(c.at)
        per[(c.op, line)] = per.get((c.op, line), 0) + 1
        m = {'id': '%s-L%d-%d' % (c.op, line, per[(c.op, line)]), 'operator': c.op, 'line': line,
             'function': src.func_at(c.at), 'from': c.frm, 'to': c.to, 'text': text, 'range': (c.start, c.end)}
        out.append(m)
        shown.setdefault((m['operator'], line, m['from'], m['to']), []).append(m)
    for same in shown.values():  # the same change twice on a line: show the whole lines, which differ
        if len(same) > 1:
            for m in same:
                m['from'], m['to'] = changed_lines(src, m)
    return out, dups


def changed_lines(src, m):
    """(from, to): the whole lines a mutant changes, before and after, on one line each"""
    s, e = m['range']
    a = src.line_starts[src.line(s) - 1]
    b = src.text.find(b'\n', e)
    b = len(src.text) if b < 0 else b
    tail = len(src.text) - b
    return collapse(src.text[a:b].decode()), collapse(m['text'][a:len(m['text']) - tail].decode())


def check(lab, mutants):
    """(alive, stillborn): stillborn mutants are equal to the solution or have an error when parsed again"""
    src = lab.src
    alive, dead = [], []
    for m in mutants:
        if m['text'] == src.text:
            dead.append((m, 'no change'))
            continue
        src.tu.reparse(unsaved_files=[(src.path, m['text'])])
        errs = errors(src.tu)
        (dead.append((m, errs[0])) if errs else alive.append(m))
    src.tu.reparse(unsaved_files=[(src.path, src.text)])
    return alive, dead


def write_if_changed(path, data):
    """writes data to path unless it already holds exactly that (keeps the time, so make rebuilds nothing)"""
    if path.is_file() and path.read_bytes() == data:
        return
    path.write_bytes(data)


def write(lab, mutants, seen, out):
    """OUT/NN-slug/: one ID.diff per mutant (make applies it to make ID.cu, as it does a planted mutant's) and
    manifest.tsv; removes the diffs, sources and objects of mutants no longer made"""
    d = out / lab.slug
    d.mkdir(parents=True, exist_ok=True)
    orig = lab.src.text.decode().splitlines(keepends=True)
    rows = ['id\toperator\tline\tfunction\tfrom\tto\ttests\n']
    keep = set()
    for m in mutants:
        diff = difflib.unified_diff(orig, m['text'].decode().splitlines(keepends=True), lab.rel, lab.rel)
        write_if_changed(d / (m['id'] + '.diff'), ''.join(diff).encode())
        keep |= {m['id'] + '.cu', m['id'] + '.diff'}
        tests = seen.get(m['function'], seen[''])
        rows.append('\t'.join([m['id'], m['operator'], str(m['line']), m['function'], m['from'], m['to'],
                               ','.join(tests)]) + '\n')
    for p in d.iterdir():
        if p.is_file() and p.suffix in ('.cu', '.diff') and p.name not in keep:
            p.unlink()
            for built in (d / 'obj' / (p.stem + '.o'), d / 'bin' / p.stem):
                if built.is_file():
                    built.unlink()
    write_if_changed(d / 'manifest.tsv', ''.join(rows).encode())


def generate_lab(index, slug, out):
    """generates one lab into out/slug/ and prints its counts; returns the mutants written"""
    lab = Lab(index, slug)
    tests = {}
    for g in (ROOT / 'grader' / (slug + '.c'), ROOT / 'grader' / 'hidden' / (slug + '.c')):
        if g.is_file():
            tests.update(grader_tests(index, g))
    if not tests:
        raise Fail('no grader for %s (grader/%s.c)' % (slug, slug))
    mutants, dups = make_mutants(lab)
    alive, dead = check(lab, mutants)
    write(lab, alive, select(lab, tests), out)
    counts = {op: sum(m['operator'] == op for m in alive) for op in OPERATORS}
    print('%s: %d mutants (%s); %d stillborn, %d duplicates dropped' % (
        slug, len(alive), ', '.join('%s %d' % (op, counts[op]) for op in OPERATORS), len(dead), dups))
    if dead:
        print('  stillborn: ' + '; '.join('%s (%s)' % (m['id'], why) for m, why in dead))
    return alive


# ===== Main =====

def find_labs(want):
    """the slugs asked for ('1', '01' or '01-pageable-copy', space or comma separated; all when empty)"""
    slugs = sorted(p.name for p in (ROOT / 'solutions').iterdir()
                   if (p / 'lab.cu').is_file() and (ROOT / 'labs' / p.name).is_dir()) \
        if (ROOT / 'solutions').is_dir() else []
    if not slugs:
        raise Fail('no reference solutions here (solutions/NN-slug/lab.cu): generate where the kit has them')
    if not want.strip():
        return slugs
    out = []
    for w in want.replace(',', ' ').split():
        hit = [s for s in slugs if s == w or (w.isdigit() and int(w) == int(s.split('-')[0]))]
        if not hit:
            raise Fail('no lab %s (labs: %s)' % (w, ' '.join(s.split('-')[0] for s in slugs)))
        out += [h for h in hit if h not in out]
    return out


def main():
    """parses the options, generates every lab asked for, prints the counts; exit 0, or 1 with one line"""
    ap = argparse.ArgumentParser(description='Generate mutants of the labs\' reference solutions (course staff).')
    ap.add_argument('--labs', default='', help='labs to generate, e.g. "01 05" (default: all)')
    ap.add_argument('--out', default='build/mutate', help='where to write (default: build/mutate)')
    ap.add_argument('--operators', action='store_true', help='print the operators, one per line, and stop')
    ap.error = lambda msg: ap.exit(2, 'generate: %s (--help lists the options)\n' % msg)  # one line, no usage dump
    a = ap.parse_args()
    if a.operators:
        print('\n'.join(OPERATORS))
        return 0
    slugs = find_labs(a.labs)  # a lab that is not there is told with or without libclang
    if ci is None:
        raise Fail('needs libclang\'s Python bindings: run it with /usr/bin/python3 where python3-clang is '
                   'installed (sudo apt-get install python3-clang)')
    K, T = ci.CursorKind, ci.TypeKind
    PRIMARY.update({K.DECL_REF_EXPR, K.MEMBER_REF_EXPR, K.INTEGER_LITERAL, K.FLOATING_LITERAL, K.CALL_EXPR,
                    K.ARRAY_SUBSCRIPT_EXPR, K.PAREN_EXPR, K.CHARACTER_LITERAL, K.STRING_LITERAL, K.CXX_UNARY_EXPR,
                    K.CXX_BOOL_LITERAL_EXPR, K.UNARY_OPERATOR, K.CSTYLE_CAST_EXPR})
    INTEGER_KINDS.update({T.CHAR_U, T.UCHAR, T.USHORT, T.UINT, T.ULONG, T.ULONGLONG, T.CHAR_S, T.SCHAR, T.SHORT,
                          T.INT, T.LONG, T.LONGLONG})
    FLOAT_KINDS.update({T.FLOAT, T.DOUBLE, T.LONGDOUBLE})
    out = Path(a.out) if Path(a.out).is_absolute() else Path.cwd() / a.out
    os.chdir(ROOT)
    index = ci.Index.create()
    total = {op: 0 for op in OPERATORS}
    failed = []
    for slug in slugs:
        try:
            alive = generate_lab(index, slug, out)
        except Fail as e:  # one lab that does not parse leaves the others to be generated
            print('generate: %s' % e, file=sys.stderr)
            failed.append(slug)
            continue
        for m in alive:
            total[m['operator']] += 1
    print('all: %d mutants (%s) in %s' % (sum(total.values()), ', '.join('%s %d' % (op, total[op]) for op in OPERATORS),
                                          os.path.relpath(out, ROOT) if str(out).startswith(str(ROOT)) else out))
    if failed:
        raise Fail('%d lab%s not generated: %s' % (len(failed), 's' * (len(failed) > 1), ' '.join(failed)))
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Fail as e:
        print('generate: %s' % e, file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # a bug here, or a libclang that does not behave: one line, no traceback
        print('generate: %s: %s' % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)
