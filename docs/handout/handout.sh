#!/usr/bin/env bash
# handout.sh OUTDIR - the student tree, OUTDIR/xferlab/, and its tarball, OUTDIR/xferlab-handout.tar.gz
# (make handout). It has the kit, the labs' skeletons, contracts, graders, explorers, docs and the handouts' charts
# (drawn from the reference data into its build/plots/); no reference solutions, no mutants, no hidden tests, no
# Gradescope or course-staff scripts. It builds, runs and grades as it is; its own `make test` runs the checks that
# need no reference. make handout also builds each lab's grader from the lab.cu it ships and names one that does
# not compile. Course staff only.
set -eu
cd "$(dirname "$0")/../.."
[ $# = 1 ] && [ -n "$1" ] || { echo "usage: handout.sh OUTDIR (make handout puts it in build/handout)" >&2; exit 2; }
out=$1
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || { echo "handout: cannot write to the folder '$out'" >&2; exit 2; }
tree=$out/xferlab
# staff_only PATH - true for what stays with course staff
staff_only() {
    case $1 in
    grader/class/passed.sh) return 1 ;; # a GitHub Classroom step runs it in the student's repository
    solutions/* | grader/mutants/* | grader/mutate/* | grader/hidden/* | grader/class/* | .ci/*) return 0 ;;
    grader/test/class.sh | grader/test/mutate.sh | grader/test/hostile/* | docs/check.py | docs/figures.py) return 0 ;;
    refdata/*/figures.tsv) return 0 ;; # the definitions of the quoted figures: the answer keys use them too
    grader/test/badinput.sh | grader/test/bad-inputs.tsv) return 0 ;;
    grader/test/gpu-session.sh | grader/scripts/* | docs/handout/*) return 0 ;;
    esac
    return 1
}
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then files=$(git ls-files --cached --others --exclude-standard)
else files=$(find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\./||'); fi
rm -rf "$tree" && mkdir -p "$tree"
n=0
while IFS= read -r f; do
    [ -f "$f" ] || continue
    staff_only "$f" && continue
    mkdir -p "$tree/$(dirname "$f")" && cp -p "$f" "$tree/$f"
    n=$((n + 1))
done <<<"$files"
# its pages say nothing of what only the full kit has (IMPL=solution; docs/handout/studentmd.py)
find "$tree" -name '*.md' -print0 | xargs -0 python3 docs/handout/studentmd.py
# the handouts' charts (build/plots/, drawn from the reference data) come with it: no broken image before make plots
if ! XL_PLOTS_FROM_REF=1 XL_PLOTS_OUT="$tree/build/plots" plots/render.sh >"$out/charts.log" 2>&1; then
    echo "handout: the charts are not in it ($(tail -1 "$out/charts.log")): students see them after 'make plots'" >&2
fi
rm -f "$out/charts.log"
tar czf "$out/xferlab-handout.tar.gz" -C "$out" xferlab
echo "handout: $tree ($n files) and $out/xferlab-handout.tar.gz; no solutions, mutants or hidden tests"
