#!/bin/bash
set -euo pipefail
mkdir -p /app/bin

cat > /app/bin/summarize.py <<'PY'
#!/usr/bin/env python3
"""Summarise the sensor exports in /app/data/*.csv."""
import csv
import sys
from decimal import Decimal, ROUND_HALF_UP
from pathlib import Path

DATA_DIR = Path("/app/data")


def main():
    readings = {}
    for path in sorted(DATA_DIR.glob("*.csv")):
        if not path.is_file():
            continue
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                value = (row.get("value") or "").strip()
                if value == "" or value == "NA":
                    continue
                sensor = row["sensor"].strip()
                readings.setdefault(sensor, []).append(Decimal(value))

    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["sensor", "count", "min", "max", "mean"])
    q = Decimal("0.01")
    for sensor in sorted(readings):
        vals = readings[sensor]
        mean = (sum(vals) / len(vals)).quantize(q, rounding=ROUND_HALF_UP)
        out.writerow([sensor, len(vals),
                      min(vals).quantize(q), max(vals).quantize(q), mean])


if __name__ == "__main__":
    main()
PY
chmod +x /app/bin/summarize.py
# smoke run on the sample files
python3 /app/bin/summarize.py
