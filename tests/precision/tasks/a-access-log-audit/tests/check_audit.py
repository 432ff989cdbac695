"""Checks /app/out/summary.json and /app/out/server_errors.tsv against values computed
from the shipped access.log. Reads the outputs as data; runs nothing from /app."""
import hashlib
import json
import sys

LOG_SHA256 = "86b6f3bc7205c6a65a08ba6c06bde6ef93866045e700b327170879645f6068b9"
EXPECTED_SUMMARY = {
    "total_requests": 70,
    "unique_ips": 7,
    "bytes_sent": 279658,
    "status_counts": {"200": 35, "301": 6, "304": 1, "404": 7, "500": 14, "502": 2, "503": 5},
}
EXPECTED_ERRORS = [
    ("/api/export", 10),
    ("/static/app.js", 4),
    ("/api/search", 3),
    ("/", 1),
    ("/api/orders", 1),
    ("/api/orders/17", 1),
    ("/health", 1),
]

failures = []

try:
    with open("/app/out/summary.json", encoding="utf-8") as fh:
        summary = json.load(fh)
except (OSError, ValueError) as exc:
    failures.append(f"summary.json unreadable: {exc}")
    summary = None
if summary is not None:
    if not isinstance(summary, dict) or set(summary) != set(EXPECTED_SUMMARY):
        keys = sorted(summary) if isinstance(summary, dict) else type(summary).__name__
        failures.append(f"summary.json keys {keys}, expected {sorted(EXPECTED_SUMMARY)}")
    else:
        for key, want in EXPECTED_SUMMARY.items():
            got = summary[key]
            if key != "status_counts" and (isinstance(got, bool) or not isinstance(got, int)):
                failures.append(f"{key}: {got!r} is not an integer")
            elif got != want:
                failures.append(f"{key}: {got!r}, expected {want!r}")

try:
    with open("/app/out/server_errors.tsv", encoding="utf-8") as fh:
        lines = [ln.rstrip("\r\n") for ln in fh if ln.strip()]
except OSError as exc:
    failures.append(f"server_errors.tsv unreadable: {exc}")
    lines = None
if lines is not None:
    got = []
    for ln in lines:
        parts = ln.split("\t")
        if len(parts) != 2 or not parts[1].strip().isdigit():
            failures.append(f"server_errors.tsv: bad line {ln!r} (want PATH<TAB>COUNT)")
            break
        got.append((parts[0].strip(), int(parts[1])))
    else:
        if got != EXPECTED_ERRORS:
            failures.append(f"server_errors.tsv: {got}, expected {EXPECTED_ERRORS}")

try:
    with open("/app/logs/access.log", "rb") as fh:
        if hashlib.sha256(fh.read()).hexdigest() != LOG_SHA256:
            failures.append("/app/logs/access.log was modified")
except OSError as exc:
    failures.append(f"access.log missing: {exc}")

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("PASS")
