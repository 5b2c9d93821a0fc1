# peak.gp - the report page's lab 06 chart: the rise of peak resident memory per way to pinned data, the student's
# beside the reference solution's of the same GPU model, as bars (plots/06-peak.gp draws the reference's alone).
# Drawn by grader/report/report.py with: data (a CSV i,yours,reference: NaN where the reference has none), defs (the
# methods' xtics, xrange, yrange), machine, you_mib (the size graded), ref_mib (the reference's size; 0: none), out,
# fmt.
reset
set datafile separator comma
size_px = "860,520"; size_in = "5.7in,3.5in"
load "plots/terminal.gpi"
set datafile missing NaN
load defs

set title noenhanced sprintf("Peak resident memory per way to pinned data (%s)", machine)
set ylabel "rise of peak resident memory (x the buffer)"
set ytics nomirror
set grid ytics lc rgb "#dddddd"
set key top left box opaque noenhanced
set boxwidth 0.36
plot 1 with lines lw 1.5 dt 2 lc rgb "#000000" title "one buffer", \
     2 with lines lw 1.5 dt 3 lc rgb "#7f7f7f" title "two buffers", \
     data using ($1 - 0.19):"yours" with boxes fs solid 0.9 border lc rgb "#333333" lc rgb "#3182bd" \
        title sprintf("yours, %.0f MiB", you_mib), \
     data using ($1 + 0.19):"reference" with boxes fs pattern 4 border lc rgb "#333333" lc rgb "#636363" \
        title (ref_mib > 0 ? sprintf("reference solution, %.0f MiB", ref_mib) : "no reference"), \
     data using ($1 - 0.19):"yours":(sprintf("%.2fx", column("yours"))) with labels offset 0,0.8 notitle, \
     data using ($1 + 0.19):"reference":(sprintf("%.2fx", column("reference"))) with labels offset 0,0.8 \
        tc rgb "#555555" notitle
