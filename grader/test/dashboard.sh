# dashboard.sh - make test's section on the class dashboard (grader/class/dashboard.py): a planted class of 24
# students and their submissions of labs 01, 02 and 04, as make class leaves it (grader/class/plantclass.py: full
# points, failed tests and speed tests, NOT GRADED, no GPU, build failures, a grading stopped, one crashed), built
# into a dashboard without grading; its links, chart, rankings, list of what was not graded and its anonymity are
# checked, then --names, the labels kept from one build to the next, bad input, and a real browser (headless
# Chromium) draws it: the screenshot is checked to be the page (pngcheck.py) and kept in $LOG/dashboard/ for a person
# to look at. Needs no GPU. Sourced by grader/test/test.sh in the class lane (B, LOG, ok / bad / skipped, section);
# the class lane's class.sh checks that make class itself writes the dashboard.

section "class dashboard: a planted class, links and chart, rankings, not graded, no names, a browser draws it"
if [ ! -f grader/class/dashboard.py ]; then skipped "dashboard: for course staff; a student tree does not have it"; else
dash=$LOG/dashboard
out=$dash/out
rm -rf "$dash" && mkdir -p "$dash"
seed=$RANDOM
# dashboard OUT [ARGS...] - dashboard.py on OUT; its stdout and stderr into $dash/build.log
dashboard() { python3 grader/class/dashboard.py "$@" >"$dash/build.log" 2>&1; }
if ! python3 grader/class/plantclass.py "$out" $seed >"$dash/planted.tsv" 2>"$dash/plant.log"; then
    bad "dashboard: grader/class/plantclass.py could not plant the class (seed $seed; log: $dash/plant.log)"
elif ! dashboard "$out"; then
    bad "dashboard: dashboard.py failed on the planted class (seed $seed): $(head -2 "$dash/build.log" | tr '\n' ' ')"
else
    n_subs=$(wc -l <"$dash/planted.tsv")
    cut -f1 "$dash/planted.tsv" | sort -u >"$dash/names.txt"
    n_students=$(wc -l <"$dash/names.txt")
    ok "dashboard: a planted class of $n_students students, $n_subs submissions (seed $seed; $(cut -f3 "$dash/planted.tsv" | sort | uniq -c | awk '{ printf "%s%s %s", s, $1, $2; s = ", " }')) built into $out/index.html"

    # every link and image of the dashboard and of each page resolves; each page of a grading on a GPU has its charts
    if python3 grader/report/pagecheck.py "$out/index.html" >"$dash/index.check"; then
        ok "dashboard: every link and image of index.html resolves ($(sed 's/.*: //' "$dash/index.check"))"
    else bad "dashboard: index.html: $(head -3 "$dash/index.check" | tr '\n' ' ')"; fi
    if python3 grader/class/dashcheck.py pages "$out" >"$dash/pages.tsv"; then
        n=0 charted=0 have_gnuplot=$(command -v gnuplot >/dev/null 2>&1 && echo 1)
        while IFS=$'\t' read -r page charts; do
            missing=''
            [ -n "$have_gnuplot" ] || [ "$charts" = - ] || charts=- missing=charts-need-gnuplot
            if python3 grader/report/pagecheck.py "$page" --charts "$charts" --missing "$missing" >"$dash/page.check"; then
                n=$((n + 1))
                if [ -z "$missing" ] && [ "$charts" != - ]; then charted=$((charted + 1)); fi
            else bad "dashboard: $(head -2 "$dash/page.check" | tr '\n' ' ')"; fi
        done <"$dash/pages.tsv"
        [ $n = "$n_subs" ] && ok "dashboard: each of the $n_subs submissions has its page in the folder of its label, linked from index.html; every link resolves, and the $charted gradings on a GPU carry their charts (class.py keeps ratios.tsv, device.txt, data/)$([ -n "$have_gnuplot" ] || echo '; without gnuplot here, each says why it has none')"
    else bad "dashboard: the pages: $(head -3 "$dash/pages.tsv" | tr '\n' ' ')"; fi

    # the chart of points per lab is a real PNG of the size the page gives it
    read -r png w h <<<"$(sed -n 's/.*<img class="chart" src="\([^"]*\)" width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2 \3/p' "$out/index.html")"
    if ! command -v gnuplot >/dev/null 2>&1; then
        skipped "dashboard: the chart of points per lab: gnuplot is not installed"
    elif [ -n "$png" ] && python3 grader/report/pngcheck.py "$out/$png" "$w" "$h" >"$dash/chart.check"; then
        ok "dashboard: the chart of points per lab is a PNG of ${w}x$h, not blank ($(sed 's/.*: //' "$dash/chart.check"))"
    else bad "dashboard: the chart of points per lab: '$png' $(cat "$dash/chart.check" 2>/dev/null)"; fi

    # no student's name anywhere in what is shared; the key, outside it, has every student
    if grep -rliF -f "$dash/names.txt" "$out/index.html" "$out/dashboard" >"$dash/named.txt"; then
        bad "dashboard: a student's name is in $(head -3 "$dash/named.txt" | tr '\n' ' ')"
    elif [ "$(tail -n +2 "$out/dashboard-key.csv" | cut -d, -f2 | sort)" = "$(cat "$dash/names.txt")" ] &&
        ! ls "$out/dashboard" | grep -v '^_points.png$' | grep -qv '^submission-[0-9]*$'; then
        ok "dashboard: no name of the $n_students students in index.html or dashboard/ (a planted message that names a student's folder included); the folders are labels; the key, $out/dashboard-key.csv, has each student"
    else bad "dashboard: the key or the folders: $(head -3 "$out/dashboard-key.csv" | tr '\n' ' '); $(ls "$out/dashboard" | head -3 | tr '\n' ' ')"; fi

    for what in ranking ungraded failed; do
        if python3 grader/class/dashcheck.py $what "$out" >"$dash/$what.check"; then ok "dashboard: $(cat "$dash/$what.check")"
        else bad "dashboard: $what: $(cat "$dash/$what.check")"; fi
    done
    # the checks can fail: a ranking out of order with a name in it, a submission left out of the list not graded
    mkdir -p "$dash/tampered" && cp -r "$out/results" "$out/dashboard-key.csv" "$dash/tampered/"
    python3 -c 'import re, sys
page = open(sys.argv[1]).read()
row = "<tr class=\"entry ok\" data-figure=\""
i = page.index(row, page.index("data-at-least=\"1\"")) + len(row)
page = page[:i] + "0.0001" + page[page.index("\"", i):]  # the best of an "at least" ranking made the worst
page = re.sub(r"<td class=\"who\">submission \d+</td>", "<td class=\"who\">" + sys.argv[2] + "</td>", page, count=1)
print(re.sub(r"<tr id=\"ungraded-[^\n]*\n", "", page, count=1), end="")' "$out/index.html" "$(head -1 "$dash/names.txt")" >"$dash/tampered/index.html"
    if ! python3 grader/class/dashcheck.py ranking "$dash/tampered" >"$dash/tampered-ranking.check" &&
        grep -q 'not sorted best first' "$dash/tampered-ranking.check" && grep -q 'names what is not a label' "$dash/tampered-ranking.check" &&
        ! python3 grader/class/dashcheck.py ungraded "$dash/tampered" >"$dash/tampered-ungraded.check"; then
        ok "dashboard: the checks find a ranking out of order, a student's name in it and a submission missing from the list not graded"
    else bad "dashboard: the checks passed a tampered dashboard: $(cat "$dash/tampered-ranking.check" "$dash/tampered-ungraded.check" | head -3 | tr '\n' ' ')"; fi

    # a browser draws it: a screenshot of the expected size, not blank, with the page's own header colour; A4 print
    if ! command -v chromium >/dev/null 2>&1; then
        skipped "dashboard: the page in a browser: chromium is not installed (sudo apt-get install chromium)"
    else
        shot=$dash/index.png
        if page_shot "$out/index.html" "$shot" "$dash/chromium-profile"; then
            ok "dashboard: headless Chromium draws it: the screenshot is 1200x2000, not blank, the page's header in it (kept: $shot)"
        else bad "dashboard: Chromium's screenshot: $(cat "$shot.check")"; fi
        pdf=$dash/index.pdf
        if page_a4 "$out/index.html" "$pdf" "$dash/chromium-profile"; then
            ok "dashboard: it prints to A4 (Chromium's PDF: $pdf, $(grep -ac '/Type /Page\b' "$pdf") pages)"
        else bad "dashboard: it did not print to an A4 PDF (log: $pdf.log)"; fi
        rm -rf "$dash/chromium-profile"
    fi

    # --names: the names are shown, folders named by student; built again without it, the same labels as before
    cp "$out/dashboard-key.csv" "$dash/key-first.csv"
    named=0
    if dashboard "$out" --names; then
        while read -r name; do grep -qF "$name" "$out/index.html" && named=$((named + 1)); done <"$dash/names.txt"
    fi
    if [ $named = "$n_students" ] && python3 grader/class/dashcheck.py pages "$out" --names >/dev/null &&
        grep -q 'This page names the students' "$out/index.html"; then
        ok "dashboard: --names shows each of the $n_students students by name (their pages in folders by name) and says at the top that it is not to be shared"
    else bad "dashboard: --names: $named of $n_students students named; $(head -2 "$dash/build.log" | tr '\n' ' ')"; fi
    if dashboard "$out" && cmp -s "$dash/key-first.csv" "$out/dashboard-key.csv" && ! grep -rqiF -f "$dash/names.txt" "$out/index.html" "$out/dashboard" &&
        python3 grader/class/dashcheck.py pages "$out" >/dev/null; then
        ok "dashboard: built again without --names, each student keeps the label of the first build, and no name is left"
    else bad "dashboard: the labels changed between builds, or names were left ($(diff "$dash/key-first.csv" "$out/dashboard-key.csv" | head -2 | tr '\n' ' '))"; fi

    # bad input: one line on stderr, exit 2, no traceback
    mkdir -p "$dash/empty" "$dash/broken" && cp -r "$out/results" "$dash/broken/"
    broken=$(ls "$dash"/broken/results/*/*/record.json | head -1)
    printf '{"student": "x", "lab": ' >"$broken"
    for case in "no-such-folder:$dash/no-such-folder:no such folder" "empty:$dash/empty:no gradings" \
        "broken-record:$dash/broken:${broken#$dash/broken/}: cannot be read"; do
        IFS=: read -r name dir says <<<"$case"
        python3 grader/class/dashboard.py "$dir" >"$dash/bad-$name.out" 2>"$dash/bad-$name.err"
        rc=$?
        if [ $rc = 2 ] && [ "$(wc -l <"$dash/bad-$name.err")" = 1 ] && grep -q "^dashboard: .*$says" "$dash/bad-$name.err" &&
            [ ! -s "$dash/bad-$name.out" ]; then
            ok "dashboard: $name: one line, exit 2 ($(cut -c1-100 "$dash/bad-$name.err"))"
        else bad "dashboard: $name: exit $rc, $(head -3 "$dash/bad-$name.err" | tr '\n' ' ')"; fi
    done
fi
fi
