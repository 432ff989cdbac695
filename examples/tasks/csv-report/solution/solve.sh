#!/bin/bash
set -euo pipefail
cd /app

# step 1: convert the EU export to the format the other exports use
python3 - <<'PY'
from pathlib import Path
path = Path("data/sales/eu.csv")
lines = path.read_text().splitlines()
fixed = [lines[0].replace(";", ",")]
for line in lines[1:]:
    region, sku, amount = line.split(";")
    fixed.append(f"{region},{sku},{amount.replace(',', '.')}")
path.write_text("\n".join(fixed) + "\n")
PY

# step 2: rebuild the report from all exports
python3 etl.py
