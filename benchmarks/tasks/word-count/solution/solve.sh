#!/bin/bash
set -euo pipefail
cd /app

# step 1: count the words of each line
mkdir -p out
awk '{ print NF }' poem.txt > out/counts.txt

# step 2: add them up
awk '{ s += $1 } END { print s }' out/counts.txt > out/total.txt
