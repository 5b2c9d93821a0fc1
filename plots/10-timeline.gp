# 10-timeline.gp - lab 10: the pipelined loop at batch 64, twelve batches from the middle of a run (the explorer keeps
# batches 10 to 21 of 32): a row per worker thread at the top (decode: a worker's consecutive frames of one batch as
# one box), the loop's thread (deliver), then a row per stream (copy in, the model, copy out, coloured by kind). The
# worker rows show whether the CPU step keeps ahead of the GPU; a gap on every stream row at once is the GPU
# waiting. The model's box runs from the end of a batch's copy in to the start of its copy out on its stream (two
# events around it in stream order): where boxes of two streams overlap, the two models shared the GPU.
# Called by plots/render.sh with: data (the lab 10 explorer's NAME-timeline.csv: run,lane,what,start_ms,end_ms,
# bytes), out, machine, fmt.
reset
set datafile separator comma
size_px = "960,600"; size_in = "6.4in,4in"
load "plots/terminal.gpi"
set datafile missing NaN

# how many workers and streams the run had, and where it starts and ends
nw = 0; ns = 0
num(l, p) = strlen(l) > strlen(p) && l[1:strlen(p)] eq p ? l[strlen(p) + 1:] + 0 : 0
stats data using (w = num(strcol("lane"), "worker "), s = num(strcol("lane"), "stream "), \
    nw = w > nw ? w : nw, ns = s > ns ? s : ns, 1) nooutput
stats data using "start_ms" nooutput
t_start = STATS_min
stats data using "end_ms" nooutput
t_end = STATS_max
batches = 0
stats data using (batches = batches + (strcol("what") eq "deliver"), 1) nooutput

# rows, top to bottom: worker 1 .. nw, the loop, stream 1 .. ns
y_loop = ns + 1.7
row_of(l) = l eq "loop" ? y_loop : (num(l, "worker ") > 0 ? y_loop + 1.2 + nw - num(l, "worker ") : \
    (num(l, "stream ") > 0 ? ns + 1 - num(l, "stream ") : NaN))
row(r, l) = row_of(l)
t0(r) = t_start

set title noenhanced sprintf("The pipelined loop, %d batches of 64 from the middle of a run: %d workers, %d streams " \
    . "(%s)", batches, nw, ns, machine)
set xlabel "time (ms) from the first span shown"
set ytics nomirror noenhanced ("loop (deliver)" y_loop)
do for [k = 1:nw] { set ytics add (sprintf("worker %d", k) y_loop + 1.2 + nw - k) }
do for [k = 1:ns] { set ytics add (sprintf("stream %d", k) ns + 1 - k) }
set yrange [0.3:y_loop + 1.2 + nw + 0.6]
set xtics nomirror
set xrange [0:(t_end - t_start) * 1.01]
set grid xtics lc rgb "#dddddd"
set bmargin 6
set key at screen 0.5, screen 0.01 center bottom horizontal box opaque noenhanced samplen 2 width 1
load "plots/timeline.gpi"

plot data using @mid:(span("decode")):@half:(0.32) with boxxyerror @s_host title "decode (a worker)", \
     data using @mid:(span("deliver")):@half:(0.32) with boxxyerror @s_read title "deliver (the loop thread)", \
     data using @mid:(span("H2D")):@half:(0.32) with boxxyerror @s_h2d title "copy in (H2D)", \
     data using @mid:(span("model")):@half:(0.32) with boxxyerror @s_kernel title "the model", \
     data using @mid:(span("D2H")):@half:(0.32) with boxxyerror @s_d2h title "copy out (D2H)"
