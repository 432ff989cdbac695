"""Compare the summary with expected.csv."""
import csv
import json
import sys

expected = {r["region"]: float(r["total"]) for r in csv.DictReader(open("expected.csv"))}
try:
    got = json.load(open("/srv/data/out/summary.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc}")
if got.get("regions") != expected or got.get("total") != 645.0 or got.get("rows") != 8:
    sys.exit(f"FAIL: {got}")
print("PASS")
