#!/usr/bin/env python3
"""run.py - builds and grades the generated mutants of the reference solutions on a GPU host: each is killed,
survived, equivalent or stillborn, and each lab gets a score. Course staff only; standard library only (a GPU
host may have nothing but python3, nvcc, make and the kit's Criterion bundle).

    python3 grader/mutate/run.py [--labs "01 05"] [--sample N] [--jobs J] [--gpu-jobs G] [--out build/mutate]

It reads OUT/NN-slug/manifest.tsv, which grader/mutate/generate.py writes where python3-clang is installed
(`make mutate-gen`; carry build/mutate to the GPU host). Then: (1) builds every mutant's grader with make
(grader/mutate/mutate.mk); one that does not compile is stillborn. (2) Grades the reference test by test, timing
each; a lab whose reference loses a point is left out (the GPU is not fit to judge). (3) Runs each mutant's
tests (the manifest's `tests`: those that reach the changed function), fastest first, each limited to
max(5 s, 3 x the reference's time + 2 s); the first that takes all its points, times out or gives no results
kills it (a speed test that leaves it part of its points under partial credit does not).
The tests that time nothing run for --gpu-jobs mutants at once; the timed ones (XL_TIMED), and any test that ran
out of time beside the others, then run for one mutant at a time with the GPU to itself.
A mutant no test kills survived, or is equivalent when grader/mutants/NN-slug/equivalent.txt lists it; a listed
mutant that a test kills is named as a wrong entry.
A test that needs two GPUs (kind XL_TWO_GPUS: SKIPPED with a reason starting "needs 2 GPUs") cannot run on a host
with one: the reference is judged on the rest, and a mutant that survives every test run here while some of its
tests were such is unreached here: neither killed nor survived, left out of the score and counted in the report.
(4) Writes OUT/report.txt and OUT/report.csv (grader/mutate/report.py; --report-dir DIR puts them elsewhere)
and prints a table per lab.
--sample N grades a fixed sample of N mutants per lab, spread over the operators. --check-equivalent only checks
that every line of each equivalent.txt matches exactly one mutant of the manifests.
Exit 0; 1 when a lab could not be judged or an equivalent.txt is wrong; 2 on bad usage, no manifests or no GPU.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'report'))  # after this folder's
import report  # noqa: E402  (beside this file: make mutate's report, not the page of grader/report/)
import ratiolog  # noqa: E402  (grader/report/: the ratio log's format)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
MANIFEST_COLUMNS = ['id', 'operator', 'line', 'function', 'from', 'to', 'tests']
REFERENCE_LIMIT_S = 900  # a reference test that runs longer is stuck; every grader test has its own shorter timeout
TWO_GPUS_SKIP = 'needs 2 GPUs'  # how the reason of a test skipped for a second GPU starts (grader/grade.c)


class Fail(Exception):
    """an error for the user: one line, no traceback; code is the exit status"""

    def __init__(self, msg, code=2):
        super().__init__(msg)
        self.code = code


# ===== Manifests, equivalents, the sample =====

def read_ids(path):
    """the (slug, id) pairs listed in path, one "NN-slug ID" per line (# comments and empty lines skipped)"""
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise Fail('cannot read --ids %s: %s' % (path, e.strerror))
    pairs = set()
    for n, ln in enumerate(lines, 1):
        f = ln.split('#', 1)[0].split()
        if not f:
            continue
        if len(f) != 2:
            raise Fail('%s:%d: need "NN-slug ID", got %r' % (path, n, ln))
        pairs.add((f[0], f[1]))
    return pairs


def manifest_labs(out, want):
    """the slugs with a manifest in out, limited to want ('1', '01' or '01-pageable-copy'; all when empty)"""
    have = sorted(d for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, 'manifest.tsv'))) \
        if os.path.isdir(out) else []
    if not have:
        raise Fail('no generated mutants in %s/: run `make mutate-gen` where python3-clang is installed, '
                   'and carry %s/ here' % (rel(out), rel(out)))
    if not want.strip():
        return have
    picked = []
    for w in want.replace(',', ' ').split():
        hit = [s for s in have if s == w or (w.isdigit() and s[:2].isdigit() and int(w) == int(s[:2]))]
        if not hit:
            raise Fail('no manifest for lab %s in %s/ (there: %s); run `make mutate-gen LAB=%s`' % (
                w, rel(out), ' '.join(s[:2] for s in have), w))
        picked += [h for h in hit if h not in picked]
    return picked


def load_manifest(out, slug):
    """the rows of OUT/slug/manifest.tsv as dicts (tests as a list)"""
    path = os.path.join(out, slug, 'manifest.tsv')
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or lines[0].split('\t') != MANIFEST_COLUMNS:
        raise Fail('%s is not a manifest of generate.py (header %s)' % (rel(path), ' '.join(MANIFEST_COLUMNS)))
    rows = []
    for n, ln in enumerate(lines[1:], 2):
        f = ln.split('\t')
        if len(f) != len(MANIFEST_COLUMNS):
            raise Fail('%s:%d: needs %d tab-separated fields' % (rel(path), n, len(MANIFEST_COLUMNS)))
        r = dict(zip(MANIFEST_COLUMNS, f))
        r['tests'] = [t for t in r['tests'].split(',') if t]
        r['lab'] = slug
        rows.append(r)
    return rows


def load_equivalent(eq_dir, slug):
    """(path, [(line number, operator, line, from, to, reason)], [problems]) of eq_dir/slug/equivalent.txt"""
    path = os.path.join(eq_dir, slug, 'equivalent.txt')
    entries, problems = [], []
    if not os.path.isfile(path):
        return path, entries, problems
    with open(path) as f:
        for n, ln in enumerate(f.read().splitlines(), 1):
            if not ln.strip() or ln.startswith('#'):
                continue
            parts = ln.split('\t')
            if len(parts) != 5 or not parts[4].strip():
                problems.append('%s:%d: needs 5 tab-separated fields: operator, line, from, to, reason' % (
                    rel(path), n))
                continue
            entries.append((n,) + tuple(parts))
    return path, entries, problems


def match_equivalent(mutants, entries, path):
    """({mutant id: reason} for the entries that match exactly one mutant, [problems])"""
    found, problems = {}, []
    for n, op, line, frm, to, reason in entries:
        hits = [m for m in mutants if (m['operator'], m['line'], m['from'], m['to']) == (op, line, frm, to)]
        if len(hits) == 1:
            found[hits[0]['id']] = reason
        else:
            problems.append('%s:%d: matches %d generated mutants, not 1 (%s at line %s)' % (
                rel(path), n, len(hits), op, line))
    return found, problems


def sample(mutants, n, slug):
    """a fixed sample of n mutants spread over the operators: in turn one of each operator (their order and the
    order within one are fixed by hashes of the lab and the ids), kept in manifest order"""
    def h(s):
        return hashlib.sha1(s.encode()).hexdigest()
    by_op = {}
    for m in mutants:
        by_op.setdefault(m['operator'], []).append(m)
    for op in by_op:
        by_op[op].sort(key=lambda m: h(m['id']))
    ops = sorted(by_op, key=lambda op: h(slug + op))
    picked = set()
    while len(picked) < n and any(by_op.values()):
        for op in ops:
            if by_op[op] and len(picked) < n:
                picked.add(by_op[op].pop(0)['id'])
    return [m for m in mutants if m['id'] in picked]


# ===== Building and running =====

def rel(path):
    """path relative to the kit's root when it lies inside it"""
    p = os.path.abspath(path)
    return os.path.relpath(p, ROOT) if p.startswith(ROOT + os.sep) else p


def gpu_check():
    """fails with one line unless build/bin/gpu-probe finds a usable GPU"""
    probe = os.path.join(ROOT, 'build', 'bin', 'gpu-probe')
    if not os.path.isfile(probe):
        subprocess.run([os.environ.get('MAKE', 'make'), '--no-print-directory', '-s', 'build/bin/gpu-probe'],
                       cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.path.isfile(probe):
        raise Fail('grading mutants needs a GPU, and build/bin/gpu-probe did not build to look for one (make build)')
    p = subprocess.run([probe], capture_output=True, text=True)
    line = (p.stdout.strip() or p.stderr.strip()).splitlines()[:1]
    if p.returncode != 0:
        raise Fail('grading mutants needs a GPU: %s' % (line[0] if line else 'gpu-probe found none'))
    return line[0] if line else 'gpu'


def binary(out, slug, mid):
    """the path of mutant mid's grader"""
    return os.path.join(out, slug, 'bin', mid)


def build(out, todo, jobs, log):
    """builds the reference graders and every mutant's grader in todo [(slug, id)] with make -k; returns the
    set of (slug, id) whose grader exists afterwards"""
    targets = []
    for slug, mid in todo:
        b, diff = binary(out, slug, mid), os.path.join(out, slug, mid + '.diff')
        if os.path.isfile(b) and os.path.getmtime(b) < os.path.getmtime(diff):
            os.unlink(b)  # made from an older mutant: if the new one does not compile, nothing stale is graded
        targets.append(rel(b))
    targets += sorted({'build/bin/%s-grade-solution' % slug for slug, _ in todo})
    with open(log, 'w') as f:
        subprocess.run([os.environ.get('MAKE', 'make'), '--no-print-directory', '-k', '-j%d' % jobs,
                        'MUTATE_DIR=' + rel(out)] + targets,
                       cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
    return {(slug, mid) for slug, mid in todo if os.path.isfile(binary(out, slug, mid))}


def reached(ratios_path):
    """the share of its bar a test's sound readings reached (ratiolog.reached) in the ratios.tsv a grading of
    one test left; None when it made no speed check"""
    try:
        got = ratiolog.reached(ratiolog.read(ratios_path))
    except OSError:
        return None
    return min(got.values()) if got else None


def needs_two_gpus(results_dir, test):
    """True when results_dir/results.json (a grading's) says test was skipped for want of a second GPU: its output,
    the description's line then the skip's reason, has a line starting TWO_GPUS_SKIP"""
    try:
        with open(os.path.join(results_dir, 'results.json')) as f:
            got = json.load(f)
    except (OSError, ValueError):
        return False
    return any(t.get('name') == test and any(ln.startswith(TWO_GPUS_SKIP) for ln in
                                               str(t.get('output', '')).split('\n')[1:])
               for t in got.get('tests', []) if isinstance(t, dict))


def run_test(bin_path, test, limit_s, log):
    """runs one test of a grader under a time limit; returns (outcome, seconds, reached) where outcome is 'passed',
    'lost' (no points), 'kept' (some of its points, not all: partial speed credit, which does not kill), 'skipped',
    'two_gpus' (skipped: it needs a second GPU, see needs_two_gpus), 'ungraded' (NOT GRADED: its measurement was
    unsound), 'timeout' or 'noresult'
    (crashed, or no points.tsv), and reached is what reached() gives for its speed checks (None: none)"""
    suite, name = test.split('.', 1)
    with tempfile.TemporaryDirectory(prefix='xl-mutate-') as res, open(log, 'a') as f:
        f.write('== %s %s\n' % (rel(bin_path), test))
        f.flush()
        env = dict(os.environ, XL_RESULTS_DIR=res)
        bundle = os.path.join(ROOT, 'build', 'criterion', 'lib')
        if os.path.isdir(bundle):  # a Criterion bundle, for graders built outside build/ (an --out elsewhere)
            env['LD_LIBRARY_PATH'] = bundle + os.pathsep + env.get('LD_LIBRARY_PATH', '')
        t0 = time.monotonic()
        p = subprocess.Popen([bin_path, '--filter=%s/%s' % (suite, name)], cwd=ROOT, env=env, stdout=f,
                             stderr=subprocess.STDOUT, start_new_session=True)
        timed_out = False
        try:
            p.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the test's own processes too, on a timeout or left behind
        except (ProcessLookupError, PermissionError):
            pass
        p.wait()
        secs = time.monotonic() - t0
        got = reached(os.path.join(res, 'ratios.tsv'))
        if timed_out:
            f.write('== stopped after %.0f s\n' % limit_s)
            return 'timeout', secs, got
        row = None
        try:
            with open(os.path.join(res, 'points.tsv')) as pf:
                for ln in pf.read().splitlines()[1:]:
                    cols = ln.split('\t')
                    if len(cols) >= 4 and cols[0] == test:
                        row = cols
        except OSError:
            pass
        if row is not None and row[3] == 'skipped' and needs_two_gpus(res, test):
            return 'two_gpus', secs, got
    if row is None:
        return 'noresult', secs, got
    if row[3] in ('skipped', 'ungraded'):
        return row[3], secs, got
    if int(row[1]) >= int(row[2]) and row[3] == 'passed':
        return 'passed', secs, got
    return ('kept' if int(row[1]) > 0 else 'lost'), secs, got


# ===== One lab =====

def reference_from(points, tests):
    """({test: seconds}, {tests that need 2 GPUs}) from a points.tsv of the reference graded whole (its 5th column),
    when it passed every one of tests there but those SKIPPED for want of a second GPU (results.json beside it says
    so); else None"""
    try:
        rows = {r[0]: r for r in (l.rstrip('\n').split('\t') for l in open(points)) if len(r) >= 5}
        two = {t for t in tests if t in rows and rows[t][3] == 'skipped' and
               needs_two_gpus(os.path.dirname(points), t)}
        if all(t in two or (t in rows and rows[t][3] == 'passed' and rows[t][1] == rows[t][2]) for t in tests):
            return {t: float(rows[t][4]) for t in tests if t not in two}, two
    except (OSError, ValueError):
        pass
    return None


def grade_reference(out, slug, tests, points=None):
    """({test: seconds} of the reference passing each test, {tests that need 2 GPUs, SKIPPED here}), or raises Fail
    naming the first it did not pass; taken from points (a path with {slug}, a whole grading of the reference just
    made) when that passed them all"""
    known = reference_from(points.format(slug=slug), tests) if points else None
    if known is not None:
        return known
    bin_path = os.path.join(ROOT, 'build', 'bin', slug + '-grade-solution')
    log = os.path.join(out, slug, 'reference.log')
    open(log, 'w').close()
    times, two = {}, set()
    for t in tests:
        outcome, secs, _ = run_test(bin_path, t, REFERENCE_LIMIT_S, log)
        if outcome == 'two_gpus':  # a one-GPU host: what only such tests reach is unreached here
            two.add(t)
            continue
        if outcome == 'skipped':
            raise Fail('the reference of %s was SKIPPED on %s: grading mutants needs a GPU' % (slug, t))
        if outcome != 'passed':
            why = {'lost': 'lost points', 'kept': 'lost points', 'timeout': 'timed out', 'ungraded': 'was NOT GRADED (a measurement it could '
                   'not trust)', 'noresult': 'gave no results (not a test of the grader? regenerate: make mutate-gen)'}[
                outcome]
            raise Fail('%s: the reference %s on %s (log: %s): this GPU is not fit to judge; lab left out' % (
                slug, why, t, rel(log)), code=1)
        times[t] = secs
    return times, two


def timed_tests(slug):
    """the tests of slug's grader declared XL_TIMED (a speed or timed check: a failing one is measured three times)"""
    bin_path = os.path.join(ROOT, 'build', 'bin', slug + '-grade-solution')
    try:
        got = subprocess.run([bin_path], env=dict(os.environ, XL_LIST_TIMED='1'), capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return set(got.stdout.split()) if got.returncode == 0 else set()


def grade_mutant(out, slug, m, tests, ref_times, shared=False):
    """(status, killed_by, seconds, left, reached) of one built mutant on tests, in that order, until one kills it
    (reached: how close the killing test's speed checks came to their bars, see reached(); for a survivor, those of
    a test that left it part of its points). shared:
    other gradings use the GPU beside it, so a test that runs out of time or is NOT GRADED there is not judged but
    left (left) for a grading alone. Alone, a NOT GRADED test is graded again, up to 3 times; one never graded
    does not kill"""
    log = os.path.join(out, slug, 'log', m['id'] + '.log')
    total, left, kept = 0.0, [], None
    for t in tests:
        for _ in range(1 if shared else 3):
            outcome, secs, got = run_test(binary(out, slug, m['id']), t, max(5.0, 3 * ref_times[t] + 2), log)
            total += secs
            if outcome != 'ungraded':
                break
        if outcome in ('skipped', 'two_gpus'):  # the reference passed it on this host
            raise Fail('%s: %s was SKIPPED for mutant %s: grading mutants needs a GPU' % (slug, t, m['id']))
        if outcome in ('timeout', 'ungraded') and shared:
            left.append(t)
        elif outcome == 'kept':
            kept = got if kept is None or (got is not None and got > kept) else kept
        elif outcome not in ('passed', 'ungraded'):
            return 'killed', t, total, [], got
    return 'survived', '', total, left, kept


def verdict(status, tests, two_gpus, mid, equivalent):
    """a graded mutant's status in the report from what its tests run here gave (killed or survived): a survivor is
    equivalent when equivalent.txt lists it, else unreached here when some of its tests need 2 GPUs and were
    SKIPPED (two_gpus: those of the reference), else survived"""
    if status != 'survived':
        return status
    if mid in equivalent:
        return 'equivalent'
    return 'unreached' if any(t in two_gpus for t in tests) else 'survived'


def grade_lab(out, slug, mutants, built, equivalent, points=None, gpu_jobs=1):
    """report rows for one lab's mutants, and the lab's seconds; raises Fail(code 1) when the reference fails.
    First each mutant's tests that time nothing, gpu_jobs mutants at once (a correctness check holds on a shared
    GPU); then, one mutant at a time with the GPU to itself, the timed tests of those still alive (a failing one is
    measured again) and any test that ran out of time beside the others"""
    t0 = time.monotonic()
    tests = sorted({t for m in mutants if (slug, m['id']) in built for t in m['tests']})
    ref, two = grade_reference(out, slug, tests, points)  # two: tests that need 2 GPUs, not run on this host
    timed = timed_tests(slug)
    todo = [m for m in mutants if (slug, m['id']) in built]
    os.makedirs(os.path.join(out, slug, 'log'), exist_ok=True)
    for m in todo:
        open(os.path.join(out, slug, 'log', m['id'] + '.log'), 'w').close()

    def order(ts):
        return sorted(ts, key=lambda t: (ref[t], t))  # fastest first

    def shared_pass(m):
        return grade_mutant(out, slug, m, order(t for t in m['tests'] if t not in timed and t not in two), ref,
                            shared=gpu_jobs > 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=gpu_jobs) as ex:
        first = dict(zip([m['id'] for m in todo], ex.map(shared_pass, todo)))
    rows = []
    for m in mutants:
        row = {k: m[k] for k in ('lab', 'id', 'operator', 'line', 'function')}
        if (slug, m['id']) not in built:
            row.update(status='stillborn', killed_by='', seconds=0.0, reached='')
        else:
            status, by, secs, left, got = first[m['id']]
            if status == 'survived':
                status, by, more, _, got = grade_mutant(out, slug, m, left + order(
                    t for t in m['tests'] if t in timed and t not in two), ref)
                secs += more
            status = verdict(status, m['tests'], two, m['id'], equivalent)
            row.update(status=status, killed_by=by, seconds=secs, reached='' if got is None else '%.3f' % got)
        rows.append(row)
        print('  %s %-26s %-10s %s' % (slug, m['id'], row['status'], row['killed_by']), flush=True)
    return rows, time.monotonic() - t0


# ===== Main =====

def wrong_equivalents(rows, equivalent):
    """[(slug, problem)] for each mutant a test killed although equivalent.txt lists it ({slug: ids}): its reason
    is wrong (a kill is real: the reference passed that test)"""
    return [(r['lab'], '%s/equivalent.txt lists %s, but %s killed it: remove the entry' % (r['lab'], r['id'],
                                                                                          r['killed_by']))
            for r in rows if r['status'] == 'killed' and r['id'] in equivalent.get(r['lab'], ())]


def check_equivalent(out, labs, eq_dir):
    """prints every problem of the equivalent.txt files against the manifests; 0 when there is none, else 1"""
    problems, n = [], 0
    for slug in labs:
        path, entries, bad = load_equivalent(eq_dir, slug)
        _, more = match_equivalent(load_manifest(out, slug), entries, path)
        problems += bad + more
        n += len(entries)
    for p in problems:
        print(p)
    if not problems:
        print('equivalent.txt: %d entries in %d labs, each matching exactly one generated mutant' % (n, len(labs)))
    return 1 if problems else 0


def main():
    """parses the options and runs the steps; returns the exit status"""
    ap = argparse.ArgumentParser(description='Build and grade the generated mutants on a GPU (course staff).')
    ap.add_argument('--labs', default='', help='labs to grade, e.g. "01 05" (default: every lab with a manifest)')
    ap.add_argument('--sample', type=int, default=0, help='grade a fixed sample of N mutants per lab')
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 2, help='parallel compiles (default: every core)')
    ap.add_argument('--gpu-jobs', type=int, default=min(8, os.cpu_count() or 1),
                    help='mutants graded at once on their tests that time nothing (default: the cores, at most 8)')
    ap.add_argument('--out', default='build/mutate', help='where the manifests are and the report goes')
    ap.add_argument('--ids', help='grade only these mutants: a file of lines "NN-slug ID" (e.g. the survivors of a '
                    'report, after the tests changed)')
    ap.add_argument('--reference-points', help='a points.tsv of each reference graded whole, as a path with {slug} '
                    '(make test): its per-test seconds set the mutants\' time limits instead of grading it again')
    ap.add_argument('--report-dir', help='where report.txt and report.csv go instead of OUT (make test)')
    ap.add_argument('--check-equivalent', action='store_true', help='only check the equivalent.txt files')
    ap.add_argument('--equivalent-dir', default=os.path.join(ROOT, 'grader', 'mutants'), help=argparse.SUPPRESS)
    ap.error = lambda msg: ap.exit(2, 'run: %s (--help lists the options)\n' % msg)  # one line, not a usage dump
    a = ap.parse_args()
    for opt, v, least in (('--sample', a.sample, 0), ('--jobs', a.jobs, 1), ('--gpu-jobs', a.gpu_jobs, 1)):
        if v < least:
            raise Fail('%s takes a whole number, %d or more, not %d' % (opt, least, v))
    out = os.path.abspath(a.out)
    labs = manifest_labs(out, a.labs)
    if a.check_equivalent:
        return check_equivalent(out, labs, a.equivalent_dir)
    want = read_ids(a.ids) if a.ids else None
    gpu = gpu_check()
    todo, equivalent, problems = {}, {}, []
    for slug in labs:
        mutants = load_manifest(out, slug)
        todo[slug] = sample(mutants, a.sample, slug) if a.sample else mutants
        if want is not None:
            todo[slug] = [m for m in todo[slug] if (slug, m['id']) in want]
        path, entries, bad = load_equivalent(a.equivalent_dir, slug)
        equivalent[slug], more = match_equivalent(mutants, entries, path)
        problems += bad + more
    for p in problems:
        print('run: %s' % p)
    t0 = time.monotonic()
    pairs = [(slug, m['id']) for slug in labs for m in todo[slug]]
    log = os.path.join(out, 'build.log')
    print('mutate: building %d mutants with make -j%d (log: %s)' % (len(pairs), a.jobs, rel(log)), flush=True)
    built = build(out, pairs, a.jobs, log)
    print('mutate: built %d of %d in %.0f s; %s' % (len(built), len(pairs), time.monotonic() - t0, gpu), flush=True)
    rows, secs, notes, failed = [], {}, {}, False
    for slug in labs:
        try:
            got, secs[slug] = grade_lab(out, slug, todo[slug], built, equivalent[slug], a.reference_points,
                                      a.gpu_jobs)
            rows += got
            if a.sample:
                notes[slug] = ['a sample of %d of its %d mutants (--sample)' % (len(todo[slug]),
                                                                                 len(load_manifest(out, slug)))]
        except Fail as e:
            if e.code != 1:
                raise
            print('mutate: %s' % e, flush=True)
            notes[slug] = [str(e).split(': ', 1)[1]]
            failed = True
    for lab, p in wrong_equivalents(rows, equivalent):
        problems.append(p)
        notes.setdefault(lab, []).append(p)
        print('run: %s' % p)
    header = 'xferlab generated mutants, %s; %s' % (time.strftime('%Y-%m-%d %H:%M'), gpu)
    rdir = os.path.abspath(a.report_dir or out)
    os.makedirs(rdir, exist_ok=True)
    with open(os.path.join(rdir, 'report.txt'), 'w') as f:
        f.write(report.render(rows, out, secs, notes, header))
    report.write_csv(rows, os.path.join(rdir, 'report.csv'))
    print('mutate: %s and %s' % (rel(os.path.join(rdir, 'report.txt')), rel(os.path.join(rdir, 'report.csv'))))
    print(report.table(rows, secs))
    return 1 if failed or problems else 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Fail as e:
        print('run: %s' % e, file=sys.stderr)
        sys.exit(e.code)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as e:
        print('run: %s' % e, file=sys.stderr)
        sys.exit(2)
