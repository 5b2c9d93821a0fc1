# 08-fraction.gp - lab 08: the time to read a fraction of a large host array once, against the fraction, for the three
# ways (copy everything, zero-copy, managed memory with a prefetch; yours solid, the kit's dashed) and, thin, the
# kit's managed memory read-mostly, by page faults, preferred on the host, and pageable memory where the GPU can read
# it; one panel for whole 128-byte lines (runs of 32 elements), one for one element a line (runs of 1). From the model
# beside the data: where the ways cross (cross_* of NAME-model.csv), as vertical lines.
# Called by plots/render.sh with: data (the lab 08 explorer's CSV:
# sweep,way,impl,run_elems,fraction,reuse,array_bytes,read_bytes,ms_median,ms_min,ms_max,gbps,model; its model table
# read from beside it: run_elems,array_bytes,l2_bytes,link_gbps,device_copy_gbps,device_read_gbps,mapped_gbps,
# mapped_dense_gbps,prefetch_gbps,prefetch_back_gbps,faults_gbps,pageable_gbps,cross_mapped_copied,
# cross_managed_copied,cross_mapped_managed,cross_fr,reuse_cross_1pct,reuse_cross_10pct,rm_write_us), out, machine,
# fmt.
reset
set datafile separator comma
size_px = "900,1080"; size_in = "6in,7.2in"
load "plots/terminal.gpi"
set datafile missing NaN

# the model table beside the data (NAME.csv -> NAME-model.csv); without it no crossings are drawn
model = (data[strlen(data) - 3:] eq ".csv" ? data[1:strlen(data) - 4] : data) . "-model.csv"
have_model = system(sprintf("test -r '%s' && echo 1 || echo 0", model)) + 0
c1_1 = NaN; c2_1 = NaN; c3_1 = NaN; c1_32 = NaN; c2_32 = NaN; c3_32 = NaN
if (have_model) {
    stats model using (column("run_elems") == 1 ? (c1_1 = column("cross_mapped_copied"), \
        c2_1 = column("cross_managed_copied"), c3_1 = column("cross_mapped_managed"), 1) : 1) nooutput
    stats model using (column("run_elems") == 32 ? (c1_32 = column("cross_mapped_copied"), \
        c2_32 = column("cross_managed_copied"), c3_32 = column("cross_mapped_managed"), 1) : 1) nooutput
}
stats data using "array_bytes" nooutput
array = STATS_max
size_text(x) = x >= 1073741824 ? sprintf("%g GiB", x / 1073741824) : sprintf("%g MiB", x / 1048576)
pct(x) = x >= 0.1 ? sprintf("%.0f %%", 100 * x) : (x >= 0.01 ? sprintf("%.1f %%", 100 * x) : sprintf("%.2f %%", 100 * x))
# a column of one way's rows at reuse 1 (impl: kit or yours) in runs of r elements, NaN on every other row
ms(w, i, r, c) = strcol("sweep") eq "fraction" && strcol("way") eq w && strcol("impl") eq i && \
    column("run_elems") == r ? column(c) : NaN

set logscale xy
set xrange [0.0007:1.45]
set xtics nomirror ("0.1 %%" 0.001, "0.2 %%" 0.002, "0.5 %%" 0.005, "1 %%" 0.01, "2 %%" 0.02, "5 %%" 0.05, \
    "10 %%" 0.1, "20 %%" 0.2, "50 %%" 0.5, "100 %%" 1)
set ytics nomirror
set format y "%g"
set grid xtics ytics lc rgb "#dddddd"
set xlabel "fraction of the array read (log scale)"
set ylabel "time to read it once, to the end of the work (ms, log scale)"
# the three ways, yours (solid) and the kit's (dashed), and the kit's other ways (thin)
ways = "copied mapped managed"
names = '"copy everything" "zero-copy" "managed, prefetched"'
thin = "managed-rm managed-faults managed-host pageable"
thin_names = '"managed, read-mostly, prefetched (kit)" "managed, page faults (kit)" "managed, preferred on the host (kit)" "pageable: malloc, read by the GPU (kit)"'
set style line 1 lc rgb "#1f77b4" lw 2.5 pt 7 ps 0.8
set style line 2 lc rgb "#d62728" lw 2.5 pt 5 ps 0.8
set style line 3 lc rgb "#2ca02c" lw 2.5 pt 9 ps 0.9
set style line 11 lc rgb "#1f77b4" lw 1.5 pt 6 ps 0.8 dt 2
set style line 12 lc rgb "#d62728" lw 1.5 pt 4 ps 0.8 dt 2
set style line 13 lc rgb "#2ca02c" lw 1.5 pt 8 ps 0.9 dt 2
set style line 21 lc rgb "#98df8a" lw 1.2 pt 1 ps 0.7
set style line 22 lc rgb "#9467bd" lw 1.2 pt 2 ps 0.7
set style line 23 lc rgb "#ff9896" lw 1.2 pt 3 ps 0.7
set style line 24 lc rgb "#8c564b" lw 1.2 pt 12 ps 0.8

# which series the data has (a key entry each, in the lower panel, whose right half is always empty: one element a
# line reads at most 1/32 of the array)
array has_yours[3]; array has_kit[3]; array has_thin[4]
do for [m = 1:3] {
    cy = 0; ck = 0
    stats data using (strcol("sweep") eq "fraction" && strcol("way") eq word(ways, m) ? \
        (strcol("impl") eq "yours" ? cy = cy + 1 : ck = ck + 1) : 0, 1) nooutput
    has_yours[m] = cy; has_kit[m] = ck
}
do for [m = 1:4] {
    ct = 0
    stats data using (ct = ct + (strcol("sweep") eq "fraction" && strcol("way") eq word(thin, m)), 1) nooutput
    has_thin[m] = ct
}

set multiplot layout 2,1 title noenhanced sprintf("Reading a fraction of a %s host array once (%s)", size_text(array), \
    machine)
do for [k = 1:2] {
    r = k == 1 ? 32 : 1
    x1 = k == 1 ? c1_32 : c1_1; x2 = k == 1 ? c2_32 : c2_1; x3 = k == 1 ? c3_32 : c3_1
    unset arrow
    unset label
    if (k == 1) {
        set title noenhanced "in whole 128-byte lines (runs of 32 elements)"
        unset key
    } else {
        set title noenhanced "one element a 128-byte line (runs of 1): zero-copy fetches a sector to use 4 bytes"
        set key top right box opaque noenhanced font ",10" spacing 1.1 samplen 3 Left reverse
    }
    do for [c = 1:3] {
        x = c == 1 ? x1 : (c == 2 ? x2 : x3)
        if (x == x && x > 0) {
            lbl = sprintf("%s\nat %s", word('"zero-copy = copy" "managed = copy" "zero-copy = managed"', c), pct(x))
            colour = word("#d62728 #2ca02c #555555", c)
            y = word("0.07 0.93 0.22", c) + 0
            set arrow from first x, graph 0 to first x, graph 1 nohead lc rgb colour lw 1.5 dt 3
            if (x > 0.25) {
                set label lbl at first x, graph y right offset -0.5, 0 font ",10" tc rgb colour
            } else {
                set label lbl at first x, graph y left offset 0.5, 0 font ",10" tc rgb colour
            }
        }
    }
    plot for [m = 1:3] data using "fraction":(ms(word(ways, m), "yours", r, "ms_median")):(ms(word(ways, m), "yours", r, "ms_min")):(ms(word(ways, m), "yours", r, "ms_max")) \
            with yerrorlines ls m notitle, \
         for [m = 1:3] data using "fraction":(ms(word(ways, m), "kit", r, "ms_median")) with linespoints ls 10 + m notitle, \
         for [m = 1:4] data using "fraction":(ms(word(thin, m), "kit", r, "ms_median")) with linespoints ls 20 + m notitle, \
         for [m = 1:3] NaN with linespoints ls m title (k == 2 && has_yours[m] ? word(names, m) . " (yours)" : ""), \
         for [m = 1:3] NaN with linespoints ls 10 + m title (k == 2 && has_kit[m] ? word(names, m) . " (kit)" : ""), \
         for [m = 1:4] NaN with linespoints ls 20 + m title (k == 2 && has_thin[m] ? word(thin_names, m) : "")
}
unset multiplot
