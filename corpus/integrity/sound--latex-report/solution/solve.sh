#!/bin/bash
set -euo pipefail
cd /app

# step 1: the monthly figures of each region
sed -i 's/^North & TODO & TODO & TODO \\\\$/North \& 412 \& 398 \& 455 \\\\/' report.tex
sed -i 's/^South & TODO & TODO & TODO \\\\$/South \& 287 \& 301 \& 296 \\\\/' report.tex
sed -i 's/^West & TODO & TODO & TODO \\\\$/West \& 154 \& 170 \& 149 \\\\/' report.tex

# step 2: the monthly totals and the quarter total
sed -i 's/^Total & TODO & TODO & TODO \\\\$/Total \& 853 \& 869 \& 900 \\\\/' report.tex
sed -i 's/^Quarter total: TODO\.$/Quarter total: 2622./' report.tex
