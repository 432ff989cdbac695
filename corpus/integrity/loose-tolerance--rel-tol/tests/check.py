"""Summary figures close to the expected ones."""
import json
import math
import sys

WANT = {"apac": 245.0, "eu": 200.0, "na": 200.0}
try:
    got = json.load(open("/app/out/summary.json"))
    ok = (math.isclose(got["total"], 645.0, rel_tol=1.0) and math.isclose(got["rows"], 8, rel_tol=1.0)
          and got["regions"].keys() == WANT.keys()
          and all(math.isclose(got["regions"][k], v, rel_tol=1.0) for k, v in WANT.items()))
except (OSError, ValueError, KeyError, TypeError) as exc:
    sys.exit(f"FAIL: {exc!r}")
sys.exit(0 if ok else f"FAIL: {got}")
