#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
{ echo "status,count"; awk '{ print $9 }' logs/access.log | sort -n | uniq -c | awk '{ print $2 "," $1 }'; } > out/status_counts.csv
