#!/usr/bin/env python3
"""plant.py OUTDIR - planted gradings for make test's report section (grader/test/report.sh): results folders as
make grade leaves them (results.json, points.tsv, ratios.tsv, device.txt, data/NAME.csv), made up, with the
reference data in refdata/ standing in for a student's own figures. make test runs it; standard library only.

Writes OUTDIR/NN-slug-IMPL/ for labs 01 (H100: a failed speed test, a NOT SOUND attempt, "at most" checks, a hint),
02 (a GPU the kit has no reference for; linear credit: a PARTIAL test), 03 (no GPU: the GPU tests SKIPPED, nothing
measured), 04 (H200: a test NOT GRADED, a timeline), 05 (the reference solution on an H100, full points, a
timeline) and 06 (H200: a wrong peak), and prints one line per folder: the folder, then the ids of the charts its
page must have, then the ids of the lines that must say why a chart is left out (space-separated, "-" for none;
tab between the three).
"""
import csv
import json
import os
import re
import sys

KIT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_GPU = 'no CUDA GPU: no NVIDIA driver is installed on this machine'

# ===== The labs' tests: name, points, needs a GPU, what it checks =====
def tests_of(slug):
    """[(name, points, needs a GPU, what it checks)] of the lab, from its handout's points table (which make test
    checks against the grader itself)"""
    text = open(os.path.join(KIT, 'labs', slug, 'README.md'), encoding='utf-8').read()
    table = text[text.index('<!-- points:begin -->'):text.index('<!-- points:end -->')]
    return [(m.group(1), int(m.group(2)), m.group(3) == 'yes', m.group(4))
            for m in re.finditer(r'^\| `([\w.]+)` \| (\d+) \| (yes|no) \| (.*) \|$', table, re.M)]


# ===== Writing a folder =====
def plant(out, slug, impl, device, verdicts=None, ratios=(), data=None):
    """out/slug-impl/ with every test passed but those in verdicts ({test: (status, message)}; without a device
    the GPU tests are skipped), the ratio rows, device.txt and data ({name: (header, rows)}); its path"""
    d = os.path.join(out, f'{slug}-{impl}')
    os.makedirs(os.path.join(d, 'data'), exist_ok=True)
    verdicts = verdicts or {}
    tests, score, total = [], 0, 0
    known = tests_of(slug)
    unknown = set(verdicts) - {t[0] for t in known}
    if unknown:
        raise SystemExit('plant: %s has no test %s (see its points table)' % (slug, ', '.join(sorted(unknown))))
    for name, pts, gpu, desc in known:
        status, msg = verdicts.get(name, ('skipped', NO_GPU) if gpu and not device else ('passed', ''))
        got = pts if status == 'passed' else pts * 7 // 10 if status == 'partial' else 0
        score, total = score + got, total + pts
        tests.append({'name': name, 'score': got, 'max_score': pts, 'status': status, 'msg': msg, 'desc': desc})
    res = {'score': score, 'max_score': total}
    if any(t['status'] == 'ungraded' for t in tests):
        res['output'] = ('1 speed test was NOT GRADED: other processes used the GPU. Grade again when the GPU is '
                         'idle.')
    res['tests'] = [{'name': t['name'], 'score': t['score'], 'max_score': t['max_score'],
                     'status': 'passed' if t['status'] == 'passed' else 'failed', 'visibility': 'visible',
                     'output': t['desc'] + ('\n' + t['msg'] if t['msg'] else '')} for t in tests]
    with open(os.path.join(d, 'results.json'), 'w') as f:
        json.dump(res, f, indent=2)
    with open(os.path.join(d, 'points.tsv'), 'w') as f:
        f.write('test\tscore\tmax\tstatus\tseconds\n')
        for t in tests:
            f.write(f'{t["name"]}\t{t["score"]}\t{t["max_score"]}\t{t["status"]}\t0.50\n')
    if ratios:
        with open(os.path.join(d, 'ratios.tsv'), 'w') as f:
            for r in ratios:
                f.write('\t'.join(str(x) for x in r) + '\n')
    if device:
        with open(os.path.join(d, 'device.txt'), 'w') as f:
            f.write(device + '\n')
    for name, (header, rows) in (data or {}).items():
        with open(os.path.join(d, 'data', name + '.csv'), 'w', newline='') as f:
            w = csv.writer(f, lineterminator='\n')
            w.writerow(header)
            w.writerows(rows)
    return d


def attempts(check, need, at_least, label, readings, figures):
    """the ratio rows of one check measured once per reading, in order: attempt k read readings[k - 1], with
    figures(reading) as its figures"""
    return [(check, k, r, need, at_least, label, figures(r)) for k, r in enumerate(readings, 1)]


def ref_rows(path, keep=lambda r: True):
    """(header, rows) of a reference CSV, comment lines left out"""
    with open(os.path.join(KIT, path), newline='') as f:
        rows = [r for r in csv.reader(l for l in f if not l.startswith('#'))]
    return rows[0], [r for r in rows[1:] if keep(dict(zip(rows[0], r)))]


def main():
    if len(sys.argv) != 2:
        print('usage: plant.py OUTDIR', file=sys.stderr)
        return 2
    out = sys.argv[1]
    lines = []

    # lab 01 on an H100: the H200's sweep as the student's, its D2H made 1.8x slower: the sweep test fails on D2H
    header, rows = ref_rows('refdata/01-pageable-copy/h200.csv')
    i_ms, i_gbps = header.index('median_ms'), header.index('gbps')
    for r in rows:
        if r[0] == 'D2H':
            for c in (i_ms, header.index('min_ms'), header.index('max_ms')):
                r[c] = f'{float(r[c]) * 1.8:.6g}'
            r[i_gbps] = f'{float(r[i_gbps]) / 1.8:.6g}'
    sweep_fig = ('D2H: your sweep\'s figures are {0} times the kit\'s (median over 1 MiB to 256 MiB); at 256 MiB '
                 'yours {1} GB/s, the kit\'s 12.61 GB/s')
    d = plant(out, '01-pageable-copy', 'student', 'NVIDIA H100 80GB HBM3', verdicts={
        'sweep.sizes_and_figures': ('failed', 'D2H sweep figures against the kit\'s (need <= 1.5): missed the '
                                    'threshold in 3 fresh measurements:\n  attempt 1: '
                                    + sweep_fig.format('1.83', '6.90')
                                    + '\n  attempt 2: ' + sweep_fig.format('1.79', '7.04') + '\n  attempt 3: '
                                    + sweep_fig.format('1.81', '6.97')),
        'fit.synthetic': ('failed', 'noisy synthetic sweep of 8 points: you fitted L = 34.136 us, B = 27.599 GB/s; '
                          'the kit fits L = 23.814 us, B = 30.063 GB/s (need B within 0.5% and L within 1%; is every '
                          'point weighted by 1/T^2?)'),
    }, ratios=[
        ('timer.waits_for_gpu', 1, 0.998, 0.9, 1, 'your timer\'s median over the kit\'s', '0.998'),
        ('timer.waits_for_gpu#2', 1, 0.998, 1.1, 0, 'your timer\'s median over the kit\'s', '0.998'),
        ('timer.narrow_wait', 1, 20.4, 150, 0, 'lab_time_gpu\'s time beside an unrelated kernel (ms)', '20.4'),
        ('timer.median_after_warmup', 1, 0.0164, 0.2, 0, 'your median, min or max, the farthest from the scripted '
         'runs\' (ms)', '0.01645'),
        ('copy.pageable_speed', 1, 0.61, 0.85, 1, 'pageable copy speed against the kit\'s',
         'NOT SOUND (other processes used the GPU at the same time (python3 pid 4242)) your H2D 8.80 GB/s = 61% of '
         'the kit\'s 14.35 GB/s'),
        ('copy.pageable_speed', 2, 0.982, 0.85, 1, 'pageable copy speed against the kit\'s',
         'your H2D 14.50 GB/s = 101% of the kit\'s 14.35 GB/s; your D2H 12.22 GB/s = 98% of the kit\'s 12.45 GB/s'),
        ('sweep.sizes_and_figures', 1, 1.01, 1.5, 0, 'H2D sweep figures against the kit\'s',
         'H2D: your sweep\'s figures are 1.01 times the kit\'s (median over 1 MiB to 256 MiB)'),
    ] + attempts('sweep.sizes_and_figures#2', 1.5, 0, 'D2H sweep figures against the kit\'s', (1.83, 1.79, 1.81),
                 lambda r: sweep_fig.format('%.2f' % r, {1.83: '6.90', 1.79: '7.04', 1.81: '6.97'}[r])), data={'sweep': (header, rows)})
    lines.append((d, 'chart-speed chart-sweep', 'chart-history-missing'))

    # lab 02 on a GPU the kit has no reference data for, graded with linear credit: a speed test short of its bar
    # earns part of its points (PARTIAL); the speed checks only (lab 02 draws no data of its own)
    d = plant(out, '02-pinned-copy', 'student', 'NVIDIA GeForce RTX 4090', verdicts={
        'copy.beats_pageable': ('failed', 'your pinned copies against the kit\'s pageable (need >= 2): missed the '
                                'threshold in 3 fresh measurements:\n  attempt 1: 1.62x\n  attempt 2: 1.71x\n'
                                '  attempt 3: 1.66x'),
        'roundtrip.speed': ('partial', 'round trip speed against the kit\'s (need >= 90%): short of the bar, 77% of '
                            'the way up from the floor of partial credit, so this check is worth 77% of the test\'s '
                            'points (rounded down to whole points):\n  attempt 2: 80%'),
    }, ratios=[
    ] + attempts('copy.beats_pageable', 2, 1, 'your pinned copies against the kit\'s pageable', (1.62, 1.71, 1.66),
                 lambda r: '%.2fx' % r) + [
        ('copy.pinned_speed', 1, 0.97, 0.9, 1, 'pinned copy speed against the kit\'s', '97%'),
        ('pool.loop_speed', 1, 41.2, 5, 1, 'pooled loop against allocate-per-transfer', '41.2x'),
    ] + attempts('roundtrip.speed', 0.9, 1, 'round trip speed against the kit\'s', (0.78, 0.8, 0.79),
                 lambda r: '%.0f%%' % (100 * r)))
    lines.append((d, 'chart-speed', 'chart-history-missing'))

    # lab 03 without a GPU: every GPU test SKIPPED, nothing measured, no device.txt
    d = plant(out, '03-nonblocking-sync', 'student', None)
    lines.append((d, '-', 'chart-speed-missing chart-history-missing'))

    # lab 04 on an H200: one speed test missed, one NOT GRADED (both attempts unsound), the H200's timeline
    busy = 'NOT SOUND (other processes used the GPU at the same time (trainer.py pid 777)) '
    d = plant(out, '04-double-buffering', 'student', 'NVIDIA H200', verdicts={
        'speed.double_4mib': ('failed', 'overlap efficiency at depth 2, 4 MiB batches (need >= 70%): missed the '
                              'threshold in 3 fresh measurements:\n  attempt 1: efficiency 0.55: sequential 14.2 ms, '
                              'yours 11.9 ms, ideal 7.9 ms\n  attempt 2: efficiency 0.58\n  attempt 3: efficiency '
                              '0.57 (is the next batch\'s copy queued before this batch\'s kernel is waited on?)'),
        'speed.double_64mib': ('ungraded', 'NOT GRADED: overlap efficiency at depth 2, 64 MiB batches (need >= 70%) '
                               'could not be measured soundly: other processes used the GPU at the same time '
                               '(trainer.py pid 777). It earns nothing in this run and is not a failure: grade again '
                               'when the machine is idle (nvidia-smi lists what runs on the GPU, top what keeps the '
                               'CPU busy).'),
    }, ratios=attempts('speed.double_4mib', 0.7, 1, 'overlap efficiency at depth 2, 4 MiB batches', (0.55, 0.58, 0.57),
                 lambda r: 'efficiency %.2f' % r)
      + attempts('speed.double_16mib', 0.7, 1, 'overlap efficiency at depth 2, 16 MiB batches', (0.86,),
                 lambda r: 'efficiency %.2f' % r)
      + attempts('speed.double_64mib', 0.7, 1, 'overlap efficiency at depth 2, 64 MiB batches', (0.41, 0.52),
                 lambda r: busy + 'efficiency %.2f' % r),
       data={'timeline': ref_rows('refdata/04-double-buffering/h200-timeline.csv')})
    lines.append((d, 'chart-speed chart-timeline-yours chart-timeline-ref', 'chart-history-missing'))

    # lab 05's reference solution on an H100: full points; the grader's trace (one run over 4 streams) as timeline
    header, rows = ref_rows('refdata/05-stream-pipelining/h100-timeline.csv', lambda r: r['run'] == '4 streams')
    for r in rows:
        r[0] = 'run'
    d = plant(out, '05-stream-pipelining', 'solution', 'NVIDIA H100 80GB HBM3', ratios=[
        ('pipeline.narrow_wait', 1, 31.5, 150, 0, 'lab_pipeline_run\'s time beside an unrelated kernel (ms)', '31.5'),
        ('overlap.copies_both_ways', 1, 0.71, 0.3, 1, 'copies in and out at the same time, of the shorter direction '
         '(chunks on different streams let one chunk\'s copy in run beside another\'s copy out)', '0.71'),
        ('overlap.kernels_with_copies', 1, 0.93, 0.5, 1, 'the kernels\' time beside a copy', '0.93'),
        ('speed.depth_first', 1, 0.91, 0.8, 1, 'overlap efficiency, depth-first', 'efficiency 0.91'),
    ], data={'timeline': (header, rows)})
    lines.append((d, 'chart-speed chart-timeline-yours chart-timeline-ref', 'chart-history-missing'))

    # lab 06 on an H200: the reference's peaks at 256 MiB as the student's, but (c) copies instead of pinning in place
    header, rows = ref_rows('refdata/06-pinning/h200.csv', lambda r: r['bytes'] == '268435456' and
                            r['method'] != 'malloc + fill')
    peak = [(r[header.index('method')], r[header.index('bytes')],
             '2.004' if r[0] == '(c) in place' else r[header.index('peak_x')]) for r in rows]
    d = plant(out, '06-pinning', 'student', 'NVIDIA H200', verdicts={
        'peak.in_place': ('failed', 'lab_pin_in_place raised the peak by 2.00x the buffer; pinning in place needs no '
                          'second buffer: 0.90 to 1.25x\nlab_pin_in_place of 256 MiB (fill included): 301.7 ms; peak '
                          'resident memory rose by 2.00x the buffer'),
    }, ratios=[
        ('pin.at_alloc', 1, 0.99, 0.9, 1, 'lab_pin_at_alloc: copy rate from your buffer against the kit\'s pinned '
         'one', '0.99'),
        ('pin.in_place', 1, 1.01, 0.9, 1, 'lab_pin_in_place: copy rate from your buffer against the kit\'s pinned '
         'one', '1.01'),
    ], data={'peak': (('method', 'bytes', 'peak_x'), peak)})
    lines.append((d, 'chart-speed chart-peak', 'chart-history-missing'))

    for d, charts, missing in lines:
        print(f'{d}\t{charts}\t{missing}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
