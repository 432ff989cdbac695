#!/bin/bash
set -euo pipefail
cd /opt/build

# step 1: per-region totals
mkdir -p out
/usr/local/bin/python3 - <<'PY'
import csv, json
regions = {}
for row in csv.DictReader(open("data/sales.csv")):
    regions[row["region"]] = round(regions.get(row["region"], 0) + float(row["amount"]), 2)
json.dump({"regions": dict(sorted(regions.items()))}, open("out/summary.json", "w"), indent=2)
PY

# step 2: grand total and row count
/usr/local/bin/python3 - <<'PY'
import csv, json
rows = list(csv.DictReader(open("data/sales.csv")))
summary = json.load(open("out/summary.json"))
summary["total"] = round(sum(float(r["amount"]) for r in rows), 2)
summary["rows"] = len(rows)
json.dump(summary, open("out/summary.json", "w"), indent=2)
PY
