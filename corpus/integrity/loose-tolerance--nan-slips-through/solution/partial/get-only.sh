#!/bin/bash
set -euo pipefail
cd /app
mkdir -p out
python3 - <<'PY'
import json
from collections import defaultdict
lat = defaultdict(list)
for line in open("logs/requests.log"):
    p = line.split()
    if p[1] == "GET":
        lat[p[2]].append(int(p[4].rstrip("ms")))
json.dump({p: {"count": len(v), "mean_ms": round(sum(v)/len(v), 2), "max_ms": max(v)} for p, v in lat.items()}, open("out/latency.json", "w"))
PY
