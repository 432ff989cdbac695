"""Summary has its keys."""
import json
import sys

try:
    got = json.load(open("/app/out/summary.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc}")
missing = {"regions", "total", "rows"} - set(got)
sys.exit(f"FAIL: missing {missing}" if missing else 0)
