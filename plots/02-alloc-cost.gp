# 02-alloc-cost.gp - lab 02: what it costs to get (and give back) host memory, against its size.
# Called by plots/render.sh with: data (the lab 02 explorer's CSV:
# kind,label,bytes,median_ms,min_ms,max_ms,gbps; the rows of kind "alloc" here), out, machine, fmt, linkrate.
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"

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
ms(label) = strcol("kind") eq "alloc" && strcol("label") eq label ? column("median_ms") : NaN
plot data using "bytes":(ms("malloc + touch")) with linespoints lw 2 pt 7 lc rgb "#2ca02c" title "malloc + write every page", \
     data using "bytes":(ms("lab_pinned_alloc")) with linespoints lw 2 pt 5 lc rgb "#d62728" title "cudaMallocHost (lab_pinned_alloc)", \
     data using "bytes":(ms("cudaHostRegister")) with linespoints lw 2 pt 9 lc rgb "#1f77b4" title "cudaHostRegister of touched memory", \
     data using "bytes":(ms("lab_pinned_free")) with linespoints lw 1.5 dt 2 pt 4 lc rgb "#d62728" title "cudaFreeHost (lab_pinned_free)", \
     data using "bytes":(ms("cudaHostUnregister")) with linespoints lw 1.5 dt 2 pt 8 lc rgb "#1f77b4" title "cudaHostUnregister"
