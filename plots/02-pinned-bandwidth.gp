# 02-pinned-bandwidth.gp - lab 02: bandwidth against size for pinned and pageable copies, both
# directions, under the PCIe link's line rate.
# Called by plots/render.sh with: data (the lab 02 explorer's CSV:
# kind,label,bytes,median_ms,min_ms,max_ms,gbps; the rows of kind "copy" here), out (file without extension),
# machine (title label), fmt ("svg", "png" or "pdf"), linkrate (GB/s per direction, 0 if unknown).
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"

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

gbps(label) = strcol("kind") eq "copy" && strcol("label") eq label ? column("gbps") : NaN
if (linkrate > 0) {
    set label 1 sprintf("PCIe line rate %.1f GB/s per direction", linkrate) at graph 0.98, first linkrate * 1.03 right tc rgb "#555555"
    set arrow 1 from graph 0, first linkrate to graph 1, first linkrate nohead ls 5
}
plot data using "bytes":(gbps("H2D pinned")) with linespoints ls 1 title "H2D, pinned", \
     data using "bytes":(gbps("D2H pinned")) with linespoints ls 2 title "D2H, pinned", \
     data using "bytes":(gbps("H2D pageable")) with linespoints ls 3 title "H2D, pageable", \
     data using "bytes":(gbps("D2H pageable")) with linespoints ls 4 title "D2H, pageable"
