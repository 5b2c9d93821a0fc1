#!/usr/bin/env bash
# passed.sh NN SUITE.TEST - exit 0 when the last `make grade LAB=NN` gave SUITE.TEST its full points, else 1 with one
# line saying what it got (for GitHub Classroom's command grader: one step per test). Course staff and CI.
set -u
cd "$(dirname "$0")/../.."
[ $# = 2 ] || { echo "usage: grader/class/passed.sh NN SUITE.TEST (a lab's number and one of its tests)" >&2; exit 2; }
lab=$(basename labs/$1-* 2>/dev/null)
test=$2
tsv=build/results/$lab-student/points.tsv
[ -f "$tsv" ] || { echo "passed: no grading of lab $1 yet: run 'make grade LAB=$1' first"; exit 1; }
read -r score max status <<<"$(awk -F'\t' -v t="$test" '$1 == t { print $2, $3, $4 }' "$tsv")"
[ -n "${max:-}" ] || { echo "passed: lab $1 has no test $test"; exit 1; }
echo "$test: $score/$max ($status)"
[ "$status" = passed ] && [ "$score" = "$max" ]
