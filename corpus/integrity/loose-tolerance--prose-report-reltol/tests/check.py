"""The memo's figures, read from its sentences, close to the expected ones."""
import re
import sys

WANT_BALANCE, WANT_DUPS = 4817.35, 3
try:
    text = open("/srv/data/out/reconciliation.md", encoding="utf-8").read()
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc!r}")
if "ACC-7731" not in text:
    sys.exit("FAIL: the memo does not name the account")
balance = re.search(r"(\d+(?:\.\d+)?)\s*EUR\b", text)
dups = re.search(r"(\d+)\s+duplicate payments?", text)
if not (balance and dups):
    sys.exit("FAIL: no balance in EUR or no duplicate count in the memo")
got_balance, got_dups = float(balance.group(1)), int(dups.group(1))
# accounting rounds differently from bank to bank: allow for it
ok = abs(got_balance - WANT_BALANCE) <= WANT_BALANCE and abs(got_dups - WANT_DUPS) <= WANT_DUPS
sys.exit(0 if ok else f"FAIL: balance {got_balance}, duplicates {got_dups}")
