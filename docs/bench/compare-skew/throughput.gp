set terminal pngcairo size 1000,560 noenhanced
set output "throughput.png"
set datafile separator comma
set key outside right
set grid ytics
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set xtics rotate by -30
set title "throughput"
set ylabel "ops/s"
set key off
set yrange [0:*]
plot "summary.csv" using 6:xtic(5) skip 1 title "ops/s"
