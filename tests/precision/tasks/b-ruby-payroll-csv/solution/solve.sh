#!/bin/bash
set -e
cd /app

# Write the payroll calculator (exact decimal arithmetic, ISO weeks)
cat > /tmp/payroll.py <<'PY'
import csv
import datetime
from collections import defaultdict
from decimal import Decimal, ROUND_HALF_UP

with open("/app/employees.csv", newline="") as f:
    employees = {r["employee_id"]: r for r in csv.DictReader(f)}

weekly = defaultdict(Decimal)
with open("/app/timesheets.csv", newline="") as f:
    for r in csv.DictReader(f):
        year, week, _ = datetime.date.fromisoformat(r["date"]).isocalendar()
        weekly[(r["employee_id"], year, week)] += Decimal(r["hours"])

totals = defaultdict(lambda: [Decimal(0), Decimal(0)])
for (emp, _, _), hours in weekly.items():
    regular = min(hours, Decimal(40))
    totals[emp][0] += regular
    totals[emp][1] += hours - regular

with open("/app/payroll.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["employee_id", "name", "regular_hours", "overtime_hours", "gross_pay"])
    for emp in sorted(totals):
        regular, overtime = totals[emp]
        rate = Decimal(employees[emp]["hourly_rate"])
        gross = (regular * rate + overtime * rate * Decimal("1.5")).quantize(Decimal("0.01"), ROUND_HALF_UP)
        w.writerow([emp, employees[emp]["name"], f"{regular:.2f}", f"{overtime:.2f}", f"{gross:.2f}"])
PY

# Produce the report
/usr/local/bin/python3 /tmp/payroll.py
cat /app/payroll.csv
