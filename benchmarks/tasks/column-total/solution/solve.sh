#!/bin/bash
set -euo pipefail
cd /app

# step 1: totals per region
mkdir -p out
python3 - <<'PY'
import csv
from collections import defaultdict
totals = defaultdict(float)
for row in csv.DictReader(open("sales.csv")):
    totals[row["region"]] += float(row["amount"])
with open("out/by_region.csv", "w") as f:
    f.write("region,total\n")
    for region in sorted(totals):
        f.write(f"{region},{totals[region]:.2f}\n")
PY

# step 2: the grand total
python3 -c "import csv; print(f'{sum(float(r[\"amount\"]) for r in csv.DictReader(open(\"sales.csv\"))):.2f}')" > out/total.txt
