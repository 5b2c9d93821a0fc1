# graders.sh - make test's sections on grading the graders. Course staff and CI (and a student tree, which has
# no reference solutions and no mutants: there it grades the student's own lab.cu files).
#
# Sourced by grader/test/test.sh, which provides B, LOG, gpu_rc and testlib.sh's ok / bad / skipped, grade,
# mutant_targets, score, total and count.
# 1. Each lab's reference, its tests declared XL_TIMED (XL_LIST_TIMED=1 lists them) graded with the GPU to
#    themselves, lab by lab; XL_REF_RUNS times, default 1.
# 2. Then, XL_MUTANT_JOBS gradings at once (default the lane's cores, 4 to 8), each one test at a time
#    (XL_GRADE_JOBS=1; elsewhere a grading runs several at once, its timed tests alone): the references' other tests,
#    the skeletons, and every planted mutant on the tests its " * target:" lines name. A correctness check holds on a
#    shared GPU: a reference must get full points over both parts on a GPU (without one, pass every CPU test and SKIP
#    the others with a reason), a skeleton must not pass, and a target a mutant failed with no speed figure missed is
#    lost for good. On a host with one GPU, a test that needs two (kind XL_TWO_GPUS, lab 09) is SKIPPED with a reason
#    starting "needs 2 GPUs": the reference gets full points over the others, and a mutant's target that is such a
#    test is reported "needs 2 GPUs: not checked here" (a SKIP line). On a host with two, such a skip fails.
#    There a speed check measures once (XL_ONE_ATTEMPT=1): a miss beside other gradings is graded again alone anyway.
# 3. Any other target of a mutant (a speed figure missed, NOT GRADED, or passed while other gradings shared the GPU)
#    is graded again with the mutant alone on the GPU, and that grading decides (one NOT GRADED there is graded
#    again, up to 3 times: the host's lanes run beside and can disturb a measurement).
# XL_TEST_LABS="03 04" grades only those labs.

# filter_of TESTS... - Criterion's --filter for these suite.name tests
filter_of() { echo "@($(echo "$@" | sed 's/\./\//g; s/ /|/g'))"; }
# speed_missed LOG TEST - 0 when the ratio log LOG has a speed or timed figure of TEST (suite.name, or suite.name#k)
# that missed its bar, was not a number, or was measured unsoundly
speed_missed() {
    awk -F'\t' -v t="$2" '{ c = $1; sub(/#.*/, "", c) } c != t { next }
        $3 !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ || $7 ~ /^NOT SOUND/ || ($5 == 1 ? $3 + 0 < $4 + 0 : $3 + 0 > $4 + 0) { m = 1 }
        END { exit !m }' "$1" 2>/dev/null
}
# gpu_count - how many GPUs the CUDA programs here see: nvidia-smi's list, cut to CUDA_VISIBLE_DEVICES when set; 1
# when nvidia-smi lists none but the probe found a GPU (gpu_rc 0), 0 without one
gpu_count() {
    local n v
    [ "$gpu_rc" -eq 0 ] || { echo 0; return; }
    n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    [ "${n:-0}" -gt 0 ] || n=1
    if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
        v=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c '[^[:space:]]')
        [ "$v" -ge "$n" ] || n=$v
    fi
    echo "$n"
}
# two_gpu_skips DIR - the tests a grading in DIR (its points.tsv and results.json) SKIPPED for want of a second GPU:
# their reason starts "needs 2 GPUs" (kind XL_TWO_GPUS); one a line
two_gpu_skips() {
    python3 - "$1" <<'EOF' 2>/dev/null
import json, sys
d = sys.argv[1]
skipped = {r.split('\t')[0] for r in open(d + '/points.tsv').read().splitlines()[1:] if r.split('\t')[3:4] == ['skipped']}
for t in json.load(open(d + '/results.json')).get('tests', []):
    if t.get('name') in skipped and any(l.startswith('needs 2 GPUs') for l in t.get('output', '').split('\n')[1:]):
        print(t['name'])
EOF
}
# merge_results OUT DIR... - OUT/results.json of the gradings in the DIRs together (their tests in turn, score and
# max summed), beside the OUT/points.tsv made of theirs: what grader/mutate/run.py reads of a whole grading
merge_results() {
    python3 - "$@" <<'EOF'
import json, sys
out, tests, score, most = sys.argv[1], [], 0, 0
for d in sys.argv[2:]:
    try:
        r = json.load(open(d + '/results.json'))
    except (OSError, ValueError):
        continue
    tests += r.get('tests', [])
    score += r.get('score', 0)
    most += r.get('max_score', 0)
json.dump({'score': score, 'max_score': most, 'tests': tests}, open(out + '/results.json', 'w'), indent=2)
EOF
}
ngpus=$(gpu_count)

# pool_wait N - waits until fewer than N of the gradings in pool_pids run (the host's lanes run beside them)
pool_pids=()
pool_running() { local p n=0; for p in ${pool_pids[@]+"${pool_pids[@]}"}; do ! kill -0 "$p" 2>/dev/null || n=$((n + 1)); done; echo $n; }
pool_wait() { while [ "$(pool_running)" -ge "$1" ]; do sleep 0.1; done; }

cores=$(nproc 2>/dev/null || echo 2)
mutant_jobs=${XL_MUTANT_JOBS:-$((cores < 4 ? 4 : cores > 8 ? 8 : cores))}
slugs=()
for lab in labs/[0-9][0-9]-*/lab.cu; do lab=${lab%lab.cu} # a lab is a folder with a lab.cu, as in the Makefile
    slug=$(basename "$lab")
    case " ${XL_TEST_LABS:-${slug%%-*}} " in *" ${slug%%-*} "*) slugs+=("$slug") ;; esac
done

# ===== A student tree: the student's labs; else the references' timed tests, one lab at a time =====
if [ ! -d solutions ]; then
    section "grading your labs (a student tree: no reference solutions here)"
    for slug in ${slugs[@]+"${slugs[@]}"}; do # one at a time: the student's speed tests have the GPU to themselves
        if grade $B/bin/$slug-grade $slug-skeleton; then
            read -r s m <<<"$(total "$LOG/$slug-skeleton/points.tsv")"
            ok "$slug: your lab.cu was graded: $s/$m here ('make grade LAB=${slug%%-*}' says what each test found)"
        else bad "$slug: your lab.cu gave no results (log: $LOG/$slug-skeleton.log)"; fi
    done
    return 0
fi
section "the references' timed tests, each lab's alone${XL_TEST_LABS:+ (labs $XL_TEST_LABS only)}"
declare -A timed # slug -> its tests declared XL_TIMED
for slug in ${slugs[@]+"${slugs[@]}"}; do
    timed[$slug]=$(XL_LIST_TIMED=1 $B/bin/$slug-grade-solution | tr '\n' ' ' | sed 's/ $//')
    [ -n "${timed[$slug]}" ] || continue
    for i in $(seq 1 "${XL_REF_RUNS:-1}"); do
        XL_RATIO_LOG=$LOG/$slug-ratios.tsv grade $B/bin/$slug-grade-solution $slug-solution-$i-timed \
            --filter="$(filter_of ${timed[$slug]})"
    done
done

# report_data SLUG DIR... - a reference's grading on a GPU left what its report page draws, in one of the DIRs (its
# timed tests' and the others'): device.txt naming the GPU, ratios.tsv of the speed checks (7 columns) when the lab
# has any, and the lab's own figures (lab 01 data/sweep.csv, labs 04 and 05 data/timeline.csv, lab 06 data/peak.csv,
# lab 10 data/loop.csv) with
# the reference data's header and rows
report_data() {
    local slug=$1 want="" header="" d f problems=""
    shift
    case $slug in
    01-*) want=sweep header=direction,bytes,median_ms,min_ms,max_ms,gbps ;;
    04-* | 05-*) want=timeline header=run,lane,what,start_ms,end_ms,bytes ;;
    06-*) want=peak header=method,bytes,peak_x ;;
    10-*) want=loop header=loop,impl,batch,frames,workers,streams,slots,cpu_us,fps,latency_p50_ms,latency_p99_ms,latency_max_ms,ideal_fps,bound ;;
    esac
    f=$(for d in "$@"; do [ -s "$d/device.txt" ] && echo "$d/device.txt"; done | head -1)
    [ -n "$f" ] || problems="no device.txt;"
    if [ -n "${timed[$slug]}" ]; then
        f=$(for d in "$@"; do [ -s "$d/ratios.tsv" ] && echo "$d/ratios.tsv"; done | head -1)
        { [ -n "$f" ] && awk -F'\t' 'NF != 7 { bad = 1 } END { exit bad }' "$f"; } || problems="$problems ratios.tsv missing or not 7 columns;"
    fi
    if [ -n "$want" ]; then
        f=$(for d in "$@"; do [ -s "$d/data/$want.csv" ] && echo "$d/data/$want.csv"; done | head -1)
        { [ -n "$f" ] && [ "$(head -1 "$f")" = "$header" ] && [ "$(grep -vc '^#' "$f")" -ge 3 ]; } ||
            problems="$problems data/$want.csv missing, or not '$header' and 2 rows or more;"
    fi
    if [ -z "$problems" ]; then ok "$slug: the reference's grading left its report page's data (device, ratios${want:+, data/$want.csv})"
    else bad "$slug: the report page's data: $problems (in $*)"; fi
}

# ===== The references' other tests, the skeletons and the planted mutants, several at once =====
section "the references' other tests, the skeletons and every planted mutant, $mutant_jobs gradings at once"
# pool_grade BIN NAME ARGS... - grade in the background once a slot is free; each grading runs its tests one at a
# time (XL_GRADE_JOBS=1): the gradings at once already fill the GPU and the cores
pool_grade() { pool_wait "$mutant_jobs"; XL_GRADE_JOBS=1 grade "$@" & pool_pids+=($!); }
declare -A untimed # slug -> the --filter of its tests that are not timed
for slug in ${slugs[@]+"${slugs[@]}"}; do
    untimed[$slug]=${timed[$slug]:+--filter=!($(filter_of ${timed[$slug]}))}
done
# the longest first: each reference's other tests and each skeleton's (a skeleton's timed tests add nothing to
# "it does not pass"), then each mutant on its targets (a timed one it fails here by a wrong result is decided here)
for slug in ${slugs[@]+"${slugs[@]}"}; do
    for i in $(seq 1 "${XL_REF_RUNS:-1}"); do
        pool_grade $B/bin/$slug-grade-solution $slug-solution-$i-rest ${untimed[$slug]:+"${untimed[$slug]}"}
    done
done
for slug in ${slugs[@]+"${slugs[@]}"}; do
    pool_grade $B/bin/$slug-grade $slug-skeleton ${untimed[$slug]:+"${untimed[$slug]}"}
done
for slug in ${slugs[@]+"${slugs[@]}"}; do
    for mut in grader/mutants/$slug/*.diff; do
        [ -f "$mut" ] || continue
        name=$(basename "$mut" .diff) targets=$(mutant_targets "$mut")
        [ -z "$targets" ] || XL_ONE_ATTEMPT=1 XL_RATIO_LOG=$LOG/$slug-mutant-$name-ratios.tsv \
            pool_grade "$B/bin/$slug-mutant-$name" "$slug-mutant-$name" --filter="$(filter_of $targets)"
    done
done
wait ${pool_pids[@]+"${pool_pids[@]}"}
alone=() # "slug name targets..." of the mutants to grade again alone, on the targets not lost for good
for slug in ${slugs[@]+"${slugs[@]}"}; do
    for i in $(seq 1 "${XL_REF_RUNS:-1}"); do # run i: its timed tests and the others, in one points.tsv
        f=$LOG/$slug-solution-$i/points.tsv logs="$LOG/$slug-solution-$i-rest.log"
        [ -z "${timed[$slug]}" ] || logs="$LOG/$slug-solution-$i-timed.log $logs"
        mkdir -p "$LOG/$slug-solution-$i"
        if ! cat "$LOG/$slug-solution-$i-timed/points.tsv" "$LOG/$slug-solution-$i-rest/points.tsv" 2>/dev/null |
            awk 'NR == 1 || $1 != "test"' >"$f" || [ "$(wc -l <"$f")" -lt 2 ]; then
            bad "$slug: solution run $i gave no results (logs: $logs)"; continue; fi
        merge_results "$LOG/$slug-solution-$i" "$LOG/$slug-solution-$i-timed" "$LOG/$slug-solution-$i-rest"
        # a test NOT GRADED here (its measurement unsound while the host lane shares the machine) is graded again
        # alone, up to 3 times, as a student would grade again on an idle GPU; that grading decides
        again=$(awk -F'\t' 'NR > 1 && $4 == "ungraded" { print $1 }' "$f" | tr '\n' ' ' | sed 's/ $//')
        for a in 1 2 3; do
            [ -n "$again" ] && [ $gpu_rc -eq 0 ] || break
            grade $B/bin/$slug-grade-solution $slug-solution-$i-again-$a --filter="$(filter_of $again)"
            still=""
            for t in $again; do
                read -r ts _ tst <<<"$(score "$LOG/$slug-solution-$i-again-$a/points.tsv" "$t")"
                [ "${tst:-}" = ungraded ] && still="$still $t" && continue
                awk -F'\t' -v t="$t" -v s="${ts:-0}" -v st="${tst:-failed}" 'BEGIN { OFS = FS }
                    $1 == t { $2 = s; $4 = st } { print }' "$f" >"$f.new" && mv "$f.new" "$f"
            done
            printf '  note  %s\n' "$slug: solution run $i: NOT GRADED beside the host lane, graded again alone ($a): $again"
            again=${still# }
        done
        read -r s m <<<"$(total "$f")"
        nskip=$(count "$f" skipped); nfail=$(count "$f" failed)
        two=$([ "$nskip" = 0 ] || two_gpu_skips "$LOG/$slug-solution-$i" | tr '\n' ' ' | sed 's/ $//')
        n2=$(echo $two | wc -w)
        graded=$(awk -F'\t' 'NR > 1 && $4 != "skipped" { m += $3 } END { print m + 0 }' "$f")
        if [ $gpu_rc -eq 0 ]; then
            if [ "$s" = "$m" ] && [ "$nskip" = 0 ]; then ok "$slug: solution run $i: full points, $s/$m"
            elif [ "$ngpus" -lt 2 ] && [ "$n2" -gt 0 ] && [ "$nskip" = "$n2" ] && [ "$s" = "$graded" ]; then
                ok "$slug: solution run $i: full points over what one GPU grades, $s/$graded"
                skipped "$slug: solution run $i: $n2 tests ($((m - graded)) points) need 2 GPUs, this host has $ngpus: not checked here ($two)"
            else bad "$slug: solution run $i: $s/$m, $nfail failed, $nskip skipped${two:+ ($n2 needing 2 GPUs on a host with $ngpus: $two)} (logs: $logs)"
                cat $logs | grep -A3 'FAILED' | sed 's/^/        /' | head -24; fi
        elif [ "$nfail" = 0 ] && [ "$nskip" -gt 0 ]; then
            ok "$slug: solution passes every CPU test ($s points); $nskip GPU tests SKIPPED"
            if cat $logs | grep -q "SKIPPED" && cat $logs | grep -q "skipped: no CUDA GPU"; then
                ok "$slug: the skip says why in one line"; else bad "$slug: no skip reason in the output"; fi
        else bad "$slug: solution without a GPU: $nfail failed, $nskip skipped (logs: $logs)"; fi
    done
    [ $gpu_rc -eq 0 ] && report_data "$slug" "$LOG/$slug-solution-1-timed" "$LOG/$slug-solution-1-rest"
    if [ -f "$LOG/$slug-skeleton/points.tsv" ]; then
        f=$LOG/$slug-skeleton/points.tsv
        read -r s m <<<"$(total "$f")"
        cpu_max=$(awk -F'\t' 'NR > 1 && $4 != "skipped" { m += $3 } END { print m + 0 }' "$f")
        if [ "$cpu_max" = 0 ]; then skipped "$slug: the skeleton: every test needs a GPU"
        elif [ "$s" -lt "$cpu_max" ]; then ok "$slug: the skeleton does not pass ($s of the $cpu_max points graded here)"
        else bad "$slug: the skeleton gets $s of $cpu_max graded points"; fi
    else bad "$slug: skeleton gave no results (log: $LOG/$slug-skeleton.log)"; fi
    for mut in grader/mutants/$slug/*.diff; do
        [ -f "$mut" ] || continue
        name=$(basename "$mut" .diff) targets=$(mutant_targets "$mut") again="" unchecked=""
        [ -n "$targets" ] || { bad "$slug mutant $name: no ' * target:' line"; continue; }
        f=$LOG/$slug-mutant-$name/points.tsv
        [ -f "$f" ] || { bad "$slug mutant $name: no results (log: $LOG/$slug-mutant-$name.log)"; continue; }
        two=$([ "$(count "$f" skipped)" = 0 ] || two_gpu_skips "$LOG/$slug-mutant-$name")
        for t in $targets; do
            read -r s m st <<<"$(score "$f" "$t")"
            if [ -z "${m:-}" ]; then bad "$slug mutant $name: target $t is not a test of the grader"
            elif [ "$st" = skipped ] && printf '%s\n' "$two" | grep -qxF "$t"; then
                if [ "$ngpus" -lt 2 ]; then unchecked="$unchecked $t"
                else bad "$slug mutant $name: $t was SKIPPED as needing 2 GPUs on a host with $ngpus (log: $LOG/$slug-mutant-$name.log)"; fi
            elif [ "$st" = skipped ]; then skipped "$slug mutant $name: $t needs a GPU"
            elif [ "$st" = failed ] && [ "$s" = 0 ] && ! speed_missed "$LOG/$slug-mutant-$name-ratios.tsv" "$t"; then
                ok "$slug mutant $name: loses $t ($m points)"
            else again="$again $t"; fi
        done
        [ -z "$unchecked" ] || skipped "$slug mutant $name: needs 2 GPUs: not checked here (${unchecked# }; this host has $ngpus)"
        [ -z "$again" ] || alone+=("$slug $name$again")
    done
done

# ===== The mutants whose speed figures decide, each alone =====
section "planted mutants a speed or timed figure must judge, each graded alone (${#alone[@]})"
for a in ${alone[@]+"${alone[@]}"}; do
    read -r slug name targets <<<"$a"
    d=$slug-mutant-$name-alone
    export XL_FAR_AT_ONCE=1 # a planted mutant's far miss decides at once: its code is known slow, no pause to confirm
    grade "$B/bin/$slug-mutant-$name" "$d" --filter="$(filter_of $targets)"
    for t in $targets; do
        read -r s m st <<<"$(score "$LOG/$d/points.tsv" "$t" 2>/dev/null)"
        for again in 2 3; do # NOT GRADED: the GPU or the host was disturbed (the host's lanes run beside): again
            [ "$st" = ungraded ] || break
            grade "$B/bin/$slug-mutant-$name" "$d-$again" --filter="$(filter_of $t)"
            read -r s m st <<<"$(score "$LOG/$d-$again/points.tsv" "$t" 2>/dev/null)"
        done
        if [ "$st" = skipped ]; then skipped "$slug mutant $name: $t needs a GPU"
        elif [ "$st" = failed ] && [ "$s" = 0 ]; then ok "$slug mutant $name: loses $t ($m points; graded alone)"
        elif [ "$st" = ungraded ]; then
            bad "$slug mutant $name: $t was NOT GRADED 3 times with the GPU to itself: its measurement is unsound on this GPU (log: $LOG/$d.log)"
        else bad "$slug mutant $name: still earns ${s:-?}/${m:-?} on $t, ${st:-no result}, graded alone (log: $LOG/$d.log)"; fi
    done
done
unset XL_FAR_AT_ONCE

# ===== Linear speed credit at its default floor: no planted mutant a speed test kills earns a point =====
planted_logs=() # NAME=FILE of every sound reading of the planted mutants on their targets, beside others and alone
for f in "$LOG"/*-mutant-*-ratios.tsv "$LOG"/*-mutant-*-alone*/ratios.tsv; do
    [ -f "$f" ] || continue
    who=${f#"$LOG"/}; who=${who%%/*}; who=${who%-ratios.tsv}; who=${who%-alone*}
    planted_logs+=("$who=$f")
done
if [ $gpu_rc -eq 0 ] && [ ${#planted_logs[@]} -gt 0 ]; then
    section "linear speed credit: how close the planted mutants came to the bars of the speed tests that kill them"
    read -r share who test <<<"$(python3 grader/report/ratiolog.py closest "${planted_logs[@]}")"
    floor=$(XL_SPEED_CREDIT=linear XL_POINTS_TABLE=1 $B/bin/grade-selftest | sed -n 's/.* from none at \([0-9]*\)% of the bar.*/0.\1/p')
    if [ -n "$share" ] && [ -n "$floor" ] && awk -v s="$share" -v f="$floor" 'BEGIN { exit !(s < f) }'; then
        ok "linear speed credit: the closest planted mutant reached $share of its bar ($who, $test), under the default floor $floor: none earns a point"
    else bad "linear speed credit: planted mutant $who reached ${share:-?} of $test's bar, not under the floor ${floor:-?}: it would earn points"; fi
fi
