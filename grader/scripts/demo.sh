#!/usr/bin/env bash
# demo.sh - the kit's tour (make demo): measure with the reference solutions (in a student tree, yours), grade them,
# draw the charts, and print a one-screen summary. Without a GPU: the charts from the
# committed reference data, the tests that need no GPU, and one line on what needs a GPU.
set -u
cd "$(dirname "$0")/../.."
B=build
mkdir -p $B/data $B/demo
probe=$($B/bin/gpu-probe)
gpu=$?
summary=()
impl=solution; who="the reference solution"
[ -d solutions ] || { impl=student; who="your lab.cu"; } # a student tree (make handout)
sfx=; [ $impl = student ] || sfx=-solution
for lab in labs/[0-9][0-9]-*/; do
    slug=$(basename "$lab"); id=${slug%%-*}
    if [ $gpu = 0 ]; then
        echo "== lab $id: $who, its figures on this GPU =="
        $B/bin/$slug-explore$sfx --csv $B/data/$slug-this-gpu.csv | tee $B/demo/$slug-explore.log
        summary+=("lab $id $(sed -n 's/^summary: //p' $B/demo/$slug-explore.log)")
    fi
    mkdir -p $B/results/$slug-$impl
    XL_IMPL=$impl XL_RESULTS_DIR=$B/results/$slug-$impl $B/bin/$slug-grade$sfx >$B/demo/$slug-grade.log 2>&1
    summary+=("$(grep "^lab $id " $B/demo/$slug-grade.log | tail -1) ($who)")
done

echo "== charts =="
plots/render.sh 2>&1 | tee $B/demo/plots.log | grep -v "charts in"; charts=$(tail -1 $B/demo/plots.log)
echo
echo "== xferlab demo summary =="
echo "${probe}"
printf '%s\n' "${summary[@]}"
echo "$charts"
if [ $gpu != 0 ]; then
    echo "needs a GPU: measuring your own figures and the GPU tests; run 'make demo' on a machine with an NVIDIA GPU"
fi
echo "next: read labs/01-pageable-copy/README.md, edit labs/01-pageable-copy/lab.cu, then 'make grade LAB=01'"
