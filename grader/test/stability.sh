# stability.sh - make test's section on make stability (grader/scripts/stability.py): a short run, the MINUTES
# limit, the earlier report kept, RESUME=1, a table it cannot read, and the margins from a ratio log of known
# figures. Grades the CPU tests only (XL_NO_GPU=1): make stability on a GPU is staff's own run. Sourced by
# grader/test/test.sh (B, LOG, ok / bad / skipped).

section "make stability, its mechanics (the CPU tests graded again and again; each threshold's margin)"
if [ ! -f grader/scripts/stability.py ]; then skipped "stability: for course staff; a student tree does not have it"; else
    if make -s stability LAB=01 N=2 >"$LOG/stability.log" 2>&1 && grep -q "full points in 2 of 2 runs" "$LOG/stability.log" &&
        [ -s build/stability/01-pageable-copy.txt ]; then
        ok "stability: lab 01, 2 runs: $(grep -m1 'full points' "$LOG/stability.log")"
    else bad "stability: make stability LAB=01 N=2 (log: $LOG/stability.log)"; fi
    # the script's own mechanics (a limit, resuming, a report it cannot read) grade the CPU tests only: quick on a GPU host
    cp build/stability/01-pageable-copy.txt "$LOG/stability-earlier.txt" 2>/dev/null
    rm -f build/stability/01-pageable-copy.previous.* build/stability/01-pageable-copy-runs.previous.tsv
    if XL_NO_GPU=1 make -s stability LAB=01 N=500 MINUTES=0 >"$LOG/stability-minutes.log" 2>&1 &&
        grep -q "stopped at the 0-minute limit: 1 of the 500 runs asked.*full points in 1 of 1 runs" "$LOG/stability-minutes.log"; then
        ok "stability: MINUTES=0 stops after one run of the 500 asked, and says so"
    else bad "stability: MINUTES=0 did not stop after one run (log: $LOG/stability-minutes.log)"; fi
    # without RESUME=1 the earlier report is kept beside the new one, and a line says so
    if [ "$(grep -c "^stability: the earlier report is kept beside the new one: 01-pageable-copy.previous.txt, 01-pageable-copy.previous.tsv, 01-pageable-copy-runs.previous.tsv$" "$LOG/stability-minutes.log")" = 1 ] &&
        cmp -s build/stability/01-pageable-copy.previous.txt "$LOG/stability-earlier.txt" &&
        [ -s build/stability/01-pageable-copy-runs.previous.tsv ] && ! cmp -s build/stability/01-pageable-copy.txt "$LOG/stability-earlier.txt"; then
        ok "stability: a new report keeps the earlier one as 01-pageable-copy.previous.* and says so in one line"
    else bad "stability: the earlier report was not kept as .previous (log: $LOG/stability-minutes.log)"; fi
    # resume: planted tables of 5 runs (4 with full points, one measurement) and one more run to make 6
    printf 'runs\tfull_points\n5\t4\n' >build/stability/01-pageable-copy-runs.tsv
    printf 'run\tcheck\tlabel\tattempt\tratio\tneed\tat_least\tfigures\n2\tz.planted\tplanted figure\t1\t0.9\t0.5\t1\tplanted\n' \
        >build/stability/01-pageable-copy.tsv
    if XL_NO_GPU=1 make -s stability LAB=01 N=6 RESUME=1 >"$LOG/stability-resume.log" 2>&1 &&
        grep -q "resuming 01-pageable-copy after 5 runs" "$LOG/stability-resume.log" &&
        grep -q "full points in 5 of 6 runs" "$LOG/stability-resume.log" &&
        grep -q "^z.planted (planted figure): need >= 0.5; 1 first measurements" "$LOG/stability-resume.log" &&
        grep -q "^2	z.planted	planted figure	1	0.9	0.5	1	planted$" build/stability/01-pageable-copy.tsv &&
        [ "$(sed -n 2p build/stability/01-pageable-copy-runs.tsv)" = "6	5" ]; then
        ok "stability: RESUME=1 keeps the last tables' runs and measurements and adds one run to make 6"
    else bad "stability: RESUME=1 did not add to the last report (log: $LOG/stability-resume.log)"; fi
    echo "not a report" >>build/stability/01-pageable-copy.tsv
    cp build/stability/01-pageable-copy.tsv "$LOG/stability-kept.tsv"
    if ! XL_NO_GPU=1 make -s stability LAB=01 N=7 RESUME=1 >"$LOG/stability-bad.log" 2>&1 &&
        grep -q "is not a report this script wrote; nothing resumed or overwritten" "$LOG/stability-bad.log" &&
        cmp -s build/stability/01-pageable-copy.tsv "$LOG/stability-kept.tsv"; then
        ok "stability: RESUME=1 on a table it cannot read stops with a message and leaves the table as it was"
    else bad "stability: RESUME=1 on an unreadable report (log: $LOG/stability-bad.log)"; fi
    # the margins, from a ratio log of known figures: (median - need) / sd, or (need - median) / sd for "at most"
    printf '%s\n' 'a.x	1	1.00	0.85	1	fig a	' 'a.x	1	0.98	0.85	1	fig a	' 'a.x	1	1.02	0.85	1	fig a	' \
        'a.x	2	0.99	0.85	1	fig a	' 'b.y	1	3	150	0	fig b	' 'b.y	1	5	150	0	fig b	' \
        'c.z	1	1.00	0.95	1	fig c	' 'c.z	1	0.96	0.95	1	fig c	' >"$LOG/ratios.tsv"
    python3 grader/scripts/stability.py --from-log "$LOG/ratios.tsv" >"$LOG/stability-model.log" 2>&1
    if grep -q "^a.x (fig a): need >= 0.85; .*median 1.000, .*sd 0.020; margin 7.5 spreads; a second try in 1 runs" "$LOG/stability-model.log" &&
        grep -q "^b.y (fig b): need <= 150; .*margin 103.2 spreads" "$LOG/stability-model.log" &&
        grep -q "^c.z (fig c): need >= 0.95; .*margin 1.1 spreads: UNDER 3" "$LOG/stability-model.log"; then
        ok "stability: margins in spreads, both kinds of threshold, retries counted, a margin under 3 flagged"
    else bad "stability: the margins from a known log (log: $LOG/stability-model.log)"; fi
fi
