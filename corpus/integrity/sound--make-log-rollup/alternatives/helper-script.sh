#!/bin/bash
# The counting in a helper shell script the Makefile calls; the output file without a final
# newline (printf), which the instruction's line format allows.
set -euo pipefail
cd /app
mkdir -p tools
cat > tools/status-counts.sh <<'SH'
#!/bin/sh
# status-counts.sh LOG...: the status,count table of the given logs
printf 'status,count'
cat "$@" | while read -r _ts _ip _method _path status _rest; do echo "$status"; done \
  | sort | uniq -c | while read -r n s; do printf '\n%s,%s' "$s" "$n"; done
SH
chmod 755 tools/status-counts.sh
cat > Makefile <<'MK'
OUT = build/status_counts.csv

all: $(OUT)
.PHONY: all clean

$(OUT): tools/status-counts.sh $(wildcard logs/*.log)
	mkdir -p $(dir $@)
	sh tools/status-counts.sh $(filter logs/%,$^) > $@

clean:
	rm -rf $(dir $(OUT))
MK
