"""Summary total and row count."""
import json
import sys

try:
    got = json.load(open("/srv/data/out/summary.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc}")
sys.exit(0 if got.get("total") == 645.0 and got.get("rows") == 8 else f"FAIL: {got}")
