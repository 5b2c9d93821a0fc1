# 08-reuse.gp - lab 08: the time to read 1 %, 10 % and 100 % of a large host array (in whole 128-byte lines) again and
# again, against how many times, for the three ways (copy everything, zero-copy, managed memory with a prefetch;
# yours solid, the kit's dashed); filled points measured, open points the explorer's model (the last measured point
# and more passes at the measured pass time, where a call would take too long). From the model beside the data: the
# reuse where zero-copy stops paying (reuse_cross_1pct, reuse_cross_10pct of NAME-model.csv), as vertical lines.
# Called by plots/render.sh with: data (the lab 08 explorer's CSV:
# sweep,way,impl,run_elems,fraction,reuse,array_bytes,read_bytes,ms_median,ms_min,ms_max,gbps,model; its model table
# read from beside it, see plots/08-fraction.gp), out, machine, fmt.
reset
set datafile separator comma
size_px = "900,1250"; size_in = "6in,8.3in"
load "plots/terminal.gpi"
set datafile missing NaN

# the model table beside the data (NAME.csv -> NAME-model.csv); without it no crossings are drawn
model = (data[strlen(data) - 3:] eq ".csv" ? data[1:strlen(data) - 4] : data) . "-model.csv"
have_model = system(sprintf("test -r '%s' && echo 1 || echo 0", model)) + 0
rc1 = NaN; rc10 = NaN; cfr = NaN
if (have_model) {
    stats model using (column("run_elems") == 32 ? (rc1 = column("reuse_cross_1pct"), \
        rc10 = column("reuse_cross_10pct"), cfr = column("cross_fr"), 1) : 1) nooutput
}
stats data using "array_bytes" nooutput
array = STATS_max
size_text(x) = x >= 1073741824 ? sprintf("%g GiB", x / 1073741824) : sprintf("%g MiB", x / 1048576)
# a column of one way's reuse rows (impl kit or yours) at fraction f, NaN on every other row; measured (m 0) or
# modelled (m 1) points only, or both (m -1)
near(x, f) = abs(x / f - 1) < 0.05
ms(w, i, f, c, m) = strcol("sweep") eq "reuse" && strcol("way") eq w && strcol("impl") eq i && \
    near(column("fraction"), f) && (m < 0 || column("model") == m) ? column(c) : NaN

set logscale xy
set xrange [0.8:130]
set xtics nomirror (1, 2, 5, 10, 20, 50, 100)
set ytics nomirror
set format y "%g"
set grid xtics ytics lc rgb "#dddddd"
set xlabel "times the same fraction is read (reuse, log scale)"
set ylabel "time, to the end of the work (ms, log scale)"
ways = "copied mapped managed"
names = '"copy everything" "zero-copy" "managed, prefetched"'
set style line 1 lc rgb "#1f77b4" lw 2.5 pt 7 ps 0.9
set style line 2 lc rgb "#d62728" lw 2.5 pt 5 ps 0.9
set style line 3 lc rgb "#2ca02c" lw 2.5 pt 9 ps 1.0
set style line 11 lc rgb "#1f77b4" lw 1.5 pt 7 ps 0.7 dt 2
set style line 12 lc rgb "#d62728" lw 1.5 pt 5 ps 0.7 dt 2
set style line 13 lc rgb "#2ca02c" lw 1.5 pt 9 ps 0.8 dt 2
# the open markers of the model's points, in each way's colour
set style line 21 lc rgb "#1f77b4" lw 1.5 pt 6 ps 1.1
set style line 22 lc rgb "#d62728" lw 1.5 pt 4 ps 1.1
set style line 23 lc rgb "#2ca02c" lw 1.5 pt 8 ps 1.2

set lmargin at screen 0.09
set rmargin at screen 0.66
set multiplot layout 3,1 title noenhanced sprintf("Reading part of a %s host array again and again, in whole lines (%s)", \
    size_text(array), machine)
do for [k = 1:3] {
    f = word("0.01 0.1 1", k) + 0
    x = k == 1 ? rc1 : (k == 2 ? rc10 : NaN)
    unset arrow
    unset label
    if (k == 1) {
        set key at screen 0.68, screen 0.93 left top box opaque noenhanced font ",10" spacing 1.15 samplen 3 Left reverse
    } else {
        unset key
    }
    if (k == 1) {
        set label "modelled: where a call would take\nover 200 ms, the last measured\npoint plus more passes at the\nmeasured time of a pass" \
            at screen 0.685, screen 0.74 left font ",10" tc rgb "#333333"
    }
    if (x == x && x > 0) {
        set arrow from first x, graph 0 to first x, graph 1 nohead lc rgb "#d62728" lw 1.5 dt 3
        lbl = sprintf("zero-copy = copy at reuse %.3g\n(fraction x reuse %.2g)", x, f * x)
        if (x > 20) {
            set label lbl at first x, graph 0.08 right offset -0.5, 0 font ",10" tc rgb "#d62728"
        } else {
            set label lbl at first x, graph 0.08 left offset 0.5, 0 font ",10" tc rgb "#d62728"
        }
    }
    set title noenhanced word("1 10 100", k) . " % of the array"
    plot for [m = 1:3] data using "reuse":(ms(word(ways, m), "yours", f, "ms_median", -1)) with lines ls m notitle, \
         for [m = 1:3] data using "reuse":(ms(word(ways, m), "yours", f, "ms_median", 0)) with points ls m notitle, \
         for [m = 1:3] data using "reuse":(ms(word(ways, m), "kit", f, "ms_median", -1)) with lines ls 10 + m notitle, \
         for [m = 1:3] data using "reuse":(ms(word(ways, m), "kit", f, "ms_median", 0)) with points ls 10 + m notitle, \
         for [m = 1:3] data using "reuse":(ms(word(ways, m), "yours", f, "ms_median", 1)) with points ls 20 + m notitle, \
         for [m = 1:3] data using "reuse":(ms(word(ways, m), "kit", f, "ms_median", 1)) with points ls 20 + m notitle, \
         for [m = 1:3] NaN with linespoints ls m title word(names, m) . " (yours)", \
         for [m = 1:3] NaN with linespoints ls 10 + m title word(names, m) . " (kit)", \
         NaN with points pt 7 ps 0.9 lc rgb "#333333" title "measured", \
         NaN with points pt 6 ps 1.1 lc rgb "#333333" title "modelled"
}
unset multiplot
