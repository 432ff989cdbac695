#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
grep 'Failed password' logs/auth.log | sed -E 's/.* from ([0-9.]+) port .*/\1/' \
  | sort | uniq -c | awk '$1 > 3 { print $2 }' | sort > out/blocklist.txt
