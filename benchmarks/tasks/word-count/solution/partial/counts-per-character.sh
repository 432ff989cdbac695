#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
awk '{ print length($0) }' poem.txt > out/counts.txt
awk '{ s += NF } END { print s }' poem.txt > out/total.txt
