# 07-sizes.gp - lab 07: the time of one call that moves 1024 pieces, against the piece size, for the kit's loop of
# copies, the batch calls and the packed paths; one panel per direction. From the model beside the data (L, B and
# the break-even of NAME-model.csv): the loop's n x (L + s/B), one copy of all the bytes (L + n s/B), and where
# packing stops paying, with the pool's threads and with one memcpy thread.
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
L(d) = 0; B(d) = 1; pb(d) = NaN; pbm(d) = NaN; threads = 0
if (have_model) {
    stats model using (strcol("direction") eq "H2D" ? (Lh = column("latency_us"), Bh = column("link_gbps"), \
        pbh = column("pays_below_bytes"), pbmh = column("pays_below_memcpy_bytes"), \
        threads = column("pack_threads"), Ph = column("pack_gbps"), 1) : 1) nooutput
    stats model using (strcol("direction") eq "D2H" ? (Ld = column("latency_us"), Bd = column("link_gbps"), \
        pbd = column("pays_below_bytes"), pbmd = column("pays_below_memcpy_bytes"), Pd = column("pack_gbps"), 1) : 1) nooutput
    L(d) = d eq "H2D" ? Lh : Ld
    B(d) = d eq "H2D" ? Bh : Bd
    pb(d) = d eq "H2D" ? pbh : pbd
    pbm(d) = d eq "H2D" ? pbmh : pbmd
    P(d) = d eq "H2D" ? Ph : Pd
}
stats data using (strcol("sweep") eq "size" ? column("pieces") : NaN) nooutput
n = STATS_max

# the model in ms for pieces of x bytes, L in us, B in GB/s
loop_ms(x, d) = n * (L(d) * 1e-3 + x * 1e-6 / B(d))
one_ms(x, d) = L(d) * 1e-3 + n * x * 1e-6 / B(d)
size_text(x) = x < 1024 ? sprintf("%.0f B", x) : (x < 1048576 ? sprintf("%.0f KiB", x / 1024) : \
    sprintf("%.1f MiB", x / 1048576))
# a median (or min, max) of one method's rows in direction d, NaN on every other row
ms(d, m, c) = strcol("sweep") eq "size" && strcol("direction") eq d && strcol("method") eq m ? column(c) : NaN

set logscale xy
set xrange [45:1.5e6]
set xtics nomirror ("64 B" 64, "256 B" 256, "1 KiB" 1024, "4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, \
    "256 KiB" 262144, "1 MiB" 1048576)
set ytics nomirror
set format y "%g"
set mxtics 2
set grid xtics ytics lc rgb "#dddddd"
set xlabel "piece size (log scale)"
set ylabel "time per call, to the end of its copies (ms, log scale)"
set samples 200
# the methods as the CSV names them, and as the key names them (words of one string each)
methods = "loop kit-batch batch kit-packed packed"
names = '"loop (the kit)" "batch (the kit)" "batch (lab_*_batch)" "packed, 1 memcpy thread (the kit)" "packed (lab_*_packed)"'
set style line 1 lc rgb "#7f7f7f" lw 2 pt 13 ps 0.8
set style line 2 lc rgb "#fdae6b" lw 2 pt 4 ps 0.8 dt 2
set style line 3 lc rgb "#e6550d" lw 2 pt 5 ps 0.8
set style line 4 lc rgb "#9ecae1" lw 2 pt 6 ps 0.8 dt 2
set style line 5 lc rgb "#1f77b4" lw 2 pt 7 ps 0.8
set style line 6 lc rgb "#000000" lw 2 dt 3
set style line 7 lc rgb "#333333" lw 1.5 dt 4

set multiplot layout 2,1 title noenhanced sprintf("%d pieces per call, against the piece size (%s)", n, machine)
do for [k = 1:2] {
    d = k == 1 ? "H2D" : "D2H"
    set title noenhanced (k == 1 ? "to the GPU (H2D)" : "to the host (D2H)")
    unset arrow
    unset label
    if (k == 1) { set key top left box opaque noenhanced font ",10" spacing 1.1 } else { unset key }
    if (have_model) {
        # where packing stops paying, from lab_pack_pays_below (a vertical line), or a note when it always pays
        if (pb(d) > 0 && pb(d) < 1.5e6) {
            set arrow from first pb(d), graph 0 to first pb(d), graph 1 nohead lc rgb "#1f77b4" lw 1.5 dt 3
            set label sprintf("packing pays below %s\n(%d threads, %.0f GB/s)", size_text(pb(d)), threads, P(d)) \
                at first pb(d), graph 0.96 right offset -0.5, 0 font ",10" tc rgb "#1f77b4"
        }
        if (pb(d) > 1.5e6) {
            set label sprintf("packing pays at every size here:\n%d threads pack at %.0f GB/s, faster than the link", \
                threads, P(d)) at graph 0.98, graph 0.94 right font ",10" tc rgb "#1f77b4"
        }
        if (pbm(d) > 0 && pbm(d) < 1.5e6) {
            set arrow from first pbm(d), graph 0 to first pbm(d), graph 1 nohead lc rgb "#9ecae1" lw 1.5 dt 3
            set label sprintf("one memcpy thread:\nbelow %s", size_text(pbm(d))) \
                at first pbm(d), graph 0.12 left offset 0.5, 0 font ",10" tc rgb "#6baed6"
        }
        set title noenhanced sprintf("%s: L = %.2f us a copy, B = %.1f GB/s", (k == 1 ? "to the GPU (H2D)" : \
            "to the host (D2H)"), L(d), B(d))
        plot for [m = 1:5] data using "piece_bytes":(ms(d, word(methods, m), "ms_median")):(ms(d, word(methods, m), "ms_min")):(ms(d, word(methods, m), "ms_max")) \
                with yerrorlines ls m title word(names, m), \
             [64:1048576] loop_ms(x, d) ls 6 title "model of the loop: n (L + s/B)", \
             [64:1048576] one_ms(x, d) ls 7 title "model of one copy of it all: L + n s/B"
    } else {
        plot for [m = 1:5] data using "piece_bytes":(ms(d, word(methods, m), "ms_median")):(ms(d, word(methods, m), "ms_min")):(ms(d, word(methods, m), "ms_max")) \
                with yerrorlines ls m title word(names, m)
    }
}
unset multiplot
