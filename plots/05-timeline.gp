# 05-timeline.gp - lab 05: the sequential run and a run over 4 streams (8 chunks), every copy and kernel on
# its stream's row, coloured by kind, each run from its own start.
# Called by plots/render.sh with: data (the lab 05 explorer's NAME-timeline.csv), out, machine, fmt.
reset
set datafile separator comma
size_px = "960,520"; size_in = "6.4in,3.5in"
load "plots/terminal.gpi"
set datafile missing NaN

stats data using (strcol("run") eq "sequential" ? column("start_ms") : NaN) nooutput
t_seq = STATS_min
stats data using (strcol("run") eq "4 streams" ? column("start_ms") : NaN) nooutput
t_pipe = STATS_min
set title noenhanced sprintf("The whole array: one stream, and 8 chunks over 4 streams (%s)", machine)
set xlabel "time (ms) from the start of each run"
set ytics nomirror noenhanced ("one stream" 6.5, "4 streams: stream 1" 4, "stream 2" 3, "stream 3" 2, "stream 4" 1)
set yrange [0.3:7.5]
set xtics nomirror
set xrange [0:*]
set grid xtics lc rgb "#dddddd"
set key at graph 0.99, first 5.25 right center horizontal box opaque noenhanced
load "plots/timeline.gpi"

lane(l) = l eq "stream 1" ? 4 : (l eq "stream 2" ? 3 : (l eq "stream 3" ? 2 : (l eq "stream 4" ? 1 : NaN)))
row(r, l) = r eq "sequential" ? 6.5 : (r eq "4 streams" ? lane(l) : NaN)
t0(r) = r eq "sequential" ? t_seq : t_pipe

plot data using @mid:(span("H2D")):@half:(0.32) with boxxyerror @s_h2d title "copy in (H2D)", \
     data using @mid:(span("kernel")):@half:(0.32) with boxxyerror @s_kernel title "kernel", \
     data using @mid:(span("D2H")):@half:(0.32) with boxxyerror @s_d2h title "copy out (D2H)"
