"""Totals over ledger entries; amounts are integer cents."""

from decimal import ROUND_HALF_EVEN, Decimal


def balance(entries):
    """Sum of signed amounts: debits count positive, credits negative."""
    total = 0
    for kind, cents in entries:
        total += cents if kind == "debit" else -cents
    return total


def average(entries):
    """Mean absolute amount in cents, rounded half to even; 0 for no entries."""
    if not entries:
        return 0
    mean = Decimal(sum(cents for _, cents in entries)) / len(entries)
    return int(mean.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
