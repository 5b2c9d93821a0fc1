# 07-counts.gp - lab 07: the time of one call against the number of 4 KiB pieces it moves, for the kit's loop of
# copies, the batch calls and the packed paths; one panel per direction. From the model beside the data (L and B of
# NAME-model.csv): the loop's n x (L + s/B) and one copy of all the bytes, L + n s/B.
# Called by plots/render.sh with: data (the lab 07 explorer's CSV:
# sweep,direction,method,pieces,piece_bytes,ms_median,ms_min,ms_max,gbps; its model table read from beside it:
# direction,latency_us,link_gbps,lone_copy_us,pack_threads,pack_gbps,memcpy_gbps,pays_below_bytes,
# pays_below_memcpy_bytes,check_ratio), out, machine, fmt.
reset
set datafile separator comma
size_px = "900,1000"; size_in = "6in,6.6in"
load "plots/terminal.gpi"
set datafile missing NaN

# the model table beside the data (NAME.csv -> NAME-model.csv); without it the measured lines alone
model = (data[strlen(data) - 3:] eq ".csv" ? data[1:strlen(data) - 4] : data) . "-model.csv"
have_model = system(sprintf("test -r '%s' && echo 1 || echo 0", model)) + 0
L(d) = 0; B(d) = 1
if (have_model) {
    stats model using (strcol("direction") eq "H2D" ? (Lh = column("latency_us"), Bh = column("link_gbps"), 1) : 1) nooutput
    stats model using (strcol("direction") eq "D2H" ? (Ld = column("latency_us"), Bd = column("link_gbps"), 1) : 1) nooutput
    L(d) = d eq "H2D" ? Lh : Ld
    B(d) = d eq "H2D" ? Bh : Bd
}
stats data using (strcol("sweep") eq "count" ? column("piece_bytes") : NaN) nooutput
s = STATS_max

# the model in ms for x pieces of s bytes, L in us, B in GB/s
loop_ms(x, d) = x * (L(d) * 1e-3 + s * 1e-6 / B(d))
one_ms(x, d) = L(d) * 1e-3 + x * s * 1e-6 / B(d)
# a median (or min, max) of one method's rows in direction d, NaN on every other row
ms(d, m, c) = strcol("sweep") eq "count" && strcol("direction") eq d && strcol("method") eq m ? column(c) : NaN
# the methods as the CSV names them, and as the key names them (words of one string each)
methods = "loop kit-batch batch kit-packed packed"
names = '"loop (the kit)" "batch (the kit)" "batch (lab_*_batch)" "packed, 1 memcpy thread (the kit)" "packed (lab_*_packed)"'

set logscale xy 2
set logscale y 10
set xrange [0.7:6000]
set xtics nomirror (1, 4, 16, 64, 256, 1024, 4096)
set ytics nomirror
set format y "%g"
set grid xtics ytics lc rgb "#dddddd"
set xlabel sprintf("pieces of %.0f KiB in one call (log scale)", s / 1024)
set ylabel "time per call, to the end of its copies (ms, log scale)"
set samples 200
set style line 1 lc rgb "#7f7f7f" lw 2 pt 13 ps 0.8
set style line 2 lc rgb "#fdae6b" lw 2 pt 4 ps 0.8 dt 2
set style line 3 lc rgb "#e6550d" lw 2 pt 5 ps 0.8
set style line 4 lc rgb "#9ecae1" lw 2 pt 6 ps 0.8 dt 2
set style line 5 lc rgb "#1f77b4" lw 2 pt 7 ps 0.8
set style line 6 lc rgb "#000000" lw 2 dt 3
set style line 7 lc rgb "#333333" lw 1.5 dt 4

set multiplot layout 2,1 title noenhanced sprintf("Pieces of %.0f KiB, against how many one call moves (%s)", s / 1024, machine)
do for [k = 1:2] {
    d = k == 1 ? "H2D" : "D2H"
    where = k == 1 ? "to the GPU (H2D)" : "to the host (D2H)"
    if (k == 1) { set key top left box opaque noenhanced font ",10" spacing 1.1 } else { unset key }
    if (have_model) {
        set title noenhanced sprintf("%s: L = %.2f us a copy, B = %.1f GB/s", where, L(d), B(d))
        plot for [m = 1:5] data using "pieces":(ms(d, word(methods, m), "ms_median")):(ms(d, word(methods, m), "ms_min")):(ms(d, word(methods, m), "ms_max")) \
                with yerrorlines ls m title word(names, m), \
             [1:4096] loop_ms(x, d) ls 6 title "model of the loop: n (L + s/B)", \
             [1:4096] one_ms(x, d) ls 7 title "model of one copy of it all: L + n s/B"
    } else {
        set title noenhanced where
        plot for [m = 1:5] data using "pieces":(ms(d, word(methods, m), "ms_median")):(ms(d, word(methods, m), "ms_min")):(ms(d, word(methods, m), "ms_max")) \
                with yerrorlines ls m title word(names, m)
    }
}
unset multiplot
