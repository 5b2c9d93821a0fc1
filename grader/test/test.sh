#!/usr/bin/env bash
# test.sh - the kit's own test suite (make test). Course staff and CI.
#
# 1. unit tests of common/ (Criterion, CPU only)
# 2. the grading model, against a grader whose tests misbehave on purpose
# 3. grading the graders: on a GPU the solution gets full points (XL_REF_RUNS runs in a row, default 1: make
#    stability grades it 20 and more), the skeleton does not pass, every planted mutant loses the points of its
#    target tests;
#    without a GPU the same checks run for the CPU tests and the GPU tests must be SKIPPED
# 4. the explorers' command line: bad input gives one line and a non-zero exit
# 5. charts render from the committed reference data
# Ends with "xferlab: N passed, N failed, N skipped"; exits 1 when anything failed.
# XL_TEST_LABS="03 04" grades only those labs' graders (the other sections always run); XL_CLASS=0 leaves out
# the class-grading section (on a GPU it grades about 30 submissions, several times).

# ===== Setup =====
set -u
cd "$(dirname "$0")/../.."
B=build
LOG=$B/test-logs
rm -rf "$LOG" && mkdir -p "$LOG"
. grader/test/testlib.sh

# score FILE TEST - "score max status" of TEST in a points.tsv
score() { awk -F'\t' -v t="$2" '$1 == t { print $2, $3, $4 }' "$1"; }
# total FILE - "score max" over a points.tsv
total() { awk -F'\t' 'NR > 1 { s += $2; m += $3 } END { print s + 0, m + 0 }' "$1"; }
# mutant_targets MUT - the tests a planted mutant names on its " * target:" lines
mutant_targets() { sed -n 's/^ \* target: //p' "$1"; }
# grade_mutant SLUG MUT - grades a planted mutant on its target tests only, into $LOG/SLUG-mutant-NAME/
grade_mutant() {
    local name targets
    name=$(basename "$2" .diff)
    targets=$(mutant_targets "$2")
    [ -n "$targets" ] || return 0
    grade "$B/bin/$1-mutant-$name" "$1-mutant-$name" --filter="@($(echo $targets | sed 's/\./\//g; s/ /|/g'))"
}
# count FILE STATUS - how many tests have STATUS
count() { awk -F'\t' -v st="$2" 'NR > 1 && $4 == st { n++ } END { print n + 0 }' "$1"; }


probe=$($B/bin/gpu-probe)
gpu_rc=$?
echo "== make test: ${probe} =="

# ===== Unit tests and the grading model =====
section "unit tests of common/"
for t in $B/bin/unit-*; do
    name=${t##*/}
    if "$t" >"$LOG/$name.log" 2>&1; then
        ok "$name: $(grep -o 'Tested: [0-9]*' "$LOG/$name.log")"
    else
        bad "$name (log: $LOG/$name.log)"
        grep -B3 'FAIL' "$LOG/$name.log" | sed 's/^/        /' | head -20
    fi
done

section "the grading model"
if XL_NO_GPU=1 XL_RATIO_LOG=$LOG/selftest-ratios.tsv grade $B/bin/grade-selftest selftest; then
    f=$LOG/selftest/points.tsv
    expect() { # TEST SCORE STATUS WHAT
        local got; got=$(score "$f" "$1")
        if [ "${got%% *}" = "$2" ] && [ "${got##* }" = "$3" ]; then ok "grading model: $4"; else bad "grading model: $4 (got '$got')"; fi
    }
    expect model.passes 3 passed "a passing test earns its points"
    expect model.fails 0 failed "a failed check earns nothing"
    expect model.calls_exit0 0 failed "exit(0) earns nothing (Criterion calls it passed)"
    expect model.calls__exit0 0 failed "_exit(0) earns nothing"
    expect model.aborts 0 failed "abort() earns nothing"
    expect model.segfaults 0 failed "a crash earns nothing"
    expect model.hangs 0 failed "a hang is stopped and earns nothing"
    expect model.cuda_error 0 failed "a failed CUDA check fails the test"
    expect model.needs_gpu 0 skipped "a GPU test without a GPU is skipped"
    expect model.hidden 1 passed "a hidden test counts like any other"
    expect model.ratio_retry 2 passed "a ratio under its threshold is measured again, and the second try counts"
    expect model.ratio_low 0 failed "a ratio under its threshold in 3 tries fails"
    expect model.ratio_unsound 0 ungraded "a low ratio from an unsound measurement (the kit's baseline moved) is NOT GRADED, not failed"
    expect model.ratio_impossible_then_true 2 passed "an impossible figure (above its bound) never passes; the true one after it does"
    expect model.ratio_nan 0 ungraded "a ratio that is not a number is NOT GRADED"
    expect model.timed_within 1 passed "a timed figure within its bar (at most, at least) passes"
    expect model.timed_over 0 failed "a timed figure past its bar fails (no other process on the GPU)"
    if [ "$(grep -E '^model\.ratio_(low|retry)	' "$LOG/selftest-ratios.tsv" | cut -f1-4,6,7 | sort | tr '\t\n' '|;')" = "model.ratio_low|1|0.5|0.8|low|always 0.5;model.ratio_low|2|0.5|0.8|low|always 0.5;model.ratio_low|3|0.5|0.8|low|always 0.5;model.ratio_retry|1|0.5|0.8|rising|call 1 of rising;model.ratio_retry|2|0.9|0.8|rising|call 2 of rising;" ] &&
        [ "$(grep -c '^model\.ratio_unsound	.*	NOT SOUND (the planted baseline moved from 1 to 3' "$LOG/selftest-ratios.tsv")" = 3 ]; then
        ok "grading model: XL_RATIO_LOG gets one line per measurement, keyed by the test's name, with its bar, label and figures, an unsound one marked NOT SOUND"
    else bad "grading model: the ratio log ($LOG/selftest-ratios.tsv) is not one line per measurement"; fi
    mkdir -p "$LOG/selftest-v"
    if XL_NO_GPU=1 XL_VERBOSE=1 XL_RESULTS_DIR="$LOG/selftest-v" $B/bin/grade-selftest 2>/dev/null | grep -q 'a note shown' &&
        ! XL_NO_GPU=1 XL_VERBOSE=0 XL_RESULTS_DIR="$LOG/selftest-v" $B/bin/grade-selftest 2>/dev/null | grep -q 'a note shown'; then
        ok "grading model: XL_VERBOSE=1 shows a passing test's notes, XL_VERBOSE=0 does not"
    else bad "grading model: XL_VERBOSE=1 / 0 did not show / hide a passing test's notes"; fi
    if XL_POINTS_TABLE=1 $B/bin/grade-selftest | grep -q 'model.hidden'; then bad "grading model: the points table lists a hidden test"
    else ok "grading model: the points table leaves hidden tests out (one line adds up their points)"; fi
    json=$LOG/selftest/results.json
    for msg in 'planted failure 42' 'ended the process' 'signal 11' 'did not finish within 1 s' 'below the threshold in 3 fresh' \
        'NOT GRADED: unsound (need >= 0.8) could not be measured soundly' '2 speed tests were NOT GRADED' \
        'selftest.c:[0-9]*: cudaErrorInvalidValue failed' 'XL_NO_GPU' 'a note shown with the result' 'planted time 305 ms over its bar'; do
        if grep -q "$msg" "$json"; then ok "grading model: results.json says '$msg'"; else bad "grading model: results.json lacks '$msg'"; fi
    done
    if command -v python3 >/dev/null 2>&1; then
        if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["score"]==9 and d["max_score"]==34 and all({"name","score","max_score","status","output","visibility"} <= set(t) for t in d["tests"]) and [t["visibility"] for t in d["tests"] if t["name"]=="model.hidden"]==["hidden"]' "$json"; then
            ok "grading model: results.json is valid Gradescope JSON (score 9 of 34; the hidden test marked hidden)"
        else bad "grading model: results.json is not valid Gradescope JSON"; fi
    else skipped "results.json validation: no python3"; fi
    if grep -q '^lab 00 grading-model: 9/34 .*(2 tests NOT GRADED: ' "$LOG/selftest.log"; then ok "grading model: total line, with the tests not graded"; else bad "grading model: total line missing"; fi
else
    bad "the selftest grader did not produce results (log: $LOG/selftest.log)"
fi

# ===== Grading the graders =====
cores=$(nproc 2>/dev/null || echo 2)
mutant_jobs=${XL_MUTANT_JOBS:-$((cores / 2 < 4 ? 4 : cores / 2 > 8 ? 8 : cores / 2))}
if [ -d solutions ]; then section "grading the graders${XL_TEST_LABS:+ (labs $XL_TEST_LABS only)}"
else section "grading your labs (a student tree: no reference solutions here)"; fi
for lab in labs/[0-9][0-9]-*/; do
    slug=$(basename "$lab")
    case " ${XL_TEST_LABS:-${slug%%-*}} " in *" ${slug%%-*} "*) ;; *) continue ;; esac
    section "$slug: the reference, the skeleton, the planted mutants"
    runs=${XL_REF_RUNS:-1}
    [ -d solutions ] || runs=0 # a student tree (make handout): no reference to grade
    for i in $(seq 1 $runs); do
        if ! XL_RATIO_LOG=$LOG/$slug-ratios.tsv grade $B/bin/$slug-grade-solution $slug-solution-$i; then
            bad "$slug: solution run $i gave no results"; continue; fi
        f=$LOG/$slug-solution-$i/points.tsv
        read -r s m <<<"$(total "$f")"
        nskip=$(count "$f" skipped); nfail=$(count "$f" failed)
        if [ $gpu_rc -eq 0 ]; then
            if [ "$s" = "$m" ] && [ "$nskip" = 0 ]; then ok "$slug: solution run $i: full points, $s/$m"
            else bad "$slug: solution run $i: $s/$m, $nfail failed, $nskip skipped (log: $LOG/$slug-solution-$i.log)"
                grep -A3 'FAILED' "$LOG/$slug-solution-$i.log" | sed 's/^/        /' | head -24; fi
        else
            if [ "$nfail" = 0 ] && [ "$nskip" -gt 0 ]; then
                ok "$slug: solution passes every CPU test ($s points); $nskip GPU tests SKIPPED"
                if grep -q "SKIPPED" "$LOG/$slug-solution-$i.log" && grep -q "skipped: no CUDA GPU" "$LOG/$slug-solution-$i.log"; then
                    ok "$slug: the skip says why in one line"; else bad "$slug: no skip reason in the output"; fi
            else bad "$slug: solution without a GPU: $nfail failed, $nskip skipped (log: $LOG/$slug-solution-$i.log)"; fi
        fi
    done
    if grade $B/bin/$slug-grade $slug-skeleton; then
        f=$LOG/$slug-skeleton/points.tsv
        read -r s m <<<"$(total "$f")"
        if [ ! -d solutions ]; then
            ok "$slug: your lab.cu was graded: $s/$m here ('make grade LAB=${slug%%-*}' says what each test found)"
            continue
        fi
        cpu_max=$(awk -F'\t' 'NR > 1 && $4 != "skipped" { m += $3 } END { print m + 0 }' "$f")
        if [ "$cpu_max" = 0 ]; then skipped "$slug: the skeleton: every test needs a GPU"
        elif [ "$s" -lt "$cpu_max" ]; then ok "$slug: the skeleton does not pass ($s of the $cpu_max points graded here)"
        else bad "$slug: the skeleton gets $s of $cpu_max graded points"; fi
    else bad "$slug: skeleton gave no results"; fi
    # planted mutants, each on the tests it names (a planted mistake is proven on its targets; the rest of the
    # grader is not run again for every mutant). Those aimed at a speed or timed check (the reference's ratio log
    # names them) are graded one at a time; the others XL_MUTANT_JOBS at a time (default half the cores, 4 to 8), as
    # a correctness check must hold on a shared GPU anyway
    speed_tests=" $(cut -f1 "$LOG/$slug-ratios.tsv" 2>/dev/null | sed 's/#.*//' | sort -u | tr '\n' ' ') "
    quick=() slow=()
    for mut in grader/mutants/$slug/*.diff; do
        [ -f "$mut" ] || continue
        at_speed=0
        for t in $(mutant_targets "$mut"); do case $speed_tests in *" $t "*) at_speed=1 ;; esac; done
        if [ $at_speed = 1 ]; then slow+=("$mut"); else quick+=("$mut"); fi
    done
    for mut in ${quick[@]+"${quick[@]}"}; do
        while [ "$(jobs -rp | wc -l)" -ge "$mutant_jobs" ]; do wait -n; done
        grade_mutant "$slug" "$mut" &
    done
    wait
    for mut in ${slow[@]+"${slow[@]}"}; do grade_mutant "$slug" "$mut"; done
    for mut in grader/mutants/$slug/*.diff; do
        [ -f "$mut" ] || continue
        name=$(basename "$mut" .diff)
        targets=$(mutant_targets "$mut")
        [ -n "$targets" ] || { bad "$slug mutant $name: no ' * target:' line"; continue; }
        [ -f "$LOG/$slug-mutant-$name/points.tsv" ] || { bad "$slug mutant $name: no results (log: $LOG/$slug-mutant-$name.log)"; continue; }
        f=$LOG/$slug-mutant-$name/points.tsv
        for t in $targets; do
            read -r s m st <<<"$(score "$f" "$t")"
            if [ -z "${m:-}" ]; then bad "$slug mutant $name: target $t is not a test of the grader"
            elif [ "$st" = skipped ]; then skipped "$slug mutant $name: $t needs a GPU"
            elif [ "$st" = ungraded ]; then # an unsound measurement earns nothing but proves nothing: once more, alone
                grade "$B/bin/$slug-mutant-$name" "$slug-mutant-$name-again" --filter="${t/./\/}"
                read -r s m st <<<"$(score "$LOG/$slug-mutant-$name-again/points.tsv" "$t" 2>/dev/null)"
                if [ "$st" = failed ] && [ "$s" = 0 ]; then ok "$slug mutant $name: loses $t ($m points; graded twice, the first measurement unsound)"
                else bad "$slug mutant $name: $t was NOT GRADED, then ${st:-no result}: its measurement was unsound on this GPU (log: $LOG/$slug-mutant-$name-again.log)"; fi
            elif [ "$s" = 0 ]; then ok "$slug mutant $name: loses $t ($m points)"
            else bad "$slug mutant $name: still earns $s/$m on $t (log: $LOG/$slug-mutant-$name.log)"; fi
        done
    done
done

section "a busy GPU: references graded beside the kit's own load (build/bin/loadgen): nothing fails, speed is passed or NOT GRADED"
if [ $gpu_rc -ne 0 ] || [ ! -d solutions ]; then skipped "busy GPU: needs a GPU and the reference solutions"
else
    # each kind of load beside the labs it is hardest on (XL_LOAD_LABS="NN ..." grades those under every kind)
    for kl in copy:02 compute:02,05 memory:05; do
        kind=${kl%%:*} ids=${XL_LOAD_LABS:-${kl#*:}}
        $B/bin/loadgen --kind "$kind" --seconds 300 >"$LOG/load-$kind.log" 2>&1 &
        lp=$!
        for _ in $(seq 1 300); do grep -q 'loadgen: .* load on' "$LOG/load-$kind.log" && break; kill -0 $lp 2>/dev/null || break; sleep 0.1; done
        others=$($B/bin/gpu-probe --others); orc=$?
        if [ $orc = 4 ]; then ok "busy GPU: gpu-probe --others sees the $kind load ($others)"
        elif [ $orc = 0 ] && [ "${others#*cannot tell}" != "$others" ]; then skipped "busy GPU: $others"
        else bad "busy GPU: gpu-probe --others did not see the $kind load (exit $orc: $others; load log: $LOG/load-$kind.log)"; fi
        for id in ${ids//,/ }; do
            slug=$(basename labs/$id-*)
            if ! grade $B/bin/$slug-grade-solution $slug-load-$kind; then bad "busy GPU: $slug beside $kind load gave no results"; continue; fi
            f=$LOG/$slug-load-$kind/points.tsv
            read -r s m <<<"$(total "$f")"
            nfail=$(count "$f" failed); nung=$(count "$f" ungraded)
            if [ "$nfail" = 0 ]; then
                ok "busy GPU: $slug reference beside $kind load: no test failed ($s/$m, $nung speed tests NOT GRADED)"
            else bad "busy GPU: $slug reference beside $kind load: $nfail tests FAILED (log: $LOG/$slug-load-$kind.log)"
                grep -A3 'FAILED' "$LOG/$slug-load-$kind.log" | sed 's/^/        /' | head -12; fi
            if [ "$nung" != 0 ] && ! grep -q 'could not be measured soundly: ' "$LOG/$slug-load-$kind.log"; then
                bad "busy GPU: $slug: a test NOT GRADED without its reason (log: $LOG/$slug-load-$kind.log)"; fi
        done
        kill $lp 2>/dev/null; wait $lp 2>/dev/null
    done
fi

# generated mutants: the mutation tool's own tests here, a fixed sample graded on a GPU (grader/mutate/)
[ ! -f grader/test/mutate.sh ] || . grader/test/mutate.sh

# ===== Handouts, explorers and packaging =====
section "handouts: the points table is the grader's"
for lab in labs/[0-9][0-9]-*/; do
    slug=$(basename "$lab")
    want=$(XL_POINTS_TABLE=1 $B/bin/$slug-grade)
    got=$(sed -n '/<!-- points:begin -->/,/<!-- points:end -->/p' "$lab/README.md" | sed '1d;$d')
    if [ -n "$want" ] && [ "$want" = "$got" ]; then ok "$slug: handout points table matches the grader"
    else bad "$slug: handout points table differs from the grader's (XL_POINTS_TABLE=1 $B/bin/$slug-grade prints it)"; fi
done

section "explorers: bad input gives one line and a non-zero exit"
for ex in $B/bin/*-explore; do
    name=${ex##*/}
    check_cli() { # EXPECTED_RC WHAT ARGS...
        local want=$1 what=$2; shift 2
        local out rc
        out=$(XL_NO_GPU=${XL_NO_GPU_FOR_CLI:-0} "$ex" "$@" 2>&1 >/dev/null); rc=$?
        if [ $rc = "$want" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [ -n "$out" ]; then ok "$name $what: exit $rc, '$out'"
        else bad "$name $what: exit $rc (want $want), said: $out"; fi
    }
    check_cli 2 "--bogus" --bogus
    check_cli 2 "--reps -1" --reps -1
    check_cli 2 "--reps" --reps
    if "$ex" --help | grep -q -- '--max'; then
        check_cli 2 "--max 12Q" --max 12Q
        check_cli 2 "--max 1T" --max 1T
    fi
    if "$ex" --help | grep -q -- '--min'; then
        check_cli 2 "--min 0" --min 0
        check_cli 2 "--min 1M --max 4K" --min 1M --max 4K
    fi
    XL_NO_GPU_FOR_CLI=1 check_cli 3 "without a GPU"
    for o in --max --alloc-max --total; do # a size below an option's least is told as --help tells sizes, not in bytes
        "$ex" --help | grep -q -- "$o " || continue
        out=$("$ex" $o 1 2>&1 >/dev/null)
        case $out in *"at least "*) printf '%s\n' "$out" | grep -Eq '[0-9]{5,} bytes' && bad "$name $o 1: a size in raw bytes: $out" ||
            ok "$name $o 1: the least size as --help writes sizes: '$out'" ;; esac
    done
    if "$ex" --help | grep -q -- '--csv'; then ok "$name --help"; else bad "$name --help"; fi
done

section "LAB and IMPL: one reading for every target; a value a target cannot take is one line and exit 2"
# make_refuses WHAT EXPECT ARGS... - make ARGS exits 2 with one line on stderr that holds EXPECT, having built nothing
make_refuses() {
    local what=$1 want=$2 err rc
    shift 2
    err=$(make --no-print-directory "$@" 2>&1 >/dev/null); rc=$?
    if [ $rc = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [ "${err#*"$want"}" != "$err" ]; then ok "make $what: exit 2, '$err'"
    else bad "make $what: exit $rc, said: $err"; fi
}
make_refuses "grade LAB=99" "no lab '99': say 1, 01 or the full name (labs: $(ls -d labs/[0-9][0-9]-*/ | xargs -n1 basename | tr '\n' ' ' | sed 's/ $//'))" grade LAB=99
make_refuses "grade LAB=01-pageable (a slug cut short)" "no lab '01-pageable'" grade LAB=01-pageable
make_refuses "grade LAB='01 x' (one of several wrong)" "no lab 'x'" grade LAB="01 x"
make_refuses "grade IMPL=Solution" "IMPL is student (your lab.cu, the default) or solution (the reference), not 'Solution'" grade IMPL=Solution
make_refuses "grade IMPL= (empty)" "not ''" grade IMPL=
make_refuses "run without LAB" "say which lab, e.g. make run LAB=01" run
make_refuses "run LAB='01 02'" "one lab at a time, e.g. LAB=01" run LAB="01 02"
make_refuses "run IMPL=reference" "not 'reference'" run LAB=01 IMPL=reference
make_refuses "stability LAB=1x" "make stability: no lab '1x'" stability LAB=1x
make_refuses "stability LAB='1 2'" "make stability: one lab at a time" stability LAB="1 2"
make_refuses "classroom LAB=99" "make classroom: no lab '99'" classroom LAB=99
make_refuses "classroom without LAB" "make classroom: say which lab" classroom
make_refuses "gradescope LAB=7" "make gradescope: no lab '7'" gradescope LAB=7
make_refuses "mutate-gen LAB=9x" "make mutate-gen: no lab '9x'" mutate-gen LAB=9x
# every spelling of a lab names the same lab, and a target that takes several takes several
first=$(basename labs/01-*)
for spelling in 1 01 "$first"; do
    if make -n --no-print-directory grade LAB="$spelling" 2>/dev/null | grep -q "for l in $first; do"; then
        ok "make grade LAB=$spelling grades $first"
    else bad "make grade LAB=$spelling does not grade $first"; fi
done
second=$(basename labs/02-*)
if make -n --no-print-directory grade LAB="1 $second" IMPL=solution 2>/dev/null | grep -q "for l in $first $second; do" &&
    make -n --no-print-directory grade LAB="1 $second" IMPL=solution 2>/dev/null | grep -q 'bin=build/bin/$l-grade-solution;'; then
    ok "make grade LAB='1 $second' IMPL=solution grades the two references"
else bad "make grade LAB='1 $second' did not grade those two"; fi

section "graders: an output file that cannot be written, or a --filter that matches nothing, is one line and exit 2"
g01=$B/bin/01-pageable-copy-grade
check_line() { # WANT_RC WHAT CMD... - CMD says exactly one line (stdout and stderr together) and exits WANT_RC
    local want=$1 what=$2 out rc; shift 2
    out=$("$@" 2>&1); rc=$?
    if [ $rc = "$want" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [ -n "$out" ]; then ok "$what: exit $rc, '$out'"
    else bad "$what: exit $rc (want $want), said: $out"; fi
}
check_line 2 "grader --json into a folder that does not exist" env XL_NO_GPU=1 $g01 --json=/nonexistent-xferlab/dir/out.json
check_line 2 "grader --xml naming a folder" env XL_NO_GPU=1 $g01 --xml=/tmp
check_line 2 "grader --filter matching no test" env XL_NO_GPU=1 $g01 --filter=nosuch
# grading lab 01's unfinished CSV writer leaves no folder in /tmp
before=$(ls -d /tmp/xferlab-csv-* 2>/dev/null | wc -l)
XL_NO_GPU=1 grade $g01 skeleton-csv --filter='sweep/csv_file'
after=$(ls -d /tmp/xferlab-csv-* 2>/dev/null | wc -l)
[ "$(count "$LOG/skeleton-csv/points.tsv" failed)" = 1 ] && [ "$after" = "$before" ] &&
    ok "grader: lab 01's skeleton fails sweep.csv_file and leaves no /tmp/xferlab-csv-* folder" ||
    bad "grader: /tmp/xferlab-csv-* folders $before before, $after after grading the skeleton's sweep.csv_file (log: $LOG/skeleton-csv.log)"

section "Gradescope: the autograder zip, run against a fake /autograder tree (no GPU)"
if [ ! -d grader/class/gradescope ]; then skipped "gradescope: for course staff; a student tree does not have it"; else
gs=$(mktemp -d /tmp/xferlab-gs.XXXXXX)
gslab=$(basename labs/01-*) # a lab with tests that need no GPU
if make -s gradescope LAB="${gslab%%-*}" >"$LOG/gradescope.log" 2>&1 && mkdir -p "$gs/source" &&
    (cd "$gs/source" && python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); z.extractall(); [__import__("os").chmod(i.filename, i.external_attr >> 16) for i in z.infolist() if i.external_attr >> 16]' "$OLDPWD/$B/gradescope/$gslab-autograder.zip"); then
    if [ -x "$gs/source/run_autograder" ] && [ -f "$gs/source/setup.sh" ] && ! find "$gs/source" -path '*solutions*' -o -path '*mutants*' | grep -q .; then
        ok "gradescope: the zip has setup.sh and run_autograder at the top, no solutions and no mutants"
    else bad "gradescope: the zip's layout is wrong (log: $LOG/gradescope.log)"; fi
    # where Criterion is not installed (a GPU host without packages), the kit's bundle stands in for setup.sh's apt-get
    pkg-config --exists criterion 2>/dev/null || { [ ! -d "$B/criterion" ] || { mkdir -p "$gs/source/build" && cp -a "$B/criterion" "$gs/source/build/"; }; }
    bash -n "$gs/source/setup.sh" && XL_SETUP_DRY=1 bash "$gs/source/setup.sh" | grep -q 'libcriterion-dev' &&
        ok "gradescope: setup.sh installs from Ubuntu's packages" || bad "gradescope: setup.sh"
    # submit SUBMISSION_FILE_OR_EMPTY NAME - runs run_autograder on it; results in $LOG/gradescope-NAME.json
    submit() {
        rm -rf "$gs/submission" "$gs/results" && mkdir -p "$gs/submission/labs/$gslab"
        [ -z "$1" ] || cp "$1" "$gs/submission/labs/$gslab/lab.cu"
        XL_NO_GPU=1 XL_AUTOGRADER="$gs" bash "$gs/source/run_autograder" >"$LOG/gradescope-$2.log" 2>&1
        cp "$gs/results/results.json" "$LOG/gradescope-$2.json" 2>/dev/null
    }
    # gs_check NAME PY_CONDITION WHAT - results.json of NAME satisfies the condition on d
    gs_check() {
        if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$LOG/gradescope-$1.json" 2>/dev/null
        then ok "gradescope: $3"; else bad "gradescope: $3 (log: $LOG/gradescope-$1.log)"; fi
    }
    # the reference's CPU points, from its own grader with the GPU hidden (also where XL_TEST_LABS left lab 01 out)
    XL_NO_GPU=1 grade "$B/bin/$gslab-grade-solution" gradescope-cpu-points
    cpu_pts=$(awk -F'\t' 'NR > 1 && $4 != "skipped" { m += $3 } END { print m + 0 }' "$LOG/gradescope-cpu-points/points.tsv" 2>/dev/null)
    submit "solutions/$gslab/lab.cu" solution
    gs_check solution "d['score'] == ${cpu_pts:-0} and len(d['tests']) > 1 and any('SKIPPED' in t['output'] or 'no CUDA GPU' in t['output'] for t in d['tests'])" \
        "the reference scores its ${cpu_pts:-0} CPU points; GPU tests say they were skipped"
    submit "labs/$gslab/lab.cu" skeleton
    gs_check skeleton "d['score'] == 0 and len(d['tests']) > 1" "the skeleton scores 0"
    printf 'this is not C\n' >"$gs/broken.cu"
    submit "$gs/broken.cu" broken
    gs_check broken "d['score'] == 0 and 'does not compile' in d['output']" "a submission that does not compile gets 0 and the compiler's words"
    submit "" empty
    gs_check empty "d['score'] == 0 and 'No lab.cu' in d['output']" "an empty submission gets 0 and what to upload"
else
    bad "gradescope: make gradescope failed (log: $LOG/gradescope.log)"
fi
rm -rf "$gs"
fi

section "the student tree (make handout): no reference code, and it builds, grades and tests as it is"
if [ ! -d solutions ]; then skipped "handout: this is a student tree already"; else
    ht=$B/handout/xferlab
    if make -s handout >"$LOG/handout.log" 2>&1 && [ -s "$B/handout/xferlab-handout.tar.gz" ]; then
        if [ ! -e "$ht/solutions" ] && ! find "$ht" -path '*/mutants/*' -o -path '*/hidden/*' -o -path '*/gradescope/*' | grep -q .; then
            ok "handout: no solutions/, mutants, hidden tests or Gradescope scripts"
        else bad "handout: staff-only files in $ht"; fi
        if ! grep -n -e 'IMPL=solution' -e '<!-- /\{0,1\}staff -->' "$ht/README.md" "$ht"/labs/*/README.md >"$LOG/handout-staff-text.log" &&
            grep -q 'IMPL=solution' README.md labs/02-*/README.md; then
            ok "handout: its README and handouts never name IMPL=solution (the full kit's do) and keep no staff markers"
        else bad "handout: staff text left in the student pages:"; sed 's/^/        /' "$LOG/handout-staff-text.log" | head -5; fi
        printf 'a <!-- staff -->b\n' >"$LOG/open-span.md"
        out=$(python3 grader/scripts/studentmd.py "$LOG/open-span.md" 2>&1); rc=$?
        if [ $rc = 2 ] && [ "$out" = "studentmd: $LOG/open-span.md: a <!-- staff --> span is not closed by <!-- /staff -->" ] &&
            [ "$(cat "$LOG/open-span.md")" = 'a <!-- staff -->b' ]; then
            ok "handout: a staff span left open stops make handout with one line, the page untouched"
        else bad "handout: studentmd.py on an open span: exit $rc, '$out'"; fi
        if python3 grader/scripts/leakcheck.py solutions "$ht" >"$LOG/leakcheck.log" 2>&1; then
            ok "handout: no function body of solutions/ is found in it (grader/scripts/leakcheck.py)"
        else bad "handout: reference code found in it:"; sed 's/^/        /' "$LOG/leakcheck.log" | head -10; fi
        # the search can fail: a solution pasted in with its names changed is found
        planted=$(mktemp -d /tmp/xferlab-leak.XXXXXX)
        mkdir -p "$planted/labs/x" && sed 's/\bj\b/job/g; s/\bcopied\b/done_ev/g' solutions/03-*/lab.cu >"$planted/labs/x/mine.cu"
        if ! python3 grader/scripts/leakcheck.py solutions "$planted" >/dev/null 2>&1; then
            ok "handout: the search finds a solution planted with its names changed"
        else bad "handout: the search missed a planted solution"; fi
        rm -rf "$planted"
        if (cd "$ht" && mkdir -p build && { [ ! -d "$OLDPWD/$B/criterion" ] || cp -a "$OLDPWD/$B/criterion" build/; } && XL_NO_INSTALL=1 make -j"$(nproc)" build) >"$LOG/handout-build.log" 2>&1; then
            ok "handout: builds as it is"
            if (cd "$ht" && make --no-print-directory help) >"$LOG/handout-help.log" 2>&1 && grep -q 'make grade' "$LOG/handout-help.log" &&
                ! grep -q -e 'course staff' -e 'IMPL=solution' -e 'make class' -e 'make stability' "$LOG/handout-help.log"; then
                ok "handout: make help lists what a student runs, no staff targets and no IMPL=solution"
            else bad "handout: make help in the student tree (log: $LOG/handout-help.log)"; fi
            # one lab's grading is enough to show the student tree's make test works (each lab's was graded above)
            if (cd "$ht" && XL_TEST_LABS=01 XL_CLASS=0 XL_NO_INSTALL=1 make test) >"$LOG/handout-test.log" 2>&1; then
                ok "handout: its own make test passes ($(grep '^xferlab:' "$LOG/handout-test.log"))"
            else bad "handout: its make test fails (log: $LOG/handout-test.log)"; fi
            (cd "$ht" && XL_NO_INSTALL=1 make grade LAB=01) >"$LOG/handout-grade.log" 2>&1
            if grep -q "^lab 01 " "$LOG/handout-grade.log"; then ok "handout: make grade LAB=01 grades the skeleton: $(grep '^lab 01 ' "$LOG/handout-grade.log" | tail -1)"
            else bad "handout: make grade LAB=01 gave no score (log: $LOG/handout-grade.log)"; fi
            # GitHub Classroom: the workflow's steps, run in the student tree on the reference's lab.cu
            if make -s classroom LAB=01 >"$LOG/classroom.log" 2>&1 && python3 - "$B/classroom/01-pageable-copy.yml" "$(XL_POINTS_TABLE=1 $B/bin/01-pageable-copy-grade | sed -n 's/^| \*\*total\*\* | \*\*\([0-9]*\)\*\*.*/\1/p')" <<'PY' >>"$LOG/classroom.log" 2>&1
import sys
try:
    import yaml
except ImportError:  # no PyYAML: the workflow's structure is not checked
    sys.exit(0)
w = yaml.safe_load(open(sys.argv[1]))
steps = w['jobs']['run-autograding-tests']['steps']
graders = [s for s in steps if s.get('uses', '').startswith('classroom-resources/autograding-command-grader')]
reporter = [s for s in steps if s.get('uses', '').startswith('classroom-resources/autograding-grading-reporter')][0]
assert sum(int(s['with']['max-score']) for s in graders) == int(sys.argv[2]), 'points'
assert reporter['with']['runners'].split(',') == [s['id'] for s in graders], 'runners'
assert all(reporter['env'][s['id'].upper() + '_RESULTS'] == '${{steps.%s.outputs.result}}' % s['id'] for s in graders)
assert 'self-hosted' in w['jobs']['run-autograding-tests']['runs-on'] and 'gpu' in w['jobs']['run-autograding-tests']['runs-on']
PY
            then ok "classroom: make classroom LAB=01 writes a valid workflow, one graded step per test, $(grep -c 'max-score' "$B/classroom/01-pageable-copy.yml") steps adding up to the grader's total"
            else bad "classroom: the workflow (log: $LOG/classroom.log)"; fi
            cp solutions/01-*/lab.cu "$ht/labs/01-pageable-copy/lab.cu"
            (cd "$ht" && XL_NO_INSTALL=1 make grade LAB=01) >>"$LOG/classroom.log" 2>&1
            if (cd "$ht" && grader/class/passed.sh 01 fit.synthetic) >>"$LOG/classroom.log" 2>&1 &&
                ! (cd "$ht" && grader/class/passed.sh 01 no.such_test) >>"$LOG/classroom.log" 2>&1 &&
                { [ $gpu_rc -eq 0 ] || ! (cd "$ht" && grader/class/passed.sh 01 timer.waits_for_gpu) >>"$LOG/classroom.log" 2>&1; }; then
                ok "classroom: in the student tree a step passes for a test the grading passed, fails for a skipped or unknown one"
            else bad "classroom: passed.sh in the student tree (log: $LOG/classroom.log)"; fi
            cp labs/01-*/lab.cu "$ht/labs/01-pageable-copy/lab.cu"
        else bad "handout: does not build (log: $LOG/handout-build.log)"; fi
    else bad "handout: make handout failed (log: $LOG/handout.log)"; fi
fi

if [ "${XL_CLASS:-1}" = 0 ]; then skipped "class: left out (XL_CLASS=0)"
elif [ -f grader/test/class.sh ]; then . grader/test/class.sh; fi

section "staff scripts: bad input gives one line and a non-zero exit; what make doctor checks"
check_line 2 "passed.sh without arguments" grader/class/passed.sh
check_line 2 "passed.sh with one argument" grader/class/passed.sh 01
# make doctor where pandoc and weasyprint are missing (a PATH of the few tools it runs): an info line each with the
# command that adds it (sudo only when not root), and they do not change its verdict
dbin=$(mktemp -d /tmp/xferlab-doctor.XXXXXX)
for t in nvcc nvidia-smi pkg-config gnuplot sed head id dirname; do ! command -v $t >/dev/null || ln -s "$(command -v $t)" "$dbin/$t"; done
full=$(bash grader/scripts/doctor.sh 2>&1 | tail -1)
PATH=$dbin "$BASH" grader/scripts/doctor.sh >"$LOG/doctor-nodocs.log" 2>&1
sudo_word=sudo\ ; [ "$(id -u)" != 0 ] || sudo_word=''
if grep -q "^  info     pandoc     missing, so no make docs (grading does not need it): ${sudo_word}apt-get install pandoc$" "$LOG/doctor-nodocs.log" &&
    grep -q "^  info     weasyprint missing, so no make docs (grading does not need it): ${sudo_word}apt-get install weasyprint$" "$LOG/doctor-nodocs.log" &&
    { [ -n "$sudo_word" ] || ! grep -q sudo "$LOG/doctor-nodocs.log"; } && [ "$(tail -1 "$LOG/doctor-nodocs.log")" = "$full" ]; then
    ok "doctor: pandoc and weasyprint missing: an info line each with the command$([ -n "$sudo_word" ] || echo ', no sudo as root'), the verdict unchanged"
else bad "doctor: without pandoc and weasyprint (log: $LOG/doctor-nodocs.log)"; fi
rm -rf "$dbin"

# ===== Stability, docs and charts =====
section "make stability: the reference graded again and again, each threshold's margin"
if [ ! -f grader/scripts/stability.py ]; then skipped "stability: for course staff; a student tree does not have it"; else
    if make -s stability LAB=01 N=2 >"$LOG/stability.log" 2>&1 && grep -q "full points in 2 of 2 runs" "$LOG/stability.log" &&
        [ -s build/stability/01-pageable-copy.txt ]; then
        ok "stability: lab 01, 2 runs: $(grep -m1 'full points' "$LOG/stability.log")"
    else bad "stability: make stability LAB=01 N=2 (log: $LOG/stability.log)"; fi
    # the script's own mechanics (a limit, resuming, a report it cannot read) grade the CPU tests only: quick on a GPU host
    cp build/stability/01-pageable-copy.txt "$LOG/stability-earlier.txt" 2>/dev/null
    rm -f build/stability/01-pageable-copy.previous.* build/stability/01-pageable-copy-runs.previous.tsv
    if XL_NO_GPU=1 make -s stability LAB=01 N=500 MINUTES=0 >"$LOG/stability-minutes.log" 2>&1 &&
        grep -q "stopped at the 0-minute limit: 1 of the 500 runs asked.*full points in 1 of 1 runs" "$LOG/stability-minutes.log"; then
        ok "stability: MINUTES=0 stops after one run of the 500 asked, and says so"
    else bad "stability: MINUTES=0 did not stop after one run (log: $LOG/stability-minutes.log)"; fi
    # without RESUME=1 the earlier report is kept beside the new one, and a line says so
    if [ "$(grep -c "^stability: the earlier report is kept beside the new one: 01-pageable-copy.previous.txt, 01-pageable-copy.previous.tsv, 01-pageable-copy-runs.previous.tsv$" "$LOG/stability-minutes.log")" = 1 ] &&
        cmp -s build/stability/01-pageable-copy.previous.txt "$LOG/stability-earlier.txt" &&
        [ -s build/stability/01-pageable-copy-runs.previous.tsv ] && ! cmp -s build/stability/01-pageable-copy.txt "$LOG/stability-earlier.txt"; then
        ok "stability: a new report keeps the earlier one as 01-pageable-copy.previous.* and says so in one line"
    else bad "stability: the earlier report was not kept as .previous (log: $LOG/stability-minutes.log)"; fi
    # resume: planted tables of 5 runs (4 with full points, one measurement) and one more run to make 6
    printf 'runs\tfull_points\n5\t4\n' >build/stability/01-pageable-copy-runs.tsv
    printf 'run\tcheck\tlabel\tattempt\tratio\tneed\tat_least\tfigures\n2\tz.planted\tplanted figure\t1\t0.9\t0.5\t1\tplanted\n' \
        >build/stability/01-pageable-copy.tsv
    if XL_NO_GPU=1 make -s stability LAB=01 N=6 RESUME=1 >"$LOG/stability-resume.log" 2>&1 &&
        grep -q "resuming 01-pageable-copy after 5 runs" "$LOG/stability-resume.log" &&
        grep -q "full points in 5 of 6 runs" "$LOG/stability-resume.log" &&
        grep -q "^z.planted (planted figure): need >= 0.5; 1 first measurements" "$LOG/stability-resume.log" &&
        grep -q "^2	z.planted	planted figure	1	0.9	0.5	1	planted$" build/stability/01-pageable-copy.tsv &&
        [ "$(sed -n 2p build/stability/01-pageable-copy-runs.tsv)" = "6	5" ]; then
        ok "stability: RESUME=1 keeps the last tables' runs and measurements and adds one run to make 6"
    else bad "stability: RESUME=1 did not add to the last report (log: $LOG/stability-resume.log)"; fi
    echo "not a report" >>build/stability/01-pageable-copy.tsv
    cp build/stability/01-pageable-copy.tsv "$LOG/stability-kept.tsv"
    if ! XL_NO_GPU=1 make -s stability LAB=01 N=7 RESUME=1 >"$LOG/stability-bad.log" 2>&1 &&
        grep -q "is not a report this script wrote; nothing resumed or overwritten" "$LOG/stability-bad.log" &&
        cmp -s build/stability/01-pageable-copy.tsv "$LOG/stability-kept.tsv"; then
        ok "stability: RESUME=1 on a table it cannot read stops with a message and leaves the table as it was"
    else bad "stability: RESUME=1 on an unreadable report (log: $LOG/stability-bad.log)"; fi
    # the margins, from a ratio log of known figures: (median - need) / sd, or (need - median) / sd for "at most"
    printf '%s\n' 'a.x	1	1.00	0.85	1	fig a	' 'a.x	1	0.98	0.85	1	fig a	' 'a.x	1	1.02	0.85	1	fig a	' \
        'a.x	2	0.99	0.85	1	fig a	' 'b.y	1	3	150	0	fig b	' 'b.y	1	5	150	0	fig b	' \
        'c.z	1	1.00	0.95	1	fig c	' 'c.z	1	0.96	0.95	1	fig c	' >"$LOG/ratios.tsv"
    python3 grader/scripts/stability.py --from-log "$LOG/ratios.tsv" >"$LOG/stability-model.log" 2>&1
    if grep -q "^a.x (fig a): need >= 0.85; .*median 1.000, .*sd 0.020; margin 7.5 spreads; a second try in 1 runs" "$LOG/stability-model.log" &&
        grep -q "^b.y (fig b): need <= 150; .*margin 103.2 spreads" "$LOG/stability-model.log" &&
        grep -q "^c.z (fig c): need >= 0.95; .*margin 1.1 spreads: UNDER 3" "$LOG/stability-model.log"; then
        ok "stability: margins in spreads, both kinds of threshold, retries counted, a margin under 3 flagged"
    else bad "stability: the margins from a known log (log: $LOG/stability-model.log)"; fi
fi

section "docs: links, charts and quoted commands resolve"
if [ ! -f docs/check.py ]; then skipped "docs: for course staff; a student tree does not have the check"; else
    if python3 docs/check.py >"$LOG/doccheck.log" 2>&1; then
        ok "docs: every link, chart, make target, program and kit path in README.md, docs/ and the handouts resolves"
    else bad "docs: what the Markdown names is not there:"; sed 's/^/        /' "$LOG/doccheck.log" | head -10; fi
    # the check can fail: a page with one of each mistake
    printf '[a](../../labs/07-none/README.md) ![b](../../build/plots/09-none-h100.svg) `make grades` `build/bin/01-x-grade` `grader/scripts/none.sh`\n\n[r]: ../../docs/none.md\ntext\n## glued heading\n' >"$LOG/doccheck-planted.md"
    n=$(python3 docs/check.py "$LOG/doccheck-planted.md" | wc -l)
    [ "$n" = 7 ] && ok "docs: a page with a bad link, reference link, chart, target, program, path and glued heading gets 7 findings" ||
        bad "docs: the planted page got $n findings, not 7"
    printf '# Lab 99 — planted\n\n## Background\n\n## What you will learn\n\n## Tasks\n\n## How it is graded\n\n## Questions\n\n## Further reading\n' >"$LOG/doccheck-handout.md"
    python3 docs/check.py "$LOG/doccheck-handout.md" >"$LOG/doccheck-handout.log"
    if [ "$(wc -l <"$LOG/doccheck-handout.log")" = 2 ] && grep -q 'needs a section "## Figures measured' "$LOG/doccheck-handout.log" &&
        grep -q '"## Background" comes too early' "$LOG/doccheck-handout.log"; then
        ok "docs: every handout has the common shape; a planted one with a section missing and one out of order gets both"
    else bad "docs: the planted handout's shape findings: $(tr '\n' ';' <"$LOG/doccheck-handout.log")"; fi
    if [ -f docs/instructors.md ] && diff <(python3 grader/scripts/margins.py) \
        <(sed -n '/<!-- margins:begin -->/,/<!-- margins:end -->/p' docs/instructors.md | sed '1d;$d') >"$LOG/margins.diff"; then
        ok "docs: the instructors' guide's table of margins is margins.py of refdata/stability/"
    else bad "docs: the margins table in docs/instructors.md differs from grader/scripts/margins.py (diff: $LOG/margins.diff)"; fi
fi

section "charts from the committed reference data"
if command -v gnuplot >/dev/null 2>&1; then
    if XL_PLOTS_FROM_REF=1 XL_PLOTS_OUT=$LOG/plots plots/render.sh >"$LOG/plots.log" 2>&1; then
        n=0
        for gp in plots/*.gp; do
            for f in $LOG/plots/$(basename "$gp" .gp)*.svg; do
                [ -f "$f" ] || continue
                if [ -s "$f" ] && [ -s "${f%.svg}.png" ] && grep -q '</svg>' "$f"; then n=$((n + 1)); else bad "chart ${f##*/} is empty"; fi
            done
        done
        if [ $n -gt 0 ]; then ok "charts: $n rendered as SVG and PNG"; else bad "charts: none rendered (log: $LOG/plots.log)"; fi
    else bad "charts: plots/render.sh failed (log: $LOG/plots.log)"; tail -5 "$LOG/plots.log" | sed 's/^/        /'; fi
    # a CSV brought back from a GPU host into build/data/ is charted too, named after its file
    # (lab 05's with its timeline beside it, NAME-timeline.csv: the timeline chart of NAME, not a set of its own)
    mkdir -p $B/data && cp refdata/01-pageable-copy/h200.csv $B/data/01-pageable-copy-brought.csv
    cp refdata/05-stream-pipelining/h200.csv $B/data/05-stream-pipelining-brought.csv
    cp refdata/05-stream-pipelining/h200-timeline.csv $B/data/05-stream-pipelining-brought-timeline.csv
    printf 'direction,bytes\nH2D,abc\nnot a row\n' >$B/data/01-pageable-copy-garbled.csv # charted beside them, it cannot be
    if XL_NO_GPU=1 XL_PLOTS_OUT=$LOG/plots-data plots/render.sh >"$LOG/plots-data.log" 2>&1 &&
        grep -q '</svg>' "$LOG/plots-data/01-pageable-bandwidth-brought.svg" 2>/dev/null; then
        ok "charts: a CSV put in build/data/ as NN-slug-NAME.csv is charted as NN-chart-NAME"
    else bad "charts: build/data/01-pageable-copy-brought.csv was not charted (log: $LOG/plots-data.log)"; fi
    if grep -q '</svg>' "$LOG/plots-data/05-timeline-brought.svg" 2>/dev/null &&
        grep -q '</svg>' "$LOG/plots-data/05-streams-brought.svg" 2>/dev/null &&
        ! ls "$LOG"/plots-data/*brought-timeline* >/dev/null 2>&1; then
        ok "charts: NAME-timeline.csv beside NAME.csv is drawn as NAME's timeline chart, not charted on its own"
    else bad "charts: build/data/05-stream-pipelining-brought{,-timeline}.csv were not charted together (log: $LOG/plots-data.log)"; fi
    if [ "$(grep -c garbled "$LOG/plots-data.log")" = 1 ] && grep -q "^plots: $B/data/01-pageable-copy-garbled.csv skipped: gnuplot cannot chart it" "$LOG/plots-data.log" &&
        ! ls "$LOG"/plots-data/*garbled* >/dev/null 2>&1 && ! find "$LOG/plots-data" -size 0 | grep -q .; then
        ok "charts: a CSV gnuplot cannot chart gets one line naming it, no chart file, and the others are drawn (exit 0)"
    else bad "charts: the garbled CSV in build/data/ (log: $LOG/plots-data.log)"; fi
    rm -f $B/data/01-pageable-copy-garbled.csv $B/data/01-pageable-copy-brought.csv $B/data/05-stream-pipelining-brought.csv $B/data/05-stream-pipelining-brought-timeline.csv
else
    skipped "charts: gnuplot is not installed"
fi

section "docs rendered (make docs): every page as HTML and PDF, charts embedded, links between pages kept"
if ! command -v pandoc >/dev/null 2>&1 || ! command -v weasyprint >/dev/null 2>&1 || ! command -v gnuplot >/dev/null 2>&1; then
    skipped "docs: needs pandoc, weasyprint and gnuplot (sudo apt-get install pandoc weasyprint gnuplot-nox)"
elif XL_PLOTS_FROM_REF=1 plots/render.sh >"$LOG/docs-plots.log" 2>&1 && docs/render.sh >"$LOG/docs.log" 2>&1; then
    n=0
    for md in README.md docs/*.md labs/[0-9][0-9]-*/README.md; do
        case $md in README.md) name=index ;; labs/*) name=$(basename "$(dirname "$md")") ;; *) name=$(basename "$md" .md) ;; esac
        want=$(grep -o '!\[[^]]*\]([^)]*)' "$md" | wc -l)
        got=$(grep -o '<img src="data:' "build/docs/$name.html" | wc -l)
        if [ "$(head -c 4 "build/docs/$name.pdf")" = "%PDF" ] && [ "$got" = "$want" ] && ! grep -q 'href="[^":]*\.md[#"]' "build/docs/$name.html"; then
            n=$((n + 1))
        else bad "docs: $name: pdf $(head -c 4 "build/docs/$name.pdf" 2>/dev/null), $got of $want charts embedded, or a link to a .md file left"; fi
    done
    ok "docs: $n pages rendered to HTML and PDF with every chart embedded and links between pages rewritten"
else bad "docs: make docs failed (log: $LOG/docs.log)"; tail -5 "$LOG/docs.log" | sed 's/^/        /'; fi

# ===== Summary =====
sections_report
echo "xferlab: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
