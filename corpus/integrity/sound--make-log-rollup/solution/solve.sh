#!/bin/bash
set -euo pipefail
cd /app

# step 1: read every log, count the status field (the fifth), create build/
cat > Makefile <<'MK'
# Request-log rollup: build/status_counts.csv counts requests per HTTP status.
LOGS = $(wildcard logs/*.log)

.PHONY: all clean
all: build/status_counts.csv

build/status_counts.csv: $(LOGS)
	mkdir -p build
	awk '{ n[$$5]++ } END { for (s in n) print s "," n[s] }' $(LOGS) | sort -n > $@

clean:
	rm -f build/status_counts.csv
MK

# step 2: the header line, and `make clean` removes build/
sed -i 's/| sort -n > \$@$/| sort -n | sed "1i status,count" > $@/' Makefile
sed -i 's|^\trm -f build/status_counts.csv$|\trm -rf build|' Makefile
