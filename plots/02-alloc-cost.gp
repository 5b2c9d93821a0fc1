# 02-alloc-cost.gp - lab 02: what it costs to get (and give back) host memory, against its size.
# Called by grader/scripts/plots.sh with: data (CSV from the lab 02 explorer), out, machine, fmt, linkrate.
reset
set datafile separator comma
if (fmt eq "svg") { set terminal svg size 900,560 dynamic font "Helvetica,13" background "white" }
if (fmt eq "png") { set terminal pngcairo size 900,560 font "Helvetica,11" }
if (fmt eq "pdf") { set terminal pdfcairo size 6in,3.7in font "Helvetica,9" }
set output out.".".fmt

set title noenhanced sprintf("Allocation and pinning cost against size (%s)", machine)
set xlabel "buffer size (bytes, log scale)"
set ylabel "time (ms, log scale), median of 3"
set logscale xy
set xrange [0.8e6:1.4e9]
set xtics nomirror ("1 MiB" 1048576, "4 MiB" 4194304, "16 MiB" 16777216, "64 MiB" 67108864, \
    "256 MiB" 268435456, "1 GiB" 1073741824)
set ytics nomirror
set format y "%g"
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque noenhanced
set datafile missing NaN
sel(label) = strcol(1) eq "alloc" && strcol(2) eq label
plot data using 3:(sel("malloc + touch") ? $4 : NaN) with linespoints lw 2 pt 7 lc rgb "#2ca02c" title "malloc + write every page", \
     data using 3:(sel("lab_pinned_alloc") ? $4 : NaN) with linespoints lw 2 pt 5 lc rgb "#d62728" title "cudaMallocHost (lab_pinned_alloc)", \
     data using 3:(sel("cudaHostRegister") ? $4 : NaN) with linespoints lw 2 pt 9 lc rgb "#1f77b4" title "cudaHostRegister of touched memory", \
     data using 3:(sel("lab_pinned_free") ? $4 : NaN) with linespoints lw 1.5 dt 2 pt 4 lc rgb "#d62728" title "cudaFreeHost (lab_pinned_free)", \
     data using 3:(sel("cudaHostUnregister") ? $4 : NaN) with linespoints lw 1.5 dt 2 pt 8 lc rgb "#1f77b4" title "cudaHostUnregister"
