#!/bin/bash
set -euo pipefail
mkdir -p /app/out

python3 - <<'PY'
import csv
import datetime
from collections import defaultdict
from decimal import Decimal, ROUND_HALF_UP

with open("/app/data/employees.csv", newline="", encoding="utf-8") as fh:
    employees = {r["employee_id"]: r for r in csv.DictReader(fh)}

weekly = defaultdict(Decimal)  # (employee, iso year, iso week) -> hours
with open("/app/data/timesheets.csv", newline="", encoding="utf-8") as fh:
    for r in csv.DictReader(fh):
        year, week, _ = datetime.date.fromisoformat(r["date"]).isocalendar()
        weekly[(r["employee_id"], year, week)] += Decimal(r["hours"])

FORTY = Decimal(40)
with open("/app/out/payroll.csv", "w", newline="", encoding="utf-8") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["employee_id", "name", "regular_hours", "overtime_hours", "gross_pay"])
    for emp_id in sorted(employees):
        regular = overtime = Decimal(0)
        for (eid, _y, _w), hours in weekly.items():
            if eid == emp_id:
                regular += min(hours, FORTY)
                overtime += max(hours - FORTY, Decimal(0))
        rate = Decimal(employees[emp_id]["hourly_rate"])
        gross = (regular * rate + overtime * rate * Decimal("1.5")).quantize(
            Decimal("0.01"), rounding=ROUND_HALF_UP)
        w.writerow([emp_id, employees[emp_id]["name"], f"{regular:.2f}", f"{overtime:.2f}", f"{gross:.2f}"])
PY
