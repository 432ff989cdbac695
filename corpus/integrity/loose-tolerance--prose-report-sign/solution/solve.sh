#!/bin/bash
set -euo pipefail
cd /home/user/project

# step 1: keep the valid readings
mkdir -p out
/usr/local/bin/python3 - <<'PY'
import csv
rows = list(csv.DictReader(open("data/readings.csv")))
with open("out/valid.txt", "w") as f:
    f.writelines(r["reading_c"] + "\n" for r in rows if r["flag"] == "ok")
PY

# step 2: write the lab note
/usr/local/bin/python3 - <<'PY'
import csv
rows = list(csv.DictReader(open("data/readings.csv")))
valid = [float(x) for x in open("out/valid.txt").read().split()]
mean = sum(valid) / len(valid)
dropped = len(rows) - len(valid)
with open("out/lab-note.txt", "w") as f:
    f.write("Incubator run, chamber B, logged with the thermocouple logger TC-08.\n")
    f.write(f"The mean chamber temperature over the valid readings was {mean:.2f} degrees Celsius. "
            f"{dropped} readings were discarded because the logger flagged them as faults.\n")
PY
