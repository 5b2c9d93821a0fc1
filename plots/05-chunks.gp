# 05-chunks.gp - lab 05: time against the chunk size (4 streams, depth-first), with the sequential time and
# the ideal for each chunk size (read back from the row's efficiency, as in 05-streams.gp).
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
set title noenhanced sprintf("Time against the chunk size, 4 streams, depth-first (%s)", machine)
set xlabel "chunk size (MiB, log scale)"
set ylabel "time for the whole array (ms)"
set logscale x 2
set xrange [0.8:40]
set xtics nomirror ("1 MiB" 1, "2 MiB" 2, "4 MiB" 4, "8 MiB" 8, "16 MiB" 16, "32 MiB" 32)
set ytics nomirror
set yrange [0:seq * 1.15]
set grid xtics ytics lc rgb "#dddddd"
set key top right box opaque noenhanced
# the chunk sweep is the last six depth-first rows (the first five are the stream sweep)
n = 0
m = 0
sel(v) = strcol("version") eq v
plot seq with lines lw 2 dt 3 lc rgb "#7f7f7f" title sprintf("sequential, one stream: %.2f ms", seq), \
     data using "chunk_mib":(sel("depth-first") ? (m = m + 1, m > 5 ? ideal(column("ms"), column("efficiency")) : NaN) : NaN) with linespoints lw 2 dt 2 pt 6 lc rgb "#000000" title "ideal (duplex limit + fill)", \
     data using "chunk_mib":(sel("depth-first") ? (n = n + 1, n > 5 ? column("ms") : NaN) : NaN) with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "4 streams, depth-first"
