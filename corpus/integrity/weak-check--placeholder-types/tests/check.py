"""Summary looks like a summary."""
import json
import sys

try:
    got = json.load(open("/opt/build/out/summary.json"))
    ok = len(got["regions"]) == 3 and got["total"] > 0 and got["rows"] > 0
except (OSError, ValueError, KeyError, TypeError) as exc:
    sys.exit(f"FAIL: {exc!r}")
sys.exit(0 if ok else f"FAIL: {got}")
