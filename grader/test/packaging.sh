# packaging.sh - make test's sections on what the kit hands out: the Gradescope autograder zip run against a fake
# /autograder tree, and the student tree (make handout) with its build, make test, make grade and GitHub
# Classroom workflow. Grades with the GPU hidden (XL_NO_GPU=1). Sourced by grader/test/test.sh (B, LOG, gpu_rc,
# ok / bad / skipped, grade).

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
        out=$(python3 docs/handout/studentmd.py "$LOG/open-span.md" 2>&1); rc=$?
        if [ $rc = 2 ] && [ "$out" = "studentmd: $LOG/open-span.md: a <!-- staff --> span is not closed by <!-- /staff -->" ] &&
            [ "$(cat "$LOG/open-span.md")" = 'a <!-- staff -->b' ]; then
            ok "handout: a staff span left open stops make handout with one line, the page untouched"
        else bad "handout: studentmd.py on an open span: exit $rc, '$out'"; fi
        # every image its pages show is in it (the charts drawn from the reference data, before any make plots)
        missing=$(for md in "$ht"/README.md "$ht"/labs/*/README.md "$ht"/docs/*.md; do
            sed -n 's/.*!\[[^]]*\](\([^)]*\)).*/\1/p' "$md" | while read -r img; do
                [ -f "$(dirname "$md")/$img" ] || echo "${md#"$ht"/}: $img"; done; done)
        if ! command -v gnuplot >/dev/null; then skipped "handout: its charts (no gnuplot here to draw them)"
        elif [ -z "$missing" ] && ls "$ht"/build/plots/*.svg >/dev/null 2>&1; then ok "handout: every image its pages show is in it"
        else bad "handout: images missing from it: $(echo $missing | head -c 300)"; fi
        if python3 docs/handout/leakcheck.py solutions "$ht" >"$LOG/leakcheck.log" 2>&1; then
            ok "handout: no function body of solutions/ is found in it (docs/handout/leakcheck.py)"
        else bad "handout: reference code found in it:"; sed 's/^/        /' "$LOG/leakcheck.log" | head -10; fi
        # the search can fail: a solution pasted in with its names changed is found
        planted=$(mktemp -d /tmp/xferlab-leak.XXXXXX)
        mkdir -p "$planted/labs/x" && sed 's/\bj\b/job/g; s/\bcopied\b/done_ev/g' solutions/03-*/lab.cu >"$planted/labs/x/mine.cu"
        if ! python3 docs/handout/leakcheck.py solutions "$planted" >/dev/null 2>&1; then
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
            # a lab.cu that does not compile blocks no other lab: make grade LAB=02 grades lab 02, make grade grades
            # every other lab, says which one it could not build (the compiler's message once) and exits 2
            l01=$ht/labs/$(basename labs/01-*)/lab.cu nlabs=$(ls -d labs/[0-9][0-9]-*/lab.cu | wc -l)
            cp "$l01" "$LOG/lab01-kept.cu" && printf 'this is not C;\n' >>"$l01"
            (cd "$ht" && XL_NO_INSTALL=1 make --no-print-directory grade LAB=02) >"$LOG/handout-broken-02.log" 2>&1
            rc02=$?
            (cd "$ht" && XL_NO_INSTALL=1 make --no-print-directory grade) >"$LOG/handout-broken-all.log" 2>&1
            rcall=$?
            (cd "$ht" && XL_NO_INSTALL=1 make --no-print-directory demo) >"$LOG/handout-broken-demo.log" 2>&1
            rcdemo=$?
            (cd "$ht" && XL_NO_INSTALL=1 make --no-print-directory run LAB=02) >"$LOG/handout-broken-run.log" 2>&1
            cp "$LOG/lab01-kept.cu" "$l01"
            if [ $rc02 = 0 ] && grep -q '^lab 02 ' "$LOG/handout-broken-02.log" && ! grep -q 'lab.cu(' "$LOG/handout-broken-02.log" &&
                [ $rcall = 2 ] && [ "$(grep -cE '^lab (0[2-9]|[1-9][0-9]) [a-z-]*: [0-9]*/' "$LOG/handout-broken-all.log")" = $((nlabs - 1)) ] &&
                [ "$(grep -c 'lab.cu([0-9]*): error' "$LOG/handout-broken-all.log")" = 1 ] &&
                grep -q '^lab 01 pageable-copy: labs/01-pageable-copy/lab.cu does not compile' "$LOG/handout-broken-all.log" &&
                grep -q '^make grade: not graded, the code does not compile: lab 01$' "$LOG/handout-broken-all.log"; then
                ok "handout: with lab 01's lab.cu broken, make grade LAB=02 grades lab 02, and make grade the other $((nlabs - 1)) labs, names lab 01 with the compiler's message once, exit 2"
            else bad "handout: a broken lab 01 (exit $rc02 and $rcall; logs: $LOG/handout-broken-02.log, $LOG/handout-broken-all.log)"; fi
            charts_line='^plots: [0-9]* charts in build/plots' # or, where gnuplot is missing (a GPU host), that it is
            command -v gnuplot >/dev/null || charts_line='^plots: gnuplot is not installed'
            if [ $rcdemo = 2 ] && [ "$(grep -cE '^lab (0[2-9]|[1-9][0-9]) [a-z-]*: [0-9]*/.*\(your lab.cu: ' "$LOG/handout-broken-demo.log")" = $((nlabs - 1)) ] &&
                [ "$(grep -c 'lab.cu([0-9]*): error' "$LOG/handout-broken-demo.log")" = 1 ] &&
                grep -q '^lab 01 pageable-copy: labs/01-pageable-copy/lab.cu does not compile: not measured, not graded$' "$LOG/handout-broken-demo.log" &&
                grep -q "$charts_line" "$LOG/handout-broken-demo.log" &&
                grep -q '^make demo: left out, the code does not compile: lab 01$' "$LOG/handout-broken-demo.log"; then
                ok "handout: with lab 01's lab.cu broken, make demo grades the other $((nlabs - 1)) labs, draws the charts (or says gnuplot is missing), names lab 01 with the compiler's message once, exit 2"
            else bad "handout: make demo with a broken lab 01 (exit $rcdemo; log: $LOG/handout-broken-demo.log)"; fi
            # the explorer runs (without a GPU it says so in one line): nothing of lab 01 was compiled for it
            if grep -q "^02-pinned-copy-explore: " "$LOG/handout-broken-run.log" && ! grep -q 'lab.cu([0-9]*): error' "$LOG/handout-broken-run.log"; then
                ok "handout: with lab 01's lab.cu broken, make run LAB=02 runs lab 02's explorer"
            else bad "handout: make run LAB=02 with a broken lab 01 (log: $LOG/handout-broken-run.log)"; fi
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
