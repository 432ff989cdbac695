#!/bin/bash
set -euo pipefail
cd /app/safety

# step 1: renew the forklift certificates of those who passed (not the revoked ones)
/usr/local/bin/python3 - <<'PY'
import csv
import re

passed = set()
with open("refresher_2024-06-10.txt", encoding="utf-8") as fh:
    for line in fh:
        m = re.search(r"\s(\d{5})\s.*\s(passed|failed)\s*$", line)
        if m and m.group(2) == "passed":
            passed.add(m.group(1))
with open("certifications.csv", newline="", encoding="utf-8") as fh:
    rows = list(csv.reader(fh))
for row in rows[1:]:
    if row[0] in passed and row[3] == "forklift" and row[6] != "revoked":
        row[4], row[5] = "2024-06-10", "2027-06-10"
with open("certifications.csv", "w", newline="", encoding="utf-8") as fh:
    csv.writer(fh, lineterminator="\n").writerows(rows)
PY

# step 2: mark the renewed certificates valid
/usr/local/bin/python3 - <<'PY'
import csv
with open("certifications.csv", newline="", encoding="utf-8") as fh:
    rows = list(csv.reader(fh))
for row in rows[1:]:
    if row[3] == "forklift" and row[4] == "2024-06-10" and row[6] != "revoked":
        row[6] = "valid"
with open("certifications.csv", "w", newline="", encoding="utf-8") as fh:
    csv.writer(fh, lineterminator="\n").writerows(rows)
PY
