# 08-bandwidth.gp - lab 08: the machine's rates behind every other lab 08 chart, as bars on a log scale: device memory
# (a copy on the GPU, and a gather pass reading it), the link (a pinned copy), zero-copy (1/32 of the array in whole
# 128-byte lines and one element a line, useful bytes, and all of it), managed memory (a prefetch there, one back, a
# pass by page faults with the host's read after), and pageable memory read by the GPU where it can; a line at the
# PCIe line rate. All from the model table beside the data (NAME-model.csv), measured with the kit's code.
# Called by plots/render.sh with: data (the lab 08 explorer's CSV; its model table read from beside it:
# run_elems,array_bytes,l2_bytes,link_gbps,device_copy_gbps,device_read_gbps,mapped_gbps,mapped_dense_gbps,
# prefetch_gbps,prefetch_back_gbps,faults_gbps,pageable_gbps,...), out, machine, fmt, linkrate (GB/s a direction on
# paper; 0: unknown, no line).
reset
set datafile separator comma
size_px = "900,560"; size_in = "6in,3.7in"
load "plots/terminal.gpi"
set datafile missing NaN

model = (data[strlen(data) - 3:] eq ".csv" ? data[1:strlen(data) - 4] : data) . "-model.csv"
if (system(sprintf("test -r '%s' && echo 1 || echo 0", model)) + 0 == 0) {
    # nothing to draw: the rates are in the explorer's model table, which is not beside the data
    set title noenhanced sprintf("The machine's rates (%s)", machine)
    set label noenhanced sprintf("no %s beside the data:\nthe explorer writes the rates there (--csv NAME.csv)", \
        system(sprintf("basename '%s'", model))) at graph 0.5, graph 0.5 center
    unset tics
    unset border
    plot [0:1] [0:1] NaN notitle
    exit
}
zc1 = NaN; zc32 = NaN
stats model using (column("run_elems") == 1 ? (zc1 = column("mapped_gbps"), 1) : 1) nooutput
stats model using (column("run_elems") == 32 ? (zc32 = column("mapped_gbps"), link = column("link_gbps"), \
    dcopy = column("device_copy_gbps"), dread = column("device_read_gbps"), dense = column("mapped_dense_gbps"), \
    pf = column("prefetch_gbps"), pfb = column("prefetch_back_gbps"), faults = column("faults_gbps"), \
    pageable = column("pageable_gbps"), array = column("array_bytes"), 1) : 1) nooutput
size_text(x) = x >= 1073741824 ? sprintf("%g GiB", x / 1073741824) : sprintf("%g MiB", x / 1048576)

# the bars: name, GB/s, group (1 device memory, 2 the link, 3 zero-copy, 4 managed, 5 pageable)
set print $bars
print sprintf('"device\ncopy",%.6g,1', dcopy)
print sprintf('"device\ngather",%.6g,1', dread)
print sprintf('"link\ncopy",%.6g,2', link)
print sprintf('"zero-copy\nlines",%.6g,3', zc32)
print sprintf('"zero-copy\n1 a line",%.6g,3', zc1)
print sprintf('"zero-copy\nall",%.6g,3', dense)
print sprintf('"managed\nprefetch",%.6g,4', pf)
print sprintf('"managed\nback",%.6g,4', pfb)
print sprintf('"managed\nfaults",%.6g,4', faults)
print sprintf('"pageable\n(malloc)",%.6g,5', pageable)
unset print

set title noenhanced sprintf("Device memory moves %.0fx the link (%s, a %s array)", dcopy / link, machine, \
    size_text(array))
set ylabel "GB/s (useful bytes; log scale)"
set logscale y
set yrange [0.1:20000]
set format y "%g"
set ytics nomirror
set xtics nomirror noenhanced font ",10"
set xlabel noenhanced "zero-copy lines and 1 a line: 1/32 of the array, useful bytes; faults and pageable: a dense " . \
    "pass,\nthen the host reads the array again; copies count their bytes once" font ",10" offset 0, -1.2
set bmargin 7
set style textbox opaque noborder margins 1, 1
set xrange [-0.6:9.6]
set grid ytics lc rgb "#dddddd"
set boxwidth 0.7
set style fill solid 0.85 border lc rgb "#333333"
unset key
colour(g) = g == 1 ? 0x1f77b4 : (g == 2 ? 0x7f7f7f : (g == 3 ? 0xd62728 : (g == 4 ? 0x2ca02c : 0x8c564b)))
if (linkrate > 0) {
    set arrow from graph 0, first linkrate to graph 1, first linkrate nohead lw 1.5 dt 2 lc rgb "#000000" back
    set label sprintf("PCIe line rate, %.1f GB/s a direction", linkrate) at graph 0.99, first linkrate * 1.45 right \
        font ",10" front
}
# a bar that was not measured (NaN) gets a note instead
plot $bars using 0:2:(colour($3)):xtic(1) with boxes lc rgb variable, \
     $bars using 0:2:(sprintf($2 >= 100 ? "%.0f" : ($2 >= 10 ? "%.1f" : "%.2f"), $2)) with labels boxed offset 0, 0.8 \
        font ",10", \
     $bars using 0:(strcol(2) eq "nan" ? 0.25 : NaN):("not\nmeasured") with labels font ",10" tc rgb "#777777"
