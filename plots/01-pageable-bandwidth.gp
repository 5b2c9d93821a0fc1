# 01-pageable-bandwidth.gp - lab 01: pageable copy bandwidth against size, both directions,
# with the fitted model T(n) = L + n/B drawn through the points.
# Called by grader/scripts/plots.sh with: data (CSV from the lab 01 explorer), out (file
# without extension), machine (a label for the title), fmt ("svg", "png" or "pdf").
reset
set datafile separator comma
if (fmt eq "svg") { set terminal svg size 900,560 dynamic font "Helvetica,13" background "white" }
if (fmt eq "png") { set terminal pngcairo size 900,560 font "Helvetica,11" }
if (fmt eq "pdf") { set terminal pdfcairo size 6in,3.7in font "Helvetica,9" }
set output out.".".fmt

# the model, in ms for n bytes with L in us and B in GB/s, fitted on relative error (weights 1/T^2)
T(n, L, B) = L * 1e-3 + n * 1e-6 / B
th(n) = T(n, Lh, Bh)
td(n) = T(n, Ld, Bd)
Lh = 10; Bh = 10; Ld = 10; Bd = 10
set fit quiet errorvariables nolog
h2d(col) = strcol(1) eq "H2D" ? column(col) : 1/0
d2h(col) = strcol(1) eq "D2H" ? column(col) : 1/0
fit th(x) data using 2:(h2d(3)):(h2d(3)) yerror via Lh, Bh
fit td(x) data using 2:(d2h(3)):(d2h(3)) yerror via Ld, Bd

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

plot data using 2:(strcol(1) eq "H2D" ? $6 : 1/0):(strcol(1) eq "H2D" ? $2 * 1e-6 / $5 : 1/0):(strcol(1) eq "H2D" ? $2 * 1e-6 / $4 : 1/0) \
        with yerrorlines ls 1 title "host to device (H2D), median and min-max", \
     data using 2:(strcol(1) eq "D2H" ? $6 : 1/0):(strcol(1) eq "D2H" ? $2 * 1e-6 / $5 : 1/0):(strcol(1) eq "D2H" ? $2 * 1e-6 / $4 : 1/0) \
        with yerrorlines ls 2 title "device to host (D2H), median and min-max", \
     [4096:*] x * 1e-6 / th(x) ls 3 title sprintf("H2D fit: L = %.1f us, B = %.1f GB/s", Lh, Bh), \
     [4096:*] x * 1e-6 / td(x) ls 4 title sprintf("D2H fit: L = %.1f us, B = %.1f GB/s", Ld, Bd)
