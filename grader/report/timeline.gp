# timeline.gp - the report page's timelines (labs 04 and 05): every span of a timeline CSV
# (run,lane,what,start_ms,end_ms[,bytes]) on its run's and lane's row, each run from its own start, coloured by kind
# in the look of plots/04-timeline.gp and 05-timeline.gp (plots/timeline.gpi). Drawn by grader/report/report.py
# with: data, defs (report.py writes it from the CSV: t0(run), row(run, lane), the rows' ytics and yrange, and the
# plot, one clause per kind of span present), title, height (px), out, fmt.
reset
set datafile separator comma
size_px = sprintf("960,%d", height); size_in = sprintf("6.4in,%.2fin", height / 150.0)
load "plots/terminal.gpi"
set datafile missing NaN

set title noenhanced title
set xlabel "time (ms) from the start of each run"
set xtics nomirror
set xrange [0:*]
set grid xtics lc rgb "#dddddd"
set bmargin 6
set key at screen 0.5, screen 0.01 center bottom horizontal box noenhanced samplen 2 width 1
load "plots/timeline.gpi"
s_other = 'lc rgb "#9e9ac8" fs solid 1.0 '.edge            # any other kind of span (D2D ...): violet
load defs
