# testlib.sh - what make test's scripts share: the counters, the ok / bad / skipped lines, grade. Sourced;
# grade needs LOG.
pass=0 fail=0 skip=0
# ok WHAT, bad WHAT, skipped WHAT - one line of the report, counted
ok() { pass=$((pass + 1)); printf '  ok    %s\n' "$*"; }
bad() { fail=$((fail + 1)); printf '  FAIL  %s\n' "$*"; }
skipped() { skip=$((skip + 1)); printf '  SKIP  %s\n' "$*"; }
# grade BIN NAME - runs a grader, results into $LOG/NAME/; its output into $LOG/NAME.log
grade() {
    mkdir -p "$LOG/$2"
    XL_RESULTS_DIR="$LOG/$2" "$1" >"$LOG/$2.log" 2>&1
    local rc=$?
    [ -f "$LOG/$2/points.tsv" ] || { echo "grader exited $rc without results" >>"$LOG/$2.log"; return 1; }
}
