# 10-latency.gp - lab 10: each frame's latency (from the start of its decode to its deliver) against batch size:
# the worst and the median of the pipelined loop (yours where the CSV is a student's, the reference solution's in
# refdata/; the kit's where yours did not run), and of the async loop (thin); the bound LAB_LATENCY_MS and the 0.8 of
# it a batch must stay within (LAB_LATENCY_MARGIN) as lines; the batch the rule chooses from this data (the fastest
# whose worst latency is within the margin) marked.
# Called by plots/render.sh with: data (the lab 10 explorer's CSV: loop,impl,batch,frames,workers,streams,slots,
# cpu_us,fps,latency_p50_ms,latency_p99_ms,latency_max_ms,ideal_fps,bound), out, machine, fmt.
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"
set datafile missing NaN

# the bound and margin: from the explorer's comment line ("# latency bound: 4 ms, margin 0.8"), else lab.h's
bound = 4.0; margin = 0.8
pick = "s/^# latency bound: \\([0-9.]*\\) ms, margin \\([0-9.]*\\).*/\\1 \\2/p"
b_text = system(sprintf("sed -n '%s' '%s' | head -1", pick, data))
if (words(b_text) == 2) { bound = word(b_text, 1) + 0.0; margin = word(b_text, 2) + 0.0 }
limit = bound * margin

n_yours = 0
stats data using (n_yours = n_yours + (strcol("loop") eq "pipelined" && strcol("impl") eq "yours"), 1) nooutput
impl = n_yours > 0 ? "yours" : "kit"
who = n_yours > 0 ? "pipelined" : "pipelined (kit)"
col(l, i, c) = strcol("loop") eq l && strcol("impl") eq i ? column(c) : NaN
# the rule over this data: the fastest batch whose worst latency is within the margin, the smaller on a tie
chosen = 0; best = -1; chosen_ms = NaN
stats data using (strcol("loop") eq "pipelined" && strcol("impl") eq impl && column("latency_max_ms") <= limit && \
    column("fps") > best ? (best = column("fps"), chosen = column("batch"), chosen_ms = column("latency_max_ms")) : 0, \
    1) nooutput
stats data using (column("latency_p50_ms") > 0 ? column("latency_p50_ms") : NaN) nooutput
ymin = STATS_min
stats data using (column("latency_max_ms") > 0 ? column("latency_max_ms") : NaN) nooutput
ymax = STATS_max > bound ? STATS_max : bound

set title noenhanced sprintf("Each frame's latency, decode to deliver, against batch size (%s)", machine)
set xlabel "batch size (frames, log scale)"
set ylabel "latency (ms, log scale)"
set logscale x 2
set logscale y 10
set xrange [0.7:1500]
set yrange [ymin / 2:ymax * 2.5]
set xtics nomirror ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64, "128" 128, "256" 256, "512" 512, \
    "1024" 1024)
set ytics nomirror
set format y "%g"
set grid xtics ytics lc rgb "#dddddd"
set key bottom right box opaque noenhanced font ",10" spacing 1.1 samplen 3
set style line 1 lc rgb "#1f77b4" lw 2.5 pt 7 ps 0.8
set style line 2 lc rgb "#1f77b4" lw 1.8 pt 6 ps 0.8 dt 2
set style line 3 lc rgb "#ff7f0e" lw 1.2 pt 5 ps 0.6
set style line 4 lc rgb "#ff7f0e" lw 1.0 pt 4 ps 0.6 dt 2
set arrow 1 from graph 0, first bound to graph 1, first bound nohead lc rgb "#d62728" lw 1.5
set label 1 sprintf("the bound, %g ms", bound) at graph 0.01, first bound * 1.12 left font ",10" tc rgb "#d62728"
set arrow 2 from graph 0, first limit to graph 1, first limit nohead lc rgb "#d62728" lw 1.2 dt 2
set label 2 sprintf("%g of it, %g ms: a batch's worst run must stay below", margin, limit) at graph 0.01, \
    first limit / 1.14 left font ",10" tc rgb "#d62728"
if (chosen > 0) {
    set arrow 3 from first chosen, graph 0 to first chosen, first chosen_ms nohead lc rgb "#2ca02c" lw 1.5 dt 3
    set label 3 sprintf("chosen: %d", chosen) at first chosen, first chosen_ms / 1.5 left offset 0.6, 0 font ",10" \
        tc rgb "#2ca02c" front
}
plot data using "batch":(col("pipelined", impl, "latency_max_ms")) with linespoints ls 1 \
        title who . ": worst frame", \
     data using "batch":(col("pipelined", impl, "latency_p50_ms")) with linespoints ls 2 title who . ": median frame", \
     data using "batch":(col("async", "yours", "latency_max_ms")) with linespoints ls 3 title "async: worst frame", \
     data using "batch":(col("async", "yours", "latency_p50_ms")) with linespoints ls 4 title "async: median frame"
