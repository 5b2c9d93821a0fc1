#!/usr/bin/env bash
# plots.sh - every chart into build/plots/ as SVG and PNG (make plots). Course staff and students.
#
# With a GPU, each lab's reference explorer (in a student tree, yours) measures fresh data first
# (build/data/NN-slug-this-gpu.csv). Every build/data/NN-slug-NAME.csv (measured here, or an explorer's --csv
# brought back from a GPU host) is charted beside the committed reference data (refdata/), as NN-chart-NAME.
# XL_PLOTS_FROM_REF=1 charts the reference data alone, measuring nothing; XL_PLOTS_OUT=DIR writes elsewhere.
set -u
cd "$(dirname "$0")/../.."
B=build
out=${XL_PLOTS_OUT:-$B/plots}
mkdir -p "$out" $B/data
command -v gnuplot >/dev/null 2>&1 || { echo "plots: gnuplot is not installed: 'sudo apt-get install gnuplot-nox' (charts skipped)"; exit 1; }

fresh=0
if [ "${XL_PLOTS_FROM_REF:-0}" != 1 ] && $B/bin/gpu-probe >/dev/null; then fresh=1; fi
rc=0
n=0
for lab in labs/[0-9][0-9]-*/; do
    slug=$(basename "$lab")
    id=${slug%%-*}
    sets=()
    for csv in refdata/$slug/*.csv; do
        [ -f "$csv" ] && sets+=("$csv")
    done
    if [ $fresh = 1 ]; then
        csv=$B/data/$slug-this-gpu.csv
        ex=$B/bin/$slug-explore-solution; [ -x "$ex" ] || ex=$B/bin/$slug-explore # a student tree: your own
        $ex --csv "$csv" >"$B/data/$slug-this-gpu.log" 2>&1 || { echo "plots: measuring lab $id failed (log: $B/data/$slug-this-gpu.log)"; rc=1; rm -f "$csv"; }
    fi
    if [ "${XL_PLOTS_FROM_REF:-0}" != 1 ]; then
        for csv in $B/data/$slug-*.csv; do
            [ -f "$csv" ] && sets+=("$csv")
        done
    fi
    for gp in plots/$id-*.gp; do
        [ -f "$gp" ] || continue
        for csv in "${sets[@]}"; do
            tag=$(basename "$csv" .csv); tag=${tag#"$slug-"}
            machine=$(sed -n 's/^# gpu: \([^;]*\);.*/\1/p' "$csv" | head -1)
            [ -n "$machine" ] || machine=$tag
            linkrate=$(sed -n 's/^# link: .*line rate \([0-9.]*\) GB\/s.*/\1/p' "$csv" | head -1)
            base=$out/$(basename "$gp" .gp)-$tag
            for fmt in svg png; do
                if ! gnuplot -e "data='$csv'; out='$base'; machine='$machine'; fmt='$fmt'; linkrate=${linkrate:-0}" "$gp" 2>"$base.$fmt.log"; then
                    echo "plots: $gp on $csv failed:"; sed 's/^/    /' "$base.$fmt.log"; rc=1
                else rm -f "$base.$fmt.log"; fi
            done
            [ -s "$base.svg" ] && n=$((n + 1)) && echo "plots: $base.svg (.png)"
        done
    done
done
echo "plots: $n charts in $out$([ $fresh = 1 ] || echo ', nothing measured here')"
exit $rc
