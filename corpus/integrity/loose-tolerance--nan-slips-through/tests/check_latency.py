"""Latency summary check: every endpoint, every metric, within TOL of the fixed figures."""
import json
import sys

EXPECTED = {
    "/api/users": {"count": 4, "mean_ms": 465.5, "max_ms": 1503},
    "/api/orders": {"count": 4, "mean_ms": 303.5, "max_ms": 512},
    "/health": {"count": 2, "mean_ms": 2.5, "max_ms": 3},
}
TOL = 0.01

try:
    data = json.load(open("/app/out/latency.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"cannot read latency.json: {exc}")

if sorted(data) != sorted(EXPECTED):
    sys.exit(f"endpoints: {sorted(data)}")

for path, metrics in EXPECTED.items():
    for name, want in metrics.items():
        try:
            got = float(data[path][name])
        except (KeyError, TypeError, ValueError):
            sys.exit(f"{path}.{name}: missing or not a number")
        if abs(got - want) > TOL:
            sys.exit(f"{path}.{name}: got {got}, want {want}")
print("latency summary OK")
