# history.gp - the report page's chart of a student's attempts at one lab: points at each grading and, where the
# gradings measured it, the first speed check's deciding figure against its bar. Drawn by grader/report/report.py
# with: data (a CSV n,points,ratio: NaN where a grading has no such figure), maxp (the lab's points), has_ratio (1 or
# 0), need, bar ("at least 0.85"), ratio_label, out, fmt.
reset
set datafile separator comma
size_px = has_ratio ? "900,560" : "900,320"; size_in = has_ratio ? "6in,3.7in" : "6in,2.2in"
load "plots/terminal.gpi"
set datafile missing NaN
stats data using "n" nooutput
last = STATS_max

set xrange [0.5:last + 0.5]
set xtics 1 nomirror
set ytics nomirror
set grid ytics lc rgb "#dddddd"
set key outside top right horizontal noenhanced samplen 2
set lmargin 10; set rmargin 3
set style line 1 lc rgb "#1f77b4" lw 2 pt 7 ps 1.0
set style line 2 lc rgb "#d62728" lw 2 pt 5 ps 1.0
if (has_ratio) { set multiplot layout 2,1 title "Your gradings of this lab, oldest first" }
if (!has_ratio) { set title "Your gradings of this lab, oldest first" }
set ylabel "points"
set yrange [0:maxp * 1.1 + 1]
set format x (has_ratio ? "" : "%g")
set xlabel (has_ratio ? "" : "grading")
plot data using "n":"points" with linespoints ls 1 title "points", \
     maxp with lines dt 2 lc rgb "#000000" title sprintf("all %g", maxp)
if (has_ratio) {
    set format x "%g"
    set xlabel "grading"
    set ylabel noenhanced ratio_label
    set yrange [0:*]
    stats data using "ratio" nooutput
    set yrange [0:1.2 * (STATS_max > need ? STATS_max : need)]
    plot data using "n":"ratio" with linespoints ls 2 title "your figure", \
         need with lines dt 2 lw 2 lc rgb "#000000" title "the bar (".bar.")"
    unset multiplot
}
