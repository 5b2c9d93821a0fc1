# testlib.sh - what make test's scripts share: the counters, the ok / bad / skipped lines, grade and the readers
# of a points.tsv. Sourced; grade needs LOG.
pass=0 fail=0 skip=0
# ok WHAT, bad WHAT, skipped WHAT - one line of the report, counted
ok() { pass=$((pass + 1)); printf '  ok    %s\n' "$*"; }
bad() { fail=$((fail + 1)); printf '  FAIL  %s\n' "$*"; }
skipped() { skip=$((skip + 1)); printf '  SKIP  %s\n' "$*"; }
# section WHAT - starts a part of the report ("-- WHAT"); the seconds the part before it took go to
# $LOG/sections.tsv. sections_report prints them, longest first, and ends the last part
section_name='' section_start=$SECONDS
section() { section_end; section_name=$*; section_start=$SECONDS; printf -- '-- %s\n' "$*"; }
section_end() { [ -z "$section_name" ] || printf '%s\t%s\n' $((SECONDS - section_start)) "${section_name%%:*}" >>"$LOG/sections.tsv"; section_name=''; }
sections_report() {
    section_end
    echo "time by section (s):"
    sort -t"$(printf '\t')" -k1,1nr "$LOG/sections.tsv" | awk -F'\t' '{ printf "  %5d  %s\n", $1, $2 }'
}
# grade BIN NAME [ARGS...] - runs a grader (with ARGS, e.g. --filter=...), results into $LOG/NAME/; its output
# into $LOG/NAME.log
grade() {
    local bin=$1 name=$2
    shift 2
    mkdir -p "$LOG/$name"
    XL_RESULTS_DIR="$LOG/$name" "$bin" "$@" >"$LOG/$name.log" 2>&1
    local rc=$?
    [ -f "$LOG/$name/points.tsv" ] || { echo "grader exited $rc without results" >>"$LOG/$name.log"; return 1; }
}
# score FILE TEST - "score max status" of TEST in a points.tsv
score() { awk -F'\t' -v t="$2" '$1 == t { print $2, $3, $4 }' "$1"; }
# total FILE - "score max" over a points.tsv
total() { awk -F'\t' 'NR > 1 { s += $2; m += $3 } END { print s + 0, m + 0 }' "$1"; }
# count FILE STATUS - how many tests have STATUS
count() { awk -F'\t' -v st="$2" 'NR > 1 && $4 == st { n++ } END { print n + 0 }' "$1"; }
# mutant_targets MUT - the tests a planted mutant (grader/mutants/NN-slug/NAME.diff) names on its " * target:" lines
mutant_targets() { sed -n 's/^ \* target: //p' "$1"; }
# page_shot PAGE PNG PROFILE - headless Chromium's 1200x2000 screenshot of the HTML file PAGE into PNG (its log beside
# it, PNG.log; PROFILE a scratch folder), checked by grader/report/pngcheck.py (not blank, the kit's header colour):
# 0, or 1 with why in PNG.check
page_shot() {
    timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$3" \
        --screenshot="$2" --window-size=1200,2000 "file://$(realpath "$1")" >"$2.log" 2>&1
    python3 grader/report/pngcheck.py "$2" 1200 2000 1f3a5f >"$2.check"
}
# page_a4 PAGE PDF PROFILE - headless Chromium prints the HTML file PAGE to PDF (log: PDF.log); 0 when it is a PDF
# of A4 pages
page_a4() {
    timeout 90 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$3" --no-pdf-header-footer \
        --print-to-pdf="$2" "file://$(realpath "$1")" >"$2.log" 2>&1
    [ "$(head -c 5 "$2" 2>/dev/null)" = "%PDF-" ] && grep -aq '/MediaBox \[0 0 594\.[0-9]* 841\.[0-9]*\]' "$2"
}
