#!/bin/bash
set -euo pipefail
mkdir -p /app/out

python3 - <<'PY'
import json
import re
from collections import Counter

LINE = re.compile(r'^(\S+) \S+ \S+ \[[^\]]*\] "(\S+) (\S+) (\S+)" (\d{3}) (\d+|-)(?: .*)?$')

total = 0
ips = set()
sent = 0
statuses = Counter()
errors = Counter()
with open("/app/logs/access.log", encoding="utf-8", errors="replace") as fh:
    for raw in fh:
        m = LINE.match(raw.rstrip("\n"))
        if not m:
            continue
        ip, _method, target, _proto, status, size = m.groups()
        total += 1
        ips.add(ip)
        sent += 0 if size == "-" else int(size)
        statuses[status] += 1
        if status.startswith("5"):
            errors[target.split("?", 1)[0]] += 1

with open("/app/out/summary.json", "w") as fh:
    json.dump({"total_requests": total, "unique_ips": len(ips), "bytes_sent": sent,
               "status_counts": dict(sorted(statuses.items()))}, fh, indent=2)
    fh.write("\n")

with open("/app/out/server_errors.tsv", "w") as fh:
    for path, count in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0])):
        fh.write(f"{path}\t{count}\n")
PY
