#!/bin/bash
# Builds /app's history with fixed identities and dates, so every object id is a constant:
# v2.4.0 (annotated) and release/2.4 with one docs commit on top; main goes on with a
# feature, a fee fix, an API change and a second fee fix.
set -euo pipefail
mkdir -p /app && cd /app
export GIT_AUTHOR_NAME="Ines Varga" GIT_AUTHOR_EMAIL=ines@payroll.example
export GIT_COMMITTER_NAME="Ines Varga" GIT_COMMITTER_EMAIL=ines@payroll.example
at() { export GIT_AUTHOR_DATE="$1 +0000" GIT_COMMITTER_DATE="$1 +0000"; }
git init -q -b main
git config user.name "Ines Varga"
git config user.email ines@payroll.example
mkdir -p src tests
cat > README.md <<'T'
# payroll

Fee and payout helpers for the payroll service. Amounts are integer cents.
T
echo 2.4.0 > VERSION
cat > src/fees.py <<'T'
"""Card and transfer fees; amounts are integer cents."""

CARD_RATE_BP = 290  # basis points
TRANSFER_FLAT = 25


def card_fee(amount):
    """Fee for a card payment of `amount` cents."""
    return amount * CARD_RATE_BP // 10000


def transfer_fee(amount):
    """Flat fee for a bank transfer."""
    return TRANSFER_FLAT
T
cat > src/api.py <<'T'
"""HTTP handlers."""

from .fees import card_fee


def quote(amount):
    return {"amount": amount, "fee": card_fee(amount)}
T
cat > tests/test_fees.py <<'T'
from payroll.fees import card_fee, transfer_fee


def test_card_fee():
    assert card_fee(10000) == 290


def test_transfer_fee():
    assert transfer_fee(5000) == 25
T
at "2024-02-05T10:00:00"
git add -A && git commit -qm "chore(release): 2.4.0"
git tag -a v2.4.0 -m "payroll 2.4.0"
git branch release/2.4
# main
cat > src/export.py <<'T'
"""Monthly CSV export of payouts."""

import csv


def write_month(rows, fh):
    csv.writer(fh).writerows(rows)
T
at "2024-02-19T09:30:00"
git add -A && git commit -qm "feat(export): monthly CSV export"
sed -i 's|    return amount \* CARD_RATE_BP // 10000|    return (amount * CARD_RATE_BP + 5000) // 10000  # half up|' src/fees.py
sed -i 's|^    """Fee for a card payment of `amount` cents."""$|    """Fee for a card payment of `amount` cents, rounded half up."""|' src/fees.py
at "2024-02-27T15:12:00"
git add -A && git commit -qm "fix(fees): round card fees half up" -m "Card fees were truncated: 1.5 cents became 1."
sed -i 's|^    return {"amount": amount, "fee": card_fee(amount)}$|    return {"amount": amount, "fee": card_fee(amount), "currency": "EUR"}|' src/api.py
at "2024-03-04T11:45:00"
git add -A && git commit -qm "feat(api): quotes name their currency"
cat >> src/fees.py <<'T'


def fee_for(kind, amount):
    """The fee of a payment; nothing is charged on a zero amount."""
    if amount == 0:
        return 0
    return card_fee(amount) if kind == "card" else transfer_fee(amount)
T
cat >> tests/test_fees.py <<'T'


def test_no_fee_on_zero():
    from payroll.fees import fee_for

    assert fee_for("transfer", 0) == 0
T
at "2024-03-11T08:20:00"
git add -A && git commit -qm "fix(fees): waive fees on zero amounts"
# release/2.4
git checkout -q release/2.4
cat >> README.md <<'T'

2.4.x is supported until 2024-09-30; fixes are backported to `release/2.4`.
T
at "2024-03-12T13:00:00"
git add -A && git commit -qm "docs: support window of 2.4"
git checkout -q main
if [ -n "$(git status --porcelain)" ]; then echo "tree not clean" >&2; exit 1; fi
