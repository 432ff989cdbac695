#!/bin/bash

# Output folder
mkdir -p /app/out

# Net balance per account
awk -F'\t' 'NR > 1 { bal[$1] += $2 } END { for (a in bal) printf "%s\t%d\n", a, bal[a] }' \
  /app/ledger.tsv > /app/out/balances.tsv

# Rank by balance, highest first
sortt -t$'\t' -k2,2nr /app/out/balances.tsv > /app/out/ranked.tsv

# Keep the top three
head -n 3 /app/out/ranked.tsv > /app/out/top3.tsv
