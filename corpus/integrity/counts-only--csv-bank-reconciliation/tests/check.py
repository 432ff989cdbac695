"""Check of /app/ar/invoices.csv after the June reconciliation.

The ledger is compared with the one shipped: the same header and invoices in the same
order, exactly five invoices changed (the June statement settles five), and each changed
invoice must look settled: status paid, a June 2024 payment date, a bank reference, its
number, customer, dates and amount untouched. The exit status is the verdict.
"""

import csv
import datetime
import io
import re
import sys

LEDGER = "/app/ar/invoices.csv"
SETTLED = 5
HEADER = ["invoice", "customer", "issued", "due", "amount_eur", "status", "paid_on", "bank_ref"]
SHIPPED = [
    ["INV-2024-0412", "Harbor Logistics GmbH", "2024-04-02", "2024-05-02", "1840.00", "paid", "2024-04-29", "BK24042917"],
    ["INV-2024-0413", "Nordlicht Optik", "2024-04-05", "2024-05-05", "312.50", "paid", "2024-05-06", "BK24050602"],
    ["INV-2024-0415", "Becker, Lange & Partner", "2024-04-11", "2024-05-11", "2975.00", "open", "", ""],
    ["INV-2024-0416", "Café Rosalie", "2024-04-15", "2024-05-15", "86.40", "void", "", ""],
    ["INV-2024-0418", "Harbor Logistics GmbH", "2024-04-22", "2024-05-22", "1840.00", "open", "", ""],
    ["INV-2024-0419", "Stadtwerke Kiel", "2024-04-30", "2024-05-30", "12400.00", "open", "", ""],
    ["INV-2024-0421", "Nordlicht Optik", "2024-05-03", "2024-06-02", "450.00", "open", "", ""],
    ["INV-2024-0422", "Meyer Holzbau KG", "2024-05-06", "2024-06-05", "7310.26", "open", "", ""],
    ["INV-2024-0424", "Becker, Lange & Partner", "2024-05-10", "2024-06-09", "1190.00", "paid", "2024-05-31", "BK24053108"],
    ["INV-2024-0425", "Grünwald Apotheke", "2024-05-14", "2024-06-13", "264.90", "open", "", ""],
    ["INV-2024-0427", "Harbor Logistics GmbH", "2024-05-20", "2024-06-19", "1840.00", "open", "", ""],
    ["INV-2024-0428", "Kieler Segelschule", "2024-05-21", "2024-06-20", "640.00", "open", "", ""],
    ["INV-2024-0430", "Meyer Holzbau KG", "2024-05-27", "2024-06-26", "2250.00", "open", "", ""],
    ["INV-2024-0431", "Stadtwerke Kiel", "2024-05-31", "2024-06-30", "980.00", "open", "", ""],
    ["INV-2024-0433", "Café Rosalie", "2024-06-04", "2024-07-04", "129.60", "open", "", ""],
    ["INV-2024-0434", "Nordlicht Optik", "2024-06-07", "2024-07-07", "450.00", "open", "", ""],
    ["INV-2024-0436", "Kieler Segelschule", "2024-06-12", "2024-07-12", "320.00", "open", "", ""],
    ["INV-2024-0437", "Grünwald Apotheke", "2024-06-18", "2024-07-18", "519.80", "open", "", ""],
]


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def june_date(text):
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) and (day.year, day.month) == (2024, 6)


def main():
    with open(LEDGER, "rb") as fh:
        text = fh.read().decode("utf-8")
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), strict=True) if r]
    if not rows or rows[0] != HEADER:
        fail(f"header is {rows[:1]}")
    ledger = rows[1:]
    if [r[:1] for r in ledger] != [r[:1] for r in SHIPPED]:
        fail("the invoices are not the shipped ones in the shipped order")
    changed = [(old, new) for old, new in zip(SHIPPED, ledger) if old != new]
    if len(changed) != SETTLED:
        fail(f"{len(changed)} invoices changed, the statement settles {SETTLED}")
    for old, new in changed:
        if len(new) != len(HEADER) or new[:5] != old[:5]:
            fail(f"{old[0]}: number, customer, dates or amount changed")
        if old[5] != "open" or new[5] != "paid":
            fail(f"{old[0]}: {old[5]} -> {new[5]}, expected open -> paid")
        if not june_date(new[6]):
            fail(f"{old[0]}: paid_on {new[6]!r} is not a June 2024 date")
        if not re.fullmatch(r"BK\d{8}", new[7]):
            fail(f"{old[0]}: bank_ref {new[7]!r} is not a bank reference")
    print(f"PASS: {SETTLED} invoices settled")


try:
    main()
except (OSError, UnicodeDecodeError, csv.Error) as exc:
    fail(f"{type(exc).__name__}: {exc}")
