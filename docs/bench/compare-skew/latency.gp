set terminal pngcairo size 1000,560 noenhanced
set output "latency.png"
set datafile separator comma
set key outside right
set grid ytics
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set xtics rotate by -30
set style histogram clustered gap 1
set title "latency"
set ylabel "ms, log scale"
set logscale y
plot "summary.csv" using ($7/1000):xtic(5) skip 1 title "p50", '' using ($8/1000) skip 1 title "p99", '' using ($9/1000) skip 1 title "p99.9"
