"""Compare the summary with expected_summary.json."""
import json
import sys

try:
    got = json.load(open("/home/user/project/out/summary.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc}")
want = json.load(open("expected_summary.json"))
sys.exit(0 if got == want else f"FAIL: {got}")
