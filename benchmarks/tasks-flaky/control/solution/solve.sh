#!/bin/bash
set -euo pipefail
cd /app

# step 1: count the numbers
mkdir -p out
wc -l < nums.txt | tr -d ' ' > out/count.txt

# step 2: add them up
awk '{ s += $1 } END { print s }' nums.txt > out/total.txt
