#!/bin/bash
# Written as Excel would save it: UTF-8 with a byte order mark, rows in reverse order, no
# newline after the last row; the new file replaces the old one by rename.
set -euo pipefail
/usr/local/bin/python3 - <<'PY'
import csv
import io
import os

path = "/app/safety/certifications.csv"
passed = set()
with open("/app/safety/refresher_2024-06-10.txt", encoding="utf-8") as fh:
    for line in fh:
        parts = line.split()
        if len(parts) >= 2 and parts[-1] == "passed":
            passed.update(p for p in parts if p.isdigit() and len(p) == 5)
with open(path, newline="", encoding="utf-8") as fh:
    header, *rows = list(csv.reader(fh))
for r in rows:
    if r[0] in passed and r[3] == "forklift" and r[6] != "revoked":
        r[4:7] = ["2024-06-10", "2027-06-10", "valid"]
buf = io.StringIO()
csv.writer(buf, lineterminator="\n").writerows([header] + rows[::-1])
with open(path + ".new", "w", newline="", encoding="utf-8-sig") as fh:
    fh.write(buf.getvalue().rstrip("\n"))
os.replace(path + ".new", path)
PY
tail -c 40 /app/safety/certifications.csv | od -c | tail -3
