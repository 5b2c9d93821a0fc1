# 02-pinned-bandwidth.gp - lab 02: bandwidth against size for pinned and pageable copies, both
# directions, under the PCIe link's line rate.
# Called by grader/scripts/plots.sh with: data (CSV from the lab 02 explorer), out (file without
# extension), machine (title label), fmt ("svg", "png" or "pdf"), linkrate (GB/s per direction, 0 if unknown).
reset
set datafile separator comma
if (fmt eq "svg") { set terminal svg size 900,560 dynamic font "Helvetica,13" background "white" }
if (fmt eq "png") { set terminal pngcairo size 900,560 font "Helvetica,11" }
if (fmt eq "pdf") { set terminal pdfcairo size 6in,3.7in font "Helvetica,9" }
set output out.".".fmt

set title noenhanced sprintf("Pinned against pageable copies (%s)", machine)
set xlabel "copy size (bytes, log scale)"
set ylabel "bandwidth (GB/s = 10^9 bytes/s)" enhanced
set logscale x 2
set xrange [3000:400e6]
set xtics nomirror ("4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576, \
    "4 MiB" 4194304, "16 MiB" 16777216, "64 MiB" 67108864, "256 MiB" 268435456)
set ytics nomirror
set yrange [0:(linkrate > 0 ? linkrate * 1.12 : 70)]
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque noenhanced
set datafile missing NaN
set style line 1 lc rgb "#1f77b4" lw 2 pt 7 ps 0.8
set style line 2 lc rgb "#d62728" lw 2 pt 5 ps 0.8
set style line 3 lc rgb "#1f77b4" lw 1.5 pt 6 ps 0.8 dt 2
set style line 4 lc rgb "#d62728" lw 1.5 pt 4 ps 0.8 dt 2
set style line 5 lc rgb "#555555" lw 1.5 dt 3

sel(label) = strcol(1) eq "copy" && strcol(2) eq label
if (linkrate > 0) {
    set label 1 sprintf("PCIe line rate %.1f GB/s per direction", linkrate) at graph 0.98, first linkrate * 1.03 right tc rgb "#555555"
    set arrow 1 from graph 0, first linkrate to graph 1, first linkrate nohead ls 5
}
plot data using 3:(sel("H2D pinned") ? $7 : NaN) with linespoints ls 1 title "H2D, pinned", \
     data using 3:(sel("D2H pinned") ? $7 : NaN) with linespoints ls 2 title "D2H, pinned", \
     data using 3:(sel("H2D pageable") ? $7 : NaN) with linespoints ls 3 title "H2D, pageable", \
     data using 3:(sel("D2H pageable") ? $7 : NaN) with linespoints ls 4 title "D2H, pageable"
