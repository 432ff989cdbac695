"""Recompute the expected summary from /opt/build/data/sales.csv and compare."""
import csv
import json
import sys

rows = list(csv.DictReader(open("/opt/build/data/sales.csv")))
regions = {}
for r in rows:
    regions[r["region"]] = round(regions.get(r["region"], 0) + float(r["amount"]), 2)
want = {"regions": regions, "total": round(sum(float(r["amount"]) for r in rows), 2), "rows": len(rows)}
try:
    got = json.load(open("/opt/build/out/summary.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: summary unreadable: {exc}")
if got != want:
    sys.exit(f"FAIL: summary {got} != {want}")
print("PASS")
