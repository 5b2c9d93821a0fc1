# docs.sh - make test's sections on the docs and charts: links and quoted commands resolve (docs/check.py), charts
# render from the committed reference data and from CSVs brought back into build/data/, and make docs renders every
# page. Needs no GPU. Sourced by grader/test/test.sh (B, LOG, ok / bad / skipped).

section "docs: links, charts and quoted commands resolve"
if [ ! -f docs/check.py ]; then skipped "docs: for course staff; a student tree does not have the check"; else
    if python3 docs/check.py >"$LOG/doccheck.log" 2>&1; then
        ok "docs: every link, chart, make target, program and kit path in README.md, docs/, the handouts and answer keys resolves"
    else bad "docs: what the Markdown names is not there:"; sed 's/^/        /' "$LOG/doccheck.log" | head -10; fi
    # the check can fail: a page with one of each mistake
    printf '[a](../../labs/07-none/README.md) ![b](../../build/plots/09-none-h100.svg) `make grades` `build/bin/01-x-grade` `grader/scripts/none.sh`\n\n[r]: ../../docs/none.md\ntext\n## glued heading\n' >"$LOG/doccheck-planted.md"
    n=$(python3 docs/check.py "$LOG/doccheck-planted.md" | wc -l)
    [ "$n" = 7 ] && ok "docs: a page with a bad link, reference link, chart, target, program, path and glued heading gets 7 findings" ||
        bad "docs: the planted page got $n findings, not 7"
    printf '# Lab 99 — planted\n\n## Background\n\n## What you will learn\n\n## Tasks\n\n## How it is graded\n\n## Questions\n\n## Further reading\n' >"$LOG/doccheck-handout.md"
    python3 docs/check.py "$LOG/doccheck-handout.md" >"$LOG/doccheck-handout.log"
    if [ "$(wc -l <"$LOG/doccheck-handout.log")" = 2 ] && grep -q 'needs a section "## Figures measured' "$LOG/doccheck-handout.log" &&
        grep -q '"## Background" comes too early' "$LOG/doccheck-handout.log"; then
        ok "docs: every handout has the common shape; a planted one with a section missing and one out of order gets both"
    else bad "docs: the planted handout's shape findings: $(tr '\n' ';' <"$LOG/doccheck-handout.log")"; fi
    printf '# Lab 01 — answer key (planted)\n\n## 1\n\nA.\n\n## 2\n\nB.\n\n## 4\n\nD.\n' >"$LOG/answers-planted.md"
    python3 docs/check.py "$LOG/answers-planted.md" >"$LOG/answers-planted.log"
    if [ "$(wc -l <"$LOG/answers-planted.log")" = 1 ] && grep -q 'answers 1 2 4, but the handout asks questions 1 2 3' "$LOG/answers-planted.log"; then
        ok "docs: an answer key must answer each question of its handout; a planted one missing answers 3, 5 and 6 is named"
    else bad "docs: the planted answer key's findings: $(tr '\n' ';' <"$LOG/answers-planted.log")"; fi
    if python3 docs/figures.py --check >"$LOG/figures.log" 2>&1; then
        ok "docs: every figure the handouts, answer keys and guides quote is the one refdata/ gives, none typed by hand"
    else bad "docs: quoted figures and refdata/ disagree (make figures writes them):"; sed 's/^/        /' "$LOG/figures.log" | head -10; fi
    # the check can fail: a handout quoting a figure wrongly, one not defined, and one typed by hand
    mkdir -p "$LOG/figures-planted/labs/99-planted"
    right=$(python3 docs/figures.py --show | head -1 | cut -f1)
    printf 'a <!--f:%s-->-1<!--/f--> GB/s, <!--f:01.none-->1<!--/f-->, and 3.25 GB/s by hand; `1.50 ms` in code is not\n' "$right" \
        >"$LOG/figures-planted/labs/99-planted/README.md"
    python3 docs/figures.py --check "$LOG/figures-planted/labs/99-planted/README.md" >"$LOG/figures-planted.log"
    if [ $? = 1 ] && [ "$(wc -l <"$LOG/figures-planted.log")" = 3 ] && grep -q "$right says -1, the data" "$LOG/figures-planted.log" &&
        grep -q '01.none is not defined' "$LOG/figures-planted.log" && grep -q '"3.25 GB/s" is typed by hand' "$LOG/figures-planted.log"; then
        ok "docs: a planted handout with a wrong figure, an undefined one and one typed by hand gets those 3 findings"
    else bad "docs: the planted figures got: $(tr '\n' ';' <"$LOG/figures-planted.log")"; fi
    cp "$LOG/figures-planted/labs/99-planted/README.md" "$LOG/figures-written.md"
    python3 docs/figures.py --write "$LOG/figures-written.md" >/dev/null 2>&1 # the undefined name stops it: nothing written
    if cmp -s "$LOG/figures-written.md" "$LOG/figures-planted/labs/99-planted/README.md" &&
        sed -i 's/<!--f:01.none-->1<!--\/f-->//' "$LOG/figures-written.md" && python3 docs/figures.py --write "$LOG/figures-written.md" >/dev/null &&
        grep -q "<!--f:$right-->$(python3 docs/figures.py --show "$right" | cut -f2)<!--/f-->" "$LOG/figures-written.md"; then
        ok "docs: make figures writes a quoted figure from refdata/, and writes nothing when a name is not defined"
    else bad "docs: docs/figures.py --write on a planted page (see $LOG/figures-written.md)"; fi
    if [ -f docs/instructors.md ] && diff <(python3 grader/scripts/margins.py) \
        <(sed -n '/<!-- margins:begin -->/,/<!-- margins:end -->/p' docs/instructors.md | sed '1d;$d') >"$LOG/margins.diff"; then
        ok "docs: the instructors' guide's table of margins is margins.py of refdata/stability/"
    else bad "docs: the margins table in docs/instructors.md differs from grader/scripts/margins.py (diff: $LOG/margins.diff)"; fi
fi

section "charts from the committed reference data"
if command -v gnuplot >/dev/null 2>&1; then
    if XL_PLOTS_FROM_REF=1 XL_PLOTS_OUT=$LOG/plots plots/render.sh >"$LOG/plots.log" 2>&1; then
        n=0
        for gp in plots/*.gp; do
            for f in $LOG/plots/$(basename "$gp" .gp)*.svg; do
                [ -f "$f" ] || continue
                if [ -s "$f" ] && [ -s "${f%.svg}.png" ] && grep -q '</svg>' "$f"; then n=$((n + 1)); else bad "chart ${f##*/} is empty"; fi
            done
        done
        if [ $n -gt 0 ]; then ok "charts: $n rendered as SVG and PNG"; else bad "charts: none rendered (log: $LOG/plots.log)"; fi
    else bad "charts: plots/render.sh failed (log: $LOG/plots.log)"; tail -5 "$LOG/plots.log" | sed 's/^/        /'; fi
    # a CSV brought back from a GPU host into build/data/ is charted too, named after its file
    # (lab 05's with its timeline beside it, NAME-timeline.csv: the timeline chart of NAME, not a set of its own)
    mkdir -p $B/data && cp refdata/01-pageable-copy/h200.csv $B/data/01-pageable-copy-brought.csv
    cp refdata/05-stream-pipelining/h200.csv $B/data/05-stream-pipelining-brought.csv
    cp refdata/05-stream-pipelining/h200-timeline.csv $B/data/05-stream-pipelining-brought-timeline.csv
    printf 'direction,bytes\nH2D,abc\nnot a row\n' >$B/data/01-pageable-copy-garbled.csv # charted beside them, it cannot be
    if XL_NO_GPU=1 XL_PLOTS_OUT=$LOG/plots-data plots/render.sh >"$LOG/plots-data.log" 2>&1 &&
        grep -q '</svg>' "$LOG/plots-data/01-pageable-bandwidth-brought.svg" 2>/dev/null; then
        ok "charts: a CSV put in build/data/ as NN-slug-NAME.csv is charted as NN-chart-NAME"
    else bad "charts: build/data/01-pageable-copy-brought.csv was not charted (log: $LOG/plots-data.log)"; fi
    if grep -q '</svg>' "$LOG/plots-data/05-timeline-brought.svg" 2>/dev/null &&
        grep -q '</svg>' "$LOG/plots-data/05-streams-brought.svg" 2>/dev/null &&
        ! ls "$LOG"/plots-data/*brought-timeline* >/dev/null 2>&1; then
        ok "charts: NAME-timeline.csv beside NAME.csv is drawn as NAME's timeline chart, not charted on its own"
    else bad "charts: build/data/05-stream-pipelining-brought{,-timeline}.csv were not charted together (log: $LOG/plots-data.log)"; fi
    if [ "$(grep -c garbled "$LOG/plots-data.log")" = 1 ] && grep -q "^plots: $B/data/01-pageable-copy-garbled.csv skipped: gnuplot cannot chart it" "$LOG/plots-data.log" &&
        ! ls "$LOG"/plots-data/*garbled* >/dev/null 2>&1 && ! find "$LOG/plots-data" -size 0 | grep -q .; then
        ok "charts: a CSV gnuplot cannot chart gets one line naming it, no chart file, and the others are drawn (exit 0)"
    else bad "charts: the garbled CSV in build/data/ (log: $LOG/plots-data.log)"; fi
    rm -f $B/data/01-pageable-copy-garbled.csv $B/data/01-pageable-copy-brought.csv $B/data/05-stream-pipelining-brought.csv $B/data/05-stream-pipelining-brought-timeline.csv
else
    skipped "charts: gnuplot is not installed"
fi

section "docs rendered (make docs): every page as HTML and PDF, charts embedded, links between pages kept"
if ! command -v pandoc >/dev/null 2>&1 || ! command -v weasyprint >/dev/null 2>&1 || ! command -v gnuplot >/dev/null 2>&1; then
    skipped "docs: needs pandoc, weasyprint and gnuplot (sudo apt-get install pandoc weasyprint gnuplot-nox)"
elif XL_PLOTS_FROM_REF=1 plots/render.sh >"$LOG/docs-plots.log" 2>&1 && docs/render.sh >"$LOG/docs.log" 2>&1; then
    n=0
    for md in README.md docs/*.md labs/[0-9][0-9]-*/README.md; do
        case $md in README.md) name=index ;; labs/*) name=$(basename "$(dirname "$md")") ;; *) name=$(basename "$md" .md) ;; esac
        want=$(grep -o '!\[[^]]*\]([^)]*)' "$md" | wc -l)
        got=$(grep -o '<img src="data:' "build/docs/$name.html" | wc -l)
        if [ "$(head -c 4 "build/docs/$name.pdf")" = "%PDF" ] && [ "$got" = "$want" ] && ! grep -q 'href="[^":]*\.md[#"]' "build/docs/$name.html"; then
            n=$((n + 1))
        else bad "docs: $name: pdf $(head -c 4 "build/docs/$name.pdf" 2>/dev/null), $got of $want charts embedded, or a link to a .md file left"; fi
    done
    ok "docs: $n pages rendered to HTML and PDF with every chart embedded and links between pages rewritten"
else bad "docs: make docs failed (log: $LOG/docs.log)"; tail -5 "$LOG/docs.log" | sed 's/^/        /'; fi

