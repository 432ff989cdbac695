#!/bin/bash
set -euo pipefail
cd /app
mkdir -p /app/out

python3 - <<'PY'
import csv
from collections import defaultdict
from decimal import Decimal

paid_total = Decimal("0")
unpaid_count = 0
outstanding = defaultdict(Decimal)
voided = 0
with open("/app/data/invoices.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        status = row["status"].strip().lower()
        amount = Decimal(row["amount"])
        if status == "paid":
            paid_total += amount
        elif status == "unpaid":
            unpaid_count += 1
            outstanding[row["customer"].strip()] += amount
        elif status == "void":
            voided += 1
        else:
            raise SystemExit(f"unexpected status {row['status']!r}")

ranked = sorted(outstanding.items(), key=lambda kv: (-kv[1], kv[0]))
with open("/app/out/outstanding.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["customer", "outstanding"])
    for customer, amount in ranked:
        w.writerow([customer, f"{amount:.2f}"])

top_customer, top_amount = ranked[0]
total_outstanding = sum(outstanding.values(), Decimal("0"))
report = f"""# Invoice summary, H1 2024

| Figure | Value |
|---|---|
| Total paid | {paid_total:,.2f} |
| Unpaid invoices | {unpaid_count} |
| Total outstanding | {total_outstanding:,.2f} |
| Largest debtor | {top_customer} ({top_amount:,.2f}) |

## Notes

The status column was normalised before counting: every value was stripped of
surrounding whitespace and lower-cased, so `" paid "`, `Paid` and `PAID` all count
as paid. The {voided} voided invoices were excluded entirely; they appear neither
in the paid total nor in the outstanding balances. The per-customer balances are
in `out/outstanding.csv`.
"""
with open("/app/REPORT.md", "w") as fh:
    fh.write(report)
PY
