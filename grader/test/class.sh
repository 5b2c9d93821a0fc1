# class.sh - make test's section on grading a class (make class); sourced by test.sh, which gives
# B, LOG, gpu_rc and ok/bad/skipped. A class of planted submissions: the reference, the skeleton and the first
# three mutants of labs 01 and 03 (labs/ trees and single files), a file that does not compile, and the hostile ones
# in grader/test/hostile/; graded, resumed, graded again with --force, and stopped by a failing GPU check.
# Run alone (bash grader/test/class.sh, after make) it does just this section, logs in build/test-logs-class;
# that is how to check a GPU host's class grading within one sitting (make test's other sections take longer).
# XL_CLASS_KEEP=DIR keeps the first and last gradebooks and the summary there (DIR from the kit's folder).

# Inside make test the class is graded with the GPU hidden (XL_NO_GPU=1): what this section checks is class.py (isolation,
# limits, gradebook, resume), and make test has already graded the references and every mutant on the GPU. Run alone
# on a GPU host it grades on the GPU too (XL_CLASS_GPU=0 hides it there as well).

# ===== Alone, or inside make test =====
class_alone=0
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    class_alone=1
    set -u
    cd "$(dirname "$0")/../.."
    B=build LOG=build/test-logs-class
    rm -rf "$LOG" && mkdir -p "$LOG"
    . grader/test/testlib.sh
    probe=$($B/bin/gpu-probe)
    gpu_rc=$?
    echo "== the class-grading tests alone: $probe =="
    trap 'echo "xferlab class: $pass passed, $fail failed, $skip skipped"; [ $fail -eq 0 ] || exit 1' EXIT
fi

# ===== A class of planted submissions =====
section "grading a class (make class): isolation, limits, gradebook, resume, the same points twice"
class_gpu=$gpu_rc
[ "${XL_CLASS_GPU:-$class_alone}" = 1 ] || class_gpu=1
class_no_gpu_was=${XL_NO_GPU-unset}
[ $class_gpu -eq 0 ] || export XL_NO_GPU=1
# without a GPU class.py grades only with --no-gpu, and records what it graded as no-gpu (graded again with a GPU)
nogpu=--no-gpu graded=no-gpu
[ $class_gpu -ne 0 ] || nogpu='' graded=graded
# a class of a few mutants per lab (the first three by name): enough to check the gradebook, short enough to grade thrice
class_mutants() { ls grader/mutants/$1/*.diff | head -n 3; }
cls=$(mktemp -d /tmp/xferlab-class.XXXXXX)
chmod 755 "$cls"
subs=$cls/subs
mkdir -p "$subs"
# standalone MUTANT OUT - a planted mutant as one file, as a student would hand it in (its diff applied)
standalone() { python3 grader/mutate/apply.py "$1" "$2"; }
declare -A want # student_lab -> the points it must get, when known before grading
for id in 01 03; do
    slug=$(basename labs/$id-*)
    mkdir -p "$subs/ref$id/labs/$slug"
    cp "solutions/$slug/lab.cu" "$subs/ref$id/labs/$slug/lab.cu"
    cp "labs/$slug/lab.cu" "$subs/skel_$id.cu"
    for m in $(class_mutants $slug); do
        standalone "$m" "$subs/mut-$(basename "$m" .diff)-lab$id.cu"
    done
done
printf 'this is not C\n' >"$subs/broken_01.cu"
isolated=0
[ "$(id -u)" = 0 ] && isolated=1
for h in grader/test/hostile/*.c; do
    name=$(basename "$h" .c)
    [ $isolated = 1 ] || [ "$name" != vandal ] || continue # it would do what it says without root's isolation
    cat solutions/01-*/lab.cu "$h" >"$subs/hostile-${name}_01.cu"
done
printf 'x\n' >"$subs/not a name_01.cu"
n_subs=$(find "$subs" -name '*.cu' ! -name 'not a name*' | wc -l)

# ===== Graded, resumed, forced, stopped, kept waiting =====
# the time limit: 15 s without a GPU (a grading of lab 01 takes ~1 s); with one, three times the longest of the two
# references' gradings and 30 s more: the hang mutant of lab 01 runs into two 10 s test timeouts (26 s on the H100)
tmo=15
if [ $class_gpu -eq 0 ]; then
    longest=0
    for id in 01 03; do
        slug=$(basename labs/$id-*)
        t0=$(date +%s%N)
        grade $B/bin/$slug-grade-solution class-timing-$id || true
        ms=$((($(date +%s%N) - t0) / 1000000))
        [ $ms -le $longest ] || longest=$ms
    done
    tmo=$((3 * longest / 1000 + 30))
    echo "  (the longest reference grading took $((longest / 1000)).$((longest % 1000 / 100)) s: time limit $tmo s)"
fi
# classrun NAME ARGS... - runs the class grader into $cls/out; its output in $LOG/class-NAME.log
classrun() {
    local name=$1; shift
    python3 grader/class/class.py "$subs" --out "$cls/out" --timeout $tmo --mem 2G --disk 256M $nogpu "$@" >"$LOG/class-$name.log" 2>&1
}
# pointsof STUDENT SLUG - "points status" from the gradebook
pointsof() { awk -F, -v s="$1" -v l="$2" '$1 == s && $2 == l { print $3, $5 }' "$cls/out/gradebook.csv"; }
t0=$(date +%s)
if classrun first; then
    ok "class: $n_subs submissions graded in $(($(date +%s) - t0)) s ($(grep -c '^' "$cls/out/gradebook.csv") gradebook lines)"
    grep -q "skipped not a name_01.cu" "$LOG/class-first.log" && ok "class: a file named wrongly is skipped with what to name it" ||
        bad "class: the wrongly named file was not reported"
    # the dashboard (grader/test/dashboard.sh checks what it says): make class writes it, and it stands on its own
    if grep -q "^dashboard: $cls/out/index.html (" "$LOG/class-first.log" &&
        python3 grader/report/pagecheck.py "$cls/out/index.html" >"$LOG/class-dashboard.check" &&
        [ "$(ls "$cls"/out/dashboard/submission-*/*.html | wc -l)" = "$(($(grep -c '^' "$cls/out/gradebook.csv") - 1))" ]; then
        ok "class: make class writes the dashboard, $cls/out/index.html, with a report page per submission; every link resolves"
    else bad "class: the dashboard of make class: $(grep '^dashboard' "$LOG/class-first.log") $(head -2 "$LOG/class-dashboard.check" | tr '\n' ' ')"; fi
    for id in 01 03; do
        slug=$(basename labs/$id-*)
        read -r refp refst <<<"$(pointsof ref$id $slug)"
        read -r sk skst <<<"$(pointsof skel $slug)"
        [ "$refst" = $graded ] && [ "${refp:-x}" = "$(awk -F'\t' 'NR > 1 { s += $2 } END { print s + 0 }' "$cls/out/results/ref$id/$slug/points.tsv")" ] &&
            ok "class: lab $id reference (a labs/ tree) graded: $refp points" || bad "class: lab $id reference: $refp $refst"
        [ -s "$cls/out/results/ref$id/$slug/results.json" ] && python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); sys.exit(0 if "tests" in d and "score" in d else 1)' "$cls/out/results/ref$id/$slug/results.json" &&
            ok "class: lab $id reference has its results.json" || bad "class: lab $id reference has no results.json"
        if [ $class_gpu -eq 0 ]; then
            # with a GPU: full points for the reference, and every mutant loses its targets' points
            max=$(awk -F, -v s=ref$id -v l=$slug '$1 == s && $2 == l { print $4 }' "$cls/out/gradebook.csv")
            [ "$refp" = "$max" ] && ok "class: lab $id reference: full points, $refp/$max" || bad "class: lab $id reference: $refp/$max"
            for m in $(class_mutants $slug); do
                mn=$(basename "$m" .diff)
                for t in $(mutant_targets "$m"); do
                    got=$(awk -F, -v s="mut-$mn" -v l="$slug" -v col="$id:$t" '{ sub(/\r$/, "") } NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == s && $2 == l { print $c[col] }' "$cls/out/gradebook.csv")
                    [ "$got" = 0 ] && ok "class: lab $id mutant $mn loses $t" || bad "class: lab $id mutant $mn gets '$got' on $t"
                done
            done
        fi
        if [ "${refp:-0}" -gt 0 ]; then
            [ "${sk:-$refp}" -lt "$refp" ] && ok "class: lab $id skeleton (a single file) gets $sk, less than the reference's $refp" ||
                bad "class: lab $id skeleton gets $sk, the reference $refp"
        else [ "$sk" = 0 ] && [ "$skst" = $graded ] && ok "class: lab $id skeleton (a single file) graded: 0 points" || bad "class: lab $id skeleton: $sk $skst"; fi
    done
    read -r p st <<<"$(pointsof broken 01-pageable-copy)"
    [ "$st" = compile ] && [ "$p" = 0 ] && grep -q "does not compile" "$cls/out/results/broken/01-pageable-copy/results.json" &&
        ok "class: a file that does not compile gets 0 and the compiler's words" || bad "class: the broken file: $p $st"
    read -r refp _ <<<"$(pointsof ref01 01-pageable-copy)"
    for h in hang:time memory:memory disk:disk; do
        read -r p st <<<"$(pointsof hostile-${h%%:*} 01-pageable-copy)"
        if [ "$st" = stopped ] && [ "$p" = 0 ] && grep -q "${h##*:} limit" "$cls/out/results/hostile-${h%%:*}/01-pageable-copy/record.json"; then
            ok "class: hostile ${h%%:*}: stopped at its ${h##*:} limit, 0 points"
        else bad "class: hostile ${h%%:*}: $p $st (log: $cls/out/results/hostile-${h%%:*}/01-pageable-copy/log.txt)"; fi
    done
    [ ! -e "$cls/out/work/hostile-disk" ] && ok "class: what the hostile ones wrote is gone" || bad "class: hostile files left in $cls/out/work"
    if [ $isolated = 1 ]; then
        read -r p st <<<"$(pointsof hostile-vandal 01-pageable-copy)"
        if [ -f Makefile ] && [ ! -e xferlab-pwned ] && [ "$(head -c 7 "$cls/out/gradebook.csv")" = "student" ] && [ "$p" = "$refp" ]; then
            ok "class: hostile vandal (deletes the kit, the results, the others): nothing outside its copy changed; graded $p like the reference"
        else bad "class: hostile vandal: Makefile $([ -f Makefile ] && echo kept || echo DELETED), pwned file $([ -e xferlab-pwned ] && echo WRITTEN || echo absent), its points $p $st"
            tail -n 8 "$cls/out/results/hostile-vandal/01-pageable-copy/log.txt" 2>/dev/null | sed 's/^/        /'; fi
    else skipped "class: isolation from the kit's files needs root (each submission its own user id); the vandal was not run"; fi
    # resume: nothing graded again; --force: the same points for every submission
    cp "$cls/out/gradebook.csv" "$cls/first.csv"
    classrun resume && grep -q "0 to grade, $n_subs graded before" "$LOG/class-resume.log" &&
        ok "class: run again, it grades nothing ($n_subs graded before)" || bad "class: the resume graded again (log: $LOG/class-resume.log)"
    printf '\n' >>"$subs/skel_01.cu"
    classrun changed && grep -q " 1 to grade" "$LOG/class-changed.log" && ok "class: a changed file is graded again, alone" ||
        bad "class: a changed file was not graded again (log: $LOG/class-changed.log)"
    if classrun force --force; then
        if diff <(cut -d, -f1-5 "$cls/first.csv") <(cut -d, -f1-5 "$cls/out/gradebook.csv") >"$LOG/class-diff.log"; then
            ok "class: graded twice, every submission gets the same points and status"
        else bad "class: points differ between two gradings (diff: $LOG/class-diff.log)"; fi
    else bad "class: the --force run failed (log: $LOG/class-force.log)"; fi
    n03=$(($(class_mutants 03-nonblocking-sync | wc -l) + 2))
    grep -q "most often failed" "$cls/out/summary.txt" && grep -q "^lab 01-pageable-copy: $((n_subs - n03)) graded" "$cls/out/summary.txt" &&
        ok "class: the summary has each lab's spread and the tests most often failed" || bad "class: summary.txt: $(head -3 "$cls/out/summary.txt")"
    # a GPU that fails its check between two submissions stops the grading, with a report; a run after resumes
    printf '#!/bin/sh\nn=$(cat %s/probes 2>/dev/null || echo 0); echo $((n + 1)) >%s/probes; [ $n -lt 3 ]\n' "$cls" "$cls" >"$cls/probe"
    chmod +x "$cls/probe"
    rm -rf "$cls/out/results/skel" "$cls/out/results/ref01" "$cls/out/results/ref03"
    # (with the GPU hidden, the no-gpu records are to grade too once the planted probe says there is a GPU)
    if XL_CLASS_PROBE=$cls/probe classrun probe; then bad "class: a failing GPU check did not stop the grading"
    elif todo=$(sed -n 's/^class: .*, \([0-9]*\) to grade,.*/\1/p' "$LOG/class-probe.log") &&
        grep -q "stopped: the GPU failed its check before .*; $((${todo:-0} - 2)) submissions left ungraded" "$LOG/class-probe.log"; then
        ok "class: a GPU that fails its check stops the grading before the next submission, with a report"
        left=$(find "$cls/out/results/skel" "$cls/out/results/ref01" "$cls/out/results/ref03" -name record.json 2>/dev/null | wc -l)
        classrun after && grep -q " $((4 - left)) to grade" "$LOG/class-after.log" && [ "$(find "$cls/out/results/skel" "$cls/out/results/ref01" "$cls/out/results/ref03" -name record.json | wc -l)" = 4 ] &&
            ok "class: the next run grades the $((4 - left)) left" || bad "class: the run after the stop (log: $LOG/class-after.log)"
    else bad "class: the failing GPU check (log: $LOG/class-probe.log)"; fi
    # a busy GPU: before each grading it waits for other processes to leave (a planted gpu-probe --others that
    # reports one twice), and grades anyway after --idle-wait with a line that says so
    mkdir -p "$cls/busy" && cp "$subs/skel_01.cu" "$cls/busy/"
    printf '#!/bin/sh
n=$(cat %s/others 2>/dev/null || echo 0); echo $((n + 1)) >%s/others
[ $n -lt %s ] || exit 0
echo "gpu: 1 other process is using it: pid 42 notebook"; exit 4
' \
        "$cls" "$cls" 2 >"$cls/busy-probe"
    chmod +x "$cls/busy-probe"
    XL_CLASS_PROBE=/bin/true XL_CLASS_OTHERS=$cls/busy-probe XL_CLASS_POLL=0.1 python3 grader/class/class.py "$cls/busy" \
        --out "$cls/busy-out" --timeout $tmo --mem 2G --disk 256M --idle-wait 30 >"$LOG/class-busy.log" 2>&1
    if [ "$(grep -c 'waiting for an idle GPU (1 other process is using it: pid 42 notebook)' "$LOG/class-busy.log")" = 2 ] &&
        grep -q '^skel,01-pageable-copy,0,' "$cls/busy-out/gradebook.csv"; then
        ok "class: a GPU another process uses is waited for (twice here), then the submission is graded"
    else bad "class: waiting for an idle GPU (log: $LOG/class-busy.log)"; fi
    rm -f "$cls/others"
    sed -i 's/-lt 2 ]/-lt 999 ]/' "$cls/busy-probe"
    XL_CLASS_PROBE=/bin/true XL_CLASS_OTHERS=$cls/busy-probe XL_CLASS_POLL=0.2 python3 grader/class/class.py "$cls/busy" \
        --out "$cls/busy-out" --force --timeout $tmo --mem 2G --disk 256M --idle-wait 1 >"$LOG/class-busy2.log" 2>&1
    if grep -q 'the GPU is still in use after 1 s (1 other process is using it: pid 42 notebook): grading skel lab 01 anyway' "$LOG/class-busy2.log" &&
        grep -q '^skel,01-pageable-copy,0,' "$cls/busy-out/gradebook.csv"; then
        ok "class: a GPU still in use after --idle-wait is graded anyway, and the log says so"
    else bad "class: --idle-wait's limit (log: $LOG/class-busy2.log)"; fi
    # a speed test the grader reported NOT GRADED: the submission's status is regrade, and the next run grades it
    mkdir -p "$cls/rg/ws/results" && printf 'test\tscore\tmax\tstatus\tseconds\na.b\t3\t3\tpassed\t0.2\nc.d\t0\t5\tungraded\t1.0\n' >"$cls/rg/ws/results/points.tsv"
    echo x >"$cls/rg/f.cu"
    if (cd grader/class && python3 -c '
import importlib, sys
c = importlib.import_module("class")
job = {"student": "s", "slug": "01-pageable-copy", "path": sys.argv[1] + "/f.cu", "ws": sys.argv[1] + "/ws", "log": "/dev/null"}
rec = c.record_for(job, "graded", "", 1.0, 8)
assert rec["status"] == "regrade" and rec["points"] == 3 and rec["failed"] == [] and "c.d" in rec["message"], rec
c.save(sys.argv[1] + "/out", job, rec)
assert c.graded_as(sys.argv[1] + "/out", "s", "01-pageable-copy", False) is None
' "$cls/rg") >"$LOG/class-regrade.log" 2>&1; then
        ok "class: a submission with a speed test NOT GRADED is recorded as regrade, keeps its other points, and is graded again next run"
    else bad "class: the regrade status (log: $LOG/class-regrade.log)"; fi
    # no GPU: class.py refuses without --no-gpu (one line, exit 2, nothing written); with it, the CPU tests' points
    # are kept as status no-gpu, a run without a GPU leaves them, and the next run with a GPU grades them again
    XL_CLASS_PROBE=/bin/false python3 grader/class/class.py "$subs" --out "$cls/refused" >"$LOG/class-refused.log" 2>&1
    rc=$?
    [ $rc = 2 ] && [ "$(wc -l <"$LOG/class-refused.log")" = 1 ] && grep -q "^class: no GPU here (.*give --no-gpu" "$LOG/class-refused.log" && [ ! -e "$cls/refused" ] &&
        ok "class: without a GPU and without --no-gpu it refuses in one line, exit 2, writing nothing" ||
        bad "class: no GPU, no --no-gpu: exit $rc, $(head -c 300 "$LOG/class-refused.log")"
    mkdir -p "$cls/ng" && cp -r "$subs/ref01" "$cls/ng/"
    # ngrun NAME PROBE ARGS... - grades $cls/ng into $cls/ng-out with the GPU check PROBE
    ngrun() {
        local name=$1 probe=$2; shift 2
        XL_CLASS_PROBE=$probe python3 grader/class/class.py "$cls/ng" --out "$cls/ng-out" --timeout $tmo --mem 2G --disk 256M "$@" >"$LOG/class-ng-$name.log" 2>&1
    }
    ngrun first /bin/false --no-gpu
    read -r p st <<<"$(awk -F, '$1 == "ref01" { print $3, $5 }' "$cls/ng-out/gradebook.csv" 2>/dev/null)"
    [ "$st" = no-gpu ] && [ "${p:-0}" -gt 0 ] && grep -q "need.* a GPU" "$cls/ng-out/results/ref01/01-pageable-copy/record.json" &&
        ok "class: --no-gpu without a GPU: status no-gpu, the CPU tests' $p points kept" || bad "class: --no-gpu: '$p $st' (log: $LOG/class-ng-first.log)"
    ngrun again /bin/false --no-gpu && grep -q " 0 to grade" "$LOG/class-ng-again.log" &&
        ok "class: a no-gpu record is left alone by another run without a GPU" || bad "class: a run without a GPU graded a no-gpu record again (log: $LOG/class-ng-again.log)"
    ngrun gpu /bin/true && grep -q " 1 to grade" "$LOG/class-ng-gpu.log" && [ "$(awk -F, '$1 == "ref01" { print $5 }' "$cls/ng-out/gradebook.csv")" = graded ] &&
        ok "class: a no-gpu record is graded again by the next run with a GPU" || bad "class: the run with a GPU did not grade the no-gpu record again (log: $LOG/class-ng-gpu.log)"
    # --out that cannot be written: one line, exit 2
    : >"$cls/a-file"
    for o in /proc/xferlab-nope "$cls/a-file" "$cls/a-file/below"; do
        python3 grader/class/class.py "$subs" --out "$o" $nogpu >"$LOG/class-badout.log" 2>&1
        rc=$?
        [ $rc = 2 ] && [ "$(wc -l <"$LOG/class-badout.log")" = 1 ] && grep -q "^class: --out $o: cannot write results there" "$LOG/class-badout.log" &&
            ok "class: --out $o: one line, exit 2" || bad "class: --out $o: exit $rc, $(head -c 300 "$LOG/class-badout.log")"
    done
else
    bad "class: class.py failed (log: $LOG/class-first.log)"; tail -5 "$LOG/class-first.log" | sed 's/^/        /'
fi

# ===== Two class runs at once =====
# two class runs at once on this machine (two labs, two GPUs): neither may touch the other's submissions. On a
# host with one GPU the two would time each other's speed tests, so there they grade the CPU tests only (XL_NO_GPU=1):
# what this checks is the isolation.
if [ -d "$subs/ref01" ]; then
    for k in 1 2; do
        mkdir -p "$cls/twin$k" && cp -r "$subs/ref01" "$cls/twin$k/" && cp "$subs/hostile-memory_01.cu" "$subs/hostile-hang_01.cu" "$cls/twin$k/"
    done
    for k in 1 2; do
        XL_NO_GPU=1 python3 grader/class/class.py "$cls/twin$k" --out "$cls/twin-out$k" --timeout 15 --mem 2G --disk 256M --no-gpu >"$LOG/class-twin$k.log" 2>&1 &
    done
    wait
    read -r p1 s1 <<<"$(awk -F, '$1 == "ref01" { print $3, $5 }' "$cls/twin-out1/gradebook.csv" 2>/dev/null)"
    read -r p2 s2 <<<"$(awk -F, '$1 == "ref01" { print $3, $5 }' "$cls/twin-out2/gradebook.csv" 2>/dev/null)"
    m1=$(awk -F, '$1 == "hostile-memory" { print $5 }' "$cls/twin-out1/gradebook.csv" 2>/dev/null)
    m2=$(awk -F, '$1 == "hostile-memory" { print $5 }' "$cls/twin-out2/gradebook.csv" 2>/dev/null)
    h1=$(awk -F, '$1 == "hostile-hang" { print $5 }' "$cls/twin-out1/gradebook.csv" 2>/dev/null)
    h2=$(awk -F, '$1 == "hostile-hang" { print $5 }' "$cls/twin-out2/gradebook.csv" 2>/dev/null)
    if [ "$s1 $s2 $m1 $m2 $h1 $h2" = "no-gpu no-gpu stopped stopped stopped stopped" ] && [ "$p1" = "$p2" ]; then
        ok "class: two runs at once each grade their own (reference $p1 points in both; each hang and memory hog stopped by its own run)"
    else bad "class: two runs at once: reference $p1 $s1 / $p2 $s2, memory hog $m1 / $m2, hang $h1 / $h2 (logs: $LOG/class-twin1.log, twin2)"; fi
fi

# ===== On Slurm =====
section "grading a class on Slurm (a single-node cluster started here, no GPU): job array, merge, resume"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    skipped "slurm: needs root and Debian's slurm-wlm and munge (sudo apt-get install slurm-wlm munge)"
elif ! grader/class/slurm-local.sh start "$cls/slurm" >"$LOG/slurm-start.log" 2>&1; then
    bad "slurm: the single-node cluster did not start ($(tail -1 "$LOG/slurm-start.log"))"
else
    ok "slurm: $(tail -1 "$LOG/slurm-start.log")"
    small=$cls/small
    mkdir -p "$small"
    m01=$(class_mutants 01-pageable-copy | head -n 1)
    cp -r "$subs/ref01" "$subs/skel_01.cu" "$subs/broken_01.cu" "$subs/mut-$(basename "$m01" .diff)-lab01.cu" "$small/"
    # slurmrun NAME ARGS... - the class of $small graded through sbatch into $cls/sl-out
    slurmrun() {
        local name=$1; shift
        SLURM_CONF=$cls/slurm/slurm.conf python3 grader/class/class.py "$small" --out "$cls/sl-out" --slurm --slurm-args "" \
            --timeout $tmo --mem 2G --disk 256M --no-gpu "$@" >"$LOG/slurm-$name.log" 2>&1
    }
    python3 grader/class/class.py "$small" --out "$cls/local-out" --timeout $tmo --mem 2G --disk 256M $nogpu >"$LOG/slurm-local-run.log" 2>&1
    if slurmrun first && grep -q "sbatch --wait .*--array=0-3 " "$LOG/slurm-first.log" && [ "$(ls "$cls/sl-out/slurm/"task-*.log | wc -l)" = 4 ]; then
        ok "slurm: one sbatch job array of 4 tasks, one per submission, each with its log"
        if diff <(cut -d, -f1-5 "$cls/local-out/gradebook.csv") <(cut -d, -f1-5 "$cls/sl-out/gradebook.csv") >"$LOG/slurm-diff.log"; then
            ok "slurm: the merged gradebook has the same points and status as grading here"
        else bad "slurm: the gradebook differs from grading here (diff: $LOG/slurm-diff.log)"; fi
        rm -rf "$cls/sl-out/results/skel" "$cls/sl-out/results/broken"
        if slurmrun resume && grep -q "2 to grade, 2 graded before" "$LOG/slurm-resume.log" && grep -q "array=0-1 " "$LOG/slurm-resume.log" &&
            diff <(cut -d, -f1-5 "$cls/local-out/gradebook.csv") <(cut -d, -f1-5 "$cls/sl-out/gradebook.csv") >/dev/null; then
            ok "slurm: run again after losing 2 results, an array of 2 tasks grades just those, merged into the same gradebook"
        else bad "slurm: the resume (log: $LOG/slurm-resume.log)"; fi
    else bad "slurm: the job array (log: $LOG/slurm-first.log)"; tail -5 "$LOG/slurm-first.log" | sed 's/^/        /'; fi
    grader/class/slurm-local.sh stop "$cls/slurm" >/dev/null 2>&1 || bad "slurm: the cluster did not stop"
fi

# ===== What is kept, and the GPU as it was =====
if [ -n "${XL_CLASS_KEEP:-}" ] && mkdir -p "$XL_CLASS_KEEP"; then # the gradebooks of the first and the last run, and the summary
    for f in first.csv:gradebook-first.csv out/gradebook.csv:gradebook-last.csv out/summary.txt:summary.txt; do
        [ ! -f "$cls/${f%%:*}" ] || cp "$cls/${f%%:*}" "$XL_CLASS_KEEP/${f##*:}"
    done
fi
rm -rf "$cls"
# the GPU as it was for the sections after this one
if [ "$class_no_gpu_was" = unset ]; then unset XL_NO_GPU; else export XL_NO_GPU=$class_no_gpu_was; fi
