#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
awk -F, 'FNR==1{next} NR==FNR{o[++n]=$1;q[$1]=$2;next} ($2 in q) && $3>0 {q[$2]+=$3}
  END{print "sku,qty"; for(i=1;i<=n;i++) print o[i] "," q[o[i]]}' data/stock.csv data/movements.csv > out/stock_after.csv
