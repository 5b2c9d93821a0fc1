# grader/test/mutate.sh - make test's section on the generated mutants (grader/mutate/). Course staff and CI.
#
# Sourced by grader/test/test.sh, which provides ok, bad, skipped, $LOG, $B and $gpu_rc (0 with a GPU).
# Where /usr/bin/python3 has python3-clang it generates every lab's mutants into build/mutate/ and checks them:
# enough per lab, every operator used, one mutant of each operator compiles with nvcc, each equivalent.txt line
# matches one mutant, and which tests see a mutant in two known cases. Everywhere it checks the report against
# planted statuses and run.py's one-line failures, and how run.py judges tests that need 2 GPUs on a host with one
# (planted results). On a GPU, with manifests in build/mutate/, it grades a fixed sample of 4 mutants per lab (the
# labs of XL_TEST_LABS): each must be killed or listed as equivalent, or be unreached here (only tests that need 2
# GPUs reach it, on a host with one).
# Logs go to $LOG/mutate-*.

section "generated mutants (grader/mutate/)"
mut_py=/usr/bin/python3
mut_out=$B/mutate

# mut_rows SLUG - the rows of a lab's manifest, header left out
mut_rows() { tail -n +2 "$mut_out/$1/manifest.tsv"; }

if ! $mut_py -c 'import clang.cindex' >/dev/null 2>&1; then
    skipped "mutants: generating them needs $mut_py with python3-clang (sudo apt-get install python3-clang)"
else
    mut_t0=$(date +%s)
    if $mut_py grader/mutate/generate.py --out "$mut_out" >"$LOG/mutate-gen.log" 2>&1; then
        mut_s=$(($(date +%s) - mut_t0))
        counts="" few=""
        for lab in labs/[0-9][0-9]-*/lab.cu; do lab=${lab%lab.cu} # a lab is a folder with a lab.cu, as in the Makefile
            slug=$(basename "$lab")
            [ -f "solutions/$slug/lab.cu" ] || continue
            n=$(mut_rows "$slug" 2>/dev/null | wc -l)
            counts="$counts ${slug%%-*}:$n"
            [ "$n" -ge 40 ] || few="$few $slug ($n)"
        done
        if [ -z "$few" ]; then ok "mutants: generated for every lab in ${mut_s} s, at least 40 each:$counts"
        else bad "mutants: fewer than 40 generated for$few (log: $LOG/mutate-gen.log)"; fi

        missing="" used=""
        for op in $($mut_py grader/mutate/generate.py --operators); do
            n=$(cat "$mut_out"/*/manifest.tsv | awk -F'\t' -v op="$op" '$2 == op' | wc -l)
            if [ "$n" -gt 0 ]; then used="$used $op:$n"; else missing="$missing $op"; fi
        done
        if [ -z "$missing" ]; then ok "mutants: every operator makes some:$used"
        else bad "mutants: no mutant from$missing"; fi

        # one mutant of each operator, compiled as make mutate compiles it (host and device, the kit's flags)
        objs="" picks=""
        for op in $($mut_py grader/mutate/generate.py --operators); do
            pick=$(for m in "$mut_out"/*/manifest.tsv; do
                awk -F'\t' -v op="$op" -v lab="$(basename "$(dirname "$m")")" '$2 == op { print lab "/" $1; exit }' "$m"
            done | head -1)
            [ -n "$pick" ] || continue
            picks="$picks $op=$pick"
            rm -f "$mut_out/${pick%/*}/obj/${pick#*/}.o"
            objs="$objs $mut_out/${pick%/*}/obj/${pick#*/}.o"
        done
        make -s -k -j"$(nproc)" $objs >"$LOG/mutate-compile.log" 2>&1
        for p in $picks; do
            op=${p%%=*} pick=${p#*=}
            if cmp -s "$mut_out/$pick.cu" "solutions/${pick%/*}/lab.cu"; then
                bad "mutants: $op: $pick.cu is the solution unchanged"
            elif [ -s "$mut_out/${pick%/*}/obj/${pick#*/}.o" ]; then
                ok "mutants: $op: $pick differs from the solution and compiles with nvcc"
            else bad "mutants: $op: $pick does not compile (log: $LOG/mutate-compile.log)"; fi
        done

        if python3 grader/mutate/run.py --check-equivalent --out "$mut_out" >"$LOG/mutate-equivalent.log" 2>&1; then
            ok "mutants: $(tail -1 "$LOG/mutate-equivalent.log")"
        else bad "mutants: an equivalent.txt line does not match exactly one mutant:"
            sed 's/^/        /' "$LOG/mutate-equivalent.log" | head -10; fi
        # the check can fail: one line that matches a mutant, one that matches none
        eq=$LOG/mutate-equiv/01-pageable-copy
        mkdir -p "$eq"
        mut_rows 01-pageable-copy | awk -F'\t' 'NR == 1 { print $2 "\t" $3 "\t" $5 "\t" $6 "\tplanted"; print $2 "\t" $3 "\t" $5 "\t" $6 " + 0\tplanted" }' >"$eq/equivalent.txt"
        out=$(python3 grader/mutate/run.py --check-equivalent --labs 01 --out "$mut_out" --equivalent-dir "$LOG/mutate-equiv" 2>&1)
        if [ $? = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -q 'equivalent.txt:2: matches 0'; then
            ok "mutants: the check finds a planted equivalent.txt line that matches no mutant, and only that one"
        else bad "mutants: the planted equivalent.txt was not judged right: $out"; fi

        # which tests see a mutant: the tests that reach the changed function
        fit=$(mut_rows 01-pageable-copy | awk -F'\t' '$4 == "lab_fit" { print $7 }' | sort -u)
        if [ "$fit" = "fit.measured_sweep,fit.synthetic" ]; then
            ok "mutants: one in lab 01's lab_fit is seen by exactly fit.measured_sweep and fit.synthetic"
        else bad "mutants: lab 01's lab_fit mutants are seen by '$fit', not fit.measured_sweep,fit.synthetic"; fi
        get=$(mut_rows 02-pinned-copy | awk -F'\t' '$4 == "lab_pool_get" { print $7 }' | sort -u)
        if [ -n "$get" ] && [ "$(printf '%s\n' "$get" | wc -l)" = 1 ] && [[ ",$get," == *,pool.buffers,* ]] &&
            [[ ",$get," != *,alloc.pinned,* ]]; then
            ok "mutants: one in lab 02's lab_pool_get is seen by the pool tests, not by alloc.pinned ($get)"
        else bad "mutants: lab 02's lab_pool_get mutants are seen by '$get'"; fi
    else
        bad "mutants: generate.py failed: $(tail -1 "$LOG/mutate-gen.log") (log: $LOG/mutate-gen.log)"
    fi
fi

# the report from planted statuses: lab 01 with 3 killed, 1 survived, 1 equivalent, 1 stillborn; lab 02 with 1 killed
rp=$LOG/mutate-report
mkdir -p "$rp/01-pageable-copy"
printf '%s\n' 'lab,id,operator,line,function,status,killed_by,seconds' \
    '01-pageable-copy,del-call-L25-1,del-call,25,lab_time_gpu,killed,timer.waits_for_gpu,2.5' \
    '01-pageable-copy,rel-op-L52-1,rel-op,52,lab_copy,killed,copy.edge_cases,1.0' \
    '01-pageable-copy,bound-L19-6,bound,19,lab_time_gpu,survived,,4.0' \
    '01-pageable-copy,stream-arg-L29-2,stream-arg,29,lab_time_gpu,equivalent,,3.0' \
    '01-pageable-copy,drop-last-L151-1,drop-last,151,lab_fit,killed,fit.synthetic,0.5' \
    '01-pageable-copy,param-const-L43-1,param-const,43,lab_time_gpu,stillborn,,0.0' \
    '02-pinned-copy,del-call-L33-1,del-call,33,lab_pinned_free,killed,leaks.none,2.0' >"$rp/report.csv"
printf '%s\n' '--- solutions/01-pageable-copy/lab.cu' '+++ solutions/01-pageable-copy/lab.cu' '@@ -19 +19 @@' \
    '-    if (reps > 1024)' '+    if (reps > 1024 - 1)' >"$rp/01-pageable-copy/bound-L19-6.diff"
if python3 grader/mutate/report.py "$rp/report.csv" >"$LOG/mutate-report.log" 2>&1 &&
    grep -q '^lab 01-pageable-copy: 6 mutants: killed 3, survived 1, equivalent 1, stillborn 1; score 75.0%; 11 s$' "$rp/report.txt" &&
    grep -q '^lab 02-pinned-copy: 1 mutants: killed 1, survived 0, equivalent 0, stillborn 0; score 100.0%' "$rp/report.txt" &&
    grep -q '^  01-pageable-copy bound-L19-6: bound at solutions/01-pageable-copy/lab.cu:19 in lab_time_gpu$' "$rp/report.txt" &&
    grep -q '^      +    if (reps > 1024 - 1)$' "$rp/report.txt" && grep -q '^survivors (1)' "$rp/report.txt" &&
    [ "$(grep -c '^  0[12]-' "$rp/report.txt")" = 8 ] && grep -q '^01-pageable-copy .* 75.0%' "$LOG/mutate-report.log"; then
    ok "mutants: the report from planted statuses: counts, score 75.0% (an equivalent and a stillborn not counted), the survivor's diff, every mutant"
else bad "mutants: the report from planted statuses is wrong ($rp/report.txt)"; fi

# unreached here: a lab whose mutants only tests that need 2 GPUs reach, on a host with one, leaves them out of its
# score and says how many; the table gets a column for them
rp2=$LOG/mutate-report-unreached
mkdir -p "$rp2"
printf '%s\n' 'lab,id,operator,line,function,status,killed_by,seconds' \
    '09-gpu-to-gpu,del-call-L80-1,del-call,80,lab_stage_copy,killed,host.hazards,1.0' \
    '09-gpu-to-gpu,rel-op-L40-1,rel-op,40,lab_group_create,unreached,,0.5' \
    '09-gpu-to-gpu,drop-last-L44-1,drop-last,44,lab_group_create,unreached,,0.5' \
    '09-gpu-to-gpu,bound-L90-2,bound,90,lab_stage_copy,survived,,2.0' >"$rp2/report.csv"
if python3 grader/mutate/report.py "$rp2/report.csv" >"$LOG/mutate-report-unreached.log" 2>&1 &&
    grep -q '^lab 09-gpu-to-gpu: 4 mutants: killed 1, survived 1, equivalent 0, stillborn 0, unreached here 2; score 50.0%; 4 s$' "$rp2/report.txt" &&
    grep -q '^lab 09-gpu-to-gpu: 2 mutants unreached here: only tests that need 2 GPUs reach them' "$rp2/report.txt" &&
    grep -q '^  09-gpu-to-gpu  *rel-op-L40-1  *unreached ' "$rp2/report.txt" &&
    grep -q '^lab .* stillborn unreached  *score' "$LOG/mutate-report-unreached.log" &&
    grep -q '^09-gpu-to-gpu  *1  *1  *0  *0  *2  *50.0%' "$LOG/mutate-report-unreached.log" &&
    ! grep -q unreached "$LOG/mutate-report.log"; then
    ok "mutants: the report from planted statuses with 2 unreached here: not in the score (50.0%), counted on the lab's line and in the table"
else bad "mutants: the report with unreached mutants is wrong ($rp2/report.txt, $LOG/mutate-report-unreached.log)"; fi

# a test SKIPPED "needs 2 GPUs" (planted results): the reference is judged on the rest, and a survivor some of whose
# tests are such is unreached here; a skip for another reason is not one
r2=$LOG/mutate-two-gpus
mkdir -p "$r2"
printf 'test\tscore\tmax\tstatus\tseconds\nargs.refused\t5\t5\tpassed\t0.40\ngroup.peer\t0\t10\tskipped\t0.05\nread.peer\t0\t5\tskipped\t0.05\n' >"$r2/points.tsv"
printf '%s\n' '{"score": 5, "max_score": 20, "tests": [' \
    '{"name": "args.refused", "score": 5, "max_score": 5, "status": "passed", "output": "every refusal"},' \
    '{"name": "group.peer", "score": 0, "max_score": 10, "status": "failed", "output": "groups\nneeds 2 GPUs, this host has 1: peer access"},' \
    '{"name": "read.peer", "score": 0, "max_score": 5, "status": "failed", "output": "reads\nno CUDA GPU: none here"}]}' >"$r2/results.json"
out=$(python3 -c 'import sys; sys.path.insert(0, "grader/mutate"); import run
d, two = sys.argv[1], {"group.peer"}
print(run.needs_two_gpus(d, "group.peer"), run.needs_two_gpus(d, "read.peer"), run.needs_two_gpus(d, "args.refused"))
print(run.reference_from(d + "/points.tsv", ["args.refused", "group.peer"]), run.reference_from(d + "/points.tsv", ["args.refused", "read.peer"]))
print([run.verdict(st, ts, two, i, {"e": "why"}) for st, ts, i in (("killed", ["group.peer"], "a"), ("survived", ["args.refused", "group.peer"], "b"),
       ("survived", ["args.refused"], "c"), ("survived", ["group.peer"], "e"))])' "$r2" 2>&1)
if [ "$out" = "True False False
({'args.refused': 0.4}, {'group.peer'}) None
['killed', 'unreached', 'survived', 'equivalent']" ]; then
    ok "mutants: run.py on a test skipped as needing 2 GPUs: the reference judged without it, a survivor it alone could kill unreached here; another skip is not one"
else bad "mutants: run.py on tests needing 2 GPUs said: $out"; fi

# an equivalent.txt entry whose mutant a test killed is named (its reason is wrong), and only that one
out=$(python3 -c 'import sys; sys.path.insert(0, "grader/mutate"); import run
rows = [dict(lab="01-pageable-copy", id=i, status=s, killed_by=k) for i, s, k in
        (("bound-L149-2", "killed", "fit.synthetic"), ("rel-op-L155-1", "killed", "fit.synthetic"),
         ("rel-op-L155-2", "equivalent", ""))]
print(run.wrong_equivalents(rows, {"01-pageable-copy": {"bound-L149-2", "rel-op-L155-2"}}))' 2>&1)
if [ "$out" = "[('01-pageable-copy', '01-pageable-copy/equivalent.txt lists bound-L149-2, but fit.synthetic killed it: remove the entry')]" ]; then
    ok "mutants: a killed mutant that equivalent.txt lists is named as a wrong entry, and only that one"
else bad "mutants: wrong_equivalents said: $out"; fi

# run.py's failures are one line: no manifests, no GPU
out=$(python3 grader/mutate/run.py --out "$LOG/mutate-none" 2>&1)
if [ $? = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -q 'make mutate-gen'; then
    ok "mutants: run.py without manifests: exit 2, '$out'"
else bad "mutants: run.py without manifests said: $out"; fi
mkdir -p "$LOG/mutate-planted/01-pageable-copy"
printf 'id\toperator\tline\tfunction\tfrom\tto\ttests\n' >"$LOG/mutate-planted/01-pageable-copy/manifest.tsv"
out=$(XL_NO_GPU=1 python3 grader/mutate/run.py --out "$LOG/mutate-planted" 2>&1)
if [ $? = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -q 'needs a GPU'; then
    ok "mutants: run.py without a GPU: exit 2, '$out'"
else bad "mutants: run.py without a GPU said: $out"; fi

# on a GPU: a fixed sample of 4 mutants per lab, each killed or equivalent
if [ "$gpu_rc" -ne 0 ]; then
    skipped "mutants: grading a sample needs a GPU"
elif ! ls "$mut_out"/*/manifest.tsv >/dev/null 2>&1; then
    skipped "mutants: no manifests in $mut_out/ to grade (make mutate-gen where python3-clang is installed)"
else
    sel=${XL_TEST_LABS:-}
    [ "$sel" != all ] || sel=""
    # the references were just graded whole (grading the graders): their per-test seconds set the time limits
    python3 grader/mutate/run.py ${sel:+--labs "$sel"} --sample 4 --jobs "$(nproc)" --out "$mut_out" \
        --reference-points "$LOG/{slug}-solution-1/points.tsv" \
        --report-dir "$LOG/mutate-sample" >"$LOG/mutate-sample.log" 2>&1
    rc=$?
    csv=$LOG/mutate-sample/report.csv
    if [ ! -f "$csv" ]; then bad "mutants: run.py --sample 4 gave no report, exit $rc (log: $LOG/mutate-sample.log)"
    else
        for m in "$mut_out"/*/manifest.tsv; do
            slug=$(basename "$(dirname "$m")")
            case " $sel " in "  " | *" ${slug%%-*} "* | *" $slug "*) ;; *) continue ;; esac
            read -r k s e d u <<<"$(awk -F, -v l="$slug" '$1 == l { n[$6]++ } END { print n["killed"] + 0, n["survived"] + 0, n["equivalent"] + 0, n["stillborn"] + 0, n["unreached"] + 0 }' "$csv")"
            if [ $((k + s + e + d)) = 0 ] && [ "$u" -gt 0 ]; then
                skipped "mutants: $slug: the sample's $u mutants are unreached here: only tests that need 2 GPUs reach them"
            elif [ $((k + s + e + d)) -gt 0 ] && [ "$s" = 0 ] && [ "$d" = 0 ]; then
                more=""; [ "$u" = 0 ] || more="; $u more unreached here (only tests that need 2 GPUs reach them)"
                ok "mutants: $slug: a sample of $((k + e)) graded on this GPU: $k killed, $e equivalent$more"
            else
                left=$(awk -F, -v l="$slug" '$1 == l && ($6 == "survived" || $6 == "stillborn") { printf " %s", $2 }' "$csv")
                bad "mutants: $slug: sample: $k killed, $s survived, $e equivalent, $d stillborn${left:+ (not killed:$left)} (report: $LOG/mutate-sample/report.txt)"
                grep "$slug: the reference" "$LOG/mutate-sample.log" | sed 's/^/        /' | head -3; fi
        done
    fi
fi
