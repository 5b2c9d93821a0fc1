# cli.sh - make test's sections on what people type: the handouts' points tables against the graders, the
# explorers', make's (LAB, IMPL), the graders' and the staff scripts' answers to bad input (one line, a non-zero
# exit), make doctor, and make's package installs (deps.sh, against a fake apt-get that only fails: nothing is
# installed). Needs no GPU, and hides it (XL_NO_GPU=1). Sourced by grader/test/test.sh (B, LOG, ok / bad / skipped,
# grade, count).

section "handouts: the points table is the grader's"
for lab in labs/[0-9][0-9]-*/lab.cu; do lab=${lab%lab.cu} # a lab is a folder with a lab.cu, as in the Makefile
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
        out=$(XL_NO_GPU=1 "$ex" "$@" 2>&1 >/dev/null); rc=$?
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
    check_cli 3 "without a GPU"
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
make_refuses "grade LAB=99" "no lab '99': say 1, 01 or the full name (labs: $(ls -d labs/[0-9][0-9]-*/lab.cu | xargs -n1 dirname | xargs -n1 basename | tr '\n' ' ' | sed 's/ $//'))" grade LAB=99
make_refuses "grade LAB=01-pageable (a slug cut short)" "no lab '01-pageable'" grade LAB=01-pageable
make_refuses "grade LAB='01 x' (one of several wrong)" "no lab 'x'" grade LAB="01 x"
make_refuses "grade IMPL=Solution" "IMPL is student (your lab.cu, the default) or solution (the reference), not 'Solution'" grade IMPL=Solution
make_refuses "grade IMPL= (empty)" "not ''" grade IMPL=
make_refuses "run without LAB" "say which lab, e.g. make run LAB=01" run
make_refuses "run LAB='01 02'" "one lab at a time, e.g. LAB=01" run LAB="01 02"
make_refuses "run IMPL=reference" "not 'reference'" run LAB=01 IMPL=reference
if [ -d solutions ]; then # the staff targets (a student tree refuses each in one line: the bad-input table)
    make_refuses "stability LAB=1x" "make stability: no lab '1x'" stability LAB=1x
    make_refuses "stability LAB='1 2'" "make stability: one lab at a time" stability LAB="1 2"
    make_refuses "classroom LAB=99" "make classroom: no lab '99'" classroom LAB=99
    make_refuses "classroom without LAB" "make classroom: say which lab" classroom
    make_refuses "gradescope LAB=99" "make gradescope: no lab '99'" gradescope LAB=99
    make_refuses "mutate-gen LAB=9x" "make mutate-gen: no lab '9x'" mutate-gen LAB=9x
else
    for t in stability classroom gradescope mutate-gen class handout; do
        make_refuses "$t in a student tree" "make $t: for course staff: this is a student tree" $t LAB=01
    done
fi
# every spelling of a lab names the same lab, and a target that takes several takes several (graded here with the
# GPU hidden: the CPU tests only)
first=$(basename labs/01-*) second=$(basename labs/02-*)
# graded_labs ARGS... - the labs make grade ARGS graded, by their total lines ("lab 01 pageable-copy: ...")
graded_labs() { make --no-print-directory grade "$@" 2>/dev/null | sed -n 's/^lab \([0-9][0-9]\) \([a-z-]*\): .*/\1-\2/p' | tr '\n' ' '; }
for spelling in 1 01 "$first"; do
    got=$(graded_labs LAB="$spelling")
    if [ "$got" = "$first " ]; then ok "make grade LAB=$spelling grades $first"
    else bad "make grade LAB=$spelling graded '$got'"; fi
done
if [ -d solutions ]; then
    rm -rf "build/results/$first-solution" "build/results/$second-solution"
    got=$(graded_labs LAB="1 $second" IMPL=solution)
    if [ "$got" = "$first $second " ] && [ -s "build/results/$first-solution/points.tsv" ] &&
        [ -s "build/results/$second-solution/points.tsv" ]; then
        ok "make grade LAB='1 $second' IMPL=solution grades the two references"
    else bad "make grade LAB='1 $second' IMPL=solution graded '$got'"; fi
fi

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
# grading lab 01's unfinished CSV writer leaves no folder behind (in a TMPDIR of its own: other gradings may run)
mkdir -p "$LOG/csv-tmp"
TMPDIR=$LOG/csv-tmp grade $g01 skeleton-csv --filter='sweep/csv_file'
left=$(ls -A "$LOG/csv-tmp" | wc -l)
[ "$(count "$LOG/skeleton-csv/points.tsv" failed)" = 1 ] && [ "$left" = 0 ] &&
    ok "grader: lab 01's skeleton fails sweep.csv_file and leaves no xferlab-csv-* folder in TMPDIR" ||
    bad "grader: $left folders left in TMPDIR after grading the skeleton's sweep.csv_file, or it did not fail (log: $LOG/skeleton-csv.log)"
TMPDIR=$LOG/no-such-folder grade $g01 csv-no-tmpdir --filter='sweep/csv_file'
[ "$(count "$LOG/csv-no-tmpdir/points.tsv" failed)" = 1 ] && grep -q 'cannot create a temporary folder' "$LOG/csv-no-tmpdir.log" &&
    ok "grader: the CSV test's folder is made in TMPDIR (one that does not exist fails it: the check above looked in the right place)" ||
    bad "grader: the CSV test did not make its folder in TMPDIR (log: $LOG/csv-no-tmpdir.log)"

section "staff scripts: bad input gives one line and a non-zero exit; what make doctor checks"
check_line 2 "passed.sh without arguments" grader/class/passed.sh
check_line 2 "passed.sh with one argument" grader/class/passed.sh 01
# make doctor where pandoc and weasyprint are missing (a PATH of the few tools it runs): an info line each with the
# command that adds it (sudo only when not root), and they do not change its verdict
dbin=$(mktemp -d /tmp/xferlab-doctor.XXXXXX)
for t in nvcc nvidia-smi pkg-config gnuplot sed head id dirname readlink; do ! command -v $t >/dev/null || ln -s "$(command -v $t)" "$dbin/$t"; done
full=$(bash grader/env/doctor.sh 2>&1 | tail -1)
PATH=$dbin "$BASH" grader/env/doctor.sh >"$LOG/doctor-nodocs.log" 2>&1
sudo_word=sudo\ ; [ "$(id -u)" != 0 ] || sudo_word=''
if grep -q "^  info     pandoc     missing, so no make docs (grading does not need it): ${sudo_word}apt-get install pandoc$" "$LOG/doctor-nodocs.log" &&
    grep -q "^  info     weasyprint missing, so no make docs (grading does not need it): ${sudo_word}apt-get install weasyprint$" "$LOG/doctor-nodocs.log" &&
    { [ -n "$sudo_word" ] || ! grep -q sudo "$LOG/doctor-nodocs.log"; } && [ "$(tail -1 "$LOG/doctor-nodocs.log")" = "$full" ]; then
    ok "doctor: pandoc and weasyprint missing: an info line each with the command$([ -n "$sudo_word" ] || echo ', no sudo as root'), the verdict unchanged"
else bad "doctor: without pandoc and weasyprint (log: $LOG/doctor-nodocs.log)"; fi
rm -rf "$dbin"

section "deps: an optional package apt-get could not install is tried once, not on every make"
# deps.sh with a PATH of the few tools it runs: no gnuplot, and an apt-get (and a sudo, for a user who is not root)
# that only count their calls and fail, so that nothing is installed; nvcc taken as found, Criterion too (a bundle)
dbin=$(mktemp -d /tmp/xferlab-deps.XXXXXX)
for t in id dirname mkdir grep rm true; do ln -s "$(type -P $t)" "$dbin/$t"; done
printf '#!/bin/sh\necho "$*" >>"%s/apt-calls"\nexit 1\n' "$dbin" >"$dbin/apt-get"
printf '#!/bin/sh\n[ "$1" != -n ] || shift\nexec "$@"\n' >"$dbin/sudo"
chmod +x "$dbin/apt-get" "$dbin/sudo"
mkdir -p "$dbin/crit/include/criterion" && touch "$dbin/crit/include/criterion/criterion.h"
stamp=$dbin/build/.deps-tried
# deps_run N [BUNDLE] - runs deps.sh once (Criterion's bundle BUNDLE, by default one that is there), its output into
# $LOG/deps-run-N.log; prints its exit status and how many calls apt-get has had so far
deps_run() {
    PATH=$dbin NVCC=true XL_NO_INSTALL=0 XL_CRITERION_BUNDLE=${2:-$dbin/crit} XL_DEPS_TRIED=$stamp \
        XL_APT_LOG=$dbin/apt.log "$BASH" grader/env/deps.sh >"$LOG/deps-run-$1.log" 2>&1
    echo "$? $(cat "$dbin/apt-calls" 2>/dev/null | wc -l)"
}
r1=$(deps_run 1) r2=$(deps_run 2)
if [ "${r1%% *}" = 0 ] && [ "${r1#* }" -gt 0 ] && grep -qx gnuplot-nox "$stamp" && [ "$r2" = "0 ${r1#* }" ] &&
    ! grep -q installing "$LOG/deps-run-2.log" &&
    grep -q "^deps: gnuplot is missing, so charts are skipped: .*delete $stamp to try again" "$LOG/deps-run-2.log"; then
    ok "deps: apt-get failed at gnuplot-nox once (${r1#* } calls); the next run did not call it and said how to try again"
else bad "deps: with a failing apt-get: first run '$r1', second '$r2' (exit, apt-get calls so far; logs: $LOG/deps-run-1.log, deps-run-2.log)"; fi
ln -s "$(type -P true)" "$dbin/gnuplot"
r3=$(deps_run 3)
if [ "$r3" = "0 ${r1#* }" ] && [ ! -e "$stamp" ] && [ ! -s "$LOG/deps-run-3.log" ]; then
    ok "deps: once gnuplot is there the stamp is gone, and deps says nothing"
else bad "deps: with gnuplot there: '$r3', the stamp $([ -e "$stamp" ] && echo left || echo gone) (log: $LOG/deps-run-3.log)"; fi
r4=$(deps_run 4 /nonexistent-xferlab) r5=$(deps_run 5 /nonexistent-xferlab)
if [ "${r4%% *}" = 1 ] && [ "${r4#* }" -gt "${r3#* }" ] && [ "${r5%% *}" = 1 ] && [ "${r5#* }" -gt "${r4#* }" ] &&
    [ ! -e "$stamp" ] && grep -q '^deps: Criterion is missing' "$LOG/deps-run-5.log"; then
    ok "deps: a required package (Criterion) apt-get could not install is tried again on every run, and stops the build"
else bad "deps: Criterion missing, a failing apt-get: runs '$r4', '$r5' (exit, apt-get calls so far; logs: $LOG/deps-run-4.log, deps-run-5.log)"; fi
rm -rf "$dbin"
