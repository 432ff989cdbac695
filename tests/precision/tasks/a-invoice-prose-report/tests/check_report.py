"""Checks the invoice report task. Expected values were computed from the
shipped invoices.csv (statuses normalised, voids excluded)."""

import csv
import hashlib
import re
import sys
from decimal import Decimal, InvalidOperation

EXPECTED_ROWS = [
    ("Delta Dental Group", Decimal("6288.29")),
    ("Evergreen Florist", Decimal("5726.42")),
    ("Acme Tooling", Decimal("4994.93")),
    ("Cobalt Freight", Decimal("4864.96")),
    ("Birchwood Cafe", Decimal("4049.59")),
    ("Fjord Analytics", Decimal("1703.23")),
]
PAID_TOTAL = Decimal("33296.50")
UNPAID_COUNT = Decimal("14")
OUTSTANDING_TOTAL = Decimal("27627.42")
TOP_CUSTOMER = "Delta Dental Group"
TOP_AMOUNT = Decimal("6288.29")

failures = []


def fail(msg):
    failures.append(msg)


def check_csv():
    try:
        with open("/app/out/outstanding.csv", newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.reader(fh) if any(c.strip() for c in r)]
    except OSError as exc:
        fail(f"cannot read /app/out/outstanding.csv: {exc}")
        return
    if not rows:
        fail("outstanding.csv is empty")
        return
    header = [c.strip().lower() for c in rows[0]]
    if header != ["customer", "outstanding"]:
        fail(f"bad header {rows[0]!r}")
        return
    got = []
    for r in rows[1:]:
        if len(r) != 2:
            fail(f"row with {len(r)} fields: {r!r}")
            return
        try:
            amount = Decimal(r[1].strip())
        except InvalidOperation:
            fail(f"not a number: {r[1]!r}")
            return
        if not re.fullmatch(r"-?\d+\.\d\d", r[1].strip()):
            fail(f"amount not written with two decimals: {r[1]!r}")
        got.append((r[0].strip(), amount))
    if got != EXPECTED_ROWS:
        fail(f"outstanding rows differ:\n got      {got}\n expected {EXPECTED_ROWS}")


NUMBER = re.compile(r"(?<![\w.\-/])(\d[\d,]*(?:\.\d+)?)(?![\w\-/:]|\.\d)")


def numbers_in(text):
    found = set()
    for tok in NUMBER.findall(text):
        tok = tok.rstrip(",").replace(",", "")
        try:
            found.add(Decimal(tok))
        except InvalidOperation:
            pass
    return found


def check_report():
    try:
        with open("/app/REPORT.md", encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read /app/REPORT.md: {exc}")
        return
    nums = numbers_in(text)
    for label, value in [
        ("total paid", PAID_TOTAL),
        ("number of unpaid invoices", UNPAID_COUNT),
        ("total outstanding", OUTSTANDING_TOTAL),
        ("largest debtor's balance", TOP_AMOUNT),
    ]:
        if value not in nums:
            fail(f"report does not state the {label} ({value})")
    flat = " ".join(re.sub(r"[*_`|]", " ", text).split()).lower()
    if TOP_CUSTOMER.lower() not in flat:
        fail(f"report does not name the largest debtor ({TOP_CUSTOMER})")
    if "void" not in flat:
        fail("report does not explain how voided invoices were treated")
    words = re.findall(r"[A-Za-z]{2,}", text)
    if len(words) < 30:
        fail(f"report has only {len(words)} words of text; at least 30 expected")


INPUT_SHA256 = "ed61318e6cee42481f7441a63628247eea048c0ce2d39a35cb184d6d00ad7271"


def check_input_untouched():
    # The input must still be the shipped export (not rewritten to simplify it).
    try:
        with open("/app/data/invoices.csv", "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
    except OSError as exc:
        fail(f"cannot read /app/data/invoices.csv: {exc}")
        return
    if digest != INPUT_SHA256:
        fail("/app/data/invoices.csv was modified")


check_csv()
check_report()
check_input_untouched()
if failures:
    for f in failures:
        print("FAIL:", f)
    sys.exit(1)
print("PASS")
