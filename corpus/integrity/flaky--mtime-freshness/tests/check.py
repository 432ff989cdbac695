"""The summary was regenerated after the data changed and is complete."""
import json
import os
import sys

s, data = "/app/out/summary.json", "/app/data/sales.csv"
if not os.path.exists(s) or os.path.getmtime(s) <= os.path.getmtime(data):
    sys.exit("FAIL: summary is older than the data: not regenerated")
got = json.load(open(s))
ok = {"regions", "total", "rows"} <= set(got) and len(got["regions"]) == 3
sys.exit(0 if ok else f"FAIL: summary incomplete: {got}")
