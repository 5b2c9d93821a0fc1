# 04-throughput.gp - lab 04: items per second against batch size, sequential, depths 1 to 3, and the ideal.
# Called by plots/render.sh with: data (the lab 04 explorer's CSV: version,batch_mib,mitems_per_s,efficiency),
# out, machine, fmt.
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"

set title noenhanced sprintf("Throughput against batch size, stages balanced (%s)", machine)
set xlabel "batch size (MiB of 32-bit items, log scale)"
set ylabel "throughput (million items per second)"
set logscale x 2
set xrange [3:85]
set xtics nomirror ("4 MiB" 4, "16 MiB" 16, "64 MiB" 64)
set ytics nomirror
set yrange [0:*]
set grid xtics ytics lc rgb "#dddddd"
set key outside right center vertical box noenhanced
set datafile missing NaN
rate(v) = strcol("version") eq v ? column("mitems_per_s") : NaN
plot data using "batch_mib":(rate("ideal")) with linespoints lw 2 dt 2 pt 6 lc rgb "#000000" title "ideal (busiest stage)", \
     data using "batch_mib":(rate("depth 3")) with linespoints lw 2 pt 9 lc rgb "#9467bd" title "depth 3", \
     data using "batch_mib":(rate("depth 2")) with linespoints lw 2.5 pt 7 lc rgb "#1f77b4" title "depth 2 (double-buffering)", \
     data using "batch_mib":(rate("depth 1")) with linespoints lw 2 pt 5 lc rgb "#ff7f0e" title "depth 1 (one buffer)", \
     data using "batch_mib":(rate("sequential")) with linespoints lw 2 pt 13 lc rgb "#7f7f7f" title "sequential (baseline)"
