#!/usr/bin/env bash
# demo.sh - the kit's tour (make demo): measure with the reference solutions (in a student tree, yours), grade them,
# draw the charts, and print a one-screen summary. Without a GPU: the charts from the committed reference data, the
# tests that need no GPU, and one line on what needs a GPU. make demo builds each lab first, on its own:
# XL_DEMO_BROKEN="01 ..." names the labs whose code did not compile, which are left out (exit 2 at the end).
set -u
[ $# = 0 ] || { echo "demo.sh: takes no arguments (make demo runs it)" >&2; exit 2; }
cd "$(dirname "$0")/.."
B=build
mkdir -p $B/data $B/demo
probe=$($B/bin/gpu-probe)
gpu=$?
[ $gpu = 0 ] || export XL_SKIP_REASON_SAID=1 # "no GPU" is said once, in the summary, not on every lab's line
summary=()
impl=solution; who="the reference solution"; dir=solutions
[ -d solutions ] || { impl=student; who="your lab.cu"; dir=labs; } # a student tree (make handout)
sfx=; [ $impl = student ] || sfx=-solution
broken=" ${XL_DEMO_BROKEN:-} "
for lab in labs/[0-9][0-9]-*/lab.cu; do lab=${lab%lab.cu} # a lab is a folder with a lab.cu, as in the Makefile
    slug=$(basename "$lab"); id=${slug%%-*}
    if [ "${broken#* $id }" != "$broken" ]; then
        summary+=("lab $id ${slug#*-}: $dir/$slug/lab.cu does not compile: not measured, not graded")
        continue
    fi
    if [ $gpu = 0 ]; then
        echo "== lab $id: $who, its figures on this GPU =="
        $B/bin/$slug-explore$sfx --csv $B/data/$slug-this-gpu.csv | tee $B/demo/$slug-explore.log
        summary+=("lab $id $(sed -n 's/^summary: //p' $B/demo/$slug-explore.log)")
    fi
    mkdir -p $B/results/$slug-$impl
    XL_IMPL=$impl XL_RESULTS_DIR=$B/results/$slug-$impl $B/bin/$slug-grade$sfx >$B/demo/$slug-grade.log 2>&1
    line=$(grep "^lab $id " $B/demo/$slug-grade.log | tail -1)
    nfail=$(awk -F'\t' 'NR > 1 && $4 != "passed" && $4 != "skipped" { n++ } END { print n + 0 }' \
        $B/results/$slug-$impl/points.tsv 2>/dev/null)
    verdict="every test that ran passed"
    [ "$nfail" = 0 ] || verdict="$nfail of its tests did not pass: see $B/demo/$slug-grade.log"
    summary+=("${line:-lab $id ${slug#*-}: no result (log: $B/demo/$slug-grade.log)} ($who: $verdict)")
done

echo "== charts =="
plots/render.sh 2>&1 | tee $B/demo/plots.log | grep -v "charts in"; charts=$(tail -1 $B/demo/plots.log)
echo
echo "== xferlab demo summary =="
echo "${probe}"
[ $gpu = 0 ] || echo "(so the tests that need a GPU are skipped: each lab's line says how many of its points they hold)"
printf '%s\n' "${summary[@]}"
echo "$charts"
if [ $gpu != 0 ]; then
    echo "needs a GPU: measuring your own figures and the GPU tests; run 'make demo' on a machine with an NVIDIA GPU"
fi
echo "next: read labs/01-pageable-copy/README.md, edit labs/01-pageable-copy/lab.cu, then 'make grade LAB=01'"
[ -z "${XL_DEMO_BROKEN:-}" ] || { echo "make demo: left out, the code does not compile: lab ${XL_DEMO_BROKEN# }" >&2; exit 2; }
