#!/usr/bin/env bash
# test.sh - the kit's own test suite (make test). Course staff and CI.
#
# Two lanes at once. The GPU's, in this shell: the unit tests of common/, grading the graders (graders.sh: each
# reference alone, then the skeletons and planted mutants several at once, then the mutants a speed figure must judge,
# each alone), a busy GPU (busy.sh) and the generated mutants (mutate.sh). The host's, in the background with the GPU
# hidden (XL_NO_GPU=1), on the other half of the cores where there are 8 or more: the grading model (model.sh), what
# people type (cli.sh), Gradescope and the student tree (packaging.sh), make stability (stability.sh), the docs and
# charts (docs.sh), the report page in a browser (report.sh), a table of bad inputs (badinput.sh), and in a lane of
# its own grading a class (class.sh) and the class's dashboard (dashboard.sh).
# Without a GPU the same checks run for the CPU tests and every GPU test must be SKIPPED.
# Ends with "xferlab: N passed, N failed, N skipped"; exits 1 when anything failed.
# XL_TEST_LABS="03 04" grades only those labs' graders (the other sections always run); XL_CLASS=0 leaves out
# the class-grading sections.

# ===== Setup =====
set -u
cd "$(dirname "$0")/../.."
B=build
LOG=$B/test-logs
rm -rf "$LOG" && mkdir -p "$LOG"
. grader/test/testlib.sh
t_start=$SECONDS
export XL_NO_INSTALL=1 # make test's own build checked the packages once; the makes it runs only check

probe=$($B/bin/gpu-probe)
gpu_rc=$?
echo "== make test: ${probe} =="

# every script the suite sources parses: bash skips one that does not with a warning, and its tests would not run
for f in grader/test/*.sh; do
    why=$(bash -n "$f" 2>&1) || bad "$f does not parse, so its tests did not run: $(echo "$why" | head -1)"
done

# ===== The host's lanes, in the background =====
# with a GPU and 8 cores or more, the GPU's lane keeps the first half of the cores this shell may use, for its timing
host_cpus='' gpu_cpus=''
cpus=($(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status 2>/dev/null | tr ',' '\n' |
    awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }'))
if [ $gpu_rc -eq 0 ] && [ ${#cpus[@]} -ge 8 ] && command -v taskset >/dev/null 2>&1; then
    half=$((${#cpus[@]} / 2))
    gpu_cpus=$(echo "${cpus[@]:0:half}" | tr ' ' ,) host_cpus=$(echo "${cpus[@]:half}" | tr ' ' ,)
fi
# lane NAME SCRIPT... - sources the scripts in a background shell with the GPU hidden: its report into
# $LOG/lane-NAME.out, "passed failed skipped" into $LOG/lane-NAME.counts when it ends
lane() {
    (
        lane_counts=$LOG/lane-$1.counts # (the scripts use name, s and the like for their own)
        shift
        pass=0 fail=0 skip=0 section_name='' gpu_rc=1
        export XL_NO_GPU=1
        [ -z "$host_cpus" ] || taskset -pc "$host_cpus" $BASHPID >/dev/null 2>&1
        for lane_script in "$@"; do [ ! -f "$lane_script" ] || . "$lane_script"; done # a student tree has fewer
        section_end
        echo "$pass $fail $skip" >"$lane_counts"
    ) >"$LOG/lane-$1.out" 2>&1 &
}
lanes=(host)
lane host grader/test/model.sh grader/test/cli.sh grader/test/packaging.sh grader/test/stability.sh grader/test/docs.sh \
    grader/test/report.sh grader/test/badinput.sh
if [ "${XL_CLASS:-1}" = 0 ]; then skipped "class: left out (XL_CLASS=0)"
elif [ -f grader/test/class.sh ]; then lanes+=(class) && lane class grader/test/class.sh grader/test/dashboard.sh; fi
[ -z "$gpu_cpus" ] || taskset -pc "$gpu_cpus" $$ >/dev/null 2>&1

# ===== The GPU's lane =====
section "unit tests of common/"
# unit_run T - runs unit test T: its output into $LOG/NAME.log, its exit status into $LOG/NAME.rc
unit_run() { "$1" >"$LOG/${1##*/}.log" 2>&1; echo $? >"$LOG/${1##*/}.rc"; }
for t in $B/bin/unit-timing $B/bin/unit-timeline; do [ ! -x "$t" ] || unit_run "$t"; done # they time the GPU: alone
unit_pids=()
for t in $B/bin/unit-*; do [ -f "$LOG/${t##*/}.rc" ] || { unit_run "$t" & unit_pids+=($!); }; done # the rest at once
[ ${#unit_pids[@]} = 0 ] || wait "${unit_pids[@]}"
for t in $B/bin/unit-*; do
    name=${t##*/}
    if [ "$(cat "$LOG/$name.rc" 2>/dev/null)" = 0 ]; then
        ok "$name: $(grep -o 'Tested: [0-9]*' "$LOG/$name.log")"
    else
        bad "$name (log: $LOG/$name.log)"
        grep -B3 'FAIL' "$LOG/$name.log" | sed 's/^/        /' | head -20
    fi
done
# the calls a lab's code must never make (common/labcalls.h) reach the kit's count: no lab object calls them by their
# own names, and the planted mutants that make one call it by the name the Makefile gave it (RENAME_LAB_CALLS)
raw='' renamed=0 forbidden=$(make -s --no-print-directory print-lab-renamed 2>/dev/null | tr ' ' '|')
[ -n "$forbidden" ] || bad "lab objects: make print-lab-renamed gave no list of forbidden calls (the Makefile's LAB_RENAMED)"
for o in $B/obj/labs/*/lab.o $B/obj/solutions/*/lab.o $B/obj/mutants/*/*.o; do
    [ -f "$o" ] || continue
    u=$(nm -u "$o" 2>/dev/null)
    if [ -n "$forbidden" ] && grep -qwE "$forbidden" <<<"$u"; then raw="$raw ${o#$B/obj/}"; fi
    ! grep -qE 'xl_lab_cuda' <<<"$u" || renamed=$((renamed + 1))
done
if [ -n "$raw" ]; then bad "lab objects call a forbidden CUDA call by its own name, unseen by the kit:$raw"
elif ! ls $B/obj/mutants/*/*.o >/dev/null 2>&1; then ok "lab objects: no forbidden CUDA call by its own name"
elif [ $renamed -gt 0 ]; then ok "lab objects: the forbidden CUDA calls of $renamed planted mutants reach the kit's count"
else bad "lab objects: no planted mutant's forbidden CUDA call was renamed for the kit's count (RENAME_LAB_CALLS)"; fi
. grader/test/graders.sh
. grader/test/busy.sh
[ ! -f grader/test/mutate.sh ] || . grader/test/mutate.sh
section_end

# ===== The host's report, then the summary =====
wait
for name in "${lanes[@]}"; do
    cat "$LOG/lane-$name.out"
    if read -r p f s <"$LOG/lane-$name.counts" 2>/dev/null; then
        pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
    else bad "the $name lane ended before its report was done (its output: $LOG/lane-$name.out)"; fi
done
sections_report
echo "make test took $((SECONDS - t_start)) s (the lanes ran at once: their sections add up to more)"
echo "xferlab: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
