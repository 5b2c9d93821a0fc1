# 09-timeline.gp - lab 09: one copy through the host, 16 chunks from GPU 0 to GPU 0, by the kit's serial way (one
# pinned buffer: out, in, out, in) and by a double-buffered one (the reference's or yours: two buffers in turn, so
# that chunk c goes in while chunk c + 1 comes out); one row per stream (the copies out of the GPU on the first, the
# copies in on the second), each run from its own start, its length at its end.
# Called by plots/render.sh with: data (the lab 09 explorer's NAME-timeline.csv: run,lane,what,start_ms,end_ms,bytes),
# out, machine, fmt.
reset
set datafile separator comma
size_px = "960,460"; size_in = "6.4in,3.1in"
load "plots/terminal.gpi"
set datafile missing NaN

t_ser = NaN; e_ser = NaN; t_dbl = NaN; e_dbl = NaN; chunk = 0; n_dbl = 0
stats data using (strcol("run") eq "serial" ? column("start_ms") : NaN) nooutput
t_ser = STATS_min
stats data using (strcol("run") eq "serial" ? column("end_ms") : NaN) nooutput
e_ser = STATS_max
stats data using (strcol("run") eq "double-buffered" ? (n_dbl = n_dbl + 1, 1) : 1, \
    chunk = column("bytes") > chunk ? column("bytes") : chunk, 1) nooutput
if (n_dbl > 0) {
    stats data using (strcol("run") eq "double-buffered" ? column("start_ms") : NaN) nooutput
    t_dbl = STATS_min
    stats data using (strcol("run") eq "double-buffered" ? column("end_ms") : NaN) nooutput
    e_dbl = STATS_max
}
chunks = 0  # the serial run's copies out: one a chunk
stats data using (strcol("run") eq "serial" && strcol("what") eq "D2H" ? (chunks = chunks + 1, 1) : 1) nooutput
size_text(x) = x >= 1048576 ? sprintf("%g MiB", x / 1048576) : sprintf("%g KiB", x / 1024)

set title noenhanced sprintf("%d chunks of %s through pinned host memory, GPU 0 to GPU 0 (%s)", chunks, \
    size_text(chunk), machine)
set xlabel "time (ms) from the start of each run"
set ytics nomirror noenhanced ("serial: stream 1 (out)" 5, "serial: stream 2 (in)" 4, \
    "double-buffered: stream 1 (out)" 2, "double-buffered: stream 2 (in)" 1)
set yrange [0.3:6.6]
set xtics nomirror
set xrange [0:*]
set grid xtics lc rgb "#dddddd"
set key at graph 0.99, graph 0.97 right top horizontal box opaque noenhanced
set label 1 sprintf("%.2f ms", e_ser - t_ser) at first (e_ser - t_ser), first 4.5 left offset 1, 0 font ",10"
if (n_dbl > 0) {
    set label 2 sprintf("%.2f ms", e_dbl - t_dbl) at first (e_dbl - t_dbl), first 1.5 left offset 1, 0 font ",10"
} else {
    set label 2 noenhanced "double-buffered: not recorded (lab_stage_copy did not run)" at graph 0.02, first 1.5 left \
        font ",10" tc rgb "#555555"
}
load "plots/timeline.gpi"

lane(l) = l eq "stream 1" ? 1 : (l eq "stream 2" ? 0 : NaN)
row(r, l) = r eq "serial" ? 4 + lane(l) : (r eq "double-buffered" ? 1 + lane(l) : NaN)
t0(r) = r eq "serial" ? t_ser : t_dbl

plot data using @mid:(span("D2H")):@half:(0.32) with boxxyerror @s_d2h title "copy out (D2H, into a pinned buffer)", \
     data using @mid:(span("H2D")):@half:(0.32) with boxxyerror @s_h2d title "copy in (H2D, from it)"
