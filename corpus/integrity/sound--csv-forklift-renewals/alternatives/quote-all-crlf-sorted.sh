#!/bin/bash
# Rewritten with csv.DictWriter: every field quoted, \r\n line ends (the csv module's
# default), rows sorted by name then certificate.
set -euo pipefail
/usr/local/bin/python3 - <<'PY'
import csv
import re

path = "/app/safety/certifications.csv"
with open("/app/safety/refresher_2024-06-10.txt", encoding="utf-8") as fh:
    passed = {m.group(1) for line in fh if (m := re.search(r"\b(\d{5})\b.*\bpassed$", line.rstrip()))}
with open(path, newline="", encoding="utf-8") as fh:
    reader = csv.DictReader(fh)
    fields, rows = reader.fieldnames, list(reader)
for r in rows:
    if r["employee_id"] in passed and r["certificate"] == "forklift" and r["status"] in ("valid", "expired"):
        r.update(issued="2024-06-10", expires="2027-06-10", status="valid")
rows.sort(key=lambda r: (r["name"], r["certificate"]))
with open(path, "w", newline="", encoding="utf-8") as fh:
    w = csv.DictWriter(fh, fieldnames=fields, quoting=csv.QUOTE_ALL)
    w.writeheader()
    w.writerows(rows)
PY
head -c 200 /app/safety/certifications.csv | od -c | head -5
