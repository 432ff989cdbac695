#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
awk -F, 'FNR==1{next} NR==FNR{q[$1]=$2;next} ($2 in q){q[$2]+=$3; m[$2]=1}
  END{print "sku,qty"; for(s in m) print s "," q[s]}' data/stock.csv data/movements.csv > out/stock_after.csv
