# 03-timeline.gp - lab 03: one fetch without a wait (the bug), one with lab_fetch, and one into pageable
# memory, as host and GPU lanes on one clock: when was the result read, and was the copy done?
# Called by plots/render.sh with: data (the lab 03 explorer's CSV, a timeline), out, machine, fmt.
reset
set datafile separator comma
size_px = "900,520"; size_in = "6in,3.5in"
load "plots/terminal.gpi"

# each run's own start: its first GPU span
stats data using (strcol("run") eq "no wait" ? column("start_ms") : NaN) nooutput
t_bug = STATS_min
stats data using (strcol("run") eq "lab_fetch" ? column("start_ms") : NaN) nooutput
t_fix = STATS_min
stats data using (strcol("run") eq "pageable" ? column("start_ms") : NaN) nooutput
t_page = STATS_min
set title noenhanced sprintf("Reading a result: without a wait, with lab_fetch, and into pageable memory (%s)", machine)
set xlabel "time (ms) from the start of each fetch"
set ytics nomirror noenhanced ("no wait: host" 5, "no wait: GPU" 4, "lab_fetch: host" 3, "lab_fetch: GPU" 2, \
    "pageable: host" 1, "pageable: GPU" 0)
set yrange [-0.7:5.7]
set xtics nomirror
set grid xtics lc rgb "#dddddd"
set key inside right top vertical box opaque noenhanced
set xrange [0:*]
load "plots/timeline.gpi"

t0(run) = run eq "no wait" ? t_bug : (run eq "lab_fetch" ? t_fix : t_page)
row(run, lane) = (run eq "no wait" ? 4 : (run eq "lab_fetch" ? 2 : 0)) + (lane eq "host" ? 1 : 0)

plot data using @mid:(span("GPU work")):@half:(0.3) with boxxyerror @s_kernel title "GPU work (kernel)", \
     data using @mid:(span("copy to host")):@half:(0.3) with boxxyerror @s_d2h title "copy to host", \
     data using @mid:(span("host work")):@half:(0.3) with boxxyerror @s_host title "host work", \
     data using @mid:(span("read result")):(@half + 0.05):(0.3) with boxxyerror @s_read title "host reads the result"
