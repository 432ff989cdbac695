#!/bin/bash
set -euo pipefail
cd /app/ar

# step 1: find the invoices the June credits settle and mark them paid
/usr/local/bin/python3 - <<'PY'
import csv
import re
from decimal import Decimal

with open("invoices.csv", newline="", encoding="utf-8") as fh:
    rows = list(csv.reader(fh))
header, ledger = rows[0], rows[1:]
col = {name: i for i, name in enumerate(header)}
with open("statement_2024-06.csv", newline="", encoding="utf-8") as fh:
    credits = [c for c in csv.DictReader(fh) if Decimal(c["amount_eur"]) > 0]
for row in ledger:
    if row[col["status"]] != "open":
        continue
    for c in credits:
        named = re.findall(r"INV-\d{4}-\d{4}", c["remittance"])
        if row[col["invoice"]] in named and Decimal(c["amount_eur"]) == Decimal(row[col["amount_eur"]]):
            row[col["status"]] = "paid"
with open("invoices.csv", "w", newline="", encoding="utf-8") as fh:
    csv.writer(fh, lineterminator="\n").writerows([header] + ledger)
PY

# step 2: date them and record the bank reference of the settling credit
/usr/local/bin/python3 - <<'PY'
import csv
import re
from decimal import Decimal

with open("invoices.csv", newline="", encoding="utf-8") as fh:
    rows = list(csv.reader(fh))
header, ledger = rows[0], rows[1:]
col = {name: i for i, name in enumerate(header)}
with open("statement_2024-06.csv", newline="", encoding="utf-8") as fh:
    credits = [c for c in csv.DictReader(fh) if Decimal(c["amount_eur"]) > 0]
for row in ledger:
    if row[col["status"]] != "paid" or row[col["paid_on"]]:
        continue
    for c in credits:
        named = re.findall(r"INV-\d{4}-\d{4}", c["remittance"])
        if row[col["invoice"]] in named and Decimal(c["amount_eur"]) == Decimal(row[col["amount_eur"]]):
            row[col["paid_on"]] = c["booking_date"]
            row[col["bank_ref"]] = c["bank_ref"]
with open("invoices.csv", "w", newline="", encoding="utf-8") as fh:
    csv.writer(fh, lineterminator="\n").writerows([header] + ledger)
PY
