# 09-bandwidth.gp - lab 09: GPU to GPU, bandwidth against size, every way on one log-log chart: a peer copy with peer
# access on and without it (the driver stages it through the host), by hand through the host (the kit's serial way,
# the double-buffered one of the reference or yours, the kit's ideal overlap), both directions at once (in all),
# and for scale one pinned H2D and a copy on one GPU; lines at the NVLink rate a direction (two GPUs, as nvidia-smi
# reports the links) and the PCIe line rate. On one GPU the peer ways are not measured: a note says so.
# Called by plots/render.sh with: data (the lab 09 explorer's CSV:
# sweep,way,impl,src_dev,dst_dev,bytes,chunk_bytes,passes,ms_median,ms_min,ms_max,gbps; its model table read from
# beside it: gpus,src_dev,dst_dev,bytes,chunk_bytes,nvlink_links,nvlink_gbps_link,nvlink_gbps,...), out, machine,
# fmt, linkrate (GB/s a direction on paper; 0: unknown, no line).
reset
set datafile separator comma
size_px = "1160,600"; size_in = "7.5in,3.9in"
load "plots/terminal.gpi"

# the model table beside the data (NAME.csv -> NAME-model.csv): how many GPUs, which pair, the NVLink links (read
# before "missing NaN", and a rate only where there are links: a row with a missing figure would count as no row)
model = (data[strlen(data) - 3:] eq ".csv" ? data[1:strlen(data) - 4] : data) . "-model.csv"
gpus = 1; s0 = 0; d0 = 0; links = 0; per_link = NaN; nvlink = NaN; chunk = NaN
if (system(sprintf("test -r '%s' && echo 1 || echo 0", model)) + 0) {
    stats model using (gpus = column("gpus"), s0 = column("src_dev"), d0 = column("dst_dev"), \
        links = column("nvlink_links"), chunk = column("chunk_bytes"), \
        per_link = links > 0 ? column("nvlink_gbps_link") : NaN, nvlink = links * per_link, 1) nooutput
}
set datafile missing NaN
size_text(x) = x >= 1073741824 ? sprintf("%g GiB", x / 1073741824) : (x >= 1048576 ? sprintf("%g MiB", x / 1048576) \
    : sprintf("%g KiB", x / 1024))

# a way's rate on the rows of the size sweep (impl kit or yours), NaN on every other row; the peer copies from the
# model's source GPU only (the CSV has both directions)
one_way(w) = w eq "peer" || w eq "peer_off" ? column("src_dev") == s0 : 1
sel(w, i) = strcol("sweep") eq "size" && strcol("way") eq w && strcol("impl") eq i && one_way(w) ? column("gbps") : NaN
has(w, i) = sel(w, i) == sel(w, i) ? 1 : 0
n_peer = 0; n_off = 0; n_serial = 0; n_double = 0; n_ideal = 0; n_both = 0; n_h2d = 0; n_local = 0; xmax = 65536
stats data using (n_peer = n_peer + has("peer", "kit"), n_off = n_off + has("peer_off", "kit"), \
    n_serial = n_serial + has("serial", "kit"), n_double = n_double + has("double", "yours"), \
    n_ideal = n_ideal + has("ideal", "kit"), n_both = n_both + has("both", "kit"), n_h2d = n_h2d + has("h2d", "kit"), \
    n_local = n_local + has("local", "kit"), \
    xmax = strcol("sweep") eq "size" && column("bytes") > xmax ? column("bytes") : xmax, 1) nooutput

pair = gpus == 2 ? sprintf("GPU %d to GPU %d", s0, d0) : sprintf("one GPU: GPU %d to GPU %d", s0, d0)
set title noenhanced sprintf("GPU to GPU: bandwidth against size (%s, %s)", machine, pair)
set xlabel "bytes copied (log scale)"
set ylabel "GB/s (10^9 bytes/s, log scale)" noenhanced
set logscale xy
set xrange [45000:xmax * 1.6]
set xtics nomirror ("64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576, "4 MiB" 4194304, "16 MiB" 16777216, \
    "64 MiB" 67108864, "256 MiB" 268435456, "1 GiB" 1073741824, "4 GiB" 4294967296)
set yrange [1:6000]
set ytics nomirror
set format y "%g"
set grid xtics ytics lc rgb "#dddddd"
set key outside right top vertical Left reverse box noenhanced samplen 3 spacing 1.3
set style line 1 lc rgb "#2ca02c" lw 2.5 pt 7 ps 0.9             # peer access on
set style line 2 lc rgb "#d62728" lw 2.5 pt 5 ps 0.9             # peer access off
set style line 3 lc rgb "#8c564b" lw 2.5 pt 9 ps 1.0             # serial through the host
set style line 4 lc rgb "#1f77b4" lw 2.5 pt 11 ps 1.0            # double-buffered
set style line 5 lc rgb "#1f77b4" lw 1.5 dt 3 pt 6 ps 0.8        # ideal overlap
set style line 6 lc rgb "#2ca02c" lw 1.5 dt 2 pt 6 ps 0.8        # both at once
set style line 7 lc rgb "#7f7f7f" lw 1.5 dt 2 pt 4 ps 0.8        # H2D, for scale
set style line 8 lc rgb "#000000" lw 1.5 dt 4 pt 8 ps 0.8        # a copy on one GPU, for scale

# the ceilings: NVLink a direction (two GPUs, links as nvidia-smi reports them) and the PCIe line rate
if (gpus == 2 && nvlink == nvlink) {
    set arrow from graph 0, first nvlink to graph 1, first nvlink nohead lw 1.2 dt 2 lc rgb "#2ca02c" back
    set label noenhanced sprintf("NVLink, %d x %.1f: %.0f GB/s a direction", links, per_link, nvlink) \
        at graph 0.01, first nvlink left offset 0, 0.7 font ",10" tc rgb "#2ca02c" front
}
if (linkrate > 0) {
    set arrow from graph 0, first linkrate to graph 1, first linkrate nohead lw 1.2 dt 2 lc rgb "#000000" back
    set label sprintf("PCIe line rate: %.1f GB/s a direction", linkrate) at graph 0.99, first linkrate right \
        offset 0, 0.7 font ",10" front
}

# beside the key: the chunk of the copies through the host, and what was not measured
peer_missing = (n_peer ? "" : "\n  peer copy, access on") . (n_off ? "" : "\n  peer copy, access off") . \
    (n_both ? "" : "\n  both directions at once")
missing = strlen(peer_missing) ? (gpus == 2 ? "not measured:" : "not drawn, they need 2 GPUs:") . peer_missing : ""
if (n_double == 0) {
    missing = missing . (strlen(missing) ? "\n" : "") . "not drawn: double-buffered\n  (lab_stage_copy did not run)"
}
if (chunk == chunk) {
    missing = sprintf("through the host: chunks of %s", size_text(chunk)) . (strlen(missing) ? "\n\n" : "") . missing
}
set label noenhanced missing at screen 0.705, screen 0.6 left font ",10" tc rgb "#444444" front

# the plot, of the ways that have points
cmd = ""
part(s) = cmd . (strlen(cmd) ? ", " : "") . s
if (n_peer) { cmd = part('data using "bytes":(sel("peer", "kit")) with linespoints ls 1 title "peer copy, access on"') }
if (n_off) { cmd = part('data using "bytes":(sel("peer_off", "kit")) with linespoints ls 2 title "peer copy, access off (driver-staged)"') }
if (n_serial) { cmd = part('data using "bytes":(sel("serial", "kit")) with linespoints ls 3 title "through the host, serial (one buffer)"') }
if (n_double) { cmd = part('data using "bytes":(sel("double", "yours")) with linespoints ls 4 title "through the host, double-buffered"') }
if (n_ideal) { cmd = part('data using "bytes":(sel("ideal", "kit")) with linespoints ls 5 title "through the host, ideal overlap"') }
if (n_both) { cmd = part('data using "bytes":(sel("both", "kit")) with linespoints ls 6 title "peer, both directions at once (in all)"') }
if (n_h2d) { cmd = part('data using "bytes":(sel("h2d", "kit")) with linespoints ls 7 title "pinned H2D (for scale)"') }
if (n_local) { cmd = part('data using "bytes":(sel("local", "kit")) with linespoints ls 8 title "a copy on one GPU (for scale)"') }
if (strlen(cmd) == 0) { cmd = 'NaN notitle' }
eval "plot " . cmd
