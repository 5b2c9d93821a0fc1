# report.sh - make test's section on the report page (grader/report/): planted gradings of labs 01 to 06 rendered by
# report.py, every link and chart of each page resolves (pagecheck.py), the history grows and is drawn, the page
# without gnuplot and for a GPU the kit has no reference for, a broken grading gives one line and exit 2, and a real
# browser (headless Chromium) draws each page: its screenshot is checked to be the page (pngcheck.py) and kept in
# $LOG/report/ for a person to look at. Needs no GPU. Sourced by grader/test/test.sh (B, LOG, ok / bad / skipped).

section "report page: planted gradings rendered, links and charts resolve, a browser draws each page"
rep=$LOG/report
rm -rf "$rep" && mkdir -p "$rep/pages"
# report_page DIR PAGE [ARGS...] - report.py on DIR into PAGE, its history beside the pages; stderr into PAGE.err
report_page() {
    local dir=$1 page=$2
    shift 2
    python3 grader/report/report.py "$dir" "$page" --history "$rep/pages/history.csv" "$@" 2>"$page.err"
}
if ! python3 grader/report/plant.py "$rep/planted" >"$rep/planted.tsv" 2>"$rep/plant.log"; then
    bad "report: grader/report/plant.py could not plant the gradings (log: $rep/plant.log)"
else
    n=0 pages=()
    have_gnuplot=$(command -v gnuplot >/dev/null 2>&1 && echo 1)
    while IFS=$'\t' read -r dir charts missing; do
        name=$(basename "$dir") page=$rep/pages/$(basename "$dir" -student).html
        slug=${name%-student}; slug=${slug%-solution}
        if ! report_page "$dir" "$page" --source "labs/$slug/lab.cu"; then
            bad "report: $name: no page: $(head -1 "$page.err")"; continue
        fi
        [ -n "$have_gnuplot" ] || charts=- missing=charts-need-gnuplot
        if python3 grader/report/pagecheck.py "$page" --charts "$charts" --missing "$missing" >"$page.check"; then
            n=$((n + 1)) pages+=("$page")
        else bad "report: $name:"; sed 's/^/        /' "$page.check" | head -5; fi
    done <"$rep/planted.tsv"
    [ $n -gt 0 ] && ok "report: $n planted gradings (labs 01 to 06: no GPU, a failed, a PARTIAL and a NOT GRADED test, a NOT SOUND attempt, at-most checks) rendered; every link resolves, each expected chart is inline, each chart left out says why"
    [ -n "$have_gnuplot" ] || skipped "report: the charts: gnuplot is not installed (the pages were checked without them)"

    # the history: a second grading of lab 01, from a changed lab.cu, is drawn beside the first
    p01=$rep/pages/01-pageable-copy.html
    cp labs/01-pageable-copy/lab.cu "$rep/lab-changed.cu" && echo '/* changed */' >>"$rep/lab-changed.cu"
    if report_page "$rep/planted/01-pageable-copy-student" "$p01" --source "$rep/lab-changed.cu" &&
        [ "$(grep -c ',01-pageable-copy,student,' "$rep/pages/history.csv")" = 2 ] &&
        grep -q ",$(sha256sum "$rep/lab-changed.cu" | cut -d' ' -f1),timer.waits_for_gpu\$" "$rep/pages/history.csv" &&
        python3 grader/report/pagecheck.py "$p01" --charts "${have_gnuplot:+chart-history}" >"$p01.check" &&
        grep -q '<i>changed</i>' "$p01"; then
        ok "report: each page adds a row to history.csv (points, the first check's ratio, lab.cu's sha256); two gradings of a lab are drawn as a history"
    else bad "report: the history of two gradings of lab 01 ($rep/pages/history.csv, $p01)"; fi

    # what a chart says when it cannot be drawn as usual: about charts, so only where gnuplot draws them
    if [ -z "$have_gnuplot" ]; then
        skipped "report: the charts of a GPU without reference data and of a grading without data: gnuplot is not installed"
    else
        # a GPU the kit has no reference data for: the student's sweep alone, and the page says why
        mkdir -p "$rep/other-gpu" && cp -r "$rep/planted/01-pageable-copy-student" "$rep/other-gpu/"
        echo "NVIDIA A100-SXM4-80GB" >"$rep/other-gpu/01-pageable-copy-student/device.txt"
        if report_page "$rep/other-gpu/01-pageable-copy-student" "$rep/pages/01-other-gpu.html" &&
            grep -q 'no reference data for the NVIDIA A100-SXM4-80GB' "$rep/pages/01-other-gpu.html" &&
            python3 grader/report/pagecheck.py "$rep/pages/01-other-gpu.html" --charts "${have_gnuplot:+chart-sweep}" >/dev/null; then
            ok "report: on a GPU the kit has no reference for, the student's figures are drawn alone and the page says why"
        else bad "report: the page of a grading on an A100 ($rep/pages/01-other-gpu.html)"; fi

        # a grading that left no data for a chart: the chart is left out with the reason, the others are drawn
        mkdir -p "$rep/no-data" && cp -r "$rep/planted/04-double-buffering-student" "$rep/no-data/"
        rm "$rep/no-data/04-double-buffering-student/data/timeline.csv"
        if report_page "$rep/no-data/04-double-buffering-student" "$rep/pages/04-no-data.html" &&
            python3 grader/report/pagecheck.py "$rep/pages/04-no-data.html" --charts "${have_gnuplot:+chart-speed chart-timeline-ref}" \
                --missing "${have_gnuplot:+chart-timeline-yours-missing}" >"$rep/pages/04-no-data.html.check" &&
            grep -q 'the grading left no data/timeline.csv' "$rep/pages/04-no-data.html"; then
            ok "report: a chart whose data the grading did not leave is one line saying so; the page's other charts are drawn"
        else bad "report: the page of lab 04 without data/timeline.csv: $(head -2 "$rep/pages/04-no-data.html.check" | tr '\n' ' ')"; fi
    fi

    # without gnuplot: the tables, and one line saying the charts need it
    py=$(python3 -c 'import sys; print(sys.executable)')
    if PATH=/nonexistent "$py" grader/report/report.py "$rep/planted/06-pinning-student" "$rep/pages/06-no-gnuplot.html" \
        --history "$rep/no-gnuplot-history.csv" 2>"$rep/no-gnuplot.err" &&
        [ "$(grep -c '<svg' "$rep/pages/06-no-gnuplot.html")" = 0 ] &&
        python3 grader/report/pagecheck.py "$rep/pages/06-no-gnuplot.html" --missing "charts-need-gnuplot" >/dev/null &&
        grep -q 'peak.in_place' "$rep/pages/06-no-gnuplot.html"; then
        ok "report: without gnuplot the page has its tables and a line saying the charts need gnuplot"
    else bad "report: the page without gnuplot ($rep/pages/06-no-gnuplot.html, $rep/no-gnuplot.err)"; fi

    # a broken grading: one line, exit 2, no page and nothing half-written
    mkdir -p "$rep/broken/01-pageable-copy-student"
    printf '{"score": 5, "max_score": 80, "tests": [{"name": "copy.h2d_exact", "sco' >"$rep/broken/01-pageable-copy-student/results.json"
    python3 grader/report/report.py "$rep/broken/01-pageable-copy-student" "$rep/broken/page.html" >"$rep/broken.out" 2>"$rep/broken.err"
    rc=$?
    if [ $rc = 2 ] && [ "$(wc -l <"$rep/broken.err")" = 1 ] && grep -q '^report: .*results.json: not valid JSON' "$rep/broken.err" &&
        [ ! -s "$rep/broken.out" ] && [ ! -e "$rep/broken/page.html" ] && [ ! -e "$rep/broken/page.html.new" ]; then
        ok "report: a grading with a broken results.json gives one line (... $(grep -o 'not valid JSON.*' "$rep/broken.err")) and exit 2, no page"
    else bad "report: a broken results.json gave exit $rc and: $(head -3 "$rep/broken.err" | tr '\n' ' ')"; fi
    python3 grader/report/report.py "$rep/no-such-grading" "$rep/broken/page.html" 2>"$rep/missing.err"
    rc=$?
    [ $rc = 2 ] && [ "$(wc -l <"$rep/missing.err")" = 1 ] && ok "report: a results folder that is not there: one line, exit 2" ||
        bad "report: a missing results folder gave exit $rc and: $(head -3 "$rep/missing.err" | tr '\n' ' ')"

    # the check can fail: a page with a link to no id, an image that is not there, a chart id twice and a script
    printf '<html><body><a href="#nowhere">a</a><img src="chart.png"><figure class="chart" id="chart-x"><svg id="d"></svg><svg id="d"></svg></figure><script>1</script></body></html>\n' >"$rep/planted-bad.html"
    python3 grader/report/pagecheck.py "$rep/planted-bad.html" --charts "chart-x chart-y" >"$rep/planted-bad.check"
    rc=$?
    [ $rc = 1 ] && [ "$(wc -l <"$rep/planted-bad.check")" = 6 ] &&
        ok "report: the page check finds a link to no id, a missing image, an id twice, a script, a chart with two SVGs and a chart not there" ||
        bad "report: the page check on a planted bad page (exit $rc): $(tr '\n' ';' <"$rep/planted-bad.check")"

    # a real browser draws each page: a screenshot of the expected size, not blank, with the page's own header colour
    if ! command -v chromium >/dev/null 2>&1; then
        skipped "report: the pages in a browser: chromium is not installed (sudo apt-get install chromium)"
    else
        shots=0
        for page in "${pages[@]}" "$rep/pages/01-other-gpu.html" "$rep/pages/06-no-gnuplot.html"; do
            [ -f "$page" ] || continue # the A100 page is made only where gnuplot draws charts
            png=$rep/$(basename "$page" .html).png
            if page_shot "$page" "$png" "$rep/chromium-profile"; then shots=$((shots + 1))
            else bad "report: Chromium's screenshot of $(basename "$page"): $(cat "$png.check")"; fi
        done
        [ $shots -gt 0 ] && ok "report: headless Chromium drew $shots pages: each screenshot 1200x2000, not blank, the page's header in it (kept: $rep/*.png)"
        pdf=$rep/01-pageable-copy.pdf
        if page_a4 "$p01" "$pdf" "$rep/chromium-profile"; then
            ok "report: a page prints to A4 (Chromium's PDF: $pdf, $(grep -ac '/Type /Page\b' "$pdf") pages)"
        else bad "report: lab 01's page did not print to an A4 PDF (log: $pdf.log)"; fi
        rm -rf "$rep/chromium-profile"
    fi
fi
