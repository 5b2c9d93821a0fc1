# sweep.gp - the report page's lab 01 chart: the student's pageable sweep, both directions, beside the reference
# solution's of the same GPU model, bandwidth against size as plots/01-pageable-bandwidth.gp draws it.
# Drawn by grader/report/report.py with: you (the grading's data/sweep.csv), ref (refdata/01-pageable-copy/h100.csv
# or h200.csv, or "" when the kit has none for this GPU), machine (the GPU's name), out, fmt. Both CSVs:
# direction,bytes,median_ms,min_ms,max_ms,gbps.
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"

set title noenhanced sprintf("Your pageable copies%s: bandwidth against size (%s)", \
    ref ne "" ? ", beside the reference solution's" : "", machine)
set xlabel "copy size (bytes, log scale)"
set ylabel "bandwidth (GB/s = 10^9 bytes/s)" enhanced
set logscale x 2
set xrange [3000:400e6]
set xtics nomirror ("4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576, \
    "4 MiB" 4194304, "16 MiB" 16777216, "64 MiB" 67108864, "256 MiB" 268435456)
set ytics nomirror
set yrange [0:*]
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque noenhanced
set style line 1 lc rgb "#1f77b4" lw 2.5 pt 7 ps 0.8
set style line 2 lc rgb "#d62728" lw 2.5 pt 5 ps 0.8
set style line 3 lc rgb "#1f77b4" lw 1.2 dt 2 pt 6 ps 0.7
set style line 4 lc rgb "#d62728" lw 1.2 dt 2 pt 4 ps 0.7
dir(d, c) = strcol("direction") eq d ? column(c) : 1/0

if (ref ne "") {
    plot you using "bytes":(dir("H2D", "gbps")) with linespoints ls 1 title "yours: host to device (H2D)", \
         you using "bytes":(dir("D2H", "gbps")) with linespoints ls 2 title "yours: device to host (D2H)", \
         ref using "bytes":(dir("H2D", "gbps")) with linespoints ls 3 title "reference: H2D", \
         ref using "bytes":(dir("D2H", "gbps")) with linespoints ls 4 title "reference: D2H"
} else {
    plot you using "bytes":(dir("H2D", "gbps")) with linespoints ls 1 title "yours: host to device (H2D)", \
         you using "bytes":(dir("D2H", "gbps")) with linespoints ls 2 title "yours: device to host (D2H)"
}
