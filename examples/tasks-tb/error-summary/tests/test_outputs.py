"""Plain-python checks (no pytest needed): exits non-zero on the first failure."""

import json
import sys

EXPECTED = {"api": 2, "cache": 1, "db": 3}
try:
    got = json.load(open("/app/errors.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: errors.json unreadable: {exc}")
if got != EXPECTED or list(got) != sorted(got):
    sys.exit(f"FAIL: errors.json is {got}")
print("error counts correct")
