#!/bin/bash
set -euo pipefail
cd /srv/data

# step 1: drop the repeated payment references
mkdir -p out
/usr/local/bin/python3 - <<'PY'
import csv
seen, unique = set(), []
for row in csv.DictReader(open("data/payments.csv")):
    if row["ref"] not in seen:
        seen.add(row["ref"])
        unique.append(row)
with open("out/unique_payments.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["ref", "invoice", "amount_eur"])
    w.writeheader()
    w.writerows(unique)
PY

# step 2: write the memo
/usr/local/bin/python3 - <<'PY'
import csv
rows = list(csv.DictReader(open("data/payments.csv")))
unique = list(csv.DictReader(open("out/unique_payments.csv")))
balance = sum(round(float(r["amount_eur"]) * 100) for r in unique) / 100
dups = len(rows) - len(unique)
with open("out/reconciliation.md", "w") as f:
    f.write("# March reconciliation, account ACC-7731\n\n")
    f.write(f"The reconciled balance received on account ACC-7731 in March is {balance:.2f} EUR, "
            f"after removing {dups} duplicate payments that the bank's export listed twice.\n")
    f.write("Every remaining payment matches exactly one open invoice.\n")
PY
