# 06-peak.gp - lab 06: the rise of peak resident memory per way of getting pinned data, as a multiple of the
# buffer, at the largest size measured, as bars.
# Called by plots/render.sh with: data (the lab 06 explorer's CSV:
# method,bytes,ms,min_ms,max_ms,peak_x,release_ms,h2d_gbps,breakeven), out, machine, fmt.
reset
set datafile separator comma
size_px = "800,520"; size_in = "5.5in,3.5in"
load "plots/terminal.gpi"
set datafile missing NaN

stats data using "bytes" nooutput
big = STATS_max
set title noenhanced sprintf("Peak resident memory per way, %.0f MiB buffer (%s)", big / 1048576.0, machine)
set ylabel "rise of peak resident memory (x the buffer, median)"
set yrange [0:2.6]
set xrange [-0.6:3.6]
set xtics nomirror noenhanced ("malloc + fill" 0, "(a) pinned at alloc" 1, "(b) pinned by copy" 2, "(c) pinned in place" 3)
set ytics nomirror
set grid ytics lc rgb "#dddddd"
set key top left box opaque noenhanced
set style fill solid 0.85 border lc rgb "#333333"
set boxwidth 0.6
peak(dummy) = column("bytes") == big ? column("peak_x") : NaN   # at the largest size only
way(m) = m eq "malloc + fill" ? 0 : (m eq "(a) at alloc" ? 1 : (m eq "(b) by copy" ? 2 : (m eq "(c) in place" ? 3 : NaN)))
plot 1 with lines lw 1.5 dt 2 lc rgb "#000000" title "one buffer", \
     2 with lines lw 1.5 dt 3 lc rgb "#7f7f7f" title "two buffers", \
     data using (way(strcol("method"))):(peak(0)) with boxes lc rgb "#3182bd" title "measured", \
     data using (way(strcol("method"))):(peak(0)):(sprintf("%.2fx", column("peak_x"))) with labels offset 0,0.8 notitle
