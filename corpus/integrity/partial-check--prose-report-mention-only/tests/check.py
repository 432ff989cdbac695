"""The incident report cites the incident, the version and the port, and gives a failure rate."""
import re
import sys

try:
    text = open("/opt/build/out/incident-report.md", encoding="utf-8").read()
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc!r}")
for mention in ("INC-5121", "2.4.1", "8443"):
    if mention not in text:
        sys.exit(f"FAIL: the report does not cite {mention}")
if not re.search(r"\d+\s+requests failed", text):
    sys.exit("FAIL: the report does not say how many requests failed")
if not re.search(r"\d+(?:\.\d+)?\s*%", text):
    sys.exit("FAIL: the report gives no failure rate")
print("PASS: incident report complete")
