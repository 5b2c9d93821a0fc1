# testlib.sh - what make test's scripts share: the counters, the ok / bad / skipped lines, grade. Sourced;
# grade needs LOG.
pass=0 fail=0 skip=0
# ok WHAT, bad WHAT, skipped WHAT - one line of the report, counted
ok() { pass=$((pass + 1)); printf '  ok    %s\n' "$*"; }
bad() { fail=$((fail + 1)); printf '  FAIL  %s\n' "$*"; }
skipped() { skip=$((skip + 1)); printf '  SKIP  %s\n' "$*"; }
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
