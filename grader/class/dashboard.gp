# dashboard.gp - the class dashboard's chart of points per lab: for each band of a lab's points (0-19% ... 100%), how
# many of its graded submissions scored in it, one bar per lab in each band, the count above each bar. Drawn by
# grader/class/dashboard.py (not by make plots) with: data (a CSV band,<one column per lab, headed by its legend>),
# nlabs, ymax, ystep, width and height (px), out, fmt.
reset
set datafile separator comma
size_px = sprintf("%d,%d", width, height); size_in = sprintf("%.2fin,%.2fin", width / 150.0, height / 150.0)
load "plots/terminal.gpi"

set title "Points per lab: the graded submissions in each band of the lab's points" noenhanced font ",13"
set xlabel "points scored, as a share of the lab's total (%)" noenhanced
set ylabel "submissions graded" noenhanced
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.92
set yrange [0:ymax]
set ytics ystep nomirror
set xtics nomirror
set grid ytics lc rgb "#dddddd"
set key top left Left reverse noenhanced box opaque samplen 2 autotitle columnheader  # the header row is no band: $0 counts bands
colours = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f"
# the bar of column i in band $0 stands at $0 + its offset in the cluster (gnuplot's histogram layout, gap 1)
at(i) = column(0) + (i - 2 - (nlabs - 1) / 2.0) / (nlabs + 1.0)
plot for [i=2:nlabs + 1] data using i:xtic(1) lc rgb word(colours, (i - 2) % 8 + 1), \
     for [i=2:nlabs + 1] data using (at(i)):(column(i)):(column(i) > 0 ? sprintf("%d", column(i)) : "") \
        with labels offset 0,0.7 font ",10" notitle
