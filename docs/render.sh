#!/usr/bin/env bash
# render.sh - every handout and guide rendered to HTML and PDF in build/docs/ (make docs), with the kit's charts
# embedded: README.md -> index, docs/NAME.md -> NAME, labs/NN-slug/README.md -> NN-slug. Pandoc makes one
# self-contained HTML page (docs/render/page.css, links between pages rewritten by docs/render/links.lua; charts
# as SVG) and WeasyPrint prints a second one, with the charts as PNG, to PDF. Needs pandoc, weasyprint and the charts (make plots). Exit 1 if a page fails.
set -u
cd "$(dirname "$0")/.."
out=build/docs
for c in pandoc weasyprint; do
    command -v $c >/dev/null 2>&1 || { echo "docs: $c is missing: 'sudo apt-get install pandoc weasyprint' adds it"; exit 2; }
done
ls build/plots/*.svg >/dev/null 2>&1 || { echo "docs: no charts yet: run 'make plots' first (needs gnuplot)"; exit 2; }
mkdir -p "$out"
rc=0
pages=(README.md docs/*.md labs/[0-9][0-9]-*/README.md)
for md in "${pages[@]}"; do
    case $md in
    README.md) name=index ;;
    labs/*) name=$(basename "$(dirname "$md")") ;;
    *) name=$(basename "$md" .md) ;;
    esac
    title=$(sed -n 's/^# //p' "$md" | head -1)
    dir=$(dirname "$md")
    # run from the page's folder, so that its relative image paths resolve and are embedded
    render() { # OUT.html, charts as SVG (or PNG with XL_DOCS_PNG=1)
        (cd "$dir" && pandoc "$(basename "$md")" --standalone --self-contained --metadata pagetitle="$title" \
            --css "$OLDPWD/docs/render/page.css" --lua-filter "$OLDPWD/docs/render/links.lua" -o "$OLDPWD/$1")
    }
    if render "$out/$name.html" 2>"$out/$name.log" && XL_DOCS_PNG=1 render "$out/$name.print.html" 2>>"$out/$name.log" &&
        weasyprint "$out/$name.print.html" "$out/$name.pdf" 2>>"$out/$name.log" && ! grep -q 'ERROR' "$out/$name.log"; then
        rm -f "$out/$name.print.html"
        printf 'docs: %-26s %7d bytes html, %7d bytes pdf\n' "$name" "$(stat -c %s "$out/$name.html")" "$(stat -c %s "$out/$name.pdf")"
        rm -f "$out/$name.log"
    else
        echo "docs: $md failed:"; grep -v 'WARNING' "$out/$name.log" | head -5 | sed 's/^/    /'; rc=1
    fi
done
exit $rc
