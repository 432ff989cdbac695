"""Helpers for the sales report."""


def cents(x):
    return round(x, 2)
