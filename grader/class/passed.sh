#!/usr/bin/env bash
# passed.sh NN SUITE.TEST - exit 0 when the last `make grade LAB=NN` gave SUITE.TEST its full points, else 1 with one
# line saying what it got (for GitHub Classroom's command grader: one step per test). Course staff and CI.
set -u
cd "$(dirname "$0")/../.."
[ $# = 2 ] || { echo "usage: grader/class/passed.sh NN SUITE.TEST (a lab's number and one of its tests)" >&2; exit 2; }
lab=''
case $1 in [0-9][0-9]) lab=$(basename labs/$1-*) ;; esac
[ -n "$lab" ] && [ -d "labs/$lab" ] || { echo "passed: no lab '$1': give its two-digit number (labs: $(echo $(ls labs | cut -c1-2)))" >&2; exit 2; }
test=$2
tsv=build/results/$lab-student/points.tsv
[ -f "$tsv" ] || { echo "passed: no grading of lab $1 yet: run 'make grade LAB=$1' first" >&2; exit 1; }
read -r score max status <<<"$(awk -F'\t' -v t="$test" '$1 == t { print $2, $3, $4 }' "$tsv")"
[ -n "${max:-}" ] || { echo "passed: lab $1 has no test $test (its tests: build/bin/$lab-grade --list)" >&2; exit 1; }
echo "$test: $score/$max ($status)"
[ "$status" = passed ] && [ "$score" = "$max" ]
