# busy.sh - make test's section on a busy GPU: references graded beside the kit's load generator (build/bin/loadgen),
# each kind of load beside the labs it is hardest on (the cpu load, which leaves the GPU alone, beside lab 07); no test may fail, a speed test passes or is NOT GRADED with its
# reason. XL_LOAD_LABS="NN ..." grades those labs under every kind. Sourced by grader/test/test.sh (B, LOG, gpu_rc,
# ok / bad / skipped, grade, total, count).

section "a busy GPU: references graded beside the kit's own load (build/bin/loadgen): nothing fails, speed is passed or NOT GRADED"
if [ $gpu_rc -ne 0 ] || [ ! -d solutions ]; then skipped "busy GPU: needs a GPU and the reference solutions"
else
    # each kind of load beside the labs it is hardest on (XL_LOAD_LABS="NN ..." grades those under every kind)
    for kl in copy:02 compute:05 memory:05 cpu:07; do
        kind=${kl%%:*} ids=${XL_LOAD_LABS:-${kl#*:}}
        $B/bin/loadgen --kind "$kind" --seconds 300 >"$LOG/load-$kind.log" 2>&1 &
        lp=$!
        for _ in $(seq 1 300); do grep -q 'loadgen: .* load on' "$LOG/load-$kind.log" && break; kill -0 $lp 2>/dev/null || break; sleep 0.1; done
        others=$($B/bin/gpu-probe --others); orc=$?
        if [ "$kind" = cpu ]; then
            if grep -q 'loadgen: cpu load on' "$LOG/load-$kind.log"; then ok "busy CPU: $(head -1 "$LOG/load-$kind.log")"
            else bad "busy CPU: the cpu load did not start (log: $LOG/load-$kind.log)"; fi
        elif [ $orc = 4 ]; then ok "busy GPU: gpu-probe --others sees the $kind load ($others)"
        elif [ $orc = 0 ] && [ "${others#*cannot tell}" != "$others" ]; then skipped "busy GPU: $others"
        else bad "busy GPU: gpu-probe --others did not see the $kind load (exit $orc: $others; load log: $LOG/load-$kind.log)"; fi
        for id in ${ids//,/ }; do
            slug=$(basename labs/$id-*)
            if ! grade $B/bin/$slug-grade-solution $slug-load-$kind; then bad "busy GPU: $slug beside $kind load gave no results"; continue; fi
            f=$LOG/$slug-load-$kind/points.tsv
            read -r s m <<<"$(total "$f")"
            nfail=$(count "$f" failed); nung=$(count "$f" ungraded)
            if [ "$nfail" = 0 ]; then
                ok "busy GPU: $slug reference beside $kind load: no test failed ($s/$m, $nung speed tests NOT GRADED)"
            else bad "busy GPU: $slug reference beside $kind load: $nfail tests FAILED (log: $LOG/$slug-load-$kind.log)"
                grep -A3 'FAILED' "$LOG/$slug-load-$kind.log" | sed 's/^/        /' | head -12; fi
            if [ "$nung" != 0 ] && ! grep -q 'could not be measured soundly: ' "$LOG/$slug-load-$kind.log"; then
                bad "busy GPU: $slug: a test NOT GRADED without its reason (log: $LOG/$slug-load-$kind.log)"; fi
        done
        kill $lp 2>/dev/null; wait $lp 2>/dev/null
    done
fi
