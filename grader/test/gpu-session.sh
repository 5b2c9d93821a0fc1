#!/usr/bin/env bash
# gpu-session.sh OUTDIR - one full pass on a GPU host, for course staff checking a machine:
# builds (no package installs), runs make test, times make grade LAB=NN for every lab,
# measures each lab's reference data into OUTDIR/refdata.tgz (laid out as the kit's refdata/: untar it in the kit's
# root to make it the reference data), runs make demo, and prints a short table.
# XL_TEST_LABS="05 06" limits make test's graders and the per-lab passes to those labs; XL_DEMO=0 skips the demo;
# XL_LOAD_RUNS=N grades each of those labs' references N times beside each kind of load (make stability LOAD=).
# Needs build/criterion (make bundle) where Criterion is not installed.
set -u
cd "$(dirname "$0")/../.."
[ $# = 1 ] || { echo "usage: grader/test/gpu-session.sh OUTDIR (a folder for its logs and reference data)" >&2; exit 2; }
out=$1
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || { echo "gpu-session: cannot write in '$out': give a folder you can write" >&2; exit 2; }
export XL_NO_INSTALL=1
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader || true; } >"$out/gpu.txt" 2>&1
t0=$(date +%s.%N)
make -j"$(nproc)" build >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
t1=$(date +%s.%N)
set -o pipefail
make test 2>&1 | tee "$out/test.log"
test_rc=$?
tag=$(build/bin/gpu-probe | sed -n 's/^gpu: NVIDIA \([A-Z0-9]*\).*/\1/p' | tr 'A-Z' 'a-z')
[ -n "$tag" ] || tag=gpu
summary=()
for lab in labs/[0-9][0-9]-*/lab.cu; do lab=${lab%lab.cu} # a lab is a folder with a lab.cu, as in the Makefile
    slug=$(basename "$lab"); id=${slug%%-*}
    case " ${XL_TEST_LABS:-$id} " in *" $id "*) ;; *) continue ;; esac
    g0=$(date +%s.%N)
    make --no-print-directory grade LAB=$id IMPL=solution >"$out/grade-$id.log" 2>&1
    g1=$(date +%s.%N)
    summary+=("lab $id: $(grep "^lab $id " "$out/grade-$id.log" | tail -1), make grade took $(awk "BEGIN { printf \"%.1f\", $g1 - $g0 }") s")
    mkdir -p "$out/refdata/$slug"
    build/bin/$slug-explore-solution --csv "$out/refdata/$slug/$tag.csv" >"$out/explore-$id.log" 2>&1
    full=0
    for i in $(seq 1 "${XL_REPEAT:-5}"); do # repeated grading of the reference: every figure its tests note
        XL_VERBOSE=1 build/bin/$slug-grade-solution >>"$out/repeat-$id.log" 2>&1
        grep -q "^lab $id [a-z-]*: \([0-9]*\)/\1\$" <(tail -1 "$out/repeat-$id.log") && full=$((full + 1))
    done
    summary+=("lab $id: reference solution full points in $full of ${XL_REPEAT:-5} extra runs")
    for kind in $([ "${XL_LOAD_RUNS:-0}" = 0 ] || echo copy compute memory); do
        make --no-print-directory stability LAB=$id N="$XL_LOAD_RUNS" LOAD=$kind >"$out/load-$id-$kind.log" 2>&1
        summary+=("lab $id: $(grep -m1 '^under ' "$out/load-$id-$kind.log" || echo "$kind load: no report (log: load-$id-$kind.log)")")
    done
done
[ "${XL_DEMO:-1}" = 0 ] || make --no-print-directory demo >"$out/demo.log" 2>&1
echo
echo "== summary on $(cat "$out/gpu.txt") =="
echo "build (make -j$(nproc) build): $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s; make test exit $test_rc"
grep '^xferlab:' "$out/test.log"
printf '%s\n' "${summary[@]}"
[ ! -f "$out/demo.log" ] || tail -n 12 "$out/demo.log"
# pack the CSVs into one file and the logs into another (the device tool brings back at most 8 files)
[ ! -d "$out/refdata" ] || { tar czf "$out/refdata.tgz" -C "$out" refdata && rm -r "$out/refdata"; }
tar czf /tmp/xferlab-logs.tgz -C "$out" --exclude="*.tgz" . && mv /tmp/xferlab-logs.tgz "$out/logs.tgz" && find "$out" -maxdepth 1 -name "*.log" -delete
