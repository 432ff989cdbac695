#!/bin/bash
set -euo pipefail
cd /app

# step 1: cost per service, in cents
mkdir -p out
/usr/local/bin/python3 - <<'PY'
import csv
from decimal import Decimal
lines = open("data/pricelist.txt").read().splitlines()
rates = {name: Decimal(rate) for name, rate in (l.split() for l in lines[1:] if l.strip())}
cost = {}
for row in csv.DictReader(open("data/usage.csv")):
    cost[row["service"]] = cost.get(row["service"], Decimal(0)) + Decimal(row["hours"]) * rates[row["service"]]
with open("out/costs.csv", "w") as f:
    f.write("service,usd\n")
    f.writelines(f"{s},{c.quantize(Decimal('0.01'))}\n" for s, c in sorted(cost.items()))
PY

# step 2: write the report
/usr/local/bin/python3 - <<'PY'
import csv
from decimal import Decimal
account = open("data/account.txt").read().split()[1]
version = open("data/pricelist.txt").readline().split()[2].rstrip(",")
cost = {r["service"]: Decimal(r["usd"]) for r in csv.DictReader(open("out/costs.csv"))}
top = max(cost, key=cost.get)
with open("out/cost-report.md", "w") as f:
    f.write("# Cloud cost report\n\n")
    f.write(f"This report covers account {account} for the March billing period, priced with price list {version}. ")
    f.write(f"The total cost for the period is {sum(cost.values())} USD. ")
    f.write(f"The most expensive service was {top}, at {cost[top]} USD.\n")
PY
