# 01-pageable-bandwidth.gp - lab 01: pageable copy bandwidth against size, both directions,
# with the fitted model T(n) = L + n/B drawn through the points.
# Called by plots/render.sh with: data (the lab 01 explorer's CSV:
# direction,bytes,median_ms,min_ms,max_ms,gbps), out (file without extension), machine (a label for the title),
# fmt ("svg", "png" or "pdf").
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"

# the model, in ms for n bytes with L in us and B in GB/s, fitted on relative error (weights 1/T^2)
T(n, L, B) = L * 1e-3 + n * 1e-6 / B
th(n) = T(n, Lh, Bh)
td(n) = T(n, Ld, Bd)
Lh = 10; Bh = 10; Ld = 10; Bd = 10
set fit quiet errorvariables nolog
# a column of one direction's rows (1/0 on the other's); the rate of its bytes in the time of column c
dir(d, c) = strcol("direction") eq d ? column(c) : 1/0
rate(d, c) = strcol("direction") eq d ? column("bytes") * 1e-6 / column(c) : 1/0
fit th(x) data using "bytes":(dir("H2D", "median_ms")):(dir("H2D", "median_ms")) yerror via Lh, Bh
fit td(x) data using "bytes":(dir("D2H", "median_ms")):(dir("D2H", "median_ms")) yerror via Ld, Bd

set title noenhanced sprintf("Pageable copies: bandwidth against size (%s)", machine)
set xlabel "copy size (bytes, log scale)"
set ylabel "bandwidth (GB/s = 10^9 bytes/s)" enhanced
set logscale x 2
set xrange [3000:400e6]
set xtics nomirror ("4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576, \
    "4 MiB" 4194304, "16 MiB" 16777216, "64 MiB" 67108864, "256 MiB" 268435456)
set ytics nomirror
set yrange [0:*]
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque
set style line 1 lc rgb "#1f77b4" lw 2 pt 7 ps 0.8
set style line 2 lc rgb "#d62728" lw 2 pt 5 ps 0.8 dt 1
set style line 3 lc rgb "#1f77b4" lw 1.5 dt 2
set style line 4 lc rgb "#d62728" lw 1.5 dt 4
set samples 400

plot data using "bytes":(dir("H2D", "gbps")):(rate("H2D", "max_ms")):(rate("H2D", "min_ms")) \
        with yerrorlines ls 1 title "host to device (H2D), median and min-max", \
     data using "bytes":(dir("D2H", "gbps")):(rate("D2H", "max_ms")):(rate("D2H", "min_ms")) \
        with yerrorlines ls 2 title "device to host (D2H), median and min-max", \
     [4096:*] x * 1e-6 / th(x) ls 3 title sprintf("H2D fit: L = %.1f us, B = %.1f GB/s", Lh, Bh), \
     [4096:*] x * 1e-6 / td(x) ls 4 title sprintf("D2H fit: L = %.1f us, B = %.1f GB/s", Ld, Bd)
