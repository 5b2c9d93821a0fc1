# 06-cost.gp - lab 06: the time to get data of each size into memory, per way (the fill included): medians,
# with the fastest and slowest run as error bars.
# Called by grader/scripts/plots.sh with: data (CSV from the lab 06 explorer), out, machine, fmt.
reset
set datafile separator comma
if (fmt eq "svg") { set terminal svg size 900,560 dynamic font "Helvetica,13" background "white" }
if (fmt eq "png") { set terminal pngcairo size 900,560 font "Helvetica,11" }
if (fmt eq "pdf") { set terminal pdfcairo size 6in,3.7in font "Helvetica,9" }
set output out.".".fmt
set datafile missing NaN

stats data using 2 nooutput
set xrange [STATS_min / 1.5 : STATS_max * 1.5]
set title noenhanced sprintf("Time to get filled, pinned data, against size, per way (%s)", machine)
set xlabel "buffer size (log scale)"
set ylabel "time (ms, log scale), fill included; bars: fastest to slowest run"
set logscale xy
set xtics nomirror ("16 MiB" 16777216, "64 MiB" 67108864, "256 MiB" 268435456, "1 GiB" 1073741824, "4 GiB" 4294967296.0)
set ytics nomirror
set format y "%g"
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque noenhanced
sel(m) = strcol(1) eq m
plot data using 2:(sel("malloc + fill") ? $3 : NaN):4:5 with yerrorlines lw 2 pt 13 lc rgb "#7f7f7f" title "malloc + fill (not pinned)", \
     data using 2:(sel("(a) at alloc") ? $3 : NaN):4:5 with yerrorlines lw 2 pt 7 lc rgb "#1f77b4" title "(a) pinned at allocation", \
     data using 2:(sel("(b) by copy") ? $3 : NaN):4:5 with yerrorlines lw 2 pt 5 lc rgb "#d62728" title "(b) pinned later by copy", \
     data using 2:(sel("(c) in place") ? $3 : NaN):4:5 with yerrorlines lw 2 pt 9 lc rgb "#2ca02c" title "(c) pinned in place"
