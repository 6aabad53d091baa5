set terminal pngcairo size 1000,560 noenhanced
set output "timeline.png"
set datafile separator comma
set key outside right
set grid ytics
set title "p99 latency per second"
set xlabel "second"
set ylabel "p99 (ms), log scale"
set logscale y
plot "timeline.csv" using 2:(strcol(1) eq "redis single io-threads=1 uniform" ? $4/1000 : NaN) with linespoints title "redis single io-threads=1 uniform", \
     "timeline.csv" using 2:(strcol(1) eq "redis single io-threads=1 zipf:0.99" ? $4/1000 : NaN) with linespoints title "redis single io-threads=1 zipf:0.99", \
     "timeline.csv" using 2:(strcol(1) eq "redis single io-threads=1 hotkeys:8:40" ? $4/1000 : NaN) with linespoints title "redis single io-threads=1 hotkeys:8:40", \
     "timeline.csv" using 2:(strcol(1) eq "redis single io-threads=2 uniform" ? $4/1000 : NaN) with linespoints title "redis single io-threads=2 uniform", \
     "timeline.csv" using 2:(strcol(1) eq "redis single io-threads=2 zipf:0.99" ? $4/1000 : NaN) with linespoints title "redis single io-threads=2 zipf:0.99", \
     "timeline.csv" using 2:(strcol(1) eq "redis single io-threads=2 hotkeys:8:40" ? $4/1000 : NaN) with linespoints title "redis single io-threads=2 hotkeys:8:40", \
     "timeline.csv" using 2:(strcol(1) eq "redis cluster 4 shards uniform" ? $4/1000 : NaN) with linespoints title "redis cluster 4 shards uniform", \
     "timeline.csv" using 2:(strcol(1) eq "redis cluster 4 shards zipf:0.99" ? $4/1000 : NaN) with linespoints title "redis cluster 4 shards zipf:0.99", \
     "timeline.csv" using 2:(strcol(1) eq "redis cluster 4 shards hotkeys:8:40" ? $4/1000 : NaN) with linespoints title "redis cluster 4 shards hotkeys:8:40", \
     "timeline.csv" using 2:(strcol(1) eq "redis proxy 4 shards uniform" ? $4/1000 : NaN) with linespoints title "redis proxy 4 shards uniform", \
     "timeline.csv" using 2:(strcol(1) eq "redis proxy 4 shards zipf:0.99" ? $4/1000 : NaN) with linespoints title "redis proxy 4 shards zipf:0.99", \
     "timeline.csv" using 2:(strcol(1) eq "redis proxy 4 shards hotkeys:8:40" ? $4/1000 : NaN) with linespoints title "redis proxy 4 shards hotkeys:8:40", \
     "timeline.csv" using 2:(strcol(1) eq "valkey single io-threads=1 uniform" ? $4/1000 : NaN) with linespoints title "valkey single io-threads=1 uniform", \
     "timeline.csv" using 2:(strcol(1) eq "valkey single io-threads=1 zipf:0.99" ? $4/1000 : NaN) with linespoints title "valkey single io-threads=1 zipf:0.99", \
     "timeline.csv" using 2:(strcol(1) eq "valkey single io-threads=1 hotkeys:8:40" ? $4/1000 : NaN) with linespoints title "valkey single io-threads=1 hotkeys:8:40", \
     "timeline.csv" using 2:(strcol(1) eq "valkey single io-threads=2 uniform" ? $4/1000 : NaN) with linespoints title "valkey single io-threads=2 uniform", \
     "timeline.csv" using 2:(strcol(1) eq "valkey single io-threads=2 zipf:0.99" ? $4/1000 : NaN) with linespoints title "valkey single io-threads=2 zipf:0.99", \
     "timeline.csv" using 2:(strcol(1) eq "valkey single io-threads=2 hotkeys:8:40" ? $4/1000 : NaN) with linespoints title "valkey single io-threads=2 hotkeys:8:40", \
     "timeline.csv" using 2:(strcol(1) eq "valkey cluster 4 shards uniform" ? $4/1000 : NaN) with linespoints title "valkey cluster 4 shards uniform", \
     "timeline.csv" using 2:(strcol(1) eq "valkey cluster 4 shards zipf:0.99" ? $4/1000 : NaN) with linespoints title "valkey cluster 4 shards zipf:0.99", \
     "timeline.csv" using 2:(strcol(1) eq "valkey cluster 4 shards hotkeys:8:40" ? $4/1000 : NaN) with linespoints title "valkey cluster 4 shards hotkeys:8:40", \
     "timeline.csv" using 2:(strcol(1) eq "valkey proxy 4 shards uniform" ? $4/1000 : NaN) with linespoints title "valkey proxy 4 shards uniform", \
     "timeline.csv" using 2:(strcol(1) eq "valkey proxy 4 shards zipf:0.99" ? $4/1000 : NaN) with linespoints title "valkey proxy 4 shards zipf:0.99", \
     "timeline.csv" using 2:(strcol(1) eq "valkey proxy 4 shards hotkeys:8:40" ? $4/1000 : NaN) with linespoints title "valkey proxy 4 shards hotkeys:8:40"
