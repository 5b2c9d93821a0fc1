# model.sh - make test's section on the grading model: grade-selftest (grader/selftest.c), a grader whose tests
# misbehave on purpose (exit(0), abort, a crash, a hang, a failed CUDA check, speed figures low, rising, unsound or
# not a number), and its runner crashing mid-grading, with the GPU hidden. Sourced by grader/test/test.sh (B, LOG,
# ok / bad / skipped, grade, score).

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
    expect model.ratio_partial 0 failed "speed checks short of their bars but under the default floor (0.75 of the bar) earn nothing"
    expect model.ratio_unsound 0 ungraded "a low ratio from an unsound measurement (the kit's baseline moved) is NOT GRADED, not failed"
    expect model.ratio_impossible_then_true 2 passed "an impossible figure (above its bound) never passes; the true one after it does"
    expect model.ratio_nan 0 ungraded "a ratio that is not a number is NOT GRADED"
    expect model.timed_within 1 passed "a timed figure within its bar (at most, at least) passes"
    expect model.timed_over 0 failed "a timed figure past its bar fails (no other process on the GPU)"
    expect model.timed_undeclared 0 failed "a timed check in a test not declared XL_TIMED fails"
    if [ "$(XL_LIST_TIMED=1 $B/bin/grade-selftest | sort | tr '\n' ' ')" = "model.ratio_far model.ratio_impossible_then_true model.ratio_low model.ratio_nan model.ratio_partial model.ratio_retry model.ratio_unsound model.timed_over model.timed_within " ]; then
        ok "grading model: XL_LIST_TIMED=1 lists the tests declared timed, and only those"
    else bad "grading model: XL_LIST_TIMED=1 lists: $(XL_LIST_TIMED=1 $B/bin/grade-selftest | tr '\n' ' ')"; fi
    if [ "$(grep -E '^model\.ratio_(far|low|retry)	' "$LOG/selftest-ratios.tsv" | cut -f1-4,6,7 | sort | tr '\t\n' '|;')" = "model.ratio_far|1|0.3|0.8|far|always 0.3;model.ratio_far|2|0.3|0.8|far|always 0.3;model.ratio_low|1|0.5|0.8|low|always 0.5;model.ratio_low|2|0.5|0.8|low|always 0.5;model.ratio_low|3|0.5|0.8|low|always 0.5;model.ratio_retry|1|0.5|0.8|rising|call 1 of rising;model.ratio_retry|2|0.9|0.8|rising|call 2 of rising;" ] &&
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
    for msg in 'planted failure 42' 'ended the process' 'signal 11' 'did not finish within 1 s' 'missed the threshold in 3 fresh' 'far (need >= 0.8): missed the threshold by more than 2x in sound measurements' \
        'NOT GRADED: unsound (need >= 0.8) could not be measured soundly' '2 speed tests were NOT GRADED' \
        'selftest.c:[0-9]*: cudaErrorInvalidValue failed' 'XL_NO_GPU' 'a note shown with the result' 'planted time 305 ms over its bar' \
        'grader error: model.timed_undeclared makes a speed or timed check but is not declared XL_TIMED'; do
        if grep -q "$msg" "$json"; then ok "grading model: results.json says '$msg'"; else bad "grading model: results.json lacks '$msg'"; fi
    done
    if command -v python3 >/dev/null 2>&1; then
        if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["score"]==9 and d["max_score"]==40 and all({"name","score","max_score","status","output","visibility"} <= set(t) for t in d["tests"]) and [t["visibility"] for t in d["tests"] if t["name"]=="model.hidden"]==["hidden"]' "$json"; then
            ok "grading model: results.json is valid Gradescope JSON (score 9 of 40; the hidden test marked hidden)"
        else bad "grading model: results.json is not valid Gradescope JSON"; fi
    else skipped "results.json validation: no python3"; fi
    if grep -q '^lab 00 grading-model: 9/40 .*(2 tests NOT GRADED: ' "$LOG/selftest.log"; then ok "grading model: total line, with the tests not graded"; else bad "grading model: total line missing"; fi
    # partial credit for speed, the instructor's choice: linear from the floor (0.75 of the bar by default) to the bar
    partial() { # NAME SCORE STATUS ENV...: grades model.ratio_partial (and ratio_low, far) under the ENV settings
        local name=$1 want_s=$2 want_st=$3 got; shift 3
        mkdir -p "$LOG/selftest-$name"
        env XL_NO_GPU=1 "$@" XL_RESULTS_DIR="$LOG/selftest-$name" $B/bin/grade-selftest --filter='model/ratio_@(partial|low|far)' \
            >"$LOG/selftest-$name.log" 2>&1
        got=$(score "$LOG/selftest-$name/points.tsv" model.ratio_partial)
        [ "${got%% *}" = "$want_s" ] && [ "${got##* }" = "$want_st" ] && echo ok || echo "got '$got'"
    }
    r1=$(partial linear 2 partial XL_SPEED_FLOOR=0.5) r2=$(partial floor 0 failed XL_SPEED_CREDIT=linear)
    r3=$(partial all 0 failed XL_SPEED_CREDIT=all XL_SPEED_FLOOR=0.5)
    if [ "$r3" = ok ]; then ok "grading model: XL_SPEED_CREDIT=all gives nothing below the bar, whatever the floor"
    else bad "grading model: XL_SPEED_CREDIT=all, floor 0.5: $r3 (log: $LOG/selftest-all.log)"; fi
    if [ "$r1" = ok ] && [ "$r2" = ok ] && grep -q 'PARTIAL (a speed check short of its bar)' "$LOG/selftest-linear.log" &&
        grep -q '50% of the way up from the floor' "$LOG/selftest-linear/results.json" &&
        [ "$(score "$LOG/selftest-linear/points.tsv" model.ratio_far)" = "0 1 failed" ] &&
        [ "$(score "$LOG/selftest-linear/points.tsv" model.ratio_low)" = "0 1 failed" ]; then
        ok "grading model: linear credit (the default) with XL_SPEED_FLOOR=0.5 gives 2 of 4 points to readings half way up from their floors (the smaller share of two checks), none at the default floor (0.75 of the bar), none to a far miss or a share worth less than a point"
    else bad "grading model: linear credit, floor 0.5: $r1, default floor: $r2 (logs: $LOG/selftest-linear.log, $LOG/selftest-floor.log)"; fi
    if XL_POINTS_TABLE=1 $B/bin/grade-selftest | grep -q '^Speed tests: a speed test below its bar earns part of its points, in a straight line from none at 75% of the bar' &&
        ! XL_SPEED_CREDIT=all XL_POINTS_TABLE=1 $B/bin/grade-selftest | grep -q '^Speed tests'; then
        ok "grading model: the points table states the linear curve (the default) and its floor, and nothing under XL_SPEED_CREDIT=all"
    else bad "grading model: the points table does not state the speed credit"; fi
else
    bad "the selftest grader did not produce results (log: $LOG/selftest.log)"
fi

# Criterion's runner crashing (it does, now and then, with several gradings at once) costs no results: the grader
# runs it as a child and grades again. Planted here by sending the runner SIGABRT while it grades.
mkdir -p "$LOG/selftest-crash"
XL_NO_GPU=1 XL_RESULTS_DIR="$LOG/selftest-crash" $B/bin/grade-selftest >"$LOG/selftest-crash.log" 2>&1 &
crash_sup=$! crash_runner=''
for _ in $(seq 1 50); do crash_runner=$(pgrep -P $crash_sup | head -1); [ -z "$crash_runner" ] || break; sleep 0.05; done
sleep 0.3
[ -z "$crash_runner" ] || kill -ABRT "$crash_runner" 2>/dev/null
wait $crash_sup
crash_rc=$?
if [ -n "$crash_runner" ] && [ $crash_rc = 0 ] && grep -q "^grader: Criterion's test runner crashed (signal 6; .*grading again$" "$LOG/selftest-crash.log" &&
    [ "$(tail -n +2 "$LOG/selftest-crash/points.tsv" | wc -l)" = "$(tail -n +2 "$LOG/selftest/points.tsv" | wc -l)" ]; then
    ok "grading model: a runner killed by SIGABRT mid-grading is said in one line and graded again, every test's result kept"
else bad "grading model: a crashed runner (runner '$crash_runner', exit $crash_rc; log: $LOG/selftest-crash.log)"; fi

# tests run at once (XL_GRADE_JOBS) finish in any order; the grading reports them as one at a time does: the same
# table, results.json and points (seconds aside), in Criterion's order
for j in 1 4; do
    mkdir -p "$LOG/selftest-jobs$j"
    XL_NO_GPU=1 XL_GRADE_JOBS=$j XL_RESULTS_DIR="$LOG/selftest-jobs$j" $B/bin/grade-selftest >"$LOG/selftest-jobs$j.log" 2>/dev/null
done
if grep -q '^lab 00 ' "$LOG/selftest-jobs1.log" && cmp -s "$LOG/selftest-jobs1.log" "$LOG/selftest-jobs4.log" &&
    cmp -s "$LOG/selftest-jobs1/results.json" "$LOG/selftest-jobs4/results.json" &&
    [ "$(cut -f1-4 "$LOG/selftest-jobs1/points.tsv")" = "$(cut -f1-4 "$LOG/selftest-jobs4/points.tsv")" ]; then
    ok "grading model: 4 tests at once report as one at a time: the same table, results.json and points, in the same order"
else bad "grading model: XL_GRADE_JOBS=4 reports differently from XL_GRADE_JOBS=1 (logs: $LOG/selftest-jobs1.log, $LOG/selftest-jobs4.log)"; fi
