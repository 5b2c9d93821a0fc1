# speed.gp - the report page's chart of a grading's speed and timed checks: each attempt of each check against its
# bar, a check's name and bar on a line of its own above its attempts. Drawn by grader/report/report.py (not by make
# plots) with: data (a CSV x,y,verdict,text: x is the figure against its bar, turned so that right of 1 meets it;
# verdict passed, missed or not sound), defs (the checks' names as labels, the yrange, the lines between checks),
# height (px), out, fmt.
reset
set datafile separator comma
size_px = sprintf("960,%d", height); size_in = sprintf("6.4in,%.2fin", height / 150.0)
load "plots/terminal.gpi"
set datafile missing NaN
load defs

set title "Speed and timed checks: each attempt against its bar"
set xlabel "your figure against its bar (log scale): right of the line meets the bar"
set logscale x 2
set xrange [0.1:40]
set xtics nomirror ("1/8" 0.125, "1/4" 0.25, "1/2" 0.5, "the bar" 1, "2x" 2, "4x" 4, "8x" 8, "16x" 16)
unset ytics
set lmargin 2; set rmargin 2; set bmargin 6
set grid xtics lc rgb "#e4e4e4"
set key at screen 0.5, screen 0.01 center bottom horizontal noenhanced samplen 1 width 2
# the side that misses, lightly shaded; the bar itself, a heavy line under the checks' names (labels in boxes)
set object 1 rectangle from graph 0, graph 0 to first 1, graph 1 behind \
    fillcolor rgb "#fbeeee" fillstyle solid 1.0 noborder
set arrow 100 from first 1, graph 0 to first 1, graph 1 nohead lw 2.5 lc rgb "#000000" back
set style textbox opaque noborder margins 2,1

is(v) = strcol("verdict") eq v ? column("y") : NaN
# a label goes right of its point, except between the far left and the bar, where it goes left, towards the miss
# side's free room; near the left edge (a figure of 0 or far off the scale) it goes right, inside the chart
right_of(x) = x >= 1 || x < 0.35
plot data using "x":(is("passed")) with points pt 7 ps 1.3 lc rgb "#1a7f37" title "meets its bar", \
     data using "x":(is("missed")) with points pt 5 ps 1.2 lc rgb "#c62828" title "misses its bar", \
     data using "x":(is("not sound")) with points pt 6 ps 1.4 lw 2 lc rgb "#777777" title "NOT SOUND: not graded", \
     data using "x":(right_of(column("x")) ? column("y") : NaN):"text" with labels left offset char 1.2,0 \
        font ",11" noenhanced notitle, \
     data using "x":(right_of(column("x")) ? NaN : column("y")):"text" with labels right offset char -1.2,0 \
        font ",11" noenhanced notitle
