# 05-streams.gp - lab 05: time against the number of streams (8 MiB chunks), both issue orders, with the
# sequential time and the ideal drawn in. The ideal is read back from each row's efficiency:
# ideal = sequential - (sequential - time) / efficiency.
# Called by plots/render.sh with: data (the lab 05 explorer's CSV: version,streams,chunk_mib,ms,efficiency),
# out, machine, fmt.
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"
set datafile missing NaN

stats data using (strcol("version") eq "sequential" ? column("ms") : NaN) nooutput
seq = STATS_max
ideal(ms, eff) = seq - (seq - ms) / eff
stats data using (strcol("version") eq "breadth-first" && column("streams") == 4 ? \
    ideal(column("ms"), column("efficiency")) : NaN) nooutput
ideal = STATS_min
set title noenhanced sprintf("Time against the number of streams, 8 MiB chunks (%s)", machine)
set xlabel "streams (log scale)"
set ylabel "time for the whole array (ms)"
set logscale x 2
set xrange [0.8:20]
set xtics nomirror (1, 2, 4, 8, 16)
set ytics nomirror
set yrange [0:seq * 1.15]
set grid xtics ytics lc rgb "#dddddd"
set key top right box opaque noenhanced
# the stream sweep is the first five depth-first rows at 8 MiB (the chunk sweep has a sixth, at 4 streams)
sel(v) = strcol("version") eq v && column("chunk_mib") == 8
n = 0
plot seq with lines lw 2 dt 3 lc rgb "#7f7f7f" title sprintf("sequential, one stream: %.2f ms", seq), \
     ideal with lines lw 2 dt 2 lc rgb "#000000" title sprintf("ideal (duplex limit + fill): %.2f ms", ideal), \
     data using "streams":(sel("depth-first") ? (n = n + 1, n <= 5 ? column("ms") : NaN) : NaN) with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "depth-first", \
     data using "streams":(sel("breadth-first") ? column("ms") : NaN) with linespoints lw 2 pt 5 dt 4 lc rgb "#ff7f0e" title "breadth-first"
