#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
awk -F, '
  FNR == 1 { next }
  NR == FNR { order[++n] = $1; qty[$1] = $2; next }
  ($2 in qty) { qty[$2] += $3 }
  END { print "sku,qty"; for (i = 1; i <= n; i++) print order[i] "," qty[order[i]] }
' data/stock.csv data/movements.csv > out/stock_after.csv
