# 06-cost.gp - lab 06: the time to get data of each size into memory, per way (the fill included): medians,
# with the fastest and slowest run as error bars.
# Called by plots/render.sh with: data (the lab 06 explorer's CSV:
# method,bytes,ms,min_ms,max_ms,peak_x,release_ms,h2d_gbps,breakeven), out, machine, fmt.
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"
set datafile missing NaN

stats data using "bytes" nooutput
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
ms(m) = strcol("method") eq m ? column("ms") : NaN
plot data using "bytes":(ms("malloc + fill")):"min_ms":"max_ms" with yerrorlines lw 2 pt 13 lc rgb "#7f7f7f" title "malloc + fill (not pinned)", \
     data using "bytes":(ms("(a) at alloc")):"min_ms":"max_ms" with yerrorlines lw 2 pt 7 lc rgb "#1f77b4" title "(a) pinned at allocation", \
     data using "bytes":(ms("(b) by copy")):"min_ms":"max_ms" with yerrorlines lw 2 pt 5 lc rgb "#d62728" title "(b) pinned later by copy", \
     data using "bytes":(ms("(c) in place")):"min_ms":"max_ms" with yerrorlines lw 2 pt 9 lc rgb "#2ca02c" title "(c) pinned in place"
