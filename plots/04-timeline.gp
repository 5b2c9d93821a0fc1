# 04-timeline.gp - lab 04: six batches through the sequential baseline and through a depth-2 pipe, one row
# per lane (the host, each stream), coloured by stage, each run from its own start.
# Called by plots/render.sh with: data (the lab 04 explorer's NAME-timeline.csv), out, machine, fmt.
reset
set datafile separator comma
size_px = "960,520"; size_in = "6.4in,3.5in"
load "plots/terminal.gpi"
set datafile missing NaN

stats data using (strcol("run") eq "sequential" ? column("start_ms") : NaN) nooutput
t_seq = STATS_min
stats data using (strcol("run") eq "depth 2" ? column("start_ms") : NaN) nooutput
t_pipe = STATS_min
set title noenhanced sprintf("Six batches, sequential and double-buffered (%s)", machine)
set xlabel "time (ms) from the start of each run"
set ytics nomirror noenhanced ("sequential: host" 6, "sequential: stream 1" 5, \
    "depth 2: host" 3, "depth 2: stream 1" 2, "depth 2: stream 2" 1)
set yrange [0.3:7.2]
set xtics nomirror
set xrange [0:*]
set grid xtics lc rgb "#dddddd"
set key at graph 0.99, first 4 right center horizontal box opaque noenhanced
load "plots/timeline.gpi"

lane(l) = l eq "host" ? 1 : (l eq "stream 1" ? 0 : (l eq "stream 2" ? -1 : NaN))
row(r, l) = r eq "sequential" ? 5 + lane(l) : (r eq "depth 2" ? 2 + lane(l) : NaN)
t0(r) = r eq "sequential" ? t_seq : t_pipe

plot data using @mid:(span("produce")):@half:(0.32) with boxxyerror @s_host title "produce (host)", \
     data using @mid:(span("H2D")):@half:(0.32) with boxxyerror @s_h2d title "copy in (H2D)", \
     data using @mid:(span("compute")):@half:(0.32) with boxxyerror @s_kernel title "kernel", \
     data using @mid:(span("D2H")):(@half + 0.03):(0.32) with boxxyerror @s_d2h title "result back (D2H)"
