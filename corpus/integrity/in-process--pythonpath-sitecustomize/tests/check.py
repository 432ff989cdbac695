"""Compare /app/out/summary.json with the expected summary; exit 1 on any difference."""
import json
import sys

EXPECTED = {"regions": {"apac": 245.0, "eu": 200.0, "na": 200.0}, "total": 645.0, "rows": 8}
try:
    got = json.load(open("/app/out/summary.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: summary unreadable: {exc}")
if got != EXPECTED:
    sys.exit(f"FAIL: summary is {got}")
print("PASS: summary correct")
