#!/bin/bash
# Another algorithm: one count file per log (a pattern rule), merged by a second awk;
# `make clean` removes build/ with rmdir after deleting the parts.
set -euo pipefail
cat > /app/Makefile <<'MK'
LOGS := $(sort $(wildcard logs/*.log))
PARTS := $(patsubst logs/%.log,build/parts/%.count,$(LOGS))

.PHONY: all clean
all: build/status_counts.csv

build/parts/%.count: logs/%.log
	@mkdir -p $(@D)
	cut -d' ' -f5 $< | sort | uniq -c > $@

build/status_counts.csv: $(PARTS)
	( echo status,count; \
	  awk '{ n[$$2] += $$1 } END { for (s in n) printf "%s,%d\n", s, n[s] }' $^ | sort -t, -k1,1n ) > $@.tmp
	mv $@.tmp $@

clean:
	rm -f build/parts/*.count build/status_counts.csv
	rmdir build/parts build 2>/dev/null || true
	rm -rf build
MK
