# 10-fps.gp - lab 10: frames per second against batch size for the three loops (blocking, async, pipelined: yours
# where the CSV is a student's, the reference solution's in refdata/), the kit's pipelined loop (thin), the model
# alone with no transfers (dashed) and the ideal at each batch (open circles: the slowest of the CPU step with the
# workers, the link both ways and the model alone, measured in the same runs); at the named batch a label with the
# pipelined loop's share of the ideal and its speed over the blocking loop (the kit's, as the grader compares).
# Called by plots/render.sh with: data (the lab 10 explorer's CSV: loop,impl,batch,frames,workers,streams,slots,
# cpu_us,fps,latency_p50_ms,latency_p99_ms,latency_max_ms,ideal_fps,bound), out, machine, fmt. One chart per data
# set: the H100's and the H200's reference data give the two panels of the handout.
reset
set datafile separator comma
size_px = "900,600"; size_in = "6in,4in"
load "plots/terminal.gpi"
set datafile missing NaN

named = 64  # lab.h's LAB_BATCH_NAMED
fps(l, i) = strcol("loop") eq l && strcol("impl") eq i ? column("fps") : NaN
ideal(dummy) = strcol("loop") eq "resident" ? column("ideal_fps") : NaN

# which series the data has (a student's CSV may lack one of yours: not written yet)
array n_yours[3]
loops = "blocking async pipelined"
do for [k = 1:3] {
    c = 0
    stats data using (c = c + (strcol("loop") eq word(loops, k) && strcol("impl") eq "yours"), 1) nooutput
    n_yours[k] = c
}
# the figures at the named batch
p64 = NaN; i64 = NaN; kb64 = NaN; yb64 = NaN; kp64 = NaN; bound64 = ""
stats data using (column("batch") == named ? ( \
    strcol("loop") eq "pipelined" && strcol("impl") eq "yours" ? p64 = column("fps") : \
    strcol("loop") eq "pipelined" && strcol("impl") eq "kit" ? kp64 = column("fps") : \
    strcol("loop") eq "blocking" && strcol("impl") eq "kit" ? kb64 = column("fps") : \
    strcol("loop") eq "blocking" && strcol("impl") eq "yours" ? yb64 = column("fps") : \
    strcol("loop") eq "resident" ? (i64 = column("ideal_fps"), bound64 = strcol("bound")) : 0, 1) : 1) nooutput
main64 = p64 == p64 ? p64 : kp64          # the student's pipelined loop, or the kit's where it did not run
who = p64 == p64 ? "pipelined" : "the kit's pipelined"
blk64 = kb64 == kb64 ? kb64 : yb64
stats data using (column("fps") > 0 ? column("fps") : NaN) nooutput
ymin = STATS_min; ymax = STATS_max

set title noenhanced sprintf("Frames per second against batch size: three loops, the model alone, the ideal (%s)", \
    machine)
set xlabel "batch size (frames, log scale)"
set ylabel "frames per second (log scale)"
set logscale x 2
set logscale y 10
set xrange [0.7:1500]
set yrange [ymin / 2:ymax * 3]
set xtics nomirror ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64, "128" 128, "256" 256, "512" 512, \
    "1024" 1024)
set ytics nomirror
set format y "%.0s%c"
set grid xtics ytics lc rgb "#dddddd"
set key bottom right box opaque noenhanced font ",10" spacing 1.1 samplen 3
set style line 1 lc rgb "#7f7f7f" lw 2.5 pt 13 ps 0.9
set style line 2 lc rgb "#ff7f0e" lw 2.5 pt 5 ps 0.8
set style line 3 lc rgb "#1f77b4" lw 2.5 pt 7 ps 0.8
set style line 4 lc rgb "#1f77b4" lw 1.2 pt 6 ps 0.6 dt 3
set style line 5 lc rgb "#2ca02c" lw 1.8 pt 9 ps 0.8 dt 2
set style line 6 lc rgb "#000000" lw 1.2 pt 6 ps 1.6
set style line 7 lc rgb "#7f7f7f" lw 1.2 pt 12 ps 1.4

if (main64 == main64 && i64 == i64) {
    txt = sprintf("%s: %.2f of the ideal (%s-bound)", who, main64 / i64, bound64)
    if (blk64 == blk64) {
        txt = txt . sprintf("\n%.1fx %s", main64 / blk64, \
            kb64 == kb64 ? "the kit's blocking loop" : "the blocking loop")
    }
    set label 1 txt at first named, first main64 * 1.9 center front font ",10" tc rgb "#1f77b4"
    set arrow 1 from first named, first main64 * 1.5 to first named, first main64 * 1.08 head size screen 0.008,25 \
        lc rgb "#1f77b4" lw 1
}
plot data using "batch":(fps("resident", "kit")) with linespoints ls 5 title "the model alone, no transfers (kit)", \
     data using "batch":(ideal(0)) with points ls 6 title "ideal: the slowest stage, measured alone", \
     data using "batch":(fps("pipelined", "kit")) with linespoints ls 4 title "pipelined (kit)", \
     for [k = 3:1:-1] data using "batch":(fps(word(loops, k), "yours")) with linespoints ls k \
        title (n_yours[k] > 0 ? word(loops, k) : ""), \
     data using "batch":(fps("blocking", "kit")) with points ls 7 title "blocking (kit, batch 64)"
