#!/usr/bin/env python3
"""plantclass.py OUT [SEED] - a planted class graded by make class, without grading: OUT as make class leaves it, for
make test's dashboard section (grader/test/dashboard.sh). Course staff; standard library only.

Plants 24 students (distinctive made-up names) and their submissions of labs 01, 02 and 04 (every student lab 01,
most lab 02, about half lab 04): full points, tests failed (one failure message names the student's folder, as a
compiler's or a grader's path would), speed tests failed, a NOT GRADED speed test (status regrade), gradings
without a GPU (no-gpu), build failures (compile, the compiler's line naming the student's workspace), a grading
stopped at its time limit and one that crashed; graded on an H100 or an H200. Each grading's results folder is made
by grader/report/plant.py, its record by class.py's own record_for() and save(), then gradebook.csv and summary.txt
by class.py, so OUT is what make class writes. SEED (default: random) draws the figures and who gets what.

Prints one line per submission, tab-separated: student, lab (NN-slug), status, points, max. Exit 0, or 2 after one
line when OUT cannot be written.
"""
import importlib
import os
import random
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'report'))
sys.path.insert(0, os.path.join(HERE, '..', 'scripts'))
klass = importlib.import_module('class')  # class.py beside this file: its records, as make class saves them
import plant  # noqa: E402  (grader/report/plant.py: a grading's results folder)
from stability import check_stats, read_measurements  # noqa: E402  (each lab's checks, the reference's figures)

STUDENTS = ('amaru.quispe', 'bodil.kjaer', 'chidi.okafor', 'dagny.roark', 'eitan.berger', 'farida.nazari',
            'gunnar.halvorsen', 'hana.sato', 'ines.carvalho', 'jomo.kariuki', 'kalani.akana', 'liesel.brandt',
            'mateus.rocha', 'nilufar.rahimova', 'oisin.mcbride', 'priya.venkatesan', 'quentin.marchal',
            'rangi.parata', 's2041187', 'tariq.haddad', 'ulla.lindqvist', 'vesna.petrovic', 'wiremu.tane',
            'yusuf_demir')
LABS = (('01-pageable-copy', 1.0), ('02-pinned-copy', 0.7), ('04-double-buffering', 0.5))  # lab, share of students
GPUS = ('NVIDIA H100 80GB HBM3', 'NVIDIA H200')
# what is planted at least once, then the rest drawn from full, partial and slow
SPECIAL = ('compile', 'compile', 'stopped', 'crashed', 'regrade', 'regrade', 'no-gpu', 'no-gpu', 'slow', 'slow',
           'partial', 'partial', 'full', 'full')


# ===== The figures of a grading =====
def lab_checks(slug):
    """[(check, label, need, at_least, the reference's median)] the lab's grader measures, in its order (the kit's
    H100 stability table)"""
    _, _, rows = read_measurements(os.path.join(klass.KIT, 'refdata', 'stability', 'h100', slug))
    stats = check_stats(rows)
    seen = {}
    for r in rows:
        seen.setdefault(r['check'], (r['check'], r['label'], r['need'], r['at_least'], stats[r['check']]['median']))
    return list(seen.values())


def reading(rng, need, at_least, ref, meets):
    """a made-up ratio near the reference's figure ref that meets its bar (or misses it)"""
    if meets:
        r = ref * (rng.uniform(0.9, 1.12) if at_least else rng.uniform(0.7, 1.4))
        return r if (r >= need if at_least else r <= need) else need * (1.01 if at_least else 0.99)
    return need * rng.uniform(0.4, 0.95) if at_least else need * rng.uniform(1.1, 2.5)


def gradings(rng, slug, kind):
    """(verdicts, ratio rows) of one grading of kind full, partial, slow or regrade"""
    checks = lab_checks(slug)
    timed = {c[0].split('#')[0] for c in checks}
    plain = [t[0] for t in plant.tests_of(slug) if t[0] not in timed]
    verdicts, ratios, bad = {}, [], None
    if kind == 'partial':
        for t in rng.sample(plain, rng.randint(1, min(5, len(plain)))):
            verdicts[t] = ('failed', 'byte %d of %d differs: got 0x00, want 0x%02x' % (
                rng.randrange(1, 4096), 4097, rng.randrange(1, 256)))
    if kind in ('slow', 'regrade'):
        bad = rng.choice([c for c in checks if c[3] and '#' not in c[0]])
    for check, label, need, at_least, ref in checks:
        if bad and check == bad[0] and kind == 'slow':
            rs = [reading(rng, need, at_least, ref, False) for _ in range(3)]
            ratios += plant.attempts(check, need, int(at_least), label, rs, lambda r: '%.3f' % r)
            verdicts[check] = ('failed', '%s (need %s %g): missed the threshold in 3 fresh measurements:\n%s' % (
                label, '>=' if at_least else '<=', need,
                '\n'.join('  attempt %d: %.3f' % (k, r) for k, r in enumerate(rs, 1))))
        elif bad and check == bad[0]:
            rs = [reading(rng, need, at_least, ref, False) for _ in range(2)]
            ratios += plant.attempts(check, need, int(at_least), label, rs, lambda r: (
                'NOT SOUND (other processes used the GPU at the same time (trainer.py pid 777)) %.3f' % r))
            verdicts[check] = ('ungraded', 'NOT GRADED: %s could not be measured soundly: other processes used the '
                               'GPU at the same time (trainer.py pid 777).' % label)
        else:
            ratios.append((check, 1, reading(rng, need, at_least, ref, True), need, int(at_least), label, 'planted'))
    return verdicts, ratios


def lab_data(rng, slug, device):
    """the data/ a grading of slug leaves on device: lab 01's sweep (the reference's, scaled), lab 04's timeline"""
    tag = 'h200' if 'H200' in device else 'h100'
    if slug.startswith('01'):
        header, rows = plant.ref_rows('refdata/%s/%s.csv' % (slug, tag))
        k, i = rng.uniform(0.9, 1.05), header.index('gbps')
        for r in rows:
            r[i] = '%.6g' % (float(r[i]) * k)
        return {'sweep': (header, rows)}
    if slug.startswith('04'):
        return {'timeline': plant.ref_rows('refdata/%s/%s-timeline.csv' % (slug, tag))}
    return {}


# ===== One submission =====
def submit(out, tmp, rng, student, slug, kind):
    """plants one submission of kind and saves it as make class does; its record"""
    src = os.path.join(tmp, 'subs', '%s_%s.cu' % (student, slug[:2]))
    os.makedirs(os.path.dirname(src), exist_ok=True)
    with open(src, 'w') as f:
        f.write('/* %s, lab %s: %08x */\n' % (student, slug[:2], rng.getrandbits(32)))
    ws = os.path.join(out, 'work', student, slug)  # where make class would have built it
    log = os.path.join(tmp, 'logs', student + slug)
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, 'w') as f:
        f.write('class: planted by plantclass.py\n')
    job = {'student': student, 'slug': slug, 'path': src, 'ws': os.path.join(tmp, 'ws', student, slug), 'log': log,
           'no_gpu': kind == 'no-gpu'}
    top = sum(t[1] for t in plant.tests_of(slug))
    seconds = rng.uniform(5, 60)
    if kind == 'compile':
        said = '%s/labs/%s/lab.cu(%d): error: identifier "cudaMemcpyAsyn" is undefined' % (
            ws, slug, rng.randrange(20, 200))  # the workspace's path names the student
        rec = klass.record_for(job, 'compile', 'Your lab.cu does not compile. The compiler said:\n' + said + '\n',
                               seconds, top)
    elif kind == 'stopped':
        rec = klass.record_for(job, 'stopped', 'The grading was stopped: your code ran past its time limit of 900 s.',
                               900.0, top)
    elif kind == 'crashed':
        rec = klass.record_for(job, 'crashed', 'The grader stopped without results (exit 139): see the log.',
                               seconds, top)
    else:
        device = None if kind == 'no-gpu' else rng.choice(GPUS)
        verdicts, ratios = gradings(rng, slug, kind) if device else ({}, [])
        if kind == 'partial':  # one message names the student's folder, as a path in a grader's message would
            t = next(iter(verdicts))
            verdicts[t] = (verdicts[t][0], verdicts[t][1] + ' (in %s/labs/%s/lab.cu)' % (ws, slug))
        d = plant.plant(os.path.join(tmp, 'planted', student), slug, 'student', device, verdicts, ratios,
                        lab_data(rng, slug, device) if device else None)
        shutil.rmtree(job['ws'], ignore_errors=True)
        os.makedirs(job['ws'])
        os.rename(d, os.path.join(job['ws'], 'results'))
        rec = klass.record_for(job, 'graded', '', seconds, top)
    klass.save(out, job, rec)
    return rec


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        print('plantclass: usage: plantclass.py OUT [SEED]', file=sys.stderr)
        return 2
    out = os.path.abspath(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) == 3 else None)
    try:
        os.makedirs(out, exist_ok=True)
        subs = [(s, slug) for s in STUDENTS for slug, share in LABS if slug[:2] == '01' or rng.random() < share]
        kinds = list(SPECIAL) + [rng.choice(('full', 'partial', 'slow')) for _ in range(len(subs) - len(SPECIAL))]
        rng.shuffle(kinds)
        with tempfile.TemporaryDirectory(prefix='xl-plantclass-') as tmp:
            recs = [submit(out, tmp, rng, s, slug, k) for (s, slug), k in zip(subs, kinds)]
        klass.write_gradebook(out, klass.records(out))
        with open(os.path.join(out, 'summary.txt'), 'w') as f:
            f.write('\n'.join(klass.summary(recs)) + '\n')
    except OSError as e:
        print('plantclass: cannot plant the class in %s: %s' % (out, e.strerror or e), file=sys.stderr)
        return 2
    for r in recs:
        print('%s\t%s\t%s\t%s\t%s' % (r['student'], r['lab'], r['status'], r['points'], r['max']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
