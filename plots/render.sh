#!/usr/bin/env bash
# render.sh - every chart into build/plots/ as SVG and PNG (make plots). Course staff and students.
#
# With a GPU, each lab's reference explorer (in a student tree, yours) measures fresh data first
# (build/data/NN-slug-this-gpu.csv). Every build/data/NN-slug-NAME.csv (measured here, or an explorer's --csv
# brought back from a GPU host) is charted beside the committed reference data (refdata/), as NN-chart-NAME.
# XL_PLOTS_FROM_REF=1 charts the reference data alone, measuring nothing; XL_PLOTS_OUT=DIR writes elsewhere;
# XL_PLOTS_LABS="01-slug ..." measures only those labs (make plots: the others' code did not compile).
# A CSV holds one table: labs 04 and 05 write their timeline beside the figures, as NAME-timeline.csv, and
# plots/NN-timeline.gp draws that file (lab 03's CSV is a timeline itself); lab 07 writes its model beside them, as
# NAME-model.csv, which its charts read from beside NAME.csv; lab 10 writes its stages beside them, as
# NAME-stages.csv. None of these is charted as a set of its own.
# A CSV in build/data/ that gnuplot cannot chart gets one line naming it and is skipped, with no chart left of it;
# the other charts are drawn and the exit status stays 0 (a chart of the kit's refdata/ that fails exits 1).
set -u
cd "$(dirname "$0")/.."
B=build
out=${XL_PLOTS_OUT:-$B/plots}
mkdir -p "$out" $B/data
command -v gnuplot >/dev/null 2>&1 || { echo "plots: gnuplot is not installed: 'sudo apt-get install gnuplot-nox' (charts skipped)"; exit 1; }

# beside CSV - true for NAME-timeline.csv, NAME-model.csv or NAME-stages.csv next to NAME.csv: a second table of that
# run, charted with it
beside() { case $1 in *-timeline.csv) [ -f "${1%-timeline.csv}.csv" ] ;; *-model.csv) [ -f "${1%-model.csv}.csv" ] ;; *-stages.csv) [ -f "${1%-stages.csv}.csv" ] ;; *) false ;; esac; }

fresh=0
if [ "${XL_PLOTS_FROM_REF:-0}" != 1 ] && $B/bin/gpu-probe >/dev/null; then fresh=1; fi
rc=0
n=0
declare -A unchartable # CSV -> 1 once gnuplot failed on it: skipped for its other charts
for lab in labs/[0-9][0-9]-*/lab.cu; do lab=${lab%lab.cu} # a lab is a folder with a lab.cu, as in the Makefile
    slug=$(basename "$lab")
    id=${slug%%-*}
    sets=()
    for csv in refdata/$slug/*.csv; do
        [ -f "$csv" ] && ! beside "$csv" && sets+=("$csv")
    done
    measure=$fresh # XL_PLOTS_LABS (make plots): the labs whose explorer was built; a lab not in it is not measured
    case " ${XL_PLOTS_LABS-$slug} " in *" $slug "*) ;; *) measure=0 ;; esac
    if [ $measure = 1 ]; then
        csv=$B/data/$slug-this-gpu.csv
        ex=$B/bin/$slug-explore-solution; [ -x "$ex" ] || ex=$B/bin/$slug-explore # a student tree: your own
        $ex --csv "$csv" >"$B/data/$slug-this-gpu.log" 2>&1 || { echo "plots: measuring lab $id failed (log: $B/data/$slug-this-gpu.log)"; rc=1; rm -f "$csv" "${csv%.csv}-timeline.csv" "${csv%.csv}-model.csv" "${csv%.csv}-stages.csv"; }
    fi
    if [ "${XL_PLOTS_FROM_REF:-0}" != 1 ]; then
        for csv in $B/data/$slug-*.csv; do
            [ -f "$csv" ] && ! beside "$csv" && sets+=("$csv")
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
            data=$csv # a timeline chart draws the timeline beside the figures, or the CSV that is one (lab 03)
            if [[ $gp == *-timeline.gp ]] && ! head -1 "$csv" | grep -q '^run,lane,what,'; then
                data=${csv%.csv}-timeline.csv
                [ -f "$data" ] || { echo "plots: $gp skipped for $csv: no $data beside it"; continue; }
            fi
            [ -z "${unchartable[$csv]:-}" ] || continue
            for fmt in svg png; do
                if ! gnuplot -e "data='$data'; out='$base'; machine='$machine'; fmt='$fmt'; linkrate=${linkrate:-0}" "$gp" >"$base.$fmt.log" 2>&1; then
                    why=$(grep -v '^[[:space:]]*$' "$base.$fmt.log" | tail -1 | sed 's/^[[:space:]]*//')
                    rm -f "$base.svg" "$base.png" "$base.$fmt.log"
                    unchartable[$csv]=1
                    case $csv in refdata/*) rc=1 ;; esac
                    echo "plots: $data skipped: gnuplot cannot chart it with $gp (${why:-no reason given}); is it an explorer's --csv?"
                    break
                fi
                rm -f "$base.$fmt.log"
            done
            [ -s "$base.svg" ] && n=$((n + 1)) && echo "plots: $base.svg (.png)"
        done
    done
done
echo "plots: $n charts in $out$([ $fresh = 1 ] || echo ', nothing measured here')"
exit $rc
