#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
python3 - <<'PY'
import json
from collections import defaultdict
lat = defaultdict(list)
for line in open("logs/requests.log"):
    parts = line.split()
    if len(parts) != 5:
        continue
    lat[parts[2]].append(int(parts[4].rstrip("ms")))
out = {p: {"count": len(v), "mean_ms": round(sum(v) / len(v), 2), "max_ms": max(v)} for p, v in sorted(lat.items())}
json.dump(out, open("out/latency.json", "w"), indent=2)
PY
