#!/usr/bin/env python3
"""class.py SUBMISSIONS [options] - grades a whole class, unattended (make class). Course staff only.

SUBMISSIONS holds, per student, either a labs/ tree (SUBMISSIONS/<student>/labs/NN-slug/lab.cu, any of the
labs) or single files named by student and lab (SUBMISSIONS/<student>_NN.cu, <student>-labNN.cu, ...).
Each (student, lab) is built and graded in a copy of the kit of its own (OUT/work/), in a process session
of its own with a time, memory, file-size and disk limit; as root each runs as a user id of its own with
no account (from 1700000000, a block per run), so it cannot touch the kit, OUT or another submission. Between
submissions a GPU that was there at the start is probed again: if it fails, grading stops with a report.

OUT (default build/class) gets results/<student>/<NN-slug>/ (results.json in Gradescope's format,
points.tsv, log.txt, record.json, and for the report page ratios.tsv, device.txt and data/*.csv), gradebook.csv
(student, lab, points, max, status, seconds, one column per test), summary.txt (each lab's distribution and the
tests most often failed), and the class's dashboard (dashboard.py beside this file: index.html and dashboard/, safe
to share, each student a label; dashboard-key.csv says who is who; --names shows the names). A submission whose
record.json was made from the same file is not graded again unless --force: an interrupted run resumes
where it stopped, and a changed file is graded again. Before each grading it waits (--idle-wait, default 300 s)
for other processes to leave the GPU; a submission with a speed test that the grader could not measure soundly
(NOT GRADED in its report) gets status "regrade" and is graded again on the next run. Without a GPU it refuses
to start unless --no-gpu: then each submission keeps the points of its CPU tests with status "no-gpu", and the
next run with a GPU grades it again.
Exit: 0 when every submission was graded (whatever its points), 1 when grading stopped early, 2 on bad
arguments.
"""
import argparse
import concurrent.futures
import csv
import hashlib
import json
import os
import pwd
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts'))  # kitlabs.py
from kitlabs import KIT, labs as kit_labs

# what a grading leaves for its report page beside data/*.csv (grader/results.c; results.json and points.tsv first)
RESULT_FILES = ('results.json', 'points.tsv', 'ratios.tsv', 'device.txt')
RESULT_FILE_MAX = 64 << 20  # bytes of one such file kept; a larger one is left out
DATA_FILES_MAX = 32         # data/*.csv files kept per grading
UID_BASE = 1700000000  # submissions run as user and group ids from here, in blocks of 100000 per run: no account
NAME_OK = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._@+-]*$')
FILE_FORM = re.compile(r'^(?P<student>.+?)[_.-](?:lab)?(?P<lab>\d\d)(?:-[a-z0-9-]+)?\.cu$')


# ===== Submissions =====
def die(msg):
    """one line on stderr, exit 2"""
    print('class: ' + msg, file=sys.stderr)
    sys.exit(2)


def parse_size(text):
    """'8G', '512M', '100K' or bytes -> bytes; None when malformed"""
    m = re.match(r'^(\d+)([KMG]?)$', text.strip().upper())
    return int(m.group(1)) << {'': 0, 'K': 10, 'M': 20, 'G': 30}[m.group(2)] if m else None


def find_submissions(root, labs, wanted):
    """[(student, slug, path of lab.cu)] sorted, and [problem lines] for what cannot be graded"""
    found, problems = {}, []
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        if os.path.isdir(path):
            if not NAME_OK.match(entry):
                problems.append('%s: a student name may hold letters, digits and ._@+- only' % entry)
                continue
            tree = os.path.join(path, 'labs')
            for d in sorted(os.listdir(tree)) if os.path.isdir(tree) else []:
                f = os.path.join(tree, d, 'lab.cu')
                if os.path.isfile(f) and d[:2] in labs and labs[d[:2]] == d:
                    found[(entry, d)] = f
            if not any(k[0] == entry for k in found):
                problems.append('%s/: no labs/NN-slug/lab.cu of a lab of this kit' % entry)
        elif entry.endswith('.cu'):
            m = FILE_FORM.match(entry)
            if not m or m.group('lab') not in labs or not NAME_OK.match(m.group('student')):
                problems.append('%s: name it <student>_NN.cu, NN a lab of this kit (%s)' % (entry, ' '.join(labs)))
                continue
            key = (m.group('student'), labs[m.group('lab')])
            if key in found:
                problems.append('%s: a second submission of %s for lab %s; the first is graded' % (entry, *key))
                continue
            found[key] = path
    subs = [(s, l, p) for (s, l), p in sorted(found.items()) if not wanted or l[:2] in wanted]
    return subs, problems


# ===== Isolation and limits =====
def sub_uids():
    """the first of 100000 user ids for this run's submissions, one each: a block no account has and no running
    process uses (so two class runs at once never share one; the search starts at this process id); None when
    not root"""
    if os.geteuid() != 0:
        return None
    used = {p.pw_uid for p in pwd.getpwall()}
    for d in os.listdir('/proc'):
        try:
            used.add(os.stat('/proc/' + d).st_uid) if d.isdigit() else None
        except OSError:
            pass
    for k in range(1000):
        base = UID_BASE + ((os.getpid() + k) % 1000) * 100000
        if not any(base <= u < base + 100000 for u in used):
            return base
    die('no free block of user ids from %d' % UID_BASE)


def session_pids(sid, uid):
    """pids in process session sid, and every process of uid (when not None)"""
    pids = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            stat = open('/proc/%s/stat' % d).read()
            fields = stat[stat.rindex(')') + 2:].split()
            same_session = int(fields[3]) == sid
            owner = os.stat('/proc/' + d).st_uid
        except (OSError, ValueError, IndexError):
            continue
        if same_session or (uid is not None and owner == uid):
            pids.append(int(d))
    return pids


def rss_bytes(pids):
    """resident memory of pids together"""
    total = 0
    for p in pids:
        try:
            for line in open('/proc/%d/status' % p):
                if line.startswith('VmRSS:'):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def tree_bytes(path):
    """bytes of the files under path (links not followed)"""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


def supervise(cmd, cwd, env, limits, user, log):
    """runs cmd in its own session within limits {'seconds', 'mem', 'disk', 'fsize'}, as user (uid, gid) or
    as this user; kills it and everything it started on a breach. Appends its output to log.
    Returns (exit code or None, what stopped it or '')"""
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits['fsize'], limits['fsize']))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if user:
            resource.setrlimit(resource.RLIMIT_NPROC, (512, 512))
            os.setgroups([])
            os.setgid(user[1])
            os.setuid(user[0])
    with open(log, 'ab') as out:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             preexec_fn=preexec, start_new_session=True)
        start, reason, last_disk = time.monotonic(), '', 0.0
        while p.poll() is None:
            time.sleep(0.05)
            now = time.monotonic()
            pids = session_pids(p.pid, user[0] if user else None)
            if now - start > limits['seconds']:
                reason = 'ran past its time limit of %d s' % limits['seconds']
            elif rss_bytes(pids) > limits['mem']:
                reason = 'used more than its memory limit of %d MiB' % (limits['mem'] >> 20)
            elif now - last_disk > 1.0:
                last_disk = now
                if tree_bytes(cwd) > limits['disk']:
                    reason = 'wrote more than its disk limit of %d MiB' % (limits['disk'] >> 20)
            if reason:
                break
        # whatever it started, in its session or as its user, goes too
        for _ in range(3):
            pids = session_pids(p.pid, user[0] if user else None)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if not pids:
                break
            time.sleep(0.1)
        rc = p.wait()
        if reason:
            out.write(('\nclass: stopped: %s\n' % reason).encode())
    return (None if reason else rc), reason


# ===== Workspaces and builds =====
def make_template(out, isolated):
    """OUT/.kit: the kit's sources (no solutions, mutants, .git) and its built objects, for each workspace"""
    tpl = os.path.join(out, '.kit')
    shutil.rmtree(tpl, ignore_errors=True)
    skip = {'solutions', 'build', '.git', '.ci', 'mutants', 'refdata', 'docs', 'plots'}

    def ignore(d, names):
        top = os.path.abspath(d) == KIT  # build-NAME: another build folder (make B=build-NAME), as .gitignore says
        return [n for n in names if n in skip or (top and (n.startswith('.') or n.startswith('build-')))]
    shutil.copytree(KIT, tpl, ignore=ignore, symlinks=True)
    for part in ('obj', 'lib', 'criterion'):
        src = os.path.join(KIT, 'build', part)
        if os.path.isdir(src):  # not the planted mutants' objects (build/obj/mutants): no submission links them
            shutil.copytree(src, os.path.join(tpl, 'build', part), symlinks=True,
                            ignore=lambda d, n, top=src: ['mutants'] if d == top else [])
    if isolated:
        os.chmod(out, 0o755)
    return tpl


def workspace(out, tpl, student, slug, lab_cu, user):
    """a fresh copy of the template for one submission, its lab.cu in place, owned by user"""
    ws = os.path.join(out, 'work', student, slug)
    shutil.rmtree(ws, ignore_errors=True)
    os.makedirs(os.path.dirname(ws), exist_ok=True)
    shutil.copytree(tpl, ws, symlinks=True, ignore=lambda d, n: ['criterion'] if d.endswith('/build') else [])
    crit = os.path.join(tpl, 'build', 'criterion')
    if os.path.isdir(crit):
        os.symlink(crit, os.path.join(ws, 'build', 'criterion'))  # read-only to the submission's user
    shutil.copyfile(lab_cu, os.path.join(ws, 'labs', slug, 'lab.cu'))
    open(os.path.join(ws, 'class.log'), 'w').close()
    if user:
        for root, dirs, files in os.walk(ws):
            for n in dirs + files:
                os.lchown(os.path.join(root, n), *user)
        os.lchown(ws, *user)
    return ws


def lab_max(slug):
    """the most points lab slug gives, hidden tests included, from the kit's grader's points table"""
    table = subprocess.run([os.path.join(KIT, 'build', 'bin', slug + '-grade')], capture_output=True, text=True,
                           env=dict(os.environ, XL_POINTS_TABLE='1')).stdout
    m = re.search(r'\*\*total\*\* \| \*\*(\d+)\*\*', table)
    return int(m.group(1)) if m else 0


def build_one(job):
    """makes the submission's workspace and builds its grader there; (ok, seconds, what went wrong)"""
    t0 = time.monotonic()
    try:
        job['ws'] = workspace(job['out'], job['tpl'], job['student'], job['slug'], job['path'], job['user'])
    except OSError as e:
        return False, time.monotonic() - t0, 'could not make its workspace: %s' % e
    job['log'] = os.path.join(job['ws'], 'class.log')
    job['env']['HOME'] = job['ws']
    rc, why = supervise(['make', '-s', 'build/bin/%s-grade' % job['slug']], job['ws'], job['env'],
                        dict(job['limits'], seconds=job['build_seconds']), job['user'], job['log'])
    return rc == 0, time.monotonic() - t0, why


def clean_tmp(uid):
    """removes what user uid left at the top of /tmp"""
    for n in os.listdir('/tmp'):
        path = os.path.join('/tmp', n)
        try:
            if os.lstat(path).st_uid == uid:
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
        except OSError:
            pass


# ===== Records, the gradebook and the summary =====
def record_for(job, status, message, seconds, max_points):
    """the submission's record from its points.tsv (or 0 points with status and message); graded without a GPU
    (job['no_gpu']), its skipped GPU tests make it status no-gpu"""
    rec = {'student': job['student'], 'lab': job['slug'], 'points': 0, 'max': max_points, 'status': status,
           'message': message, 'seconds': round(seconds, 1), 'tests': {}, 'sha256': digest(job['path'])}
    tsv = os.path.join(job['ws'], 'results', 'points.tsv')
    if status == 'graded' and os.path.isfile(tsv):
        rows = list(csv.reader(open(tsv), delimiter='\t'))[1:]
        rec['tests'] = {r[0]: int(r[1]) for r in rows if len(r) >= 4}
        rec['points'] = sum(rec['tests'].values())
        rec['max'] = sum(int(r[2]) for r in rows if len(r) >= 4)
        rec['failed'] = [r[0] for r in rows if len(r) >= 4 and r[3] == 'failed']
        ungraded = [r[0] for r in rows if len(r) >= 4 and r[3] == 'ungraded']
        skipped = [r[0] for r in rows if len(r) >= 4 and r[3] == 'skipped']
        if skipped and job.get('no_gpu'):  # graded again on the next run with a GPU
            rec['status'] = 'no-gpu'
            rec['message'] = ('Not graded yet: %s need%s a GPU, and this run had none; they are graded on the next run '
                              'with one' % (', '.join(skipped), 's' if len(skipped) == 1 else ''))
        if ungraded:  # a measurement the grader could not trust: graded again on the next run
            rec['status'] = 'regrade'
            rec['message'] = ('Not graded yet: %s could not be measured soundly (the GPU was busy); it is graded again '
                              'on the next run' % ', '.join(ungraded))
    return rec


def copy_plain(src, dst, limit=RESULT_FILE_MAX):
    """copies src to dst when src is a plain file (not a link, a pipe or a device) of at most limit bytes: what a
    submission left in its results folder cannot make this process read anything else; True when copied"""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    with os.fdopen(fd, 'rb') as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return False
        with open(dst, 'wb') as o:
            o.write(f.read(limit))
    return True


def save(out, job, rec):
    """results/<student>/<slug>/: what the grading left for the points and the report page (RESULT_FILES, and
    data/*.csv), or a results.json that says why there are no points; record.json last, so a half-saved
    submission is graded again on resume"""
    d = os.path.join(out, 'results', job['student'], job['slug'])
    os.makedirs(d, exist_ok=True)
    for f in RESULT_FILES[2:]:  # an earlier grading's figures go: this one's replace them, or none are there
        if os.path.lexists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    shutil.rmtree(os.path.join(d, 'data'), ignore_errors=True)
    src = os.path.join(job['ws'], 'results')
    kept = rec['status'] in ('graded', 'regrade', 'no-gpu')
    for f in RESULT_FILES:
        if not (kept and copy_plain(os.path.join(src, f), os.path.join(d, f))) and f == 'results.json':
            json.dump({'score': 0, 'max_score': rec['max'], 'output': rec['message'], 'visibility': 'visible',
                       'tests': []}, open(os.path.join(d, f), 'w'), indent=1)
    data = os.path.join(src, 'data')
    if kept and os.path.isdir(data) and not os.path.islink(data):
        os.makedirs(os.path.join(d, 'data'), exist_ok=True)
        for n in sorted(os.listdir(data))[:DATA_FILES_MAX]:
            if n.endswith('.csv'):
                copy_plain(os.path.join(data, n), os.path.join(d, 'data', n))
    try:
        shutil.copyfile(job['log'], os.path.join(d, 'log.txt'))
    except OSError:  # the submission deleted its own copy
        open(os.path.join(d, 'log.txt'), 'w').write('class: the log is gone: the submission deleted its own copy\n')
    tmp = os.path.join(d, 'record.json.tmp')
    json.dump(rec, open(tmp, 'w'), indent=1)
    os.replace(tmp, os.path.join(d, 'record.json'))


def digest(path):
    """sha256 of a submitted file"""
    return hashlib.sha256(open(path, 'rb').read()).hexdigest()


def graded_as(out, student, slug, gpu):
    """the digest of the file that student's slug was graded from, or None (also when it is to be graded again: a
    regrade, or a no-gpu record when gpu says this run has one)"""
    try:
        rec = json.load(open(os.path.join(out, 'results', student, slug, 'record.json')))
        again = rec.get('status') == 'regrade' or (gpu and rec.get('status') == 'no-gpu')
        return None if again else rec.get('sha256')
    except (OSError, ValueError):
        return None


def records(out):
    """every saved record under OUT/results; ValueError naming a record that cannot be read"""
    recs = []
    base = os.path.join(out, 'results')
    for student in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        for slug in sorted(os.listdir(os.path.join(base, student))):
            f = os.path.join(base, student, slug, 'record.json')
            if os.path.isfile(f):
                try:
                    recs.append(json.load(open(f)))
                except (OSError, ValueError) as e:
                    raise ValueError('%s: cannot be read (%s)' % (f, getattr(e, 'strerror', None) or e))
    return recs


def write_gradebook(out, recs):
    """OUT/gradebook.csv: one row per (student, lab), a column per test as NN:test"""
    tests = sorted({'%s:%s' % (r['lab'][:2], t) for r in recs for t in r['tests']})
    tmp = os.path.join(out, 'gradebook.csv.tmp')
    with open(tmp, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['student', 'lab', 'points', 'max', 'status', 'seconds'] + tests)
        for r in recs:
            w.writerow([r['student'], r['lab'], r['points'], r['max'], r['status'], r['seconds']] +
                       [r['tests'].get(t[3:], '') if t[:2] == r['lab'][:2] else '' for t in tests])
    os.replace(tmp, os.path.join(out, 'gradebook.csv'))


def summary(recs):
    """lines: per lab the spread of points, and the tests most often failed"""
    lines = []
    for slug in sorted({r['lab'] for r in recs}):
        rs = [r for r in recs if r['lab'] == slug]
        pts = sorted(r['points'] for r in rs)
        top = max(r['max'] for r in rs) or 1
        bins = [0] * 5
        for p in pts:
            bins[min(4, int(5 * p / top))] += 1
        lines.append('lab %s: %d graded; points min %d, median %s, max %d of %d; by fifths of %d: %s; %s' % (
            slug, len(rs), pts[0], pts[len(pts) // 2], pts[-1], top, top, ' '.join(map(str, bins)),
            ', '.join('%d %s' % (sum(r['status'] == s for r in rs), s) for s in sorted({r['status'] for r in rs}))))
    fails = {}
    for r in recs:
        for t in r.get('failed', []):
            fails['%s %s' % (r['lab'][:2], t)] = fails.get('%s %s' % (r['lab'][:2], t), 0) + 1
    if fails:
        lines.append('most often failed: ' + ', '.join('%s (%d)' % kv for kv in
                                                       sorted(fails.items(), key=lambda kv: (-kv[1], kv[0]))[:8]))
    return lines


def write_dashboard(out, names):
    """builds the class's dashboard, OUT/index.html (dashboard.py); the line that says where it is, or why there is
    none (the gradebook stands either way)"""
    import dashboard  # beside this file; it imports this one for records()
    try:
        return dashboard.build(out, records(out), names)
    except (dashboard.Stop, ValueError) as e:
        return 'dashboard: not written: %s' % e
    except Exception as e:  # the grading is done: one line, never a traceback
        return 'dashboard: not written: %s: %s' % (type(e).__name__, e)


# ===== Grading, here or on Slurm =====
def progress(done, total, t0, graded_now, what, tty, final=False):
    """a progress bar with the time left, on stderr: redrawn on a terminal, else a line per final step"""
    elapsed = time.monotonic() - t0
    left = '' if not graded_now else ', about %s left' % fmt_time(elapsed / graded_now * (total - done))
    bar = '#' * int(30 * done / max(total, 1))
    line = '[%-30s] %d/%d%s  %s' % (bar, done, total, left, what)
    if tty:
        sys.stderr.write('\r%-110s' % line[:110])
    elif final:
        sys.stderr.write(line + '\n')
    sys.stderr.flush()


def fmt_time(s):
    """'1 h 05 min', '4 min 10 s', '12 s'"""
    s = int(s)
    return '%d h %02d min' % (s // 3600, s % 3600 // 60) if s >= 3600 else \
        '%d min %02d s' % (s // 60, s % 60) if s >= 60 else '%d s' % s


def grade_built(job, built, build_s, build_why, max_points):
    """grades one built submission (or records why it was not built), saves its record, removes its copy; the
    record"""
    out, t1 = job['out'], time.monotonic()
    if not built and 'ws' not in job:
        job['ws'], job['log'] = os.path.join(out, 'work', job['student'], job['slug']), os.devnull
        rec = record_for(job, 'crashed', 'Not graded: the kit ' + build_why, build_s, max_points)
    elif not built and build_why:
        rec = record_for(job, 'stopped', 'The build was stopped: it %s.' % build_why, build_s, max_points)
    elif not built:
        errs = [l for l in open(job['log'], errors='replace') if 'error' in l.lower()][:20]
        rec = record_for(job, 'compile', 'Your lab.cu does not compile. The compiler said:\n' + ''.join(errs),
                         build_s, max_points)
    else:
        os.makedirs(os.path.join(job['ws'], 'results'), exist_ok=True)
        if job['user']:
            os.lchown(os.path.join(job['ws'], 'results'), *job['user'])
        genv = dict(job['env'], XL_RESULTS_DIR=os.path.join(job['ws'], 'results'), XL_IMPL='student')
        rc, why = supervise(['build/bin/%s-grade' % job['slug'], '--short-filename'], job['ws'], genv,
                            job['limits'], job['user'], job['log'])
        if why:
            rec = record_for(job, 'stopped', 'The grading was stopped: your code %s.' % why, time.monotonic() - t1,
                             max_points)
        elif not os.path.isfile(os.path.join(job['ws'], 'results', 'points.tsv')):
            rec = record_for(job, 'crashed', 'The grader stopped without results (exit %s): see the log.' % rc,
                             time.monotonic() - t1, max_points)
        else:
            rec = record_for(job, 'graded', '', time.monotonic() - t1, max_points)
    save(out, job, rec)
    shutil.rmtree(job['ws'], ignore_errors=True)
    try:
        os.rmdir(os.path.dirname(job['ws']))  # the student's folder, once it is empty
    except OSError:
        pass
    if job['user']:
        clean_tmp(job['user'][0])
    return rec


def wait_idle(others, limit):
    """waits until no other process uses the GPU (OTHERS --others says, exit 4 while one does), at most limit
    seconds; '' or what still used it"""
    poll, t0, busy = float(os.environ.get('XL_CLASS_POLL', '10')), time.monotonic(), ''
    while True:
        r = subprocess.run([others, '--others'], capture_output=True, text=True)
        if r.returncode != 4:
            return ''
        busy = r.stdout.strip().replace('gpu: ', '', 1)
        if time.monotonic() - t0 >= limit:
            return busy
        print('class: waiting for an idle GPU (%s)' % busy, file=sys.stderr)
        time.sleep(poll)


def grade_here(jobs, info, probe, gpu_at_start, builders, idle_wait=0):
    """grades jobs on this machine, builds running ahead on builders threads, gradings one at a time; '' or
    why grading stopped early"""
    tty, t0, stopped = sys.stderr.isatty(), time.monotonic(), ''
    with concurrent.futures.ThreadPoolExecutor(max_workers=builders) as pool:
        builds = [pool.submit(build_one, j) for j in jobs]
        for i, job in enumerate(jobs):
            what = '%s lab %s' % (job['student'], job['slug'][:2])
            progress(i, len(jobs), t0, i, 'building ' + what, tty)
            built, build_s, build_why = builds[i].result()
            if gpu_at_start and subprocess.run([probe], capture_output=True).returncode != 0:
                prev = jobs[i - 1] if i else None
                stopped = ('the GPU failed its check before %s%s; %d submissions left ungraded: fix or reset the '
                           'GPU, then run again to resume' % (what, ', after %s lab %s' % (
                               prev['student'], prev['slug'][:2]) if prev else '', len(jobs) - i))
                for b in builds[i:]:
                    b.cancel()
                break
            others = os.environ.get('XL_CLASS_OTHERS', os.path.join(KIT, 'build', 'bin', 'gpu-probe'))
            busy = wait_idle(others, idle_wait) if gpu_at_start and idle_wait > 0 else ''
            if busy:
                print('class: the GPU is still in use after %d s (%s): grading %s anyway; a speed test it makes '
                      'unsound is marked for regrading' % (idle_wait, busy, what), file=sys.stderr)
            progress(i, len(jobs), t0, i, 'grading ' + what, tty)
            rec = grade_built(job, built, build_s, build_why, info[job['slug']])
            write_gradebook(job['out'], records(job['out']))
            progress(i + 1, len(jobs), t0, i + 1, '%s: %d/%d %s' % (what, rec['points'], rec['max'], rec['status']),
                     tty, final=True)
    if tty:
        sys.stderr.write('\n')
    return stopped


def grade_on_slurm(jobs, a, out, slurm_args):
    """one sbatch job array, a task per job, waited for; '' or why some tasks left no record"""
    d = os.path.join(out, 'slurm')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, 'tasks.tsv'), 'w') as f:
        for j in jobs:
            f.write('%s\t%s\t%s\t%d\n' % (j['student'], j['slug'], os.path.abspath(j['path']),
                                          j['user'][0] if j['user'] else -1))
    me = os.path.abspath(__file__)
    script = os.path.join(d, 'task.sh')
    with open(script, 'w') as f:
        f.write('#!/bin/bash\n# one task of the class: grades line $SLURM_ARRAY_TASK_ID of tasks.tsv\n'
                'XL_CLASS_GPU=%d exec python3 %s %s --out %s --timeout %s --mem %s --disk %s --task %s:"$SLURM_ARRAY_TASK_ID"\n'
                % (int('gpu' in ' '.join(slurm_args)), me, os.path.abspath(a.submissions), out, a.timeout, a.mem,
                   a.disk, os.path.join(d, 'tasks.tsv')))
    os.chmod(script, 0o755)
    cmd = ['sbatch', '--wait', '--job-name=xferlab-class', '--array=0-%d' % (len(jobs) - 1),
           '--output=' + os.path.join(d, 'task-%a.log')] + slurm_args + [script]
    print('class: ' + ' '.join(cmd), file=sys.stderr)
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    print('class: %s; the array ended after %s' % ((r.stdout.strip() or r.stderr.strip()),
                                                   fmt_time(time.monotonic() - t0)), file=sys.stderr)
    left = [j for j in jobs if graded_as(out, j['student'], j['slug'], False) != digest(j['path'])]
    if left:
        return ('%d of %d tasks left no record (their logs: %s/task-N.log); run again to resume' %
                (len(left), len(jobs), d))
    return ''


def run_task(spec, out, limits, env, max_of, probe):
    """--task FILE:N: grades line N of FILE on this node (a Slurm array task); exit 0 when its record is saved"""
    path, _, n = spec.rpartition(':')
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        die('--task %s: cannot read %s (%s)' % (spec, path, e.strerror))
    if not n.isdigit() or int(n) >= len(lines):
        die('--task %s: no such line' % spec)
    student, slug, lab_cu, uid = lines[int(n)].split('\t')
    gpu = subprocess.run([probe], capture_output=True).returncode == 0
    if os.environ.get('XL_CLASS_GPU') == '1' and not gpu:
        print('class: task %s: this node\'s GPU failed its check; %s lab %s is left for the next run' % (
            n, student, slug[:2]), file=sys.stderr)
        return 3
    job = {'student': student, 'slug': slug, 'path': lab_cu, 'out': out, 'tpl': os.path.join(out, '.kit'),
           'env': dict(env), 'limits': limits, 'user': (int(uid), int(uid)) if int(uid) >= 0 else None,
           'build_seconds': 600, 'no_gpu': not gpu}
    built, build_s, why = build_one(job)
    rec = grade_built(job, built, build_s, why, max_of(slug))
    print('class: %s lab %s: %d/%d %s' % (student, slug[:2], rec['points'], rec['max'], rec['status']))
    return 0


# ===== Main =====
def make_out(out):
    """makes OUT (and its parents) and checks that files can be written there; one line and exit 2 when not"""
    try:
        os.makedirs(out, exist_ok=True)
        fd, check = tempfile.mkstemp(dir=out, prefix='.class-write-check-')  # a name of its own: Slurm tasks run at once
        os.close(fd)
        os.unlink(check)
    except OSError as e:
        die('--out %s: cannot write results there (%s): give a folder you can write' % (out, e.strerror or e))


def main():
    ap = argparse.ArgumentParser(prog='make class', description='Grades a folder of submissions (course staff).')
    ap.add_argument('submissions')
    ap.add_argument('--out', default=os.path.join(KIT, 'build', 'class'))
    ap.add_argument('--labs', default='', help='only these labs, e.g. "01 03"')
    ap.add_argument('--force', action='store_true', help='grade again what was graded before')
    ap.add_argument('--timeout', default='900', help='seconds a grading may take (default 900)')
    ap.add_argument('--mem', default='16G', help='memory a submission may hold (default 16G)')
    ap.add_argument('--disk', default='2G', help='what a submission may write (default 2G)')
    ap.add_argument('--jobs', default=str(os.cpu_count() or 2), help='builds at once (default: the cores)')
    ap.add_argument('--idle-wait', default='300',
                    help='seconds to wait, before each grading, for other processes to leave the GPU (default 300)')
    ap.add_argument('--no-gpu', action='store_true',
                    help='grade without a GPU: CPU tests now, status "no-gpu"; the next run with a GPU grades them again')
    ap.add_argument('--slurm', action='store_true', help='grade on Slurm: one array task per submission')
    ap.add_argument('--slurm-args', default='--gres=gpu:1',
                    help='more sbatch options (default "--gres=gpu:1"; "" without GPUs)')
    ap.add_argument('--names', action='store_true',
                    help='the dashboard (OUT/index.html) names the students: for course staff only, not safe to share')
    ap.add_argument('--task', help=argparse.SUPPRESS)  # FILE:N, one array task (set by --slurm); XL_CLASS_GPU=1:
    # the node must pass the GPU probe (a task that fails it leaves no record, so the next run grades it)
    ap.error = lambda msg: die('%s (make class ARGS="--help" lists the options)' % msg)  # one line, not a usage dump
    a = ap.parse_args()
    limits = {'mem': parse_size(a.mem), 'disk': parse_size(a.disk)}
    if not os.path.isdir(a.submissions):
        die('no folder %s' % a.submissions)
    if not a.timeout.isdigit() or not 1 <= int(a.timeout) <= 86400:
        die('--timeout must be whole seconds, 1 to 86400')
    if not a.jobs.isdigit() or not 1 <= int(a.jobs) <= 256:
        die('--jobs must be 1 to 256')
    if not a.idle_wait.isdigit() or int(a.idle_wait) > 86400:
        die('--idle-wait must be whole seconds, 0 to 86400')
    if not limits['mem'] or not limits['disk'] or limits['disk'] < (64 << 20):
        die('--mem and --disk take sizes like 16G or 512M (--disk at least 64M)')
    limits.update(seconds=int(a.timeout), fsize=limits['disk'])
    labs = kit_labs()
    wanted = []
    for w in a.labs.replace(',', ' ').split():  # 1, 01 or 01-pageable-copy, as make's LAB
        nn = w.zfill(2) if w.isdigit() else w[:2] if w in labs.values() else ''
        if nn not in labs:
            die("--labs: no lab '%s' (labs: %s)" % (w, ' '.join(labs)))
        wanted.append(nn)
    missing = [s for s in labs.values() if not os.access(os.path.join(KIT, 'build', 'bin', s + '-grade'), os.X_OK)]
    if missing:
        die('build the kit first (make): no grader for %s' % ' '.join(missing))
    if a.slurm and not shutil.which('sbatch'):
        die('--slurm needs sbatch on this machine (a Slurm login node)')
    probe = os.environ.get('XL_CLASS_PROBE', os.path.join(KIT, 'build', 'bin', 'gpu-probe'))
    if a.task:
        gpu_at_start = True  # the task probes its node's GPU itself
    elif a.slurm:
        gpu_at_start = 'gpu' in a.slurm_args
        if not gpu_at_start and not a.no_gpu:
            die('--slurm-args asks for no GPU, so the GPU tests would be recorded as 0: ask for one (--gres=gpu:1), '
                'or give --no-gpu to grade the CPU tests now and the GPU tests on a later run with a GPU')
    else:
        r = subprocess.run([probe], capture_output=True, text=True)
        gpu_at_start = r.returncode == 0
        if not gpu_at_start and not a.no_gpu:
            die('no GPU here (%s), so the GPU tests would be recorded as 0: run on a GPU host, or give --no-gpu to '
                'grade the CPU tests now and the GPU tests on a later run with a GPU' % (
                    r.stdout.strip() or 'the GPU check failed'))
    subs, problems = find_submissions(a.submissions, labs, wanted) if not a.task else ([], [])
    if not subs and not a.task:  # a wrong folder: one line, and nothing made in OUT
        die('no submission%s in %s%s: it needs a folder per student holding labs/NN-slug/lab.cu, or files named '
            'STUDENT_NN.cu' % (' of lab ' + ' '.join(wanted) if wanted else '', a.submissions,
                               ' (%d entries skipped; the first: %s)' % (len(problems), problems[0]) if problems else ''))
    if not a.out.strip():
        die('--out is empty: give the folder for the results, e.g. --out build/class')
    out = os.path.abspath(a.out)
    make_out(out)
    env = {k: v for k, v in os.environ.items() if k in ('PATH', 'LANG', 'CUDA_HOME', 'CUDA_VISIBLE_DEVICES',
                                                       'XL_NO_GPU', 'TERM')}
    env.update(XL_NO_INSTALL='1', HOME='/nonexistent', TMPDIR='/tmp')
    if a.task:
        return run_task(a.task, out, limits, env, lab_max, probe)
    for p in problems:
        print('class: skipped %s' % p, file=sys.stderr)
    uid0 = sub_uids()
    if not uid0:
        print('class: not root, so submissions run as you: each has its own copy, session and limits, but nothing '
              'stops one from touching your files (run as root for that)', file=sys.stderr)
    info = {slug: lab_max(slug) for slug in sorted({s[1] for s in subs})}
    todo = [s for s in subs if a.force or graded_as(out, s[0], s[1], gpu_at_start) != digest(s[2])]
    print('class: %d submissions (%d labs), %d to grade, %d graded before%s' % (
        len(subs), len(info), len(todo), len(subs) - len(todo), '' if a.force else ' (--force grades them again)'),
        file=sys.stderr)
    tpl = make_template(out, uid0)
    jobs = [{'student': student, 'slug': slug, 'path': path, 'out': out, 'tpl': tpl, 'env': dict(env),
             'limits': limits, 'user': (uid0 + i, uid0 + i) if uid0 else None, 'build_seconds': 600,
             'no_gpu': not gpu_at_start}
            for i, (student, slug, path) in enumerate(todo)]
    t0 = time.monotonic()
    if not jobs:
        stopped = ''
    elif a.slurm:
        stopped = grade_on_slurm(jobs, a, out, a.slurm_args.split())
    else:
        stopped = grade_here(jobs, info, probe, gpu_at_start, int(a.jobs), int(a.idle_wait))
    recs = [r for r in records(out) if (r['student'], r['lab']) in {(s[0], s[1]) for s in subs}]
    write_gradebook(out, records(out))
    lines = summary(recs) + ([('stopped: ' + stopped)] if stopped else [])
    lines.append('gradebook: %s; results: %s/results/<student>/<lab>/results.json; took %s' % (
        os.path.join(out, 'gradebook.csv'), out, fmt_time(time.monotonic() - t0)))
    lines.append(write_dashboard(out, a.names))
    open(os.path.join(out, 'summary.txt'), 'w').write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    return 1 if stopped else 0


if __name__ == '__main__':
    sys.exit(main())
